use cinch_driver_sdk::testing::{run, tool};
use cinch_driver_sdk::{SkipReason, ToolPhase};

use super::*;

// The public cursor-hack full session (cursor-agent 2026.01.28), args cut.
const SESSION: &str = r#"{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/user/project","session_id":"d43015b9","model":"Auto","permissionMode":"default"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Run `sleep 5` using bash, then run `sleep 3` using bash. Do nothing else."}]},"session_id":"d43015b9"}
{"type":"thinking","subtype":"delta","text":"**Planning","session_id":"d43015b9","timestamp_ms":1770823841542}
{"type":"thinking","subtype":"delta","text":" sequential","session_id":"d43015b9","timestamp_ms":1770823841598}
{"type":"thinking","subtype":"completed","session_id":"d43015b9","timestamp_ms":1770823845095}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"I'll run `sleep 5` in bash, wait for it to finish, then run `sleep 3` in bash."}]},"session_id":"d43015b9","model_call_id":"5bf03e32-0-otyz","timestamp_ms":1770823845357}
{"type":"tool_call","subtype":"started","call_id":"call_1","tool_call":{"shellToolCall":{"args":{"command":"sleep 5","workingDirectory":"","timeout":10000,"toolCallId":"call_1"}}},"model_call_id":"5bf03e32-0-otyz","session_id":"d43015b9","timestamp_ms":1770823845357}
{"type":"tool_call","subtype":"completed","call_id":"call_1","tool_call":{"shellToolCall":{"args":{"command":"sleep 5","toolCallId":"call_1"},"result":{"success":{"command":"sleep 5","exitCode":0,"stdout":"","stderr":""},"isBackground":false}}},"model_call_id":"5bf03e32-0-otyz","session_id":"d43015b9","timestamp_ms":1770823850766}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Both commands have finished running."}]},"session_id":"d43015b9"}
{"type":"result","subtype":"success","duration_ms":21509,"duration_api_ms":21509,"is_error":false,"result":"done","session_id":"d43015b9","request_id":"5bf03e32"}"#;

#[test]
fn session_gives_flush_tools_and_the_last_segment_as_final() {
    let (events, outcome) = run::<Cursor>(SESSION, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: Some("Auto".into()),
                session_id: Some("d43015b9".into()),
            },
            Event::Other("user".into()),
            Event::Thinking("**Planning sequential".into()),
            Event::AssistantMessage(
                "I'll run `sleep 5` in bash, wait for it to finish, then run `sleep 3` in bash."
                    .into()
            ),
            tool("call_1", "shell", Some("sleep 5"), ToolPhase::Started),
            tool("call_1", "shell", Some("sleep 5"), ToolPhase::Completed),
            Event::AssistantMessage("Both commands have finished running.".into()),
            Event::FinalMessage("Both commands have finished running.".into()),
        ]
    );
    assert_eq!(
        outcome,
        Outcome {
            final_message: Some("Both commands have finished running.".into()),
            session_id: Some("d43015b9".into()),
            is_error: false,
            error: None,
            usage: None,
        }
    );
}

#[test]
fn parallel_calls_pair_by_call_ids_that_hold_newlines() {
    // From the public parallel-sleep capture: completions in finishing order.
    let log = r#"{"type":"tool_call","subtype":"started","call_id":"call_MZ\nfc_05e0","tool_call":{"shellToolCall":{"args":{"command":"sleep 6"}}},"model_call_id":"31c9-0-mwez","session_id":"1e273e42"}
{"type":"tool_call","subtype":"started","call_id":"call_UA\nfc_05e0","tool_call":{"shellToolCall":{"args":{"command":"sleep 4"}}},"model_call_id":"31c9-0-mwez","session_id":"1e273e42"}
{"type":"tool_call","subtype":"completed","call_id":"call_UA\nfc_05e0","tool_call":{"shellToolCall":{"args":{"command":"sleep 4"},"result":{"success":{"exitCode":0},"isBackground":false}}},"session_id":"1e273e42"}
{"type":"tool_call","subtype":"completed","call_id":"call_MZ\nfc_05e0","tool_call":{"shellToolCall":{"args":{"command":"sleep 6"},"result":{"success":{"exitCode":0},"isBackground":false}}},"session_id":"1e273e42"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"done"}]},"session_id":"1e273e42"}
{"type":"result","subtype":"success","is_error":false,"result":"I’ll run both.done","session_id":"1e273e42"}"#;
    let (events, outcome) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events[1..5],
        [
            tool(
                "call_MZ\nfc_05e0",
                "shell",
                Some("sleep 6"),
                ToolPhase::Started
            ),
            tool(
                "call_UA\nfc_05e0",
                "shell",
                Some("sleep 4"),
                ToolPhase::Started
            ),
            tool(
                "call_UA\nfc_05e0",
                "shell",
                Some("sleep 4"),
                ToolPhase::Completed
            ),
            tool(
                "call_MZ\nfc_05e0",
                "shell",
                Some("sleep 6"),
                ToolPhase::Completed
            ),
        ]
    );
    assert_eq!(outcome.final_message.as_deref(), Some("done"));
}

#[test]
fn captured_lines_name_tools_by_key_and_fail_rejected_calls() {
    // From the public AgentsServer capture (agent 2026.08.11).
    let log = r##"{"type":"tool_call","subtype":"started","call_id":"call-glob-0","tool_call":{"globToolCall":{"args":{"targetDirectory":"/private/tmp/cursor-research","globPattern":"**/hello.py"}}},"session_id":"0001"}
{"type":"tool_call","subtype":"completed","call_id":"call-glob-0","tool_call":{"globToolCall":{"args":{"targetDirectory":"/private/tmp/cursor-research","globPattern":"**/hello.py"},"result":{"success":{"files":["hello.py"],"totalFiles":1}}}},"session_id":"0001"}
{"type":"tool_call","subtype":"completed","call_id":"call-edit-2","tool_call":{"editToolCall":{"args":{"path":"/private/tmp/cursor-research/hello.py","streamContent":"# greeting"},"result":{"success":{"linesAdded":1,"diffString":"--- a\n+++ b"}}}},"session_id":"0001"}
{"type":"tool_call","subtype":"completed","call_id":"call-shell-3","tool_call":{"shellToolCall":{"result":{"rejected":{"command":"python3 hello.py","workingDirectory":"/private/tmp/cursor-research","reason":""}}}},"session_id":"0001"}
{"type":"result","subtype":"success","duration_ms":4889,"is_error":false,"result":"It prints `hello world`.","session_id":"0001","usage":{"inputTokens":14948,"outputTokens":103}}"##;
    let (events, outcome) = run::<Cursor>(log, Some(0), "");
    let usage = Usage {
        input_tokens: Some(14948),
        output_tokens: Some(103),
        cached_input_tokens: None,
        cost_usd: None,
    };
    assert_eq!(
        events,
        vec![
            Event::Session("0001".into()),
            tool(
                "call-glob-0",
                "glob",
                Some("**/hello.py"),
                ToolPhase::Started
            ),
            tool(
                "call-glob-0",
                "glob",
                Some("**/hello.py"),
                ToolPhase::Completed
            ),
            tool(
                "call-edit-2",
                "edit",
                Some("/private/tmp/cursor-research/hello.py"),
                ToolPhase::Completed
            ),
            tool(
                "call-shell-3",
                "shell",
                Some("python3 hello.py"),
                ToolPhase::Failed
            ),
            // No assistant text came: the result's text stands in.
            Event::FinalMessage("It prints `hello world`.".into()),
            Event::Usage(usage),
        ]
    );
    assert_eq!(outcome.usage, Some(usage));
}

#[test]
fn partial_output_joins_deltas_and_drops_the_recaps() {
    let log = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"draft"}]},"session_id":"s","timestamp_ms":10100}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":" more"}]},"session_id":"s","timestamp_ms":10400}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"draft more"}]},"session_id":"s","timestamp_ms":10450,"model_call_id":"m1"}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"/a"}}},"model_call_id":"m1","session_id":"s"}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"/a"},"result":{"success":{}}}},"model_call_id":"m1","session_id":"s"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ha"}]},"session_id":"s","timestamp_ms":10700}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ha"}]},"session_id":"s","timestamp_ms":10800}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"haha"}]},"session_id":"s"}
{"type":"result","subtype":"success","is_error":false,"result":"draft morehaha","session_id":"s","usage":{"inputTokens":10,"outputTokens":3,"cacheReadTokens":5,"cacheWriteTokens":2}}"#;
    let (events, outcome) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Session("s".into()),
            Event::AssistantDelta("draft".into()),
            Event::AssistantDelta(" more".into()),
            Event::AssistantMessage("draft more".into()),
            Event::Other("assistant-recap".into()),
            tool("c1", "read", Some("/a"), ToolPhase::Started),
            tool("c1", "read", Some("/a"), ToolPhase::Completed),
            Event::AssistantDelta("ha".into()),
            Event::AssistantDelta("ha".into()),
            Event::AssistantMessage("haha".into()),
            Event::Other("assistant-recap".into()),
            Event::FinalMessage("haha".into()),
            Event::Usage(Usage {
                input_tokens: Some(17),
                output_tokens: Some(3),
                cached_input_tokens: Some(5),
                cost_usd: None,
            }),
        ]
    );
    assert_eq!(outcome.final_message.as_deref(), Some("haha"));
}

#[test]
fn a_recap_after_the_tool_call_is_still_a_recap() {
    let log = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Looking"}]},"timestamp_ms":1}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"lsToolCall":{"args":{"path":"/repo"}}}}
{"type":"assistant","message":{"content":[{"type":"text","text":"Looking"}]},"timestamp_ms":2,"model_call_id":"m1"}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"lsToolCall":{"result":{"success":{}}}}}"#;
    let (events, outcome) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::AssistantDelta("Looking".into()),
            Event::AssistantMessage("Looking".into()),
            tool("c1", "ls", Some("/repo"), ToolPhase::Started),
            Event::Other("assistant-recap".into()),
            tool("c1", "ls", Some("/repo"), ToolPhase::Completed),
        ]
    );
    // Text before a tool call is not the final message; and no result came.
    assert_eq!(outcome.final_message, None);
    assert!(outcome.is_error);
}

#[test]
fn deltas_closed_by_the_result_are_the_final_message() {
    let log = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"All"}]},"timestamp_ms":1}
{"type":"assistant","message":{"content":[{"type":"text","text":" set."}]},"timestamp_ms":2}
{"type":"result","subtype":"success","is_error":false,"result":"All set.","session_id":"s"}"#;
    let (events, outcome) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events[2..4],
        [
            Event::AssistantMessage("All set.".into()),
            Event::Session("s".into()),
        ]
    );
    assert_eq!(events[4], Event::FinalMessage("All set.".into()));
    assert_eq!(outcome.final_message.as_deref(), Some("All set."));
}

#[test]
fn no_result_is_an_error_with_stderr() {
    let stderr = "Authentication required. Please run 'cursor-agent login' first, or set CURSOR_API_KEY environment variable.\n";
    let (events, outcome) = run::<Cursor>("", Some(1), stderr);
    assert!(events.is_empty());
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some(stderr.trim_end()));

    let (_, outcome) = run::<Cursor>(SESSION.lines().next().unwrap_or_default(), Some(0), "");
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("the CLI ended without a result")
    );
    assert_eq!(outcome.session_id.as_deref(), Some("d43015b9"));

    let (_, outcome) = run::<Cursor>("", None, "");
    assert_eq!(outcome.error.as_deref(), Some("killed by a signal"));
}

#[test]
fn failed_result_is_an_error() {
    let log = r#"{"type":"result","subtype":"error","is_error":true,"error":{"message":"Model overloaded"},"session_id":"s"}"#;
    let (events, outcome) = run::<Cursor>(log, Some(1), "");
    assert_eq!(events[1], Event::Error("Model overloaded".into()));
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("Model overloaded"));

    let log =
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}"#;
    let (_, outcome) = run::<Cursor>(log, Some(2), "");
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("exited with code 2"));
}

#[test]
fn newer_events_are_warnings_or_other() {
    let log = r#"{"type":"connection","subtype":"reconnecting","session_id":"s","timestamp_ms":1,"attempt":1,"endpoint_url":"https://agent.example"}
{"type":"retry","subtype":"starting","session_id":"s","timestamp_ms":2,"attempt":1,"is_resume":false}
{"type":"connection","subtype":"reconnected","session_id":"s","timestamp_ms":3}
{"type":"interaction_query","subtype":"request","query_type":"webFetchRequestQuery","session_id":"s"}
{"type":"system","subtype":"task_notification","session_id":"s"}
{"type":"tool_call","subtype":"updated","call_id":"x","session_id":"s"}
{"type":"brand_new","session_id":"s"}"#;
    let (events, _) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Session("s".into()),
            Event::Other("connection".into()),
            Event::Warning("retry starting (attempt 1)".into()),
            Event::Other("connection".into()),
            Event::Other("interaction_query".into()),
            Event::Other("system/task_notification".into()),
            Event::Other("tool_call".into()),
            Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some("brand_new".into()),
            },
        ]
    );
}

#[test]
fn tool_shapes_give_names_and_details() {
    let log = r#"{"type":"tool_call","subtype":"started","call_id":"g","tool_call":{"grepToolCall":{"args":{"pattern":"fn main","path":"src"}}}}
{"type":"tool_call","subtype":"started","call_id":"m","tool_call":{"mcpToolCall":{"args":{"name":"falconry-get_section","providerIdentifier":"falconry","toolName":"get_section"}}}}
{"type":"tool_call","subtype":"started","call_id":"f","tool_call":{"function":{"name":"run_terminal_cmd","arguments":"{\"command\":\"cargo test\"}"}}}
{"type":"tool_call","subtype":"started","tool_call":{"toolCallId":"t","semSearchToolCall":{"args":"{\"query\":\"where is auth\",\"path\":\"/\"}"}}}
{"type":"tool_call","subtype":"completed","call_id":"m","tool_call":{"mcpToolCall":{"result":{"success":{"isError":true}}}}}
{"type":"tool_call","subtype":"completed","call_id":"f","tool_call":{"function":{"name":"run_terminal_cmd"},"result":{"timeout":{}}}}
{"type":"tool_call","subtype":"completed","call_id":"t","tool_call":{"semSearchToolCall":{"result":{"permissionDenied":{}}}}}
{"type":"tool_call","subtype":"completed","call_id":"g","tool_call":{"grepToolCall":{}}}"#;
    let (events, _) = run::<Cursor>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            tool("g", "grep", Some("fn main"), ToolPhase::Started),
            tool("m", "mcp", Some("falconry/get_section"), ToolPhase::Started),
            tool(
                "f",
                "run_terminal_cmd",
                Some("cargo test"),
                ToolPhase::Started
            ),
            tool("t", "semSearch", Some("where is auth"), ToolPhase::Started),
            tool("m", "mcp", Some("falconry/get_section"), ToolPhase::Failed),
            tool(
                "f",
                "run_terminal_cmd",
                Some("cargo test"),
                ToolPhase::Failed
            ),
            tool("t", "semSearch", Some("where is auth"), ToolPhase::Failed),
            tool("g", "grep", Some("fn main"), ToolPhase::Completed),
        ]
    );
}

#[test]
fn odd_shapes_never_panic() {
    let huge = "y".repeat(1 << 20);
    let log = format!(
        r#"{{"type":"system"}}
{{"type":"system","subtype":"init","session_id":[],"model":7}}
{{"type":"assistant"}}
{{"type":"assistant","message":{{"content":"text"}},"timestamp_ms":1}}
{{"type":"assistant","message":{{"content":[1,null,{{"text":5}}]}},"model_call_id":null}}
{{"type":"thinking"}}
{{"type":"thinking","subtype":"delta","text":{{}}}}
{{"type":"tool_call"}}
{{"type":"tool_call","subtype":"started","tool_call":"x"}}
{{"type":"tool_call","subtype":"completed","call_id":5,"tool_call":{{"ToolCall":{{}},"xToolCall":[],"function":7}}}}
{{"type":"tool_call","subtype":"started","tool_call":{{"shellToolCall":{{"args":"not json"}}}}}}
{{"type":"result","usage":{{"inputTokens":"many"}},"error":[1]}}
{{"type":"retry","attempt":-1}}
[[[[[]]]]]
{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{huge}"}}]}}}}"#
    );
    let (events, outcome) = run::<Cursor>(&log, Some(0), "");
    assert!(events.contains(&Event::AssistantMessage(huge)));
    assert!(!outcome.is_error);
}

#[test]
fn command_points_at_the_prompt_file() {
    let mut turn = Turn {
        prompt_file: "/home/dev/.cinch/runs/r1/c1.prompt.md".into(),
        workdir: "/repo".into(),
        model: None,
        effort: None,
        session_id: None,
        ..Turn::default()
    };
    let command = Cursor::command(&turn);
    assert_eq!(
        command.args,
        [
            "-p",
            "--output-format",
            "stream-json",
            "--force",
            "Read the task in /home/dev/.cinch/runs/r1/c1.prompt.md and do it."
        ]
    );
    assert_eq!(command.brief, BriefDelivery::PromptFile);

    turn.model = Some("gpt-5".into());
    turn.session_id = Some("d43015b9".into());
    let args = Cursor::command(&turn).args;
    assert_eq!(args[4..8], ["--model", "gpt-5", "--resume", "d43015b9"]);
    assert!(args[8].starts_with("Read the task in "));
}

#[test]
fn info_and_version() {
    let info = Cursor::info();
    assert_eq!(info.name, "cursor");
    assert_eq!(info.program, "cursor-agent");
    assert_eq!(info.state_dir.as_deref(), Some(".cursor"));
    assert_eq!(info.managed_config, [".cursor/cli.json"]);
    assert_eq!(info.secret_env, ["CURSOR_API_KEY"]);
    assert_eq!(info.login_files[0].path, ".cursor/cli-config.json");
    assert_eq!(
        info.login_files[0].account_pointer.as_deref(),
        Some("/authInfo/email")
    );
    assert_eq!(info.brief, BriefDelivery::PromptFile);
    assert_eq!(info.resume, ResumeScope::Anywhere);
    assert_eq!(
        Cursor::parse_version("2026.01.28-fd13201\n").as_deref(),
        Some("2026.01.28-fd13201")
    );
}

/// A line of valid JSON of a type the driver does not know is no failure:
/// it is skipped as unknown, named by its type, so that the host can count
/// it; a line that is not JSON is skipped as such.
#[test]
fn an_unknown_type_is_skipped_by_name_and_a_non_json_line_as_not_json() {
    let log = "{\"type\":\"from_a_newer_release\",\"payload\":{\"x\":1}}\nnot json at all\n";
    let (events, _) = run::<Cursor>(log, Some(0), "");
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
