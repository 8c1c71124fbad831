//! Snippets from recorded and public codex logs, and odd input.

use cinch_driver_sdk::testing::{run, tool};

use super::*;

fn tools(events: &[Event]) -> Vec<&Event> {
    events
        .iter()
        .filter(|event| matches!(event, Event::ToolUse(_)))
        .collect()
}

fn turn(session_id: Option<&str>, effort: Option<&str>) -> Turn {
    Turn {
        prompt_file: "/tmp/cinch/prompt.md".into(),
        workdir: "/home/dev/repo".into(),
        model: Some("gpt-5.5".into()),
        effort: effort.map(str::to_owned),
        session_id: session_id.map(str::to_owned),
        ..Turn::default()
    }
}

#[test]
fn plain_answer() {
    let log = r#"{"type":"thread.started","thread_id":"01a235bd-a4c4-71a0-9c1c-5c3cc0841ffb"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"done"}}
{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":7,"reasoning_output_tokens":0}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "Reading additional input from stdin...\n");
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
                model: None,
                session_id: Some("01a235bd-a4c4-71a0-9c1c-5c3cc0841ffb".into()),
            },
            Event::Other("turn.started".into()),
            Event::AssistantMessage("done".into()),
            Event::Usage(usage),
        ]
    );
    assert_eq!(
        outcome,
        Outcome {
            final_message: Some("done".into()),
            session_id: Some("01a235bd-a4c4-71a0-9c1c-5c3cc0841ffb".into()),
            is_error: false,
            error: None,
            usage: Some(usage),
        }
    );
}

#[test]
fn shell_command_pairs_started_and_completed() {
    let log = r#"{"type":"thread.started","thread_id":"t"}
{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'echo hello > out.txt'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'echo hello > out.txt'","aggregated_output":"","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"I ran the command; out.txt now contains hello."}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    let command = Some("/bin/bash -lc 'echo hello > out.txt'");
    assert_eq!(
        tools(&events),
        [
            &tool("item_0", "shell", command, ToolPhase::Started),
            &tool("item_0", "shell", command, ToolPhase::Completed),
        ]
    );
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("I ran the command; out.txt now contains hello.")
    );
}

#[test]
fn failed_command_fails_the_call_not_the_turn() {
    let log = r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Preparing to execute command**"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Running `exit 42` now."}}
{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'exit 42'","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"/bin/bash -lc 'exit 42'","aggregated_output":"","exit_code":42,"status":"failed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"The command exited with code `42`."}}
{"type":"turn.completed","usage":{"input_tokens":15086,"cached_input_tokens":14080,"output_tokens":114}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    assert_eq!(
        events[0],
        Event::Thinking("**Preparing to execute command**".into())
    );
    assert_eq!(
        events[1],
        Event::AssistantMessage("Running `exit 42` now.".into())
    );
    let command = Some("/bin/bash -lc 'exit 42'");
    assert_eq!(
        events[3],
        tool("item_2", "shell", command, ToolPhase::Failed)
    );
    // A non-zero exit alone fails a call even when the status says otherwise.
    let (events, _) = run::<Codex>(
        r#"{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"false","exit_code":1,"status":"completed"}}"#,
        Some(0),
        "",
    );
    assert_eq!(
        events[1],
        tool("i", "shell", Some("false"), ToolPhase::Failed)
    );
    assert!(!outcome.is_error);
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("The command exited with code `42`.")
    );
    assert_eq!(
        outcome.usage.and_then(|usage| usage.cached_input_tokens),
        Some(14080)
    );
}

#[test]
fn api_error_fails_the_turn_with_its_message() {
    let log = r#"{"type":"thread.started","thread_id":"01a235bd-abe4-7950-9686-d160dc0de46a"}
{"type":"turn.started"}
{"type":"error","message":"unexpected status 401 Unauthorized: Incorrect API key provided: mock."}
{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Incorrect API key provided: mock."}}"#;
    let (events, outcome) = run::<Codex>(log, Some(1), "Reading additional input from stdin...\n");
    let message = "unexpected status 401 Unauthorized: Incorrect API key provided: mock.";
    assert_eq!(events[2], Event::Warning(message.into()));
    assert_eq!(events[3], Event::Error(message.into()));
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some(message));
    assert_eq!(
        outcome.session_id.as_deref(),
        Some("01a235bd-abe4-7950-9686-d160dc0de46a")
    );
    assert_eq!(outcome.final_message, None);
}

#[test]
fn reconnect_notices_are_warnings_and_only_turn_failed_is_fatal() {
    let reconnect = r#"{"type":"error","message":"Reconnecting... 5/5 (stream disconnected before completion: stream closed before response.completed)"}"#;
    let (events, outcome) = run::<Codex>(reconnect, Some(0), "");
    assert!(matches!(&events[0], Event::Warning(text) if text.starts_with("Reconnecting... 5/5")));
    assert!(!outcome.is_error);

    let failed = format!(
        "{reconnect}\n{}",
        r#"{"type":"turn.failed","error":{"message":"stream disconnected before completion: stream closed before response.completed"}}"#
    );
    let (_, outcome) = run::<Codex>(&failed, Some(1), "");
    assert!(outcome.is_error);
    assert_eq!(
        outcome.error.as_deref(),
        Some("stream disconnected before completion: stream closed before response.completed")
    );
}

#[test]
fn a_nonzero_exit_without_turn_failed_explains_itself() {
    // The last top-level error first,
    let (_, outcome) = run::<Codex>(
        r#"{"type":"error","message":"Reconnecting... 2/5"}"#,
        Some(1),
        "",
    );
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("Reconnecting... 2/5"));
    // then stderr without its routine lines,
    let stderr = "Reading additional input from stdin...\nError: unknown model gpt-9\n";
    let (_, outcome) = run::<Codex>(r#"{"type":"turn.started"}"#, Some(1), stderr);
    assert_eq!(outcome.error.as_deref(), Some("Error: unknown model gpt-9"));
    // then the exit itself.
    let (_, outcome) = run::<Codex>("", Some(2), "Reading additional input from stdin...\n");
    assert_eq!(outcome.error.as_deref(), Some("exited with code 2"));
    let (_, outcome) = run::<Codex>("", None, "");
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("killed by a signal"));
}

#[test]
fn an_interrupted_turn_is_fine_if_codex_exits_zero() {
    let log = r#"{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"halfway"}}"#;
    let (_, outcome) = run::<Codex>(log, Some(0), "");
    assert!(!outcome.is_error);
    assert_eq!(outcome.final_message.as_deref(), Some("halfway"));
    assert_eq!(outcome.usage, None);
}

#[test]
fn resume_reports_the_same_thread_and_a_running_total() {
    let log = r#"{"type":"thread.started","thread_id":"01a235bd-a4c4-71a0-9c1c-5c3cc0841ffb"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"resumed: history had 1 earlier model turn(s) and 3 user message(s)"}}
{"type":"turn.completed","usage":{"input_tokens":201,"cached_input_tokens":0,"cache_write_input_tokens":0,"output_tokens":14,"reasoning_output_tokens":0}}"#;
    let (_, outcome) = run::<Codex>(log, Some(0), "");
    assert_eq!(
        outcome.session_id.as_deref(),
        Some("01a235bd-a4c4-71a0-9c1c-5c3cc0841ffb")
    );
    assert_eq!(
        outcome.usage.and_then(|usage| usage.input_tokens),
        Some(201)
    );
}

#[test]
fn file_changes_one_event_per_file_in_either_kind_shape() {
    let log = r#"{"type":"item.completed","item":{"id":"item_1","type":"file_change","changes":[{"path":"/private/tmp/codex-research-test/hello.txt","kind":"add"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"a.rs","kind":{"type":"update","move_path":null},"diff":"@@"},{"path":"b.rs","kind":{"type":"delete"}}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"c.rs","kind":"update"}],"status":"failed"}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    let change = |path: &str, kind: &str| Event::FileChange {
        path: path.into(),
        kind: kind.into(),
    };
    assert_eq!(
        events,
        vec![
            change("/private/tmp/codex-research-test/hello.txt", "add"),
            change("a.rs", "update"),
            change("b.rs", "delete"),
            Event::Warning("file change failed: c.rs".into()),
        ]
    );
    assert!(!outcome.is_error);
}

#[test]
fn other_tool_items() {
    let log = r#"{"type":"item.started","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"query":"wasm"},"result":null,"error":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"m","type":"mcp_tool_call","server":"docs","tool":"search","arguments":{"query":"wasm"},"result":null,"error":{"message":"boom"},"status":"failed"}}
{"type":"item.completed","item":{"id":"w","type":"web_search","query":"rust async"}}
{"type":"item.started","item":{"id":"c","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t","receiver_thread_ids":[],"prompt":"Count the files","agents_states":{},"status":"in_progress"}}
{"type":"item.completed","item":{"id":"c","type":"collab_tool_call","tool":"spawn_agent","sender_thread_id":"t","receiver_thread_ids":["u"],"prompt":"Count the files","agents_states":{},"status":"completed"}}
{"type":"item.updated","item":{"id":"todo","type":"todo_list","items":[{"text":"a","completed":true}]}}
{"type":"item.completed","item":{"id":"e","type":"error","message":"Model metadata for `gpt-5.1-codex` not found"}}"#;
    let (events, _) = run::<Codex>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            tool("m", "docs.search", Some("wasm"), ToolPhase::Started),
            tool("m", "docs.search", Some("wasm"), ToolPhase::Failed),
            // Seen only completed: started first, so the host sees both.
            tool("w", "web_search", Some("rust async"), ToolPhase::Started),
            tool("w", "web_search", Some("rust async"), ToolPhase::Completed),
            tool(
                "c",
                "spawn_agent",
                Some("Count the files"),
                ToolPhase::Started
            ),
            tool(
                "c",
                "spawn_agent",
                Some("Count the files"),
                ToolPhase::Completed
            ),
            Event::Other("todo_list".into()),
            Event::Warning("Model metadata for `gpt-5.1-codex` not found".into()),
        ]
    );
}

#[test]
fn web_search_takes_the_query_that_arrives_with_its_result() {
    let log = r#"{"type":"item.started","item":{"id":"ws","type":"web_search","query":"","action":{"type":"other"}}}
{"type":"item.completed","item":{"id":"ws","type":"web_search","query":"","action":{"type":"open_page","url":"https://example.com"}}}"#;
    let (events, _) = run::<Codex>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            tool("ws", "web_search", None, ToolPhase::Started),
            tool(
                "ws",
                "web_search",
                Some("https://example.com"),
                ToolPhase::Completed
            ),
        ]
    );
}

#[test]
fn legacy_format() {
    let log = r#"{"model":"gpt-5","provider":"openai","approval":"never","sandbox":"danger-full-access","workdir":"/repo","reasoning effort":"medium"}
{"prompt":"List the files"}
{"id":"1","msg":{"type":"task_started"}}
{"id":"1","msg":{"type":"agent_reasoning","text":"**Inspecting the directory tree**"}}
{"id":"1","msg":{"type":"exec_command_begin","call_id":"call_I1o1","command":["bash","-lc","ls -1"],"cwd":"/Users/user/dev/vk-wip"}}
{"id":"1","msg":{"type":"exec_command_end","call_id":"call_I1o1","stdout":"AGENT.md\n","stderr":"","exit_code":0}}
{"id":"1","msg":{"type":"patch_apply_begin","call_id":"p1","auto_approved":true,"changes":{"src/a.rs":{"update":{"unified_diff":"@@","move_path":null}},"b.rs":{"type":"add","content":"x"}}}}
{"id":"1","msg":{"type":"patch_apply_end","call_id":"p1","stdout":"","stderr":"","success":true}}
{"id":"1","msg":{"type":"agent_message","message":"It is a Rust project."}}
{"id":"1","msg":{"type":"token_count","input_tokens":10,"cached_input_tokens":2,"output_tokens":3,"total_tokens":13}}
{"id":"1","msg":{"type":"task_complete","last_agent_message":"It is a Rust project."}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    let mut changes: Vec<&Event> = events
        .iter()
        .filter(|event| matches!(event, Event::FileChange { .. }))
        .collect();
    changes.sort_by_key(|event| format!("{event:?}"));
    assert_eq!(
        events[..6],
        [
            Event::Started {
                model: Some("gpt-5".into()),
                session_id: None,
            },
            Event::Other("prompt".into()),
            Event::Other("task_started".into()),
            Event::Thinking("**Inspecting the directory tree**".into()),
            tool(
                "call_I1o1",
                "shell",
                Some("bash -lc ls -1"),
                ToolPhase::Started
            ),
            tool(
                "call_I1o1",
                "shell",
                Some("bash -lc ls -1"),
                ToolPhase::Completed
            ),
        ]
    );
    assert_eq!(
        changes,
        [
            &Event::FileChange {
                path: "b.rs".into(),
                kind: "add".into(),
            },
            &Event::FileChange {
                path: "src/a.rs".into(),
                kind: "update".into(),
            },
        ]
    );
    assert_eq!(
        events.last(),
        Some(&Event::FinalMessage("It is a Rust project.".into()))
    );
    assert_eq!(
        outcome,
        Outcome {
            final_message: Some("It is a Rust project.".into()),
            session_id: None,
            is_error: false,
            error: None,
            usage: Some(Usage {
                input_tokens: Some(10),
                output_tokens: Some(3),
                cached_input_tokens: Some(2),
                cost_usd: None,
            }),
        }
    );
}

#[test]
fn legacy_without_config_starts_at_task_started_and_errors_are_fatal() {
    let log = r#"{"id":"1","msg":{"type":"task_started"}}
{"id":"1","msg":{"type":"exec_command_begin","call_id":"c","command":["bash","-lc","exit 3"]}}
{"id":"1","msg":{"type":"exec_command_end","call_id":"c","exit_code":3}}
{"id":"1","msg":{"type":"stream_error","message":"stream error: retrying 1/5"}}
{"id":"1","msg":{"type":"error","message":"stream disconnected"}}
{"id":"1","msg":{"type":"task_complete","last_agent_message":null}}"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    assert_eq!(
        events,
        vec![
            Event::Started {
                model: None,
                session_id: None,
            },
            tool("c", "shell", Some("bash -lc exit 3"), ToolPhase::Started),
            tool("c", "shell", Some("bash -lc exit 3"), ToolPhase::Failed),
            Event::Warning("stream error: retrying 1/5".into()),
            Event::Error("stream disconnected".into()),
            Event::Other("task_complete".into()),
        ]
    );
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("stream disconnected"));
}

#[test]
fn odd_input_never_panics() {
    let log = r#"{"type":"item.completed"}
{"type":"item.completed","item":"x"}
{"type":"item.completed","item":{"type":"agent_message","text":7}}
{"type":"item.completed","item":{"id":5,"type":"command_execution","command":["a"],"exit_code":"x","status":3}}
{"type":"item.completed","item":{"type":"file_change","changes":"all"}}
{"type":"item.completed","item":{"type":"file_change","changes":[{"kind":"add"},{"path":"p","kind":{}}]}}
{"type":"item.completed","item":{"type":"brand_new","x":1}}
{"type":"thread.started","thread_id":null}
{"type":"turn.completed","usage":"lots"}
{"type":"turn.failed"}
{"type":"error"}
{"type":"something.new"}
{"id":"1","msg":{"type":"exec_command_end"}}
{"id":"1","msg":{"type":"patch_apply_begin","changes":[]}}
{"id":"1","msg":{"type":"token_count","info":null}}
{"id":"1","msg":{}}
[1,2,3]
"just a string"
not json at all"#;
    let (events, outcome) = run::<Codex>(log, Some(0), "");
    assert!(events.contains(&Event::Skipped {
        reason: SkipReason::Unknown,
        kind: Some("item:brand_new".into()),
    }));
    assert!(events.contains(&Event::Skipped {
        reason: SkipReason::Unknown,
        kind: Some("something.new".into()),
    }));
    assert!(events.contains(&Event::Skipped {
        reason: SkipReason::NotJson,
        kind: None,
    }));
    assert!(events.contains(&Event::FileChange {
        path: "p".into(),
        kind: "change".into(),
    }));
    // A `turn.failed` without a message still fails the turn.
    assert!(outcome.is_error);
    assert_eq!(outcome.error.as_deref(), Some("the turn failed"));
}

#[test]
fn commands_for_a_new_and_a_resumed_turn() {
    let command = Codex::command(&turn(None, Some("high")));
    assert_eq!(
        command.args,
        [
            "exec",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.5",
            "-c",
            "model_reasoning_effort=\"high\"",
            "-",
        ]
    );
    assert_eq!(command.brief, BriefDelivery::Stdin);
    let command = Codex::command(&turn(Some("01a235bd-a4c4"), None));
    assert_eq!(
        command.args,
        [
            "exec",
            "resume",
            "--json",
            "--dangerously-bypass-approvals-and-sandbox",
            "--skip-git-repo-check",
            "-m",
            "gpt-5.5",
            "01a235bd-a4c4",
            "-",
        ]
    );
    // cinch's model ids carry their vendor; codex takes the bare slug.
    let mut vendored = turn(None, None);
    vendored.model = Some("openai/gpt-5.6-sol".into());
    let args = Codex::command(&vendored).args;
    assert!(
        args.windows(2).any(|pair| pair == ["-m", "gpt-5.6-sol"]),
        "{args:?}"
    );
    // An effort is quoted as a TOML string, whatever it holds.
    let command = Codex::command(&turn(None, Some("x\" y")));
    assert!(
        command
            .args
            .contains(&"model_reasoning_effort=\"x\\\" y\"".to_owned())
    );
}

#[test]
fn info_and_version() {
    let info = Codex::info();
    assert_eq!(info.name, "codex");
    assert_eq!(info.state_dir.as_deref(), Some(".codex"));
    assert_eq!(
        info.efforts,
        ["minimal", "low", "medium", "high", "xhigh", "max"]
    );
    assert_eq!(info.default_model.as_deref(), Some("openai/gpt-6.2-sol"));
    assert!(
        info.models
            .iter()
            .any(|model| model == "openai/gpt-5.6-sol")
    );
    assert_eq!(info.resume, ResumeScope::Anywhere);
    assert_eq!(
        Codex::parse_version("codex-cli 0.171.0\n").as_deref(),
        Some("0.171.0")
    );
}

/// A line of valid JSON of a type the driver does not know is no failure:
/// it is skipped as unknown, named by its type, so that the host can count
/// it; a line that is not JSON is skipped as such.
#[test]
fn an_unknown_type_is_skipped_by_name_and_a_non_json_line_as_not_json() {
    let log = "{\"type\":\"from_a_newer_release\",\"payload\":{\"x\":1}}\nnot json at all\n";
    let (events, _) = run::<Codex>(log, Some(0), "");
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
