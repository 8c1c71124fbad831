//! Snippets from recorded and public gemini logs, and odd input.

use super::*;
use cinch_driver_sdk::SkipReason;
use cinch_driver_sdk::testing::{run, tool};

const NOISE: &str =
    "Warning: Basic terminal detected (TERM=dumb). Visual rendering will be limited.
YOLO mode is enabled. All tool calls will be automatically approved.
Ripgrep is not available. Falling back to GrepTool.
[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics.
";

#[test]
fn plain_answer_joins_deltas() {
    let log = r#"{"type":"init","timestamp":"2026-12-02T07:52:37.269Z","session_id":"1652df79-609d-4913-a80a-496aa52cf728","model":"gemini-2.5-flash"}
{"type":"message","timestamp":"2026-12-02T07:52:37.270Z","role":"user","content":"Reply with the word done"}
{"type":"message","timestamp":"2026-12-02T07:52:37.301Z","role":"assistant","content":"do","delta":true}
{"type":"message","timestamp":"2026-12-02T07:52:37.302Z","role":"assistant","content":"ne","delta":true}
{"type":"result","timestamp":"2026-12-02T07:52:37.345Z","status":"success","stats":{"total_tokens":107,"input_tokens":100,"output_tokens":7,"cached":0,"input":100,"duration_ms":76,"tool_calls":0,"models":{"gemini-2.5-flash":{"total_tokens":107,"input_tokens":100,"output_tokens":7,"cached":0,"input":100}}}}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), NOISE);
    let usage = Usage {
        input_tokens: Some(100),
        output_tokens: Some(7),
        cached_input_tokens: Some(0),
        cost_usd: None,
    };
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: Some("gemini-2.5-flash".into()),
                session_id: Some("1652df79-609d-4913-a80a-496aa52cf728".into()),
            },
            Event::Other("user-message".into()),
            Event::AssistantDelta("do".into()),
            Event::AssistantDelta("ne".into()),
            Event::AssistantMessage("done".into()),
            Event::Usage(usage),
        ]
    );
    assert_eq!(
        outcome,
        Outcome {
            final_message: Some("done".into()),
            session_id: Some("1652df79-609d-4913-a80a-496aa52cf728".into()),
            is_error: false,
            error: None,
            usage: Some(usage),
        }
    );
}

#[test]
fn shell_tool_and_the_text_after_it() {
    let log = r#"{"type":"init","session_id":"52640444-6e62-4595-98c0-c13075615283","model":"gemini-2.5-flash"}
{"type":"tool_use","tool_name":"run_shell_command","tool_id":"run_shell_command__run_shell_command_1796197960085_0","parameters":{"command":"echo hello > out.txt","description":"Write hello to out.txt"}}
{"type":"tool_result","tool_id":"run_shell_command__run_shell_command_1796197960085_0","status":"success","output":""}
{"type":"message","role":"assistant","content":"I ran the command; out.","delta":true}
{"type":"message","role":"assistant","content":"txt now contains hello.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":215,"input_tokens":201,"output_tokens":14,"cached":0,"input":201,"duration_ms":287,"tool_calls":1}}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), NOISE);
    let id = "run_shell_command__run_shell_command_1796197960085_0";
    let detail = Some("echo hello > out.txt");
    assert_eq!(
        events[1..3],
        [
            tool(id, "run_shell_command", detail, ToolPhase::Started),
            tool(id, "run_shell_command", detail, ToolPhase::Completed),
        ]
    );
    assert_eq!(
        events[5],
        Event::AssistantMessage("I ran the command; out.txt now contains hello.".into())
    );
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("I ran the command; out.txt now contains hello.")
    );
}

#[test]
fn final_message_is_only_the_text_after_the_last_tool_result() {
    let log = r#"{"type":"init","session_id":"test-session-id","model":"test-model"}
{"type":"message","role":"user","content":"Stream test"}
{"type":"message","role":"assistant","content":"Thinking...","delta":true}
{"type":"tool_use","tool_name":"testTool","tool_id":"tool-1","parameters":{"arg1":"value1"}}
{"type":"tool_result","tool_id":"tool-1","status":"success","output":"Tool executed successfully"}
{"type":"message","role":"assistant","content":"Final answer","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    let messages: Vec<&Event> = events
        .iter()
        .filter(|event| matches!(event, Event::AssistantMessage(_)))
        .collect();
    assert_eq!(
        messages,
        [
            &Event::AssistantMessage("Thinking...".into()),
            &Event::AssistantMessage("Final answer".into()),
        ]
    );
    assert_eq!(
        events[4],
        tool("tool-1", "testTool", None, ToolPhase::Started)
    );
    assert_eq!(outcome.final_message.as_deref(), Some("Final answer"));
    // Nothing said after the last tool result: no final message.
    let (_, outcome) = run::<Gemini>(
        r#"{"type":"message","role":"assistant","content":"Let me look.","delta":true}
{"type":"tool_use","tool_name":"read_file","tool_id":"r","parameters":{"absolute_path":"/a"}}
{"type":"tool_result","tool_id":"r","status":"success"}
{"type":"result","status":"success"}"#,
        Some(0),
        "",
    );
    assert_eq!(outcome.final_message, None);
}

#[test]
fn file_tools_of_gemini_0_11() {
    let log = r#"{"type":"init","timestamp":"2025-10-29T10:37:00.097Z","session_id":"453aa339-7d2b-4709-a41a-b0b73beaff85","model":"gemini-2.5-pro"}
{"type":"tool_use","tool_name":"read_file","tool_id":"read_file-1761734225259-ef6c719c767c","parameters":{"absolute_path":"/private/tmp/gemini-test/created.txt"}}
{"type":"tool_result","tool_id":"read_file-1761734225259-ef6c719c767c","status":"success","output":""}
{"type":"tool_use","tool_name":"replace","tool_id":"replace-1761734228885-7a63ed9561c45","parameters":{"file_path":"/private/tmp/gemini-test/created.txt","instruction":"Change \"Hello\" to \"Goodbye\"","new_string":"Goodbye from Gemini CLI","old_string":"Hello from Gemini CLI"}}
{"type":"tool_result","tool_id":"replace-1761734228885-7a63ed9561c45","status":"success"}
{"type":"message","role":"assistant","content":"Done.","delta":true}
{"type":"result","status":"success","stats":{"total_tokens":22257,"input_tokens":21694,"output_tokens":77,"duration_ms":13099,"tool_calls":3}}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    let path = Some("/private/tmp/gemini-test/created.txt");
    let id = "replace-1761734228885-7a63ed9561c45";
    assert_eq!(events[3], tool(id, "replace", path, ToolPhase::Started));
    assert_eq!(events[4], tool(id, "replace", path, ToolPhase::Completed));
    assert_eq!(outcome.final_message.as_deref(), Some("Done."));
    // 0.11 reports no cache count.
    assert_eq!(
        outcome.usage,
        Some(Usage {
            input_tokens: Some(21694),
            output_tokens: Some(77),
            cached_input_tokens: None,
            cost_usd: None,
        })
    );
}

#[test]
fn failed_tool_result() {
    let log = r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"false"}}
{"type":"tool_result","tool_id":"t1","status":"error","output":"","error":{"type":"TOOL_EXECUTION_ERROR","message":"exit 1"}}
{"type":"tool_result","tool_id":"ghost","status":"success"}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            tool("t1", "run_shell_command", Some("false"), ToolPhase::Started),
            tool("t1", "run_shell_command", Some("false"), ToolPhase::Failed),
            tool("ghost", "tool", None, ToolPhase::Started),
            tool("ghost", "tool", None, ToolPhase::Completed),
        ]
    );
    assert!(!outcome.is_error);
}

#[test]
fn api_error_in_the_result() {
    let log = r#"{"type":"init","session_id":"a5b61789-0987-4995-986b-323daaca83d2","model":"gemini-2.5-flash"}
{"type":"message","role":"user","content":"Reply with the word done"}
{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\"error\":{\"code\":401,\"message\":\"API key not valid.\",\"status\":\"UNAUTHENTICATED\"}}]"},"stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0}}"#;
    let stderr =
        format!("{NOISE}Error when talking to Gemini API _ApiError: ...\n  status: 401\n}}\n");
    let (events, outcome) = run::<Gemini>(log, Some(145), &stderr);
    let message = r#"[API Error: {"error":{"code":401,"message":"API key not valid.","status":"UNAUTHENTICATED"}}]"#;
    assert_eq!(events.last(), Some(&Event::Error(message.into())));
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some(message));
    assert_eq!(
        outcome.session_id.as_deref(),
        Some("a5b61789-0987-4995-986b-323daaca83d2")
    );
    assert_eq!(outcome.final_message, None);
}

#[test]
fn http_exit_codes_explain_a_silent_failure() {
    let log = r#"{"type":"init","session_id":"s","model":"m"}"#;
    let (_, outcome) = run::<Gemini>(
        log,
        Some(244),
        "    at async Turn.run (file:///x.js:1:1) {\n  status: 500\n}\n",
    );
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("HTTP 500 (exit code 244)"));
    let (_, outcome) = run::<Gemini>(log, Some(145), "");
    assert_eq!(outcome.error.as_deref(), Some("HTTP 401 (exit code 145)"));
}

#[test]
fn startup_failures_take_the_stderr_text() {
    let (events, outcome) = run::<Gemini>(
        "",
        Some(41),
        "YOLO mode is enabled. All tool calls will be automatically approved.\nInvalid auth method selected.\n",
    );
    assert!(events.is_empty());
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("Invalid auth method selected.")
    );
    assert_eq!(outcome.session_id, None);

    let untrusted = "YOLO mode is enabled. All tool calls will be automatically approved.
Approval mode overridden to \"default\" because the current folder is not trusted.
\u{1b}[31mGemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`.\u{1b}[0m
";
    let (_, outcome) = run::<Gemini>("", Some(55), untrusted);
    assert_eq!(
        outcome.error.as_deref(),
        Some(
            "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`."
        )
    );
    let (_, outcome) = run::<Gemini>("", Some(42), NOISE);
    assert_eq!(outcome.error.as_deref(), Some("exited with code 42"));
    let (_, outcome) = run::<Gemini>("", None, "");
    assert_eq!(outcome.error.as_deref(), Some("killed by a signal"));
}

#[test]
fn error_events_warn_or_fail() {
    let log = r#"{"type":"init","session_id":"test-session-id","model":"test-model"}
{"type":"error","severity":"warning","message":"Loop detected, stopping execution"}
{"type":"result","status":"success","stats":{"total_tokens":0,"input_tokens":0,"output_tokens":0,"cached":0,"input":0,"duration_ms":0,"tool_calls":0,"models":{}}}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    assert_eq!(
        events[1],
        Event::Warning("Loop detected, stopping execution".into())
    );
    assert!(!outcome.is_error);

    // An error event fails the turn even when the result says success.
    let log = r#"{"type":"message","role":"assistant","content":"Partial","delta":true}
{"type":"error","severity":"error","message":"Maximum session turns exceeded"}
{"type":"result","status":"success"}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::AssistantDelta("Partial".into()),
            Event::AssistantMessage("Partial".into()),
            Event::Error("Maximum session turns exceeded".into()),
            Event::Other("result".into()),
        ]
    );
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("Maximum session turns exceeded")
    );
    assert_eq!(outcome.final_message.as_deref(), Some("Partial"));
}

#[test]
fn a_message_cut_off_still_counts_as_the_final_one() {
    let log = r#"{"type":"init","session_id":"s","model":"m"}
{"type":"message","role":"assistant","content":"half a","delta":true}
{"type":"message","role":"assistant","content":" sentence","delta":true}"#;
    let (_, outcome) = run::<Gemini>(log, None, "");
    assert_eq!(outcome.final_message.as_deref(), Some("half a sentence"));
    assert!(outcome.is_error);
}

#[test]
fn whole_assistant_messages() {
    let log = r#"{"type":"message","role":"assistant","content":"Final message"}
{"type":"message","role":"assistant","content":""}"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::AssistantMessage("Final message".into()),
            Event::Other("message".into()),
        ]
    );
    assert_eq!(outcome.final_message.as_deref(), Some("Final message"));
}

#[test]
fn odd_input_never_panics() {
    let log = r#"{"type":"init"}
{"type":"init","session_id":"later"}
{"type":"message","role":"assistant","content":7,"delta":true}
{"type":"message","role":"assistant","content":"x","delta":"yes"}
{"type":"message"}
{"type":"tool_use","parameters":"not an object"}
{"type":"tool_result"}
{"type":"error"}
{"type":"result","stats":[],"status":7}
{"type":"thought","content":"new event"}
[]
null
not json"#;
    let (events, outcome) = run::<Gemini>(log, Some(0), "");
    assert_eq!(
        events[..2],
        [
            Event::Started {
                model: None,
                session_id: None,
            },
            Event::Session("later".into()),
        ]
    );
    assert!(events.contains(&Event::Skipped {
        reason: SkipReason::Unknown,
        kind: Some("thought".into()),
    }));
    assert!(events.contains(&Event::Skipped {
        reason: SkipReason::NotJson,
        kind: None,
    }));
    // `delta` that is not `true` is a whole message.
    assert!(events.contains(&Event::AssistantMessage("x".into())));
    // An error without a severity or message still fails the turn.
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("the turn failed"));
    assert_eq!(outcome.session_id.as_deref(), Some("later"));
}

#[test]
fn commands_for_a_new_and_a_resumed_turn() {
    let mut turn = Turn {
        prompt_file: "/tmp/cinch/prompt.md".into(),
        workdir: "/home/dev/repo".into(),
        model: None,
        effort: None,
        session_id: None,
        ..Turn::default()
    };
    let command = Gemini::command(&turn);
    assert_eq!(command.args, ["--output-format", "stream-json", "--yolo"]);
    assert_eq!(command.brief, BriefDelivery::Stdin);
    assert_eq!(
        command.set_env,
        [("GEMINI_CLI_TRUST_WORKSPACE".to_owned(), "true".to_owned())]
    );
    turn.model = Some("gemini-2.5-flash".into());
    turn.session_id = Some("1652df79-609d-4913-a80a-496aa52cf728".into());
    assert_eq!(
        Gemini::command(&turn).args,
        [
            "--output-format",
            "stream-json",
            "--yolo",
            "-m",
            "gemini-2.5-flash",
            "--resume",
            "1652df79-609d-4913-a80a-496aa52cf728",
        ]
    );
}

#[test]
fn info_and_version() {
    let info = Gemini::info();
    assert_eq!(info.name, "gemini");
    assert!(info.managed_config.is_empty());
    assert_eq!(
        info.login_files[1].account_pointer.as_deref(),
        Some("/active")
    );
    assert_eq!(info.resume, ResumeScope::SameDirectory);
    assert_eq!(Gemini::parse_version("0.61.0\n").as_deref(), Some("0.61.0"));
}

/// A line of valid JSON of a type the driver does not know is no failure:
/// it is skipped as unknown, named by its type, so that the host can count
/// it; a line that is not JSON is skipped as such.
#[test]
fn an_unknown_type_is_skipped_by_name_and_a_non_json_line_as_not_json() {
    let log = "{\"type\":\"from_a_newer_release\",\"payload\":{\"x\":1}}\nnot json at all\n";
    let (events, _) = run::<Gemini>(log, Some(0), "");
    let skipped: Vec<&Event> = events
        .iter()
        .filter(|event| matches!(event, Event::Skipped { .. }))
        .collect();
    assert_eq!(
        skipped,
        [
            &Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some("from_a_newer_release".into()),
            },
            &Event::Skipped {
                reason: SkipReason::NotJson,
                kind: None,
            },
        ]
    );
}
