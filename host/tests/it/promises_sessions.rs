//! Promises of tasks, sessions and their live events, each through a real
//! `cinch serve` on loopback with a real SQLite file and the fake CLI as
//! `claude`: a message list shows every change at once, in sequence order; a
//! prompt that waited for capacity is kept for the resume; a task stays
//! active; a preview keeps identifiers whole; a binary attachment reaches
//! the agent as a file that is never committed; a restarted server sends each
//! progress line once.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// A claude stream-json turn that reports `session` and says `text`.
fn claude_turn(session: &str, text: &str) -> Vec<Value> {
    vec![
        json!({"type": "system", "subtype": "init", "session_id": session, "model": "m"}),
        json!({"type": "assistant", "session_id": session,
               "message": {"content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
               "session_id": session}),
    ]
}

/// A turn that says `text` and then runs until it is stopped.
fn endless_turn(session: &str, text: &str) -> Script {
    Script {
        lines: claude_turn(session, text),
        hang_ms: -1,
        ..Script::default()
    }
}

fn text(value: &Value) -> String {
    value
        .as_str()
        .unwrap_or_else(|| panic!("not text: {value}"))
        .to_owned()
}

/// The brief the harness last read, from its record.
fn recorded_brief(record: &Path) -> String {
    let record: Value = serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
    text(&record["stdin"])
}

fn environment(api: &Api<'_>, world: &World) -> String {
    api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }))
}

/// Creates a task with `body`; its id and its first session's id.
fn start_task(api: &Api<'_>, body: Value) -> (String, String) {
    let created = api.post("/tasks", body);
    assert_eq!(created.status, 201, "{created:?}");
    let task = text(&created.data()["id"]);
    let session = text(&api.first_session(&task)["id"]);
    (task, session)
}

fn post_message(api: &Api<'_>, task: &str, session: &str, message: &str) -> Value {
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({ "message": message }),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    sent.data()
}

fn abort(api: &Api<'_>, task: &str, session: &str) {
    let aborted = api.post(
        &format!("/tasks/{task}/sessions/{session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
}

/// The session's messages, one page, oldest first.
fn messages(api: &Api<'_>, task: &str, session: &str) -> Vec<Value> {
    let page = api.messages(task, session, "");
    assert_eq!(page.status, 200, "{page:?}");
    page.data().as_array().unwrap().clone()
}

/// `(type, content, sequence)` of each message.
fn summary(messages: &[Value]) -> Vec<(String, String, Option<i64>)> {
    messages
        .iter()
        .map(|m| {
            (
                text(&m["type"]),
                text(&m["content"]),
                m["sequence"].as_i64(),
            )
        })
        .collect()
}

/// Delivered messages by sequence, then the queued ones (sequence null).
fn assert_in_sequence_order(messages: &[Value]) {
    let sequences: Vec<Option<i64>> = messages.iter().map(|m| m["sequence"].as_i64()).collect();
    let delivered: Vec<i64> = sequences.iter().map_while(|s| *s).collect();
    assert!(
        delivered.windows(2).all(|pair| pair[0] < pair[1])
            && sequences[delivered.len()..].iter().all(Option::is_none),
        "not in sequence order: {sequences:?}"
    );
}

#[test]
fn the_message_list_shows_every_change_at_once_in_sequence_order() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = environment(&api, &world);
    world.script(endless_turn("sess-m", "Working on it."));
    let (task, session) = start_task(
        &api,
        json!({"title": "Busy", "prompt": "Take your time.", "environment_id": environment}),
    );
    api.wait_turn_message(&task, &session);
    let first = messages(&api, &task, &session);
    assert_eq!(
        first.iter().map(|m| text(&m["type"])).collect::<Vec<_>>(),
        ["user", "assistant"],
        "{first:#?}"
    );

    // A follow-up mid-turn: the page read a moment ago must not hide it,
    // nor its queue-operation note; it is listed after the delivered ones.
    post_message(&api, &task, &session, "Also check the README.");
    let queued = messages(&api, &task, &session);
    let listed = summary(&queued);
    assert_eq!(listed.len(), 4, "{listed:#?}");
    assert_eq!(listed[2].0, "queue-operation", "{listed:#?}");
    assert_eq!(listed[2].2, Some(3));
    assert_eq!(
        listed[3],
        ("user".to_owned(), "Also check the README.".to_owned(), None)
    );
    assert_in_sequence_order(&queued);

    // An attachment's note, at once too.
    let attached = api.post(
        &format!("/tasks/{task}/attachments"),
        json!({"name": "ticket", "text": "PROJ-7: the README is stale."}),
    );
    assert_eq!(attached.status, 201, "{attached:?}");
    let noted = messages(&api, &task, &session);
    assert!(
        summary(&noted)
            .iter()
            .any(|(kind, content, sequence)| kind == "attachment"
                && content == "attached ticket"
                && sequence.is_some()),
        "{noted:#?}"
    );
    assert_in_sequence_order(&noted);

    // The turn is stopped; the next one starts with the follow-up. Read
    // the list all along: no read may keep a page from before the new
    // assistant message.
    world.script(endless_turn("sess-m", "README checked."));
    abort(&api, &task, &session);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let current = messages(&api, &task, &session);
        let turns: Vec<&str> = current
            .iter()
            .filter(|m| m["type"] == "assistant")
            .map(|m| m["turn"]["status"].as_str().unwrap_or_default())
            .collect();
        let session_now = api.session(&task, &session);
        if turns == ["cancelled", "running"] && session_now["status"] == "running" {
            let kinds: Vec<String> = current.iter().map(|m| text(&m["type"])).collect();
            assert_eq!(kinds.last().map(String::as_str), Some("assistant"));
            assert!(current.iter().all(|m| !m["sequence"].is_null()));
            assert_in_sequence_order(&current);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the second turn's message never showed: {current:#?}\n{session_now:#}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }

    // Pages walked either way hold the same list, in sequence order.
    let whole = messages(&api, &task, &session);
    let ids = |list: &[Value]| list.iter().map(|m| m["id"].clone()).collect::<Vec<_>>();
    assert_eq!(ids(&api.walk(&task, &session, "asc", 1)), ids(&whole));
    let mut backward = ids(&api.walk(&task, &session, "desc", 2));
    backward.reverse();
    assert_eq!(backward, ids(&whole));
    abort(&api, &task, &session);
    api.wait_status(&task, &session, "idle");
    let kinds = api.assert_listing_reads_as_its_events(&task, &session);
    for kind in ["queue-operation", "attachment"] {
        assert!(kinds.iter().any(|listed| listed == kind), "{kinds:?}");
    }
}

/// Two tasks on one turn slot: the first runs until stopped, the second's
/// session waits. Their ids: (first task, first session, second task,
/// second session).
fn one_busy_one_waiting(
    api: &Api<'_>,
    world: &World,
    record: &Path,
) -> (String, String, String, String) {
    let environment = environment(api, world);
    world.script(Script {
        write_files: [(".busy-started".to_owned(), "yes\n".to_owned())].into(),
        ..endless_turn("sess-busy", "Busy.")
    });
    let (busy_task, busy) = start_task(
        api,
        json!({"title": "Busy", "prompt": "Hold the slot.", "environment_id": environment}),
    );
    // The busy CLI has read its script (and holds the slot) before the
    // script is rewritten for the next one.
    let running = api.wait(&busy_task, &busy, "its CLI started", |s| {
        s["status"] == "running"
            && s["workspace"]
                .as_str()
                .is_some_and(|dir| Path::new(dir).join(".busy-started").exists())
    });
    assert_eq!(running["status"], "running");
    world.script(Script {
        lines: claude_turn("sess-late", "Did both."),
        record: Some(record.to_path_buf()),
        ..Script::default()
    });
    let (task, session) = start_task(
        api,
        json!({"title": "Late", "prompt": "The first prompt.", "environment_id": environment}),
    );
    (busy_task, busy, task, session)
}

/// The prompt is still queued (sequence null), and nothing says it was dropped.
fn assert_prompt_kept(api: &Api<'_>, task: &str, session: &str) {
    let listed = summary(&messages(api, task, session));
    assert_eq!(
        listed,
        [(
            "user".to_owned(),
            "The first prompt.".to_owned(),
            None::<i64>
        )],
        "the prompt must stay queued, undelivered"
    );
}

/// Frees the slot, then resumes the closed session with a message: its
/// turn gets the kept prompt and the new message, in order.
fn resume_with_both(api: &Api<'_>, busy: (&str, &str), task: &str, session: &str, record: &Path) {
    abort(api, busy.0, busy.1);
    api.wait_status(busy.0, busy.1, "idle");
    post_message(api, task, session, "And the second.");
    let done = api.wait(task, session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-late"
    });
    assert_eq!(done["close_reason"], Value::Null);
    let brief = recorded_brief(record);
    let (first, second) = (
        brief.find("The first prompt.").expect(&brief),
        brief.find("And the second.").expect(&brief),
    );
    assert!(first < second, "{brief}");
    let listed = summary(&messages(api, task, session));
    let kinds: Vec<&str> = listed.iter().map(|(kind, _, _)| kind.as_str()).collect();
    assert_eq!(kinds, ["user", "user", "assistant"], "{listed:#?}");
    assert!(listed.iter().all(|(_, _, sequence)| sequence.is_some()));
}

#[test]
fn a_capacity_close_keeps_the_prompt_for_the_resume() {
    let world = World::new();
    let server = world.serve_with(&["--max-turns", "1", "--wait-limit-minutes", "0"]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let record = world.path("out/record.json");
    let (busy_task, busy, task, session) = one_busy_one_waiting(&api, &world, &record);
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "resource_exhausted", "{closed:#}");
    assert_prompt_kept(&api, &task, &session);
    assert!(
        text(&closed["error_message"]).contains("queued messages are kept"),
        "{closed:#}"
    );
    resume_with_both(&api, (&busy_task, &busy), &task, &session, &record);
}

#[test]
fn a_wait_past_its_limit_is_closed_while_the_server_runs() {
    let world = World::new();
    world.configure("wait_limit_seconds = 8");
    // Retries are an hour apart: only a sweep can end the eight-second wait.
    let server = world.serve_with(&["--max-turns", "1", "--retry-seconds", "3600"]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let record = world.path("out/record.json");
    let (busy_task, busy, task, session) = one_busy_one_waiting(&api, &world, &record);
    let waiting = api.wait_status(&task, &session, "waiting");
    assert!(waiting["waiting_since"].is_string());
    let deadline = Instant::now() + Duration::from_secs(100);
    let closed = loop {
        let current = api.session(&task, &session);
        if current["status"] == "closed" {
            break current;
        }
        assert!(
            Instant::now() < deadline,
            "the wait outlived its limit: {current:#}"
        );
        std::thread::sleep(Duration::from_millis(500));
    };
    assert_eq!(closed["close_reason"], "resource_exhausted", "{closed:#}");
    assert!(
        text(&closed["error_message"]).contains("No turn slot came free in 8 seconds"),
        "{closed:#}"
    );
    assert_eq!(closed["waiting_since"], Value::Null);
    assert_prompt_kept(&api, &task, &session);
    resume_with_both(&api, (&busy_task, &busy), &task, &session, &record);
}

#[test]
fn a_wait_that_outlived_a_restart_keeps_its_prompt() {
    let world = World::new();
    let mut server = world.serve_with(&["--max-turns", "1"]);
    let token = world.admin_token();
    let record = world.path("out/record.json");
    let (busy_task, busy, task, session) = {
        let api = Api::new(&server, &token);
        let ids = one_busy_one_waiting(&api, &world, &record);
        api.wait_status(&ids.2, &ids.3, "waiting");
        ids
    };
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    // Down longer than the new server's whole retry schedule (a zero limit,
    // a retry a second): the wait outlived it.
    std::thread::sleep(Duration::from_secs(5));
    server = world.serve_with(&[
        "--max-turns",
        "1",
        "--retry-seconds",
        "1",
        "--wait-limit-minutes",
        "0",
    ]);
    let api = Api::new(&server, &token);
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "waiting_timeout", "{closed:#}");
    assert_prompt_kept(&api, &task, &session);
    api.wait_status(&busy_task, &busy, "running");
    resume_with_both(&api, (&busy_task, &busy), &task, &session, &record);
}

#[test]
fn a_conversation_stays_active_when_its_sessions_close() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = environment(&api, &world);
    world.script(Script {
        lines: claude_turn("sess-a", "Done."),
        ..Script::default()
    });
    let (task, session) = start_task(
        &api,
        json!({"prompt": "Quick.", "environment_id": environment, "idle_timeout_seconds": 1}),
    );
    assert_eq!(
        api.get(&format!("/tasks/{task}")).data()["status"],
        "active"
    );
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "completed");
    let read = api.get(&format!("/tasks/{task}")).data();
    assert_eq!(read["status"], "active", "{read:#}");
    let listed = api.get("/tasks").data();
    assert_eq!(listed[0]["id"], json!(task));
    assert_eq!(listed[0]["status"], "active", "{listed:#}");

    // Closed by hand, too.
    post_message(&api, &task, &session, "Once more.");
    api.wait(&task, &session, "a second turn", |_| {
        messages(&api, &task, &session)
            .iter()
            .filter(|m| m["type"] == "assistant" && m["turn"]["status"] == "completed")
            .count()
            == 2
    });
    let closed = server.patch(
        &api.path(&format!("/tasks/{task}/sessions/{session}")),
        &token,
        &json!({"status": "closed"}),
    );
    assert_eq!(closed.status, 200, "{closed:?}");
    assert_eq!(
        api.get(&format!("/tasks/{task}")).data()["status"],
        "active"
    );
}

#[test]
fn the_preview_strips_markdown_but_keeps_identifiers() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = environment(&api, &world);
    world.script(Script {
        lines: claude_turn(
            "sess-p",
            "## Renamed\n\nRenamed `snake_case_name` to **snake_case_name** in file_a.rs; \
             2 * 3 * 4 is _still_ 24 and f(*args) works.",
        ),
        ..Script::default()
    });
    let (task, session) = start_task(
        &api,
        json!({"prompt": "Rename it.", "environment_id": environment}),
    );
    api.wait_status(&task, &session, "idle");
    assert_eq!(
        api.get(&format!("/tasks/{task}")).data()["last_message_preview"],
        "Renamed Renamed snake_case_name to snake_case_name in file_a.rs; 2 * 3 * 4 is still 24 and f(*args) works."
    );
}

#[test]
fn a_binary_attachment_reaches_the_agent_as_a_file_never_committed() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = environment(&api, &world);
    let record = world.path("out/record.json");
    world.script(Script {
        lines: claude_turn("sess-b", "Looked at the screenshot."),
        write_files: [("fix.txt".to_owned(), "fixed\n".to_owned())].into(),
        record: Some(record.clone()),
        ..Script::default()
    });
    // A PNG's signature and a few bytes that are not UTF-8.
    let bytes: [u8; 12] = [
        0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n', 0, 0xff, 0xfe, 7,
    ];
    let created = api.post(
        "/tasks",
        json!({
            "title": "Fix the login screen",
            "environment_id": environment,
            "attachments": [{"name": "Login screen", "mimeType": "image/png", "blob": "iVBORw0KGgoA//4H"}],
        }),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = text(&created.data()["id"]);
    let started = api.post(
        &format!("/tasks/{task}/sessions"),
        json!({"prompt": "Match the screenshot.", "branch_name": "fix/login", "auto_commit": true}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let session = text(&started.data()["id"]);
    let idle = api.wait(&task, &session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-b"
    });
    let workspace = PathBuf::from(text(&idle["workspace"]));

    // The brief names the file; it is in the workspace, with the bytes.
    let brief = recorded_brief(&record);
    let start = brief.find(".cinch/attachments/").expect(&brief);
    let path_start = brief[..start].rfind(' ').unwrap() + 1;
    let path_end = start + brief[start..].find(';').expect(&brief);
    let path = PathBuf::from(&brief[path_start..path_end]);
    assert!(path.starts_with(&workspace), "{brief}");
    assert!(path.extension().is_some_and(|e| e == "png"), "{brief}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert!(brief.contains("image/png, 12 bytes"), "{brief}");
    assert!(!brief.contains("not included"), "{brief}");

    // Neither the turn's diff, its checkpoint, nor the branch holds it.
    let turn = messages(&api, &task, &session)
        .into_iter()
        .find(|m| m["type"] == "assistant")
        .unwrap()["turn"]
        .clone();
    let files: Vec<String> = turn["result"]["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| text(&file["path"]))
        .collect();
    assert_eq!(files, ["fix.txt"], "{turn:#}");
    let call = text(&turn["call_id"]);
    let diff = server.get(&format!("/api/runs/{session}/tasks/{call}/diff"), &token);
    assert_eq!(diff.status, 200, "{diff:?}");
    assert!(diff.text.contains("fix.txt"), "{}", diff.text);
    assert!(!diff.text.contains(".cinch"), "{}", diff.text);
    let end = text(&turn["result"]["end_checkpoint"]);
    let checkpointed = git_output(&workspace, &["ls-tree", "-r", "--name-only", &end]);
    assert!(checkpointed.contains("fix.txt"), "{checkpointed}");
    assert!(!checkpointed.contains(".cinch"), "{checkpointed}");
    let committed = git_output(&workspace, &["ls-tree", "-r", "--name-only", "fix/login"]);
    assert!(committed.contains("fix.txt"), "{committed}");
    assert!(!committed.contains(".cinch"), "{committed}");
    assert_eq!(
        git_output(&workspace, &["status", "--porcelain"]),
        "",
        "the workspace is clean after cinch's commit"
    );
}

#[test]
fn a_restarted_server_sends_each_progress_line_once() {
    let world = World::new();
    let mut server = world.serve();
    let token = world.admin_token();
    let environment = environment(&Api::new(&server, &token), &world);
    let mut lines = claude_turn("sess-r", "Survived the restart.");
    lines.splice(
        1..1,
        (0..30).map(|n| {
            json!({"type": "assistant", "session_id": "sess-r",
            "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash",
                                     "input": {"command": format!("echo step-{n}")}}]}})
        }),
    );
    world.script(Script {
        lines,
        line_delay_ms: 100,
        ..Script::default()
    });
    let (task, session) = start_task(
        &Api::new(&server, &token),
        json!({"prompt": "Take a while.", "environment_id": environment}),
    );
    let events_path =
        Api::new(&server, &token).path(&format!("/tasks/{task}/sessions/{session}/events"));
    let progress_lines = |events: &[(u64, String, Value)]| -> Vec<String> {
        events
            .iter()
            .filter(|(_, name, _)| name == "tool.progress")
            .flat_map(|(_, _, data)| data["lines"].as_array().unwrap().clone())
            .map(|line| text(&line))
            .collect()
    };
    let before = server.stream(&events_path, &token, None, |events| {
        progress_lines(events)
            .iter()
            .filter(|line| line.contains("step-"))
            .count()
            >= 5
    });
    let seen = before.last().unwrap().0;

    // Killed mid-turn (SIGKILL): the supervisor carries on, the new server
    // follows it again.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    let api = Api::new(&server, &token);
    let done = api.wait_status(&task, &session, "idle");
    assert_eq!(done["harness_session_id"], "sess-r");

    // A client resuming where it was gets each line once: none it had.
    let after = server.stream(&events_path, &token, Some(seen), |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    assert_eq!(after[0].0, seen + 1);
    let mut resumed = progress_lines(&before);
    resumed.extend(progress_lines(&after));
    let expected: Vec<String> = (0..30).map(|n| format!("Bash: echo step-{n}")).collect();
    let steps: Vec<String> = resumed
        .iter()
        .filter(|line| line.contains("step-"))
        .cloned()
        .collect();
    assert_eq!(steps, expected, "a resumed client's lines");

    // A fresh client reads the stored events: each line once.
    let fresh = server.stream(&events_path, &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    let fresh_lines = progress_lines(&fresh);
    let unique: HashSet<&String> = fresh_lines.iter().collect();
    assert_eq!(unique.len(), fresh_lines.len(), "{fresh_lines:#?}");
    assert_eq!(fresh_lines, resumed);
}

#[test]
fn reading_a_finished_code_task_after_a_restart_publishes_nothing_again() {
    let world = World::new();
    let mut server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let created = api.post(
        "/environments",
        json!({"name": "app", "repository": world.path("repo").display().to_string()}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let mut lines = claude_turn("sess-c", "Done.");
    lines.splice(
        1..1,
        (0..5).map(|n| {
            json!({"type": "assistant", "session_id": "sess-c",
            "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash",
                                     "input": {"command": format!("echo call-{n}")}}]}})
        }),
    );
    world.script(Script {
        lines,
        ..Script::default()
    });
    let tasks = "/api/runs/run-1/tasks";
    let body = json!({"brief": "Echo.", "harness": "claude", "repo": "app"});
    let first = server.post(&format!("{tasks}?wait=true"), &token, &body);
    assert_eq!(first.status, 201, "{first:?}");
    let first_call = text(&first.json()["call_id"]);

    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    // Reading the status follows the finished turn again, to read its result.
    let status = server.get(&format!("{tasks}/{first_call}"), &token);
    assert_eq!(status.status, 200, "{status:?}");
    assert_eq!(status.json()["status"], "completed", "{status:?}");
    let second = server.post(&format!("{tasks}?wait=true"), &token, &body);
    assert_eq!(second.status, 201, "{second:?}");
    let second_call = text(&second.json()["call_id"]);

    let events = server.events("run-1", &token, None, |events| {
        events.iter().any(|(_, name, data)| {
            name == "tool.ended" && data["tool_call_id"] == json!(second_call)
        })
    });
    let of_first: Vec<&(u64, String, Value)> = events
        .iter()
        .filter(|(_, _, data)| data["tool_call_id"] == json!(first_call))
        .collect();
    let first_lines: Vec<String> = of_first
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .flat_map(|(_, _, data)| data["lines"].as_array().unwrap().clone())
        .map(|line| text(&line))
        .collect();
    let steps: Vec<&String> = first_lines
        .iter()
        .filter(|line| line.contains("call-"))
        .collect();
    assert_eq!(steps.len(), 5, "{first_lines:#?}");
    let unique: HashSet<&String> = first_lines.iter().collect();
    assert_eq!(unique.len(), first_lines.len(), "{first_lines:#?}");
    let ends = of_first
        .iter()
        .filter(|(_, name, _)| name == "tool.ended")
        .count();
    assert_eq!(ends, 1, "{of_first:#?}");
}

#[test]
fn concurrent_reads_after_a_restart_follow_a_code_task_once() {
    let world = World::new();
    let mut server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let created = api.post(
        "/environments",
        json!({"name": "app", "repository": world.path("repo").display().to_string()}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let mut lines = claude_turn("sess-d", "Done.");
    lines.splice(
        1..1,
        (0..40).map(|n| {
            json!({"type": "assistant", "session_id": "sess-d",
            "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash",
                                     "input": {"command": format!("echo read-{n}")}}]}})
        }),
    );
    world.script(Script {
        lines,
        line_delay_ms: 50,
        ..Script::default()
    });
    let tasks = "/api/runs/run-2/tasks";
    let started = server.post(
        tasks,
        &token,
        &json!({"brief": "Echo.", "harness": "claude", "repo": "app"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let call = text(&started.json()["call_id"]);

    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    let status_path = format!("{tasks}/{call}");
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| {
                let status = server.get(&status_path, &token);
                assert_eq!(status.status, 200, "{status:?}");
            });
        }
    });
    let events = server.events("run-2", &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    let progress: Vec<String> = events
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .flat_map(|(_, _, data)| data["lines"].as_array().unwrap().clone())
        .map(|line| text(&line))
        .filter(|line| line.contains("read-"))
        .collect();
    let expected: Vec<String> = (0..40).map(|n| format!("Bash: echo read-{n}")).collect();
    assert_eq!(progress, expected);
}
