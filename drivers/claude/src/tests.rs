use cinch_driver_sdk::testing::{run, tool};

use super::*;

fn tool_uses(events: &[Event]) -> Vec<&ToolUse> {
    events
        .iter()
        .filter_map(|event| match event {
            Event::ToolUse(tool) => Some(tool),
            _ => None,
        })
        .collect()
}

// Recorded s1 (claude 2.1.197), with the init line's long lists cut.
const PLAIN: &str = r#"{"type":"system","subtype":"init","cwd":"/home/dev/repo","session_id":"526e215c","tools":["Task","Bash"],"mcp_servers":[],"model":"claude-sonnet-4-5","permissionMode":"bypassPermissions","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197"}
{"type":"assistant","message":{"id":"msg_mock_76354a332a16","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}},"parent_tool_use_id":null,"session_id":"526e215c","uuid":"fd30add2"}
{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":125,"num_turns":1,"result":"done","stop_reason":"end_turn","session_id":"526e215c","total_cost_usd":0.000405,"usage":{"input_tokens":100,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":7},"modelUsage":{},"permission_denials":[],"terminal_reason":"completed"}"#;

#[test]
fn plain_answer_gives_started_message_final_and_usage() {
    let (events, outcome) = run::<Claude>(PLAIN, Some(0), "");
    let usage = Usage {
        input_tokens: Some(100),
        output_tokens: Some(7),
        cached_input_tokens: Some(0),
        cost_usd: Some(0.000405),
    };
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: Some("claude-sonnet-4-5".into()),
                session_id: Some("526e215c".into()),
            },
            Event::AssistantMessage("done".into()),
            Event::FinalMessage("done".into()),
            Event::Usage(usage),
        ]
    );
    assert_eq!(
        outcome,
        Outcome {
            final_message: Some("done".into()),
            session_id: Some("526e215c".into()),
            is_error: false,
            error: None,
            usage: Some(usage),
        }
    );
}

#[test]
fn tool_use_and_its_result_share_id_name_and_detail() {
    // Recorded s2, shortened.
    let log = r#"{"type":"system","subtype":"init","session_id":"e0771f6d","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_mock_1acb382bae","name":"Bash","input":{"command":"echo hello > out.txt","description":"Write hello to out.txt"}}]},"parent_tool_use_id":null,"session_id":"e0771f6d"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_mock_1acb382bae","type":"tool_result","content":"(Bash completed with no output)","is_error":false}]},"parent_tool_use_id":null,"session_id":"e0771f6d","tool_use_result":{"stdout":"","stderr":"","interrupted":false}}
{"type":"assistant","message":{"content":[{"type":"text","text":"I ran the command; out.txt now contains hello."}]},"parent_tool_use_id":null,"session_id":"e0771f6d"}
{"type":"result","subtype":"success","is_error":false,"result":"I ran the command; out.txt now contains hello.","session_id":"e0771f6d"}"#;
    let (events, outcome) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events[1..4],
        [
            tool(
                "toolu_mock_1acb382bae",
                "Bash",
                Some("echo hello > out.txt"),
                ToolPhase::Started
            ),
            tool(
                "toolu_mock_1acb382bae",
                "Bash",
                Some("echo hello > out.txt"),
                ToolPhase::Completed
            ),
            Event::AssistantMessage("I ran the command; out.txt now contains hello.".into()),
        ]
    );
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("I ran the command; out.txt now contains hello.")
    );
    assert!(!outcome.is_error);
}

#[test]
fn tool_result_with_is_error_is_failed() {
    // From the public 2.1.15 capture: a blocked command.
    let log = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -la /tmp","description":"List files in /tmp directory"}}]},"session_id":"1f2f4a66"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"ls in '/tmp' was blocked.","is_error":true}]},"session_id":"1f2f4a66"}"#;
    let (events, _) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Session("1f2f4a66".into()),
            tool("toolu_1", "Bash", Some("ls -la /tmp"), ToolPhase::Started),
            tool("toolu_1", "Bash", Some("ls -la /tmp"), ToolPhase::Failed),
        ]
    );
}

#[test]
fn api_error_is_an_error_event_and_a_failed_turn() {
    // Recorded s3: a 401 comes as a synthetic message, then a result with
    // subtype success but is_error true, exit 1.
    let log = r#"{"type":"system","subtype":"init","session_id":"6947152b","model":"claude-sonnet-4-5"}
{"type":"assistant","message":{"id":"f83789f4","model":"<synthetic>","role":"assistant","stop_reason":"stop_sequence","type":"message","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"parent_tool_use_id":null,"session_id":"6947152b","error":"authentication_failed"}
{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"num_turns":1,"result":"Invalid API key · Fix external API key","session_id":"6947152b","total_cost_usd":0,"usage":{"input_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}}"#;
    let (events, outcome) = run::<Claude>(log, Some(1), "");
    let errors: Vec<&Event> = events
        .iter()
        .filter(|event| matches!(event, Event::Error(_)))
        .collect();
    assert_eq!(
        errors,
        [&Event::Error(
            "Invalid API key · Fix external API key".into()
        )]
    );
    assert!(
        !events
            .iter()
            .any(|event| matches!(event, Event::AssistantMessage(_) | Event::FinalMessage(_)))
    );
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("Invalid API key · Fix external API key")
    );
    assert_eq!(outcome.final_message, None);
    assert_eq!(outcome.session_id.as_deref(), Some("6947152b"));
}

#[test]
fn failed_resume_reports_the_session_and_joins_errors() {
    let log = r#"{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"9d1f","errors":["No conversation found with session ID: 526e215c"]}"#;
    let (events, outcome) = run::<Claude>(
        log,
        Some(1),
        "No conversation found with session ID: 526e215c\n",
    );
    assert_eq!(
        events,
        vec![
            Event::Session("9d1f".into()),
            Event::Error("No conversation found with session ID: 526e215c".into()),
        ]
    );
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("No conversation found with session ID: 526e215c")
    );
    assert_eq!(outcome.session_id.as_deref(), Some("9d1f"));
}

#[test]
fn max_turns_without_text_keeps_the_last_message_and_names_the_limit() {
    let log = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"Still working on it"}]},"parent_tool_use_id":null,"session_id":"s"}
{"type":"result","subtype":"error_max_turns","is_error":false,"session_id":"s"}"#;
    let (_, outcome) = run::<Claude>(log, Some(0), "");
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("reached the maximum number of turns")
    );
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("Still working on it")
    );
}

#[test]
fn subagent_text_is_not_an_assistant_message_but_its_tools_are_tool_uses() {
    // From the public 2.1.178 capture (Explore subagent), shortened.
    let log = r#"{"type":"system","subtype":"init","session_id":"4e3453f9","model":"claude-sonnet-4-6"}
{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"},"session_id":"4e3453f9"}
{"type":"system","subtype":"thinking_tokens","estimated_tokens":39,"session_id":"4e3453f9"}
{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"Launch an Explore subagent.","signature":"Eq4M"}]},"parent_tool_use_id":null,"session_id":"4e3453f9"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_agent","name":"Agent","input":{"description":"Count .rs files in directory","subagent_type":"Explore","prompt":"Count how many files."}}]},"parent_tool_use_id":null,"session_id":"4e3453f9"}
{"type":"system","subtype":"task_started","task_id":"ac4f","tool_use_id":"toolu_agent","session_id":"4e3453f9"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Count how many files."}]},"parent_tool_use_id":"toolu_agent","session_id":"4e3453f9"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_find","name":"Bash","input":{"command":"find src -name \"*.rs\" | wc -l","description":"Count .rs files"}}]},"parent_tool_use_id":"toolu_agent","session_id":"4e3453f9"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_find","type":"tool_result","content":"21","is_error":false}]},"parent_tool_use_id":"toolu_agent","session_id":"4e3453f9"}
{"type":"assistant","message":{"content":[{"type":"text","text":"21"}]},"parent_tool_use_id":"toolu_agent","session_id":"4e3453f9"}
{"type":"system","subtype":"task_notification","task_id":"ac4f","status":"completed","session_id":"4e3453f9"}
{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_agent","type":"tool_result","content":[{"type":"text","text":"21"}]}]},"parent_tool_use_id":null,"session_id":"4e3453f9"}
{"type":"assistant","message":{"content":[{"type":"text","text":"There are **21** `.rs` files."}]},"parent_tool_use_id":null,"session_id":"4e3453f9"}"#;
    let (events, outcome) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: Some("claude-sonnet-4-6".into()),
                session_id: Some("4e3453f9".into()),
            },
            Event::Other("rate_limit_event".into()),
            Event::Other("system/thinking_tokens".into()),
            Event::Thinking("Launch an Explore subagent.".into()),
            tool(
                "toolu_agent",
                "Agent",
                Some("Count .rs files in directory"),
                ToolPhase::Started
            ),
            Event::Other("system/task_started".into()),
            Event::Other("user".into()),
            tool(
                "toolu_find",
                "Bash",
                Some("find src -name \"*.rs\" | wc -l"),
                ToolPhase::Started
            ),
            tool(
                "toolu_find",
                "Bash",
                Some("find src -name \"*.rs\" | wc -l"),
                ToolPhase::Completed
            ),
            Event::Other("subagent-message".into()),
            Event::Other("system/task_notification".into()),
            tool(
                "toolu_agent",
                "Agent",
                Some("Count .rs files in directory"),
                ToolPhase::Completed
            ),
            Event::AssistantMessage("There are **21** `.rs` files.".into()),
        ]
    );
    // Killed before the result: the main agent's last text stands.
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("There are **21** `.rs` files.")
    );
}

#[test]
fn api_retry_is_a_warning() {
    let log = r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1500,"error_status":529,"error":"overloaded","session_id":"s"}"#;
    let (events, _) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Session("s".into()),
            Event::Warning("API retry 2/10: overloaded (HTTP 529)".into()),
        ]
    );
}

#[test]
fn a_credential_refused_twice_ends_the_turn() {
    // claude 2.1.197 against a 401, with its default ten retries.
    let lines: Vec<String> = [
        r#"{"type":"system","subtype":"init","session_id":"s","model":"claude-sonnet-4-5"}"#,
        r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":601.4,"error_status":401,"error":"authentication_failed","session_id":"s"}"#,
        r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1117.1,"error_status":401,"error":"authentication_failed","session_id":"s"}"#,
    ]
    .map(str::to_owned)
    .to_vec();
    let mut parser = ClaudeParser::default();
    let fed = parser.feed(&lines[..2]);
    // The first may be a login's token Claude Code renews.
    assert!(!fed.done, "refused once");
    let fed = parser.feed(&lines[2..]);
    assert!(fed.done, "the answer is in at the second refusal");
    let [Event::Error(error)] = fed.events.as_slice() else {
        panic!("{:?}", fed.events);
    };
    assert!(error.contains("authentication_failed, HTTP 401"), "{error}");
    // The host ends the CLI: a signal, no result line.
    let outcome = parser.finish(None, "");
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some(error.as_str()));
    // Any other retry is a notice, and the turn goes on.
    let mut parser = ClaudeParser::default();
    let fed = parser.feed(&[r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"error_status":529,"error":"overloaded","session_id":"s"}"#.to_owned()]);
    assert!(!fed.done);
}

#[test]
fn no_output_and_a_non_zero_exit_gives_stderr_as_the_error() {
    // Recorded s1_root_without_IS_SANDBOX.
    let stderr = "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n";
    let (events, outcome) = run::<Claude>("", Some(1), stderr);
    assert!(events.is_empty());
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some(
            "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons"
        )
    );
    assert_eq!(outcome.session_id, None);
}

#[test]
fn a_killed_run_is_an_error_with_its_last_message() {
    let log = r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}
{"type":"assistant","message":{"content":[{"type":"text","text":"Looking at the tests"}]},"parent_tool_use_id":null,"session_id":"s"}"#;
    let (_, outcome) = run::<Claude>(log, None, "");
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("killed by a signal"));
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("Looking at the tests")
    );
    let (_, outcome) = run::<Claude>(log, Some(3), "\n");
    assert_eq!(outcome.error.as_deref(), Some("exited with code 3"));
}

#[test]
fn success_with_a_non_zero_exit_is_still_an_error() {
    let log =
        r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}"#;
    let (_, outcome) = run::<Claude>(log, Some(2), "a\nb\n\nboom\n");
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("a\nb\nboom"));
    assert_eq!(outcome.final_message.as_deref(), Some("ok"));
}

#[test]
fn amp_init_without_model_and_user_echo() {
    // The ampcode.com streaming-json example.
    let log = r#"{"type":"system","subtype":"init","cwd":"/Users/mrnugget/work/amp","session_id":"T-2775dc92","tools":["oracle","..."],"mcp_servers":[]}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"what is 2+2?"}]},"parent_tool_use_id":null,"session_id":"T-2775dc92"}
{"type":"assistant","message":{"type":"message","role":"assistant","content":[{"type":"text","text":"2 + 2 equals 4."}],"stop_reason":"end_turn","usage":{"input_tokens":12783,"cache_creation_input_tokens":367,"cache_read_input_tokens":12416,"output_tokens":8}},"parent_tool_use_id":null,"session_id":"T-2775dc92"}
{"type":"result","subtype":"success","duration_ms":2906,"is_error":false,"num_turns":1,"result":"2 + 2 equals 4.","session_id":"T-2775dc92"}"#;
    let (events, outcome) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: None,
                session_id: Some("T-2775dc92".into()),
            },
            Event::Other("user".into()),
            Event::AssistantMessage("2 + 2 equals 4.".into()),
            Event::FinalMessage("2 + 2 equals 4.".into()),
        ]
    );
    assert_eq!(outcome.usage, None);
    assert_eq!(outcome.final_message.as_deref(), Some("2 + 2 equals 4."));
}

#[test]
fn usage_counts_cache_reads_and_writes_as_input() {
    let log = r#"{"type":"result","subtype":"success","is_error":false,"result":"4","session_id":"s","total_cost_usd":0.1354875,"usage":{"input_tokens":10,"cache_creation_input_tokens":21570,"cache_read_input_tokens":5,"output_tokens":25}}"#;
    let (_, outcome) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        outcome.usage,
        Some(Usage {
            input_tokens: Some(21585),
            output_tokens: Some(25),
            cached_input_tokens: Some(5),
            cost_usd: Some(0.1354875),
        })
    );
}

#[test]
fn qwen_result_usage_without_cost() {
    // Recorded qwen s1 result line.
    let log = r#"{"type":"result","subtype":"success","uuid":"bb42c687","session_id":"9fe27c78","is_error":false,"duration_ms":344,"num_turns":1,"result":"done","usage":{"input_tokens":200,"output_tokens":14,"cache_read_input_tokens":0,"total_tokens":214},"permission_denials":[]}"#;
    let (_, outcome) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        outcome.usage,
        Some(Usage {
            input_tokens: Some(200),
            output_tokens: Some(14),
            cached_input_tokens: Some(0),
            cost_usd: None,
        })
    );
}

#[test]
fn known_noise_is_other_and_unknown_types_are_skipped() {
    let log = r#"{"type":"stream_event","event":{"type":"content_block_delta"},"session_id":"s"}
{"type":"system","subtype":"hook_started","session_id":"s"}
{"type":"system","subtype":"compact_boundary","session_id":"s"}
{"type":"system","subtype":"brand_new","session_id":"s"}
{"type":"brand_new_type","session_id":"s"}
not json"#;
    let (events, _) = run::<Claude>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Session("s".into()),
            Event::Other("stream_event".into()),
            Event::Other("system/hook_started".into()),
            Event::Other("system/compact_boundary".into()),
            Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some("system/brand_new".into()),
            },
            Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some("brand_new_type".into()),
            },
            Event::Skipped {
                reason: SkipReason::NotJson,
                kind: None,
            },
        ]
    );
}

#[test]
fn odd_shapes_never_panic() {
    let huge = "x".repeat(1 << 20);
    let log = format!(
        r#"{{"type":"assistant","message":"text"}}
{{"type":"assistant"}}
{{"type":"assistant","message":{{"content":[{{"type":"tool_use"}},{{"type":"text","text":5}},7,null]}},"parent_tool_use_id":7}}
{{"type":"assistant","message":{{"content":[]}},"error":{{"code":1}}}}
{{"type":"user","message":{{"content":"hi"}}}}
{{"type":"user","message":{{"content":[{{"type":"tool_result"}}]}}}}
{{"type":"system"}}
{{"type":"system","subtype":"init","session_id":5,"model":[]}}
{{"type":"system","subtype":"api_retry","attempt":"x"}}
{{"type":"result","usage":5,"errors":[1,{{}},""],"total_cost_usd":"x","is_error":"yes"}}
{{"type":"result","subtype":7,"is_error":true,"errors":"boom"}}
{{"type":5}}
[1,2,3]
"just a string"
{{"type":"assistant","message":{{"content":[{{"type":"text","text":"{huge}"}}]}}}}
{{"type":"assistant","message":{{"content":[[[[[[{{"type":"text"}}]]]]]]}}}}"#
    );
    let (events, outcome) = run::<Claude>(&log, Some(0), "");
    assert!(!events.is_empty());
    assert!(outcome.is_error);
    assert!(events.contains(&Event::AssistantMessage(huge)));
}

#[test]
fn command_for_a_new_and_a_resumed_turn() {
    let mut turn = Turn {
        prompt_file: "/tmp/p.md".into(),
        workdir: "/repo".into(),
        model: None,
        effort: None,
        session_id: None,
        ..Turn::default()
    };
    let command = Claude::command(&turn);
    assert_eq!(
        command.args,
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions"
        ]
    );
    assert_eq!(command.brief, BriefDelivery::Stdin);
    assert_eq!(command.set_env, [("IS_SANDBOX".into(), "1".into())]);
    assert_eq!(command.remove_env, ["CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"]);

    turn.model = Some("claude-sonnet-4-5".into());
    turn.effort = Some("xhigh".into());
    turn.session_id = Some("526e215c".into());
    let args = Claude::command(&turn).args;
    assert_eq!(
        args[5..],
        [
            "--model",
            "claude-sonnet-4-5",
            "--effort",
            "xhigh",
            "--resume",
            "526e215c"
        ]
    );

    // A fork resumes the session as a new one; without a session there is
    // nothing to fork and the flag is left out.
    turn.fork = true;
    let args = Claude::command(&turn).args;
    assert_eq!(args[9..], ["--resume", "526e215c", "--fork-session"]);
    turn.session_id = None;
    assert!(
        !Claude::command(&turn)
            .args
            .iter()
            .any(|arg| arg == "--fork-session")
    );
}

#[test]
fn info_and_version() {
    let info = Claude::info();
    assert_eq!(info.name, "claude");
    assert_eq!(info.program, "claude");
    assert_eq!(info.state_dir.as_deref(), Some(".claude"));
    assert_eq!(info.managed_config, [".claude/settings.local.json"]);
    assert_eq!(
        info.secret_env,
        ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"]
    );
    assert_eq!(
        info.login_files[1].account_pointer.as_deref(),
        Some("/oauthAccount/emailAddress")
    );
    assert_eq!(info.efforts, ["low", "medium", "high", "xhigh", "max"]);
    assert_eq!(info.default_effort.as_deref(), Some("high"));
    let default = info.default_model.as_deref().unwrap();
    assert!(info.models.iter().any(|model| model == default));
    assert!(info.models.iter().any(|model| model == "claude-opus-4-8"));
    assert_eq!(info.resume, ResumeScope::SameDirectory);
    assert_eq!(
        Claude::parse_version("2.1.197 (Claude Code)\n").as_deref(),
        Some("2.1.197")
    );
}

#[test]
fn tool_counts_in_the_public_capture_shape() {
    // Three parallel calls then their three results, as in 2.1.15.
    let log = r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Bash","input":{"command":"ls"}}]},"session_id":"s"}
{"type":"assistant","message":{"content":[{"type":"tool_use","id":"b","name":"Bash","input":{"command":"date"}}]},"session_id":"s"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"b","is_error":false}]},"session_id":"s"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"a","is_error":true}]},"session_id":"s"}"#;
    let (events, _) = run::<Claude>(log, Some(0), "");
    let tools = tool_uses(&events);
    assert_eq!(tools.len(), 4);
    assert_eq!(tools[2].detail.as_deref(), Some("date"));
    assert_eq!(tools[3].phase, ToolPhase::Failed);
}

/// A line of valid JSON of a type the driver does not know is no failure:
/// it is skipped as unknown, named by its type, so that the host can count
/// it; a line that is not JSON is skipped as such.
#[test]
fn an_unknown_type_is_skipped_by_name_and_a_non_json_line_as_not_json() {
    let log = "{\"type\":\"from_a_newer_release\",\"payload\":{\"x\":1}}\nnot json at all\n";
    let (events, _) = run::<Claude>(log, Some(0), "");
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

#[test]
fn an_asking_turn_is_a_conversation_whose_permission_requests_the_host_decides() {
    let turn = Turn {
        brief: "Create out.txt".into(),
        ask: true,
        ..Turn::default()
    };
    let command = Claude::command(&turn);
    assert_eq!(command.brief, BriefDelivery::Conversation);
    assert!(
        !command
            .args
            .contains(&"--dangerously-skip-permissions".to_owned())
    );
    assert!(
        command
            .args
            .windows(2)
            .any(|pair| pair == ["--permission-prompt-tool", "stdio"])
    );
    let mut parser = Claude::parser(&turn);
    let opening: serde_json::Value = serde_json::from_str(&parser.opening()[0]).unwrap();
    assert_eq!(opening["message"]["content"], "Create out.txt");
    let request = r#"{"type":"control_request","request_id":"r-1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"echo hello > out.txt","description":"Write hello"},"description":"Write hello"}}"#;
    let fed = parser.feed(&[request.to_owned()]);
    let Some(Event::PermissionRequest(asked)) = fed.events.first() else {
        panic!("{:?}", fed.events);
    };
    assert_eq!((asked.key.as_str(), asked.kind.as_str()), ("r-1", "shell"));
    assert_eq!(asked.input.as_deref(), Some("echo hello > out.txt"));
    assert!(!fed.done);
    let answer: serde_json::Value =
        serde_json::from_str(&parser.decide("r-1", true, None)[0]).unwrap();
    assert_eq!(answer["response"]["request_id"], "r-1");
    assert_eq!(answer["response"]["response"]["behavior"], "allow");
    assert_eq!(
        answer["response"]["response"]["updatedInput"]["command"],
        "echo hello > out.txt"
    );
    assert!(
        parser.decide("r-1", false, None).is_empty(),
        "answered once"
    );
    let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s"}"#;
    assert!(parser.feed(&[result.to_owned()]).done);
    let unasked = Claude::command(&Turn::default());
    assert!(
        unasked
            .args
            .contains(&"--dangerously-skip-permissions".to_owned())
    );
    assert_eq!(unasked.brief, BriefDelivery::Stdin);
}

#[test]
fn a_question_of_claude_is_reported_as_one_and_its_answer_goes_back_in_the_input() {
    let turn = Turn {
        brief: "Pick a format".into(),
        ask: true,
        ..Turn::default()
    };
    let mut parser = Claude::parser(&turn);
    let request = r#"{"type":"control_request","request_id":"q-1","request":{"subtype":"can_use_tool","tool_name":"AskUserQuestion","input":{"questions":[{"question":"Which format?","header":"Format","options":[{"label":"Summary","description":"Brief"},{"label":"Detailed","description":"Full"}],"multiSelect":false}]}}}"#;
    let fed = parser.feed(&[request.to_owned()]);
    let Some(Event::PermissionRequest(asked)) = fed.events.first() else {
        panic!("{:?}", fed.events);
    };
    assert_eq!(
        (asked.key.as_str(), asked.kind.as_str(), asked.tool.as_str()),
        ("q-1", "question", "AskUserQuestion")
    );
    assert_eq!(asked.title, "Which format?");
    assert_eq!(
        asked.input.as_deref(),
        Some("Which format?\n- Summary\n- Detailed")
    );
    let labels: Vec<&str> = asked.options.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(labels, ["Summary", "Detailed"]);
    let answer: serde_json::Value =
        serde_json::from_str(&parser.decide("q-1", true, Some("Detailed"))[0]).unwrap();
    let response = &answer["response"]["response"];
    assert_eq!(response["behavior"], "allow");
    assert_eq!(
        response["updatedInput"]["answers"]["Which format?"],
        "Detailed"
    );
    assert_eq!(
        response["updatedInput"]["questions"][0]["header"], "Format",
        "the questions go back as they came"
    );

    // Unanswered (its deadline passed): the tool is refused, saying so.
    let again = request.replace("q-1", "q-2");
    parser.feed(&[again]);
    let refused: serde_json::Value =
        serde_json::from_str(&parser.decide("q-2", false, None)[0]).unwrap();
    assert_eq!(refused["response"]["response"]["behavior"], "deny");
    assert_eq!(
        refused["response"]["response"]["message"],
        "The user did not answer the question."
    );
}
