//! Tasks, sessions, messages and attachments over HTTP against a real
//! `cinch serve` with a real SQLite file, the fake CLI as `claude`, real git
//! worktrees and real supervisors: the spec's examples one by one, follow-ups,
//! capacity, abort, close, idle teardown, idempotency, pagination, a restart
//! mid-turn and bad input.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// How many assistant messages (turns) a page holds.
fn assistants(messages: &Value) -> usize {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["type"] == "assistant")
        .count()
}

/// How many assistant messages hold a turn that ended.
fn ended_turns(messages: &Value) -> usize {
    messages
        .as_array()
        .unwrap()
        .iter()
        .filter(|message| message["type"] == "assistant" && message["turn"]["status"] != "running")
        .count()
}

/// The fake CLI's record of how it was run.
fn read_record(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn worktree_file(workspace: &Value, name: &str) -> PathBuf {
    PathBuf::from(workspace.as_str().unwrap()).join(name)
}

#[test]
fn a_task_runs_a_session_that_answers_follow_ups() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let record = world.path("out/record.json");
    world.script(Script {
        lines: claude_turn(
            "sess-1",
            "All done: **fixed** the `flake`.\n\n- ran the tests",
        ),
        line_delay_ms: 30,
        write_files: [("out.txt".to_owned(), "hello\n".to_owned())].into(),
        record: Some(record.clone()),
        ..Script::default()
    });
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
        "setup": ["echo ready > .setup-done"],
        "env": {"SHOP_MODE": "test"},
        "secrets": {"DEPLOY_TOKEN": SECRET},
    }));

    // The spec's first example: a task with a prompt starts work.
    let body = json!({
        "title": "Fix checkout test flake",
        "prompt": "Find and fix the flaky checkout test. Keep the change focused and add a regression test.",
        "environment_id": environment,
        "idle_timeout_seconds": 600,
        "attachments": [{
            "name": "CI failure",
            "uri": "https://github.com/acme/shop/actions/runs/123",
            "mimeType": "text/markdown",
            "text": "The checkout test fails intermittently in CI with a timeout waiting for payment confirmation."
        }]
    });
    let created = server.request(
        "POST",
        &api.path("/tasks"),
        Some(&token),
        Some(&body.to_string()),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data();
    let task_id = task["id"].as_str().unwrap().to_owned();
    assert_eq!(task["title"], "Fix checkout test flake");
    assert_eq!(task["status"], "active");
    assert_eq!(
        task["owner_name"], "admin",
        "a person's token owns the task"
    );
    assert_eq!(
        task["created_by_name"], "agent",
        "the connected agent runs it"
    );
    assert_eq!(task["last_message_preview"], Value::Null);

    let session = api.first_session(&task_id);
    let session_id = session["id"].as_str().unwrap().to_owned();
    assert_eq!(session["harness"], "claude");
    assert_eq!(session["vendor"], "anthropic");
    assert_eq!(session["environment_id"], json!(environment));
    let idle = api.wait(&task_id, &session_id, "idle after its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-1"
    });
    assert_eq!(idle["close_reason"], Value::Null);
    assert_eq!(idle["branch_name"], json!(format!("cinch/{session_id}")));
    // The workspace is a worktree on the session's branch, set up by the
    // environment; the environment's own checkout is untouched.
    assert!(worktree_file(&idle["workspace"], ".setup-done").exists());
    assert_eq!(
        std::fs::read_to_string(worktree_file(&idle["workspace"], "out.txt")).unwrap(),
        "hello\n"
    );
    assert!(!world.path("repo/out.txt").exists());

    // The harness ran as the agent, in its own home, with the environment's
    // variables and secrets and the attachment in its brief.
    let run = read_record(&record);
    let env = &run["env"];
    let agents = api.get("/agents").data();
    let agent_id = agents[0]["id"].as_str().unwrap();
    assert_eq!(
        env["HOME"],
        json!(
            world
                .path("home/agents")
                .join(agent_id)
                .display()
                .to_string()
        )
    );
    assert_eq!(env["SHOP_MODE"], "test");
    assert_eq!(env["DEPLOY_TOKEN"], SECRET);
    let stdin = run["stdin"].as_str().unwrap();
    assert!(
        stdin.contains("Find and fix the flaky checkout test"),
        "{stdin}"
    );
    assert!(
        stdin.contains("# CI failure") && stdin.contains("waiting for payment confirmation"),
        "{stdin}"
    );
    assert!(agents[0]["home_bytes"].as_u64().is_some());

    let messages = api.messages(&task_id, &session_id, "").data();
    let kinds: Vec<&str> = messages
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["attachment", "user", "assistant"]);
    assert_eq!(
        api.assert_listing_reads_as_its_events(&task_id, &session_id),
        kinds
    );
    assert_eq!(messages[0]["content"], "attached CI failure");
    assert_eq!(messages[1]["sequence"], 2);
    assert_eq!(messages[2]["sequence"], 3);
    let turn = &messages[2]["turn"];
    assert_eq!(turn["status"], "completed");
    assert_eq!(turn["run_id"], json!(session_id));
    assert_eq!(turn["result"]["files_changed"][0]["path"], "out.txt");
    assert!(
        messages[2]["content"]
            .as_str()
            .unwrap()
            .starts_with("All done")
    );
    let task = api.get(&format!("/tasks/{task_id}")).data();
    assert_eq!(
        task["last_message_preview"],
        "All done: fixed the flake. ran the tests"
    );

    // The turn is a code-task call of the session's run: its diff and log.
    let call = turn["call_id"].as_str().unwrap();
    let diff = server.get(&format!("/api/runs/{session_id}/tasks/{call}/diff"), &token);
    assert_eq!(diff.status, 200, "{diff:?}");
    assert!(diff.text.contains("+++ b/out.txt"), "{}", diff.text);
    let log = server.get(&format!("/api/runs/{session_id}/tasks/{call}/log"), &token);
    assert_eq!(log.status, 200, "{log:?}");

    // A follow-up resumes the harness session.
    world.script(Script {
        lines: claude_turn("sess-1", "Added the test."),
        record: Some(record.clone()),
        ..Script::default()
    });
    let sent = api.post(
        &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
        json!({"message": "Also add a unit test around the \"timeout\" branch:\n\t→ é ✓ \\ </script>"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    assert_eq!(sent.data()["type"], "user");
    // The listing writes its JSON apart from the message's own answer: the
    // same message reads the same in both (its sequence once delivered).
    let listed = api
        .walk(&task_id, &session_id, "asc", 50)
        .into_iter()
        .find(|message| message["id"] == sent.data()["id"])
        .expect("the message sent is listed");
    let mut answered = sent.data();
    answered["sequence"] = listed["sequence"].clone();
    assert_eq!(listed, answered);
    // Idle with two turns both ended: the status alone may be read just
    // before the second turn starts.
    api.wait(&task_id, &session_id, "its second turn", |s| {
        s["status"] == "idle" && ended_turns(&api.messages(&task_id, &session_id, "").data()) == 2
    });
    let args = read_record(&record)["argv"].to_string();
    assert!(args.contains("\"--resume\",\"sess-1\""), "{args}");
    let task = api.get(&format!("/tasks/{task_id}")).data();
    assert_eq!(task["last_message_preview"], "Added the test.");

    // Pagination both ways, one message per page.
    let asc = api.walk(&task_id, &session_id, "asc", 1);
    let desc = api.walk(&task_id, &session_id, "desc", 1);
    let ids = |list: &[Value]| list.iter().map(|m| m["id"].clone()).collect::<Vec<_>>();
    assert_eq!(asc.len(), 5);
    let mut reversed = ids(&desc);
    reversed.reverse();
    assert_eq!(ids(&asc), reversed);
    let sequences: Vec<i64> = asc
        .iter()
        .map(|m| m["sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(sequences, [1, 2, 3, 4, 5]);
    let bad = api.messages(&task_id, &session_id, "?direction=sideways");
    assert_eq!(bad.status, 422);
    assert_eq!(bad.field_errors(), ["direction"]);

    // Live events: the whole story in order, resumable.
    let events_path = api.path(&format!("/tasks/{task_id}/sessions/{session_id}/events"));
    let events = server.stream(&events_path, &token, None, |events| {
        events
            .iter()
            .filter(|(_, name, _)| name == "tool.ended")
            .count()
            == 2
    });
    let names: Vec<&str> = events.iter().map(|(_, name, _)| name.as_str()).collect();
    for expected in [
        "session.updated",
        "message.created",
        "message.updated",
        "tool.progress",
        "tool.ended",
    ] {
        assert!(names.contains(&expected), "{names:?}");
    }
    let ids: Vec<u64> = events.iter().map(|(id, _, _)| *id).collect();
    assert!(
        ids.windows(2).all(|pair| pair[1] == pair[0] + 1) && ids[0] == 1,
        "{ids:?}"
    );
    let progress = events
        .iter()
        .find(|(_, name, _)| name == "tool.progress")
        .unwrap();
    assert_eq!(progress.2["run_id"], json!(session_id));
    let resumed = server.stream(&events_path, &token, Some(3), |events| !events.is_empty());
    assert_eq!(resumed[0].0, 4);

    // The environment's secret never comes back, in answers or events.
    for text in [
        api.get(&format!("/tasks/{task_id}/sessions")).text,
        api.messages(&task_id, &session_id, "").text,
        log.text.clone(),
        serde_json::to_string(&events.iter().map(|e| e.2.clone()).collect::<Vec<_>>()).unwrap(),
    ] {
        assert!(!text.contains(SECRET));
    }

    // Nor is it in the database in clear, nor in any file of the home: the
    // database holds it sealed, bound to its environment and name.
    let database = world.database_text();
    assert!(database.contains(&environment), "no database found");
    assert!(!database.contains(SECRET));
    let sealed = world.query_text("SELECT owner_id, name, sealed FROM secrets");
    assert_eq!(sealed.len(), 1, "{sealed:?}");
    assert_eq!(
        sealed[0][..2],
        [environment.clone(), "DEPLOY_TOKEN".to_owned()]
    );
    assert!(!sealed[0][2].contains(SECRET) && sealed[0][2].len() > 2 * SECRET.len());
    assert_eq!(
        world.home_files_holding(SECRET),
        Vec::<std::path::PathBuf>::new()
    );

    // Attachments: listed, their contents in ResourceContents shape.
    let attachments = api.get(&format!("/tasks/{task_id}/attachments")).data();
    assert_eq!(attachments[0]["status"], "ready");
    let contents = api.get(&format!(
        "/tasks/{task_id}/attachments/{}/contents",
        attachments[0]["id"].as_str().unwrap()
    ));
    assert_eq!(contents.data()["contents"][0]["mimeType"], "text/markdown");
    assert!(
        contents.data()["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("payment")
    );
    let empty = api.post(
        &format!("/tasks/{task_id}/attachments"),
        json!({"name": "ticket", "uri": "https://x/1"}),
    );
    assert_eq!(empty.status, 201);
    assert_eq!(empty.data()["status"], "failed");
    let bad_blob = api.post(
        &format!("/tasks/{task_id}/attachments"),
        json!({"name": "b", "blob": "***"}),
    );
    assert_eq!(bad_blob.field_errors(), ["blob"]);

    // Close, then a message reopens it.
    let closed = server.patch(
        &api.path(&format!("/tasks/{task_id}/sessions/{session_id}")),
        &token,
        &json!({"status": "closed"}),
    );
    assert_eq!(closed.status, 200, "{closed:?}");
    assert_eq!(closed.data()["status"], "closed");
    assert_eq!(closed.data()["close_reason"], "user_closed");
    assert_eq!(
        api.get(&format!("/tasks/{task_id}")).data()["status"],
        "active",
        "a plain conversation never reaches a terminal state"
    );
    let reopen = server.patch(
        &api.path(&format!("/tasks/{task_id}/sessions/{session_id}")),
        &token,
        &json!({"status": "open"}),
    );
    assert_eq!(reopen.field_errors(), ["status"]);
    api.post(
        &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
        json!({"message": "One more thing."}),
    );
    let resumed = api.wait(&task_id, &session_id, "resumed", |s| {
        s["status"] == "idle" && assistants(&api.messages(&task_id, &session_id, "").data()) == 3
    });
    assert_eq!(resumed["close_reason"], Value::Null);

    // Another account sees none of it.
    let (_, other_token) = world.second_account();
    for path in [
        api.path(&format!("/tasks/{task_id}")),
        api.path(&format!("/tasks/{task_id}/sessions/{session_id}")),
        api.path(&format!("/tasks/{task_id}/sessions/{session_id}/messages")),
    ] {
        assert_eq!(server.get(&path, &other_token).status, 404, "{path}");
    }
    assert_eq!(
        server
            .request("GET", &api.path("/tasks"), None, None)
            .status,
        401
    );
}

#[test]
fn idempotency_keys_and_bad_input() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let path = server.url(&api.path("/tasks"));
    let send = |key: &str, body: &Value| {
        let mut response = agent()
            .post(&path)
            .header("Authorization", format!("Bearer {token}"))
            .header("Idempotency-Key", key)
            .header("Content-Type", "application/json")
            .send(body.to_string())
            .unwrap();
        let replayed = response.headers().contains_key("idempotent-replayed");
        let text = response.body_mut().read_to_string().unwrap();
        (response.status().as_u16(), text, replayed)
    };

    // 100 concurrent POSTs with one key make exactly one task.
    let body = json!({"title": "Once"});
    let answers: Vec<(u16, String, bool)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..100)
            .map(|_| scope.spawn(|| send("task-once-001", &body)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let created: Vec<&(u16, String, bool)> = answers
        .iter()
        .filter(|(status, _, _)| *status == 201)
        .collect();
    assert!(!created.is_empty());
    assert!(
        answers
            .iter()
            .all(|(status, _, _)| *status == 201 || *status == 409),
        "{answers:?}"
    );
    let ids: std::collections::BTreeSet<String> = created
        .iter()
        .map(|(_, text, _)| {
            serde_json::from_str::<Value>(text).unwrap()["data"]["id"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(ids.len(), 1, "every answer names the same task");
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 1);
    let (status, text, replayed) = send("task-once-001", &body);
    assert_eq!((status, replayed), (201, true));
    assert!(text.contains(ids.iter().next().unwrap().as_str()));
    let (status, text, _) = send("task-once-001", &json!({"title": "Something else"}));
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("Idempotency-Key"));

    // Malformed input: a clear 4xx, nothing stored.
    let before = api.get("/tasks").data().as_array().unwrap().len();
    let bad = api.post(
        "/tasks",
        json!({"idle_timeout_seconds": "soon", "attachments": [{"text": 3}], "bogus": true}),
    );
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(
        bad.field_errors(),
        [
            "attachments[0].name",
            "attachments[0].text",
            "bogus",
            "idle_timeout_seconds"
        ]
    );
    let unknown_env = api.post(
        "/tasks",
        json!({"prompt": "x", "environment_id": "env_nope"}),
    );
    assert_eq!(unknown_env.field_errors(), ["environment_id"]);
    let not_json = server.request("POST", &api.path("/tasks"), Some(&token), Some("{oops"));
    assert_eq!(not_json.status, 400, "{not_json:?}");
    let no_message = api.post("/tasks/task_nope/sessions/ses_nope/messages", json!({}));
    assert_eq!(no_message.field_errors(), ["message"]);
    let missing = api.post(
        "/tasks/task_nope/sessions/ses_nope/messages",
        json!({"message": "hi"}),
    );
    assert_eq!(missing.status, 404);
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), before);
    let bad_branch = api.post(
        &format!("/tasks/{}/sessions", ids.iter().next().unwrap()),
        json!({"branch_name": "two words", "harness": "codex"}),
    );
    assert_eq!(bad_branch.field_errors(), ["branch_name", "harness"]);
    let bad_branch = api.post(
        &format!("/tasks/{}/sessions", ids.iter().next().unwrap()),
        json!({"branch_name": "two words"}),
    );
    assert_eq!(bad_branch.field_errors(), ["branch_name"]);
}

/// An id of one kind where another kind is asked for finds nothing: a
/// task's id as a session's or an environment's, a session's as a task's or
/// an account's, and text that is no id at all each answer 404 with a
/// problem saying what is missing, never another object or a 5xx.
#[test]
fn an_id_of_another_kind_finds_nothing() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "repo",
        "repository": world.path("repo").display().to_string(),
    }));
    let (task, session) = api.task_on(&environment, "Say hello");
    let before = api.wait(&task, &session, "idle", |s| s["status"] == "idle");
    assert_eq!(before["task_id"], task.as_str());

    for (path, missing) in [
        (
            api.path(&format!("/tasks/{task}/sessions/{task}")),
            "no such session",
        ),
        (
            api.path(&format!("/tasks/{task}/sessions/{task}/messages")),
            "no such session",
        ),
        (
            api.path(&format!("/tasks/{task}/sessions/not%20an%20id")),
            "no such session",
        ),
        (api.path(&format!("/tasks/{session}")), "no such task"),
        (
            api.path(&format!("/tasks/{session}/sessions")),
            "no such task",
        ),
        (
            api.path(&format!("/tasks/{session}/attachments")),
            "no such task",
        ),
        (
            api.path(&format!("/tasks/{session}/sessions/{session}")),
            "no such session",
        ),
        (
            api.path(&format!("/environments/{task}")),
            "no such environment",
        ),
        (format!("/v1/accounts/{session}/tasks"), "no such account"),
    ] {
        let answer = server.get(&path, &token);
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert_eq!(answer.content_type, "application/problem+json", "{path}");
        assert!(answer.text.contains(missing), "{path}: {answer:?}");
    }
    let listed = api.messages(&task, &session, "").data();
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{task}/messages"),
        json!({"message": "hi"}),
    );
    assert_eq!(sent.status, 404, "{sent:?}");
    assert!(sent.text.contains("no such session"), "{sent:?}");
    assert_eq!(api.messages(&task, &session, "").data(), listed);
    assert_eq!(api.session(&task, &session)["status"], "idle");
}

/// An environment on the world's repository whose turns report `session`,
/// then write nothing until they are aborted.
fn hanging_environment(world: &World, api: &Api, session: &str) -> String {
    world.script(Script {
        lines: claude_turn(session, "never gets here")[..1].to_vec(),
        hang_ms: -1,
        ..Script::default()
    });
    api.environment(json!({
        "name": "repo",
        "repository": world.path("repo").display().to_string(),
    }))
}

#[test]
fn an_accounts_cap_holds_back_its_own_turns_and_no_one_elses() {
    let world = World::new();
    // Accounts other than the first reach a local repository only under a root.
    let root = world.path("repo").display().to_string();
    let server = world.serve_with(&[
        "--repository-root",
        &root,
        "--max-turns",
        "4",
        "--max-turns-per-account",
        "1",
        "--retry-seconds",
        "1",
    ]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = hanging_environment(&world, &api, "sess-long");
    let (first_task, first_session) = api.task_on(&environment, "Run long.");
    api.wait_status(&first_task, &first_session, "running");

    // The account's second session waits, though the node has slots free.
    let (second_task, second_session) = api.task_on(&environment, "Wait your turn.");
    let waiting = api.wait(&second_task, &second_session, "waiting", |s| {
        s["status"] == "waiting"
    });
    let why = waiting["error_message"].as_str().unwrap();
    assert!(why.contains("--max-turns-per-account"), "{why}");
    // A code task of the account is refused at once, naming the cap.
    let code_task = server.post(
        "/api/runs/run-capped/tasks",
        &token,
        &json!({"brief": "Work.", "harness": "claude", "repo": "repo"}),
    );
    assert_eq!(code_task.status, 429, "{code_task:?}");
    assert_eq!(code_task.json()["type"], "urn:cinch:capacity.full");
    let why = code_task.json()["detail"].as_str().unwrap().to_owned();
    assert!(why.contains("--max-turns-per-account"), "{why}");

    // Another account's session runs at once, and the second still waits.
    let (_, other_token) = world.second_account();
    let other = Api::new(&server, &other_token);
    let other_environment = hanging_environment(&world, &other, "sess-other");
    let (other_task, other_session) = other.task_on(&other_environment, "Run too.");
    other.wait_status(&other_task, &other_session, "running");
    std::thread::sleep(Duration::from_secs(2));
    let still = api.get(&format!("/tasks/{second_task}/sessions/{second_session}"));
    assert_eq!(still.data()["status"], "waiting", "{still:?}");

    // The account's first turn ends: its second session gets the slot.
    world.script(Script {
        lines: claude_turn("sess-2", "Second done."),
        ..Script::default()
    });
    let aborted = api.post(
        &format!("/tasks/{first_task}/sessions/{first_session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
    let done = api.wait(&second_task, &second_session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-2"
    });
    assert_eq!(done["waiting_since"], Value::Null);
    let other_abort = other.post(
        &format!("/tasks/{other_task}/sessions/{other_session}/abort"),
        json!({}),
    );
    assert_eq!(other_abort.status, 202, "{other_abort:?}");
    other.wait_status(&other_task, &other_session, "idle");
}

#[test]
fn sessions_wait_for_capacity_abort_and_idle_out() {
    let world = World::new();
    let server = world.serve_with(&["--max-turns", "1", "--retry-seconds", "1"]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = hanging_environment(&world, &api, "sess-long");
    let first = api.post(
        "/tasks",
        json!({"prompt": "Run long.", "environment_id": environment}),
    );
    let first_task = first.data()["id"].as_str().unwrap().to_owned();
    let first_session = api.first_session(&first_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.wait_status(&first_task, &first_session, "running");

    // Past the cap, the next session waits and its task says so.
    let second = api.post(
        "/tasks",
        json!({"prompt": "Wait your turn.", "environment_id": environment, "idle_timeout_seconds": 60}),
    );
    let second_task = second.data()["id"].as_str().unwrap().to_owned();
    let second_session = api.first_session(&second_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let waiting = api.wait(&second_task, &second_session, "waiting", |s| {
        s["status"] == "waiting" && s["waiting_since"].is_string()
    });
    assert!(
        waiting["error_message"]
            .as_str()
            .unwrap()
            .contains("nothing to do")
    );
    let queued = api.messages(&second_task, &second_session, "").data();
    let user = queued
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["type"] == "user")
        .unwrap();
    assert_eq!(user["sequence"], Value::Null, "queued until delivered");
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let task = api.get(&format!("/tasks/{second_task}")).data();
        if task["binding_constraint"]["retries"].as_i64().unwrap_or(0) >= 2 {
            assert_eq!(task["binding_constraint"]["kind"], "retrying");
            assert_eq!(task["binding_constraint"]["next_retry_seconds"], 1);
            break;
        }
        assert!(Instant::now() < deadline, "no retries: {task:#}");
        std::thread::sleep(Duration::from_millis(200));
    }

    // Abort the first: it ends cancelled, its session stays open; the
    // waiting one gets the slot.
    world.script(Script {
        lines: claude_turn("sess-2", "Second done."),
        ..Script::default()
    });
    let aborted = api.post(
        &format!("/tasks/{first_task}/sessions/{first_session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
    api.wait_status(&first_task, &first_session, "idle");
    let turn = assistant(&api.messages(&first_task, &first_session, "").data());
    assert_eq!(turn["turn"]["status"], "cancelled", "{turn:#}");
    let done = api.wait(&second_task, &second_session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-2"
    });
    assert_eq!(done["waiting_since"], Value::Null);
    assert_eq!(
        api.get(&format!("/tasks/{second_task}")).data()["binding_constraint"],
        Value::Null
    );
    let again = api.post(
        &format!("/tasks/{first_task}/sessions/{first_session}/abort"),
        json!({}),
    );
    assert_eq!(again.status, 409, "nothing to abort when idle");

    // Idle teardown: a session idle past its task's timeout is closed.
    let short = api.post(
        "/tasks",
        json!({"prompt": "Quick.", "environment_id": environment, "idle_timeout_seconds": 2}),
    );
    assert_eq!(short.status, 201);
    let short_task = short.data()["id"].as_str().unwrap().to_owned();
    let short_session = api.first_session(&short_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let closed = api.wait_status(&short_task, &short_session, "closed");
    assert_eq!(closed["close_reason"], "completed", "its turn went well");
    let turn = assistant(&api.messages(&short_task, &short_session, "").data());
    assert_eq!(turn["turn"]["status"], "completed");
    let zero = api.post("/tasks", json!({"idle_timeout_seconds": 0}));
    assert_eq!(zero.field_errors(), ["idle_timeout_seconds"]);
}

#[test]
fn setup_and_repository_failures_close_the_session() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let failing = api.environment(json!({
        "name": "failing",
        "repository": world.path("repo").display().to_string(),
        "setup": ["echo preparing", format!("for n in 1 2 3 4 5 6 7; do echo line $n; done; echo using {SECRET}; echo broken >&2; exit 3")],
        "secrets": {"SETUP_SECRET": SECRET},
    }));
    let task = api
        .post("/tasks", json!({"prompt": "x", "environment_id": failing}))
        .data();
    let task_id = task["id"].as_str().unwrap();
    let session = api.first_session(task_id);
    let closed = api.wait_status(task_id, session["id"].as_str().unwrap(), "closed");
    assert_eq!(closed["close_reason"], "setup_failure");
    let error = closed["error_message"].as_str().unwrap();
    assert!(
        error.contains("exit code 3") && error.contains("broken"),
        "{error}"
    );
    // Its setup log: every command's whole output, masked; the error
    // message keeps the last lines only.
    assert!(!error.contains("line 1 "), "{error}");
    let log_path = api.path(&format!(
        "/tasks/{task_id}/sessions/{}/setup-log",
        session["id"].as_str().unwrap()
    ));
    let log = server.get(&log_path, &token);
    assert_eq!(log.status, 200, "{log:?}");
    assert!(log.content_type.starts_with("text/plain"), "{log:?}");
    assert!(
        log.text.starts_with("$ echo preparing\npreparing\n")
            && log.text.contains("$ for n in 1 2 3"),
        "{}",
        log.text
    );
    assert!(
        log.text.contains("line 1\nline 2\n") && log.text.contains("broken\n"),
        "{}",
        log.text
    );
    assert!(
        !log.text.contains(SECRET) && log.text.contains("using [redacted]"),
        "{}",
        log.text
    );
    assert_eq!(server.request("GET", &log_path, None, None).status, 401);
    let (_, other) = world.second_account();
    assert_eq!(server.get(&log_path, &other).status, 404);

    // A folder that is no repository (one that does not exist is refused
    // when the environment is made).
    std::fs::create_dir_all(world.path("not-a-repo")).unwrap();
    let missing = api.environment(json!({
        "name": "missing",
        "repository": world.path("not-a-repo").display().to_string(),
    }));
    let task = api
        .post("/tasks", json!({"prompt": "x", "environment_id": missing}))
        .data();
    let task_id = task["id"].as_str().unwrap();
    let session = api.first_session(task_id);
    let closed = api.wait_status(task_id, session["id"].as_str().unwrap(), "closed");
    assert_eq!(closed["close_reason"], "vm_failure");
    // No setup command failed: no setup log.
    let none = server.get(
        &api.path(&format!(
            "/tasks/{task_id}/sessions/{}/setup-log",
            session["id"].as_str().unwrap()
        )),
        &token,
    );
    assert_eq!(none.status, 404, "{none:?}");

    // A close while setup commands run answers at once; the workspace made
    // meanwhile is kept, and a message later resumes in it.
    world.script(Script {
        lines: claude_turn("sess-slow", "Set up and done."),
        ..Script::default()
    });
    let slow = api.environment(json!({
        "name": "slow",
        "repository": world.path("repo").display().to_string(),
        "setup": ["sleep 3"],
    }));
    let task = api
        .post("/tasks", json!({"prompt": "x", "environment_id": slow}))
        .data();
    let task_id = task["id"].as_str().unwrap();
    let session_id = api.first_session(task_id)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.wait_status(task_id, &session_id, "booting");
    let asked = Instant::now();
    let closed = server.patch(
        &api.path(&format!("/tasks/{task_id}/sessions/{session_id}")),
        &token,
        &json!({"status": "closed"}),
    );
    assert_eq!(closed.data()["status"], "closed", "{closed:?}");
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "the close waited for setup"
    );
    let kept = api.wait(task_id, &session_id, "its workspace", |s| {
        s["workspace"].is_string()
    });
    assert_eq!(kept["status"], "closed");
    assert_eq!(kept["close_reason"], "user_closed");
    api.post(
        &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
        json!({"message": "Now go."}),
    );
    let resumed = api.wait(task_id, &session_id, "a turn after the close", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-slow"
    });
    assert_eq!(resumed["close_reason"], Value::Null);
}

/// Starts a task whose first turn takes a while: `tool_uses` lines before
/// its answer, one every `line_delay_ms`. Returns the task and session ids
/// once the turn runs.
fn start_long_turn(
    world: &World,
    api: &Api,
    harness_session: &str,
    answer: &str,
    tool_uses: usize,
    line_delay_ms: u64,
) -> (String, String) {
    let environment = api.environment(
        json!({"name": "repo", "repository": world.path("repo").display().to_string()}),
    );
    let mut lines = claude_turn(harness_session, answer);
    lines.splice(1..1, (0..tool_uses).map(|n| json!({"type": "assistant", "session_id": harness_session,
        "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash", "input": {"command": format!("echo {n}")}}]}})));
    world.script(Script {
        lines,
        line_delay_ms,
        ..Script::default()
    });
    let task = api.post(
        "/tasks",
        json!({"prompt": "Take a while.", "environment_id": environment}),
    );
    assert_eq!(task.status, 201);
    let task_id = task.data()["id"].as_str().unwrap().to_owned();
    let session_id = api.first_session(&task_id)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.wait_turn_message(&task_id, &session_id);
    (task_id, session_id)
}

#[test]
fn a_restart_mid_turn_picks_the_turn_up_again() {
    let world = World::new();
    let mut server = world.serve();
    let token = world.admin_token();
    let (task_id, session_id) = {
        let api = Api::new(&server, &token);
        start_long_turn(&world, &api, "sess-r", "Survived the restart.", 30, 100)
    };
    let events_path = format!(
        "/v1/accounts/{}/tasks/{task_id}/sessions/{session_id}/events",
        Api::new(&server, &token).account
    );
    let before = server.stream(&events_path, &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.progress")
    });
    let seen = before.last().unwrap().0;

    // Killed mid-turn: the supervisor carries on, the new server follows it.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    let api = Api::new(&server, &token);
    let done = api.wait_status(&task_id, &session_id, "idle");
    assert_eq!(done["harness_session_id"], "sess-r");
    let turn = assistant(&api.messages(&task_id, &session_id, "").data());
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    assert_eq!(turn["content"], "Survived the restart.");
    // The stream resumes where the client was, with nothing repeated.
    let after = server.stream(&events_path, &token, Some(seen), |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    assert_eq!(after[0].0, seen + 1);
}

/// A turn whose message is older than the newest 200 of its session is still
/// found and followed after a restart (it was looked for among those 200).
#[test]
fn a_restart_follows_a_turn_behind_many_queued_messages() {
    let world = World::new();
    let mut server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let (task_id, session_id) = start_long_turn(&world, &api, "sess-q", "Followed again.", 60, 200);
    let turn_message = assistant(&api.messages(&task_id, &session_id, "").data());
    assert_eq!(turn_message["turn"]["status"], "running");
    for n in 0..210 {
        let sent = api.post(
            &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
            json!({"message": format!("queued {n}")}),
        );
        assert_eq!(sent.status, 201, "{sent:?}");
    }
    let still = api.get(&format!("/tasks/{task_id}/sessions/{session_id}"));
    assert_eq!(
        still.data()["status"],
        "running",
        "the turn ended too soon for the test"
    );
    drop(api);

    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    let api = Api::new(&server, &token);
    let deadline = Instant::now() + Duration::from_secs(60);
    let followed = loop {
        let first_page = api.messages(&task_id, &session_id, "?limit=5").data();
        let message = first_page
            .as_array()
            .unwrap()
            .iter()
            .find(|message| message["id"] == turn_message["id"])
            .cloned()
            .expect("the turn's message is among the first");
        if message["turn"]["status"] != "running" || Instant::now() > deadline {
            break message;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(followed["turn"]["status"], "completed", "{followed:#}");
    assert_eq!(followed["content"], "Followed again.");
}

#[test]
fn task_without_title_gets_one_and_agent_tokens_own_nothing() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    world.script(Script {
        lines: claude_turn("sess-t", "Thinking only."),
        ..Script::default()
    });
    let agent_token = world.agent_token("agent");
    let as_agent = Api::new(&server, &agent_token);
    let task = as_agent.post(
        "/tasks",
        json!({"prompt": "Tidy the README\nand more", "harness": "nope", "model": "nope", "effort": "ultra"}),
    );
    assert_eq!(task.status, 201, "{task:?}");
    let task = task.data();
    assert_eq!(task["title"], "Tidy the README");
    assert_eq!(task["owner"], Value::Null);
    let unowned = api.get("/tasks?owner=none").data();
    assert_eq!(unowned[0]["id"], task["id"], "needs someone");
    let task_id = task["id"].as_str().unwrap();
    let session = api.first_session(task_id);
    // Unknown harness, model and effort fall back to supported defaults.
    assert_eq!(session["harness"], "claude");
    // Claude's defaults, as its driver lists them.
    assert_eq!(session["harness_model"], "opus");
    assert_eq!(session["harness_effort"], "high");
    let session_id = session["id"].as_str().unwrap();
    api.wait_status(task_id, session_id, "idle");
    let kinds: Vec<String> = api
        .messages(task_id, session_id, "")
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["ai-title", "user", "assistant"]);
    assert_eq!(
        api.assert_listing_reads_as_its_events(task_id, session_id),
        kinds
    );
    // No environment: the agent works in a scratch repository.
    assert!(
        Command::new("git")
            .arg("-C")
            .arg(
                api.session(task_id, session_id)["workspace"]
                    .as_str()
                    .unwrap()
            )
            .args(["rev-parse", "HEAD"])
            .output()
            .unwrap()
            .status
            .success()
    );

    // The spec's codex example: codex supports that effort, takes any model
    // id, and is not installed here: its turn cannot start, which leaves the
    // session idle with what to do, not closed.
    let codex = api.post(
        "/tasks",
        json!({"title": "Fix checkout test flake", "prompt": "Find and fix the flaky checkout test.",
               "harness": "codex", "model": "openai/gpt-5.6-sol", "effort": "high"}),
    );
    assert_eq!(codex.status, 201, "{codex:?}");
    let codex_task = codex.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&codex_task);
    assert_eq!(session["harness"], "codex");
    assert_eq!(session["vendor"], "openai");
    assert_eq!(session["harness_model"], "openai/gpt-5.6-sol");
    assert_eq!(session["harness_effort"], "high");
    let failed = api.wait(
        &codex_task,
        session["id"].as_str().unwrap(),
        "a refused turn",
        |s| s["close_reason"] == "turn_failure",
    );
    assert_eq!(failed["status"], "idle");
    let error = failed["error_message"].as_str().unwrap();
    assert!(
        error.contains("harness.cli_missing") && error.contains("codex"),
        "{error}"
    );
}

#[test]
fn sessions_on_named_branches_commit_their_turns() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let repo = world.path("repo");
    git(&repo, &["branch", "release"]);
    world.script(Script {
        lines: claude_turn("sess-b", "Fixed in the polling helper."),
        write_files: [("poll.txt".to_owned(), "fixed\n".to_owned())].into(),
        ..Script::default()
    });
    // A git URL is cloned into cinch's home; the source stays as it was.
    let environment = api.environment(json!({
        "name": "remote",
        "repository": format!("file://{}", repo.display()),
    }));
    let task = api.post(
        "/tasks",
        json!({"title": "Fix checkout test flake", "environment_id": environment}),
    );
    assert_eq!(task.status, 201, "{task:?}");
    let task_id = task.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(task.data()["session_count"], 0, "no prompt, no session");

    // The spec's second-session example.
    let created = api.post(
        &format!("/tasks/{task_id}/sessions"),
        json!({
            "title": "Alternative checkout fix",
            "prompt": "Try a minimal fix in the polling helper only.",
            "environment_id": environment,
            "branch_name": "fix/checkout-flake-alt",
            "base_branch": "release",
            "auto_commit": true
        }),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let session = created.data();
    let session_id = session["id"].as_str().unwrap().to_owned();
    assert_eq!(session["branch_name"], "fix/checkout-flake-alt");
    let idle = api.wait_status(&task_id, &session_id, "idle");
    let workspace = PathBuf::from(idle["workspace"].as_str().unwrap());
    let run = |args: &[&str]| {
        let output = Command::new("git")
            .arg("-C")
            .arg(&workspace)
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "git {args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    assert_eq!(
        run(&["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "fix/checkout-flake-alt"
    );
    assert_eq!(run(&["show", "HEAD:poll.txt"]), "fixed\n");
    assert_eq!(
        run(&["status", "--porcelain"]),
        "",
        "the turn's changes are committed"
    );
    assert!(run(&["log", "-1", "--format=%s"]).starts_with("Alternative checkout fix: "));
    let branches = Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args(["branch", "--list"])
        .output()
        .unwrap();
    assert!(
        !String::from_utf8_lossy(&branches.stdout).contains("fix/"),
        "the source was cloned, not touched"
    );

    // A session named after a branch the repository has already works on
    // that branch, from its last commit.
    git(&repo, &["checkout", "-q", "-b", "topic"]);
    std::fs::write(repo.join("topic.txt"), "on topic\n").unwrap();
    git(&repo, &["add", "topic.txt"]);
    git(&repo, &["commit", "-q", "-m", "topic work"]);
    git(&repo, &["checkout", "-q", "-"]);
    let local = api.environment(json!({"name": "local", "repository": repo.display().to_string()}));
    let created = api.post(
        &format!("/tasks/{task_id}/sessions"),
        json!({"prompt": "Go on.", "environment_id": local, "branch_name": "topic"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let session_id = created.data()["id"].as_str().unwrap().to_owned();
    let idle = api.wait_status(&task_id, &session_id, "idle");
    let workspace = PathBuf::from(idle["workspace"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(workspace.join("topic.txt")).unwrap(),
        "on topic\n"
    );
    assert_eq!(
        git_output(&workspace, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "topic"
    );
    // git refused to make the branch in the directly linked work tree, so
    // the link was taken back whole before `git worktree add` made it: one
    // administrative folder, for the one work tree git lists.
    let listed = git_output(&repo, &["worktree", "list", "--porcelain"]);
    let work_trees: Vec<&str> = listed
        .lines()
        .filter_map(|line| line.strip_prefix("worktree "))
        .collect();
    assert_eq!(
        work_trees,
        [
            repo.canonicalize().unwrap().to_str().unwrap(),
            workspace.canonicalize().unwrap().to_str().unwrap()
        ],
        "{listed}"
    );
    let admin: Vec<_> = std::fs::read_dir(repo.join(".git/worktrees"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert_eq!(admin.len(), 1, "{admin:?}");
}

#[test]
fn a_failed_turn_leaves_the_session_idle_for_a_retry() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    world.script(Script {
        stderr: Some("boom: the model service said no\n".into()),
        exit_code: 1,
        ..Script::default()
    });
    let environment = api.environment(
        json!({"name": "repo", "repository": world.path("repo").display().to_string()}),
    );
    let task = api.post(
        "/tasks",
        json!({"prompt": "Try.", "environment_id": environment}),
    );
    let task_id = task.data()["id"].as_str().unwrap().to_owned();
    let session_id = api.first_session(&task_id)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let failed = api.wait(&task_id, &session_id, "a failed turn", |s| {
        s["close_reason"] == "turn_failure"
    });
    assert_eq!(failed["status"], "idle", "a recovery, not a close");
    let error = failed["error_message"].as_str().unwrap();
    assert!(
        error.contains("boom") && error.contains("send a message"),
        "{error}"
    );
    assert_eq!(
        assistant(&api.messages(&task_id, &session_id, "").data())["turn"]["status"],
        "failed"
    );
    assert_eq!(
        api.get(&format!("/tasks/{task_id}")).data()["last_message_preview"],
        Value::Null
    );

    // Left idle after a failure, it times out rather than completes, and
    // still says what to do.
    let brief = api.post(
        "/tasks",
        json!({"prompt": "Try briefly.", "environment_id": environment, "idle_timeout_seconds": 2}),
    );
    let brief_task = brief.data()["id"].as_str().unwrap().to_owned();
    let brief_session = api.first_session(&brief_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let timed_out = api.wait_status(&brief_task, &brief_session, "closed");
    assert_eq!(timed_out["close_reason"], "idle_timeout");
    assert!(
        timed_out["error_message"]
            .as_str()
            .unwrap()
            .contains("send a message")
    );

    world.script(Script {
        lines: claude_turn("sess-ok", "Worked this time."),
        ..Script::default()
    });
    api.post(
        &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
        json!({"message": "Again."}),
    );
    let recovered = api.wait(&task_id, &session_id, "a good turn", |s| {
        s["harness_session_id"] == "sess-ok" && s["status"] == "idle"
    });
    assert_eq!(recovered["close_reason"], Value::Null);
    assert_eq!(recovered["error_message"], Value::Null);
}

#[test]
fn agents_settings_steer_their_sessions() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(
        json!({"name": "repo", "repository": world.path("repo").display().to_string()}),
    );
    let agents = api.get("/agents").data();
    let connected = agents[0]["id"].as_str().unwrap().to_owned();
    let patch = |id: &str, body: Value, token: &str| {
        server.patch(&api.path(&format!("/agents/{id}")), token, &body)
    };

    // Settings are checked against the drivers and the account.
    assert_eq!(
        patch(&connected, json!({"harness": "nope"}), &token).field_errors(),
        ["harness"]
    );
    assert_eq!(
        patch(&connected, json!({"effort": "high"}), &token).field_errors(),
        ["effort"]
    );
    assert_eq!(
        patch(
            &connected,
            json!({"harness": "codex", "effort": "ultra"}),
            &token
        )
        .field_errors(),
        ["effort"]
    );
    assert_eq!(
        patch(&connected, json!({"environment_id": "env_nope"}), &token).field_errors(),
        ["environment_id"]
    );
    let pinned = patch(
        &connected,
        json!({"harness": "codex", "effort": "minimal", "environment_id": environment}),
        &token,
    );
    assert_eq!(pinned.status, 200, "{pinned:?}");
    assert_eq!(pinned.data()["effort"], "minimal");

    // A task without a harness runs on the agent's, with its pinned effort
    // and its environment; another harness drops the pinned effort.
    let on_codex = api.post("/tasks", json!({"prompt": "Go."})).data();
    assert_eq!(on_codex["environment_id"], json!(environment));
    let session = api.first_session(on_codex["id"].as_str().unwrap());
    assert_eq!(
        (
            session["harness"].as_str(),
            session["harness_effort"].as_str()
        ),
        (Some("codex"), Some("minimal"))
    );
    let on_claude = api
        .post("/tasks", json!({"prompt": "Go.", "harness": "claude"}))
        .data();
    let session = api.first_session(on_claude["id"].as_str().unwrap());
    assert_eq!(session["harness"], "claude");
    assert_eq!(
        session["harness_effort"], "high",
        "codex's effort is not claude's: claude's default applies"
    );

    // Another agent runs the tasks that name it, while enabled.
    let created = api.post("/agents", json!({"name": "reviewer", "harness": "claude"}));
    assert_eq!(created.status, 201, "{created:?}");
    let reviewer = created.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(api.post("/agents", json!({"name": "reviewer"})).status, 409);
    let task = api.post(
        "/tasks",
        json!({"title": "Review", "created_by": "reviewer"}),
    );
    assert_eq!(task.data()["created_by"], json!(reviewer));
    assert_eq!(
        patch(&reviewer, json!({"enabled": false}), &token).status,
        200
    );
    let refused = api.post("/tasks", json!({"title": "Review", "created_by": reviewer}));
    assert_eq!(refused.field_errors(), ["created_by"]);

    // Agents are changed by people, not by agents.
    let agent_token = world.agent_token("reviewer");
    assert_eq!(
        patch(&reviewer, json!({"enabled": true}), &agent_token).status,
        403
    );
}

/// How many inotify instances process `pid` holds.
fn inotify_instances(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(Result::ok)
        .filter(|entry| {
            std::fs::read_link(entry.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:inotify")
        })
        .count()
}

#[test]
fn the_server_follows_every_running_turn_on_one_inotify_instance() {
    const SESSIONS: usize = 3;
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = hanging_environment(&world, &api, "sess-held");
    let sessions: Vec<(String, String)> = (0..SESSIONS)
        .map(|n| {
            let task = api.post(
                "/tasks",
                json!({"prompt": format!("Hold {n}."), "environment_id": environment}),
            );
            assert_eq!(task.status, 201, "{task:?}");
            let task = task.data()["id"].as_str().unwrap().to_owned();
            let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
            (task, session)
        })
        .collect();
    // Every turn is followed while it runs: the progress line its log's
    // first event gives reaches its session's stream before the turn ends.
    for (task, session) in &sessions {
        let events = server.stream(
            &api.path(&format!("/tasks/{task}/sessions/{session}/events")),
            &token,
            None,
            |events| events.iter().any(|(_, name, _)| name == "tool.progress"),
        );
        let progress = events
            .iter()
            .find(|(_, name, _)| name == "tool.progress")
            .unwrap();
        assert!(
            progress.2["lines"].to_string().contains("started"),
            "{progress:?}"
        );
        assert_eq!(api.session(task, session)["status"], "running");
    }
    assert_eq!(
        inotify_instances(server.child.id()),
        1,
        "one watcher for all {SESSIONS} running turns"
    );
    for (task, session) in &sessions {
        let aborted = api.post(
            &format!("/tasks/{task}/sessions/{session}/abort"),
            json!({}),
        );
        assert_eq!(aborted.status, 202, "{aborted:?}");
    }
    for (task, session) in &sessions {
        api.wait_status(task, session, "idle");
        let turn = assistant(&api.messages(task, session, "").data());
        assert_eq!(turn["turn"]["status"], "cancelled", "{turn:#}");
    }
}

/// `git show <object>` in `repo`: its output, or `None` when git fails.
fn git_show(repo: &Path, object: &str) -> Option<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(["show", object])
        .output()
        .unwrap();
    output
        .status
        .success()
        .then(|| String::from_utf8(output.stdout).unwrap())
}

#[test]
fn a_sessions_changes_are_committed_and_pushed_to_its_local_repository() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let repo = world.path("repo");
    world.script(Script {
        lines: claude_turn("sess-out", "Fixed the greeting."),
        write_files: [("greeting.txt".to_owned(), "hello, world\n".to_owned())].into(),
        ..Script::default()
    });
    let environment = api.environment(json!({"name": "local", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Fix the greeting");
    let idle = api.wait(&task, &session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-out"
    });
    let branch = idle["branch_name"].as_str().unwrap().to_owned();
    let path = |rest: &str| format!("/tasks/{task}/sessions/{session}/{rest}");

    // The turn's change is only in the work tree: the source repository's
    // branch is still at the base.
    assert_eq!(git_show(&repo, &format!("{branch}:greeting.txt")), None);

    let blank = api.post(&path("commit"), json!({"message": "  "}));
    assert_eq!(blank.status, 422, "{blank:?}");
    assert_eq!(blank.field_errors(), ["message"]);
    let nul = api.post(&path("commit"), json!({"message": "a\u{0}b"}));
    assert_eq!(nul.status, 422, "{nul:?}");
    assert_eq!(nul.field_errors(), ["message"]);
    let committed = api.post(
        &path("commit"),
        json!({"message": "Fix the greeting\n\nIt says hello to the world."}),
    );
    assert_eq!(committed.status, 201, "{committed:?}");
    let commit = committed.data();
    assert_eq!(commit["branch"], branch.as_str());
    assert_eq!(
        git_output(&repo, &["rev-parse", &branch]).trim(),
        commit["commit"].as_str().unwrap()
    );
    assert_eq!(
        git_show(&repo, &format!("{branch}:greeting.txt")).as_deref(),
        Some("hello, world\n")
    );
    assert_eq!(
        git_output(&repo, &["log", "-1", "--format=%s", &branch]).trim(),
        "Fix the greeting"
    );
    let again = api.post(&path("commit"), json!({"message": "Again"}));
    assert_eq!(again.status, 409, "{again:?}");
    assert!(again.text.contains("nothing to commit"), "{again:?}");

    // Pushed under a name of the user's own: `git branch` there shows it.
    let bad = api.post(&path("push"), json!({"branch": "two words"}));
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(bad.field_errors(), ["branch"]);
    assert!(!git_output(&repo, &["branch", "--list"]).contains("feature/greeting"));
    let pushed = api.post(&path("push"), json!({"branch": "feature/greeting"}));
    assert_eq!(pushed.status, 200, "{pushed:?}");
    let pushed = pushed.data();
    assert_eq!(pushed["branch"], branch.as_str());
    assert_eq!(pushed["pushed_as"], "feature/greeting");
    assert_eq!(
        pushed["pull_request_url"],
        Value::Null,
        "a local repository has no forge"
    );
    assert_eq!(pushed["uncommitted_changes"], false);
    assert!(git_output(&repo, &["branch", "--list"]).contains("feature/greeting"));
    assert_eq!(
        git_show(&repo, "feature/greeting:greeting.txt").as_deref(),
        Some("hello, world\n")
    );

    // Neither while a turn runs.
    world.script(Script {
        lines: claude_turn("sess-out", "slow"),
        write_files: [("later.txt".to_owned(), "later\n".to_owned())].into(),
        hang_ms: 60_000,
        ..Script::default()
    });
    let sent = api.post(&path("messages"), json!({"message": "Take your time"}));
    assert_eq!(sent.status, 201, "{sent:?}");
    api.wait_status(&task, &session, "running");
    for (action, body) in [
        ("commit", json!({"message": "Too soon"})),
        ("push", json!({})),
    ] {
        let busy = api.post(&path(action), body);
        assert_eq!(busy.status, 409, "{action}: {busy:?}");
        assert!(busy.text.contains("waits until no turn runs"), "{busy:?}");
    }
    assert_eq!(git_show(&repo, &format!("{branch}:later.txt")), None);
    let aborted = api.post(&path("abort"), json!({}));
    assert_eq!(aborted.status, 202, "{aborted:?}");
    api.wait_status(&task, &session, "idle");

    // Another account's token reaches none of it.
    let (other, other_token) = world.second_account();
    let foreign = server.post(
        &format!("/v1/accounts/{other}/tasks/{task}/sessions/{session}/commit"),
        &other_token,
        &json!({"message": "Not mine"}),
    );
    assert_eq!(foreign.status, 404, "{foreign:?}");
}

#[test]
fn a_branch_pushed_to_a_forge_remote_links_to_a_pull_request() {
    let world = World::new();
    // github.com's repository is a bare one here: the agent's git config
    // sends its URL to it (the tests reach no network).
    let bare = world.path("out/widget.git");
    git(
        &world.path("out"),
        &[
            "clone",
            "-q",
            "--bare",
            &world.path("repo").display().to_string(),
            &bare.display().to_string(),
        ],
    );
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let agent = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent_home = world.path("home/agents").join(agent);
    std::fs::create_dir_all(&agent_home).unwrap();
    let remote = "https://github.com/acme/widget.git";
    std::fs::write(
        agent_home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = {remote}\n",
            bare.display()
        ),
    )
    .unwrap();
    world.script(Script {
        lines: claude_turn("sess-pr", "Added the changelog."),
        write_files: [("CHANGELOG.md".to_owned(), "# 1.0\n".to_owned())].into(),
        ..Script::default()
    });
    let environment = api.environment(json!({"name": "widget", "repository": remote}));
    let (task, session) = api.task_on(&environment, "Add a changelog");
    let idle = api.wait(&task, &session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-pr"
    });
    assert_eq!(idle["close_reason"], Value::Null, "{idle:#}");
    let branch = idle["branch_name"].as_str().unwrap().to_owned();
    let path = |rest: &str| format!("/tasks/{task}/sessions/{session}/{rest}");
    let default = git_output(&bare, &["symbolic-ref", "--short", "HEAD"]);
    let default = default.trim();

    // Pushed before the commit: the branch is there, at the base, and the
    // answer says the change stayed behind.
    let early = api.post(&path("push"), json!({}));
    assert_eq!(early.status, 200, "{early:?}");
    assert_eq!(early.data()["uncommitted_changes"], true);
    assert_eq!(git_show(&bare, &format!("{branch}:CHANGELOG.md")), None);

    let committed = api.post(&path("commit"), json!({"message": "Add a changelog"}));
    assert_eq!(committed.status, 201, "{committed:?}");
    let pushed = api.post(&path("push"), json!({}));
    assert_eq!(pushed.status, 200, "{pushed:?}");
    let pushed = pushed.data();
    assert_eq!(pushed["pushed_as"], branch.as_str());
    assert_eq!(pushed["repository"], remote);
    assert_eq!(pushed["uncommitted_changes"], false);
    assert_eq!(
        pushed["pull_request_url"],
        format!("https://github.com/acme/widget/compare/{default}...{branch}?expand=1")
    );
    assert!(git_output(&bare, &["branch", "--list"]).contains(&branch));
    assert_eq!(
        git_show(&bare, &format!("{branch}:CHANGELOG.md")).as_deref(),
        Some("# 1.0\n")
    );
}

#[test]
fn a_failures_headline_is_the_line_that_explains_it() {
    let world = World::new();
    cinch_fake_cli::install(&world.path("bin"), "gemini");
    std::fs::write(
        world.path("home/config.toml"),
        world.operator_config().replace(
            "\"ANTHROPIC_API_KEY\"]",
            "\"ANTHROPIC_API_KEY\", \"GEMINI_API_KEY\"]",
        ),
    )
    .unwrap();
    let mut serve = world.cinch();
    serve
        .env("GEMINI_API_KEY", "gemini-test-key-0123456789")
        .args(["serve", "--home"])
        .arg(world.path("home"));
    let server = Server::start(serve, world.dir.path());
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let repo = world.path("repo");

    // Gemini refusing an untrusted folder, as recorded: its banner lines
    // come first, the reason last.
    world.script(Script {
        stderr: Some(std::fs::read_to_string(recorded("gemini/s1_untrusted.stderr")).unwrap()),
        exit_code: 55,
        ..Script::default()
    });
    let environment = api.environment(json!({"name": "local", "repository": repo}));
    let created = api.post(
        "/tasks",
        json!({"prompt": "Say done", "environment_id": environment, "harness": "gemini"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let failed = api.wait(&task, &session, "a failed turn", |s| {
        s["close_reason"] == "turn_failure"
    });
    let cause = "Gemini CLI is not running in a trusted directory.";
    let error = failed["error_message"].as_str().unwrap();
    assert!(
        error.starts_with(&format!("The last turn failed: {cause}")),
        "{error}"
    );
    assert!(!error.contains("YOLO"), "{error}");
    let turn = assistant(&api.messages(&task, &session, "").data())["turn"].clone();
    let headline = turn["result"]["headline"].as_str().unwrap();
    assert!(headline.starts_with(cause), "{turn:#}");
    assert!(
        turn["result"]["detail"]
            .as_str()
            .unwrap()
            .contains("YOLO mode"),
        "the detail keeps the stderr's tail: {turn:#}"
    );

    // npm failing in a setup command: the sentence after its code, not its
    // usage text nor the log file in the agent's home it points at.
    std::fs::write(
        repo.join("package.json"),
        "{\"name\": \"x\", \"version\": \"1.0.0\"}\n",
    )
    .unwrap();
    git(&repo, &["add", "package.json"]);
    git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "package",
        ],
    );
    let npm = api.environment(json!({"name": "npm", "repository": repo, "setup": ["npm ci"]}));
    let (task, session) = api.task_on(&npm, "Install");
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "setup_failure", "{closed:#}");
    let error = closed["error_message"].as_str().unwrap();
    let cause = error
        .find("can only install with an existing package-lock.json")
        .unwrap_or_else(|| panic!("{error}"));
    assert!(
        error[..cause].contains("failed with exit code 1: "),
        "{error}"
    );
    assert!(error.contains("EUSAGE"), "{error}");
    assert!(!error.contains("A complete log of this run"), "{error}");

    // The whole output is the session's setup log, for its account only.
    let log_path = format!("/tasks/{task}/sessions/{session}/setup-log");
    let log = api.get(&log_path);
    assert_eq!(log.status, 200, "{log:?}");
    assert!(log.text.starts_with("$ npm ci\n"), "{}", log.text);
    for line in [
        "code EUSAGE",
        "Clean install a project",
        "A complete log of this run",
    ] {
        assert!(log.text.contains(line), "{line}: {}", log.text);
    }
    let (other, other_token) = world.second_account();
    let foreign = server.get(
        &format!("/v1/accounts/{other}/tasks/{task}/sessions/{session}/setup-log"),
        &other_token,
    );
    assert_eq!(foreign.status, 404, "{foreign:?}");
    // Output that is not UTF-8 is read on, to the line that explains.
    let bytes = api.environment(json!({"name": "bytes", "repository": repo,
        "setup": ["printf 'a \\377 byte\\n'; echo 'error: the build broke'; exit 3"]}));
    let (task, session) = api.task_on(&bytes, "Build");
    let closed = api.wait_status(&task, &session, "closed");
    let error = closed["error_message"].as_str().unwrap();
    assert!(
        error.contains("failed with exit code 3: error: the build broke"),
        "{error}"
    );
    let log = api.get(&format!("/tasks/{task}/sessions/{session}/setup-log"));
    assert!(
        log.text
            .contains("a \u{fffd} byte\nerror: the build broke\n"),
        "{}",
        log.text
    );

    // A command that leaves a process writing after it ended: its lines
    // still come before the next command's, each whole.
    let late = api.environment(json!({"name": "late", "repository": repo,
        "setup": ["(sleep 0.3; echo late) & echo early", "echo second; exit 4"]}));
    let (task, session) = api.task_on(&late, "Build");
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "setup_failure", "{closed:#}");
    let log = api.get(&format!("/tasks/{task}/sessions/{session}/setup-log"));
    assert_eq!(
        log.text,
        "$ (sleep 0.3; echo late) & echo early\nearly\nlate\n$ echo second; exit 4\nsecond\n"
    );

    let (first, _) = api.task_on(&environment, "No setup here");
    let first_session = api.first_session(&first)["id"].as_str().unwrap().to_owned();
    let none = api.get(&format!(
        "/tasks/{first}/sessions/{first_session}/setup-log"
    ));
    assert_eq!(none.status, 404, "{none:?}");
    assert!(none.text.contains("no setup log"), "{none:?}");
}

/// Declares a harness `name` on the claude driver whose program (the fake
/// CLI) follows a script of its own, `bin/<name>-script.json`, and returns
/// that script's path.
fn declare_harness(world: &World, name: &str, driver: &str) -> PathBuf {
    cinch_fake_cli::install(&world.path("bin"), name);
    let script = world.path(&format!("bin/{name}-script.json"));
    let config = std::fs::read_to_string(world.path("home/config.toml")).unwrap();
    let config = format!(
        "{config}\n[harness.{name}]\ndriver = \"{driver}\"\nprogram = \"{name}\"\n\
         secret_env = [\"ANTHROPIC_API_KEY\"]\nenv = {{ FAKE_CLI_SCRIPT = {:?} }}\n",
        script.display().to_string()
    );
    std::fs::write(world.path("home/config.toml"), config).unwrap();
    script
}

/// Sends `message` to the session and waits for its `turns`th turn to end.
fn next_turn(api: &Api, task: &str, session: &str, message: &str, turns: usize) -> Vec<Value> {
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({ "message": message }),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    ended(api, task, session, turns)
}

/// Waits until the session is idle with `turns` ended turns; its messages.
fn ended(api: &Api, task: &str, session: &str, turns: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let messages = api.walk(task, session, "asc", 200);
        let page = Value::Array(messages.clone());
        if ended_turns(&page) == turns && api.session(task, session)["status"] == "idle" {
            return messages;
        }
        assert!(
            Instant::now() < deadline,
            "the session never ended {turns} turns: {page:#}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Claude's session file for `session` started in `workdir`, under the agent's `home`: its
/// project folder names the work tree with every character but letters and digits a dash.
fn claude_session_file(home: &Path, workdir: &str, session: &str) -> PathBuf {
    let workdir = std::fs::canonicalize(workdir).unwrap();
    let project: String = workdir
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects")
        .join(project)
        .join(format!("{session}.jsonl"))
}

/// A fork on claude at a middle turn, with the source's session file on this node, forks
/// natively: its first turn runs `--resume <that session> --fork-session` in the fork's work
/// tree, where the session's file was copied without the later turn. When the harness will
/// not fork (the turn fails with no session), the fork goes on as a brief one, and says so.
#[test]
fn a_native_fork_resumes_the_session_as_a_fork_and_falls_back_when_the_harness_refuses() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    world.script(Script {
        lines: claude_turn("sess-src", "Wrote one."),
        ..Script::default()
    });
    let (task, source) = api.task_on(&environment, "Write one.");
    let first = assistant(&Value::Array(ended(&api, &task, &source, 1)));
    let turn_one = first["turn"]["turn_id"].as_str().unwrap().to_owned();
    world.script(Script {
        lines: claude_turn("sess-src", "Wrote two."),
        ..Script::default()
    });
    next_turn(&api, &task, &source, "Now write two.", 2);
    // A task of one session compares too, with no other tree to share a base with.
    let alone = api.get(&format!("/tasks/{task}/compare"));
    assert_eq!(alone.status, 200, "{alone:?}");
    assert_eq!(alone.data()["sessions"][0]["turns"], 2, "{alone:?}");
    assert_eq!(alone.data()["base"], Value::Null, "{alone:?}");
    // The session's file as Claude keeps it: each turn from its prompt on.
    let agent = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent_home = world.path("home/agents").join(&agent);
    let source_now = api.session(&task, &source);
    let source_file = claude_session_file(
        &agent_home,
        source_now["workspace"].as_str().unwrap(),
        "sess-src",
    );
    let prompt = |text: &str| json!({"type": "user", "message": {"role": "user", "content": text}});
    let answer = |text: &str| {
        json!({"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "text", "text": text}]}})
    };
    let tool_result = json!({"type": "user", "toolUseResult": {},
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1"}]}});
    let lines = [
        prompt("Write one."),
        tool_result,
        answer("Wrote one."),
        prompt("Now write two."),
        answer("Wrote two."),
    ]
    .map(|line| format!("{line}\n"));
    std::fs::create_dir_all(source_file.parent().unwrap()).unwrap();
    std::fs::write(&source_file, lines.concat()).unwrap();

    // The harness refuses the fork: the turn fails without a session.
    let refused = world.path("out/refused.json");
    world.script(Script {
        exit_code: 1,
        stderr: Some("No conversation found with session ID: sess-src".to_owned()),
        record: Some(refused.clone()),
        ..Script::default()
    });
    let forked = api.post(
        &format!("/tasks/{task}/sessions/{source}/fork"),
        json!({"turn_id": turn_one, "message": "Try another way."}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    assert_eq!(forked.data()["fork_mode"], "native", "{forked:?}");
    let fork = forked.data()["id"].as_str().unwrap().to_owned();
    ended(&api, &task, &fork, 2);
    let argv = read_record(&refused)["argv"].to_string();
    assert!(
        argv.contains(r#""--resume","sess-src","--fork-session""#),
        "{argv}"
    );
    let fork_now = api.session(&task, &fork);
    let copied = claude_session_file(
        &agent_home,
        fork_now["workspace"].as_str().unwrap(),
        "sess-src",
    );
    assert_eq!(
        std::fs::read_to_string(&copied).unwrap(),
        lines[..3].concat()
    );
    assert_eq!(
        std::fs::read_to_string(&source_file).unwrap(),
        lines.concat()
    );
    assert_eq!(fork_now["fork_mode"], "brief");
    assert!(
        fork_now["error_message"]
            .as_str()
            .unwrap()
            .contains("did not fork the source's session"),
        "{fork_now:#}"
    );

    // Its next turn is a new harness session, briefed with the conversation up to turn 1.
    let briefed = world.path("out/briefed.json");
    world.script(Script {
        lines: claude_turn("sess-fork", "Took another way."),
        record: Some(briefed.clone()),
        ..Script::default()
    });
    next_turn(&api, &task, &fork, "Try it once more.", 3);
    let run = read_record(&briefed);
    assert!(!run["argv"].to_string().contains("--resume"), "{run:#}");
    let brief = run["stdin"].as_str().unwrap();
    assert!(
        brief.contains(&format!("a fork of session {source}")),
        "{brief}"
    );
    assert!(brief.contains("Assistant: Wrote one."), "{brief}");
    assert!(!brief.contains("Now write two."), "{brief}");
    assert_eq!(api.session(&task, &fork)["harness_session_id"], "sess-fork");
    assert_eq!(
        api.session(&task, &source)["harness_session_id"],
        "sess-src"
    );
}

#[test]
fn a_fork_at_a_middle_turn_starts_from_its_end_and_leaves_the_source_alone() {
    let world = World::new();
    let alt_script = declare_harness(&world, "alt-claude", "claude");
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    let turn_writing = |session: &str, text: &str, file: &str| Script {
        lines: claude_turn(session, text),
        write_files: [(file.to_owned(), format!("{file}\n"))].into(),
        ..Script::default()
    };
    world.script(turn_writing("sess-src", "Wrote one.", "one.txt"));
    let (task, source) = api.task_on(&environment, "Write one.");
    ended(&api, &task, &source, 1);
    world.script(turn_writing("sess-src", "Wrote two.", "two.txt"));
    let messages = next_turn(&api, &task, &source, "Now write two.", 2);
    let middle = assistant(&Value::Array(messages.clone()));
    let middle_turn = middle["turn"]["turn_id"].as_str().unwrap().to_owned();
    world.script(turn_writing("sess-src", "Wrote three.", "three.txt"));
    let source_messages = next_turn(&api, &task, &source, "And three.", 3);
    let source_before = api.session(&task, &source);
    let source_dir = PathBuf::from(source_before["workspace"].as_str().unwrap());

    // Bad requests say what is wrong.
    let fork_path = format!("/tasks/{task}/sessions/{source}/fork");
    let unknown = api.post(&fork_path, json!({"turn_id": "turn_nope"}));
    assert_eq!(unknown.status, 422, "{unknown:?}");
    assert!(unknown.text.contains("turn_nope"), "{unknown:?}");
    let no_harness = api.post(&fork_path, json!({"harness": "nobody"}));
    assert_eq!(no_harness.status, 422, "{no_harness:?}");
    assert!(no_harness.text.contains("nobody"), "{no_harness:?}");
    let stranger = api.post(&format!("/tasks/{task}/sessions/ses_nope/fork"), json!({}));
    assert_eq!(stranger.status, 404, "{stranger:?}");
    let unknown_field = api.post(&fork_path, json!({"turn": middle_turn}));
    assert_eq!(unknown_field.status, 422, "{unknown_field:?}");
    // A session with no ended turn has nothing to fork from yet.
    let fresh = api.post(&format!("/tasks/{task}/sessions"), json!({}));
    assert_eq!(fresh.status, 201, "{fresh:?}");
    let fresh = fresh.data()["id"].as_str().unwrap().to_owned();
    let nothing = api.post(&format!("/tasks/{task}/sessions/{fresh}/fork"), json!({}));
    assert_eq!(nothing.status, 409, "{nothing:?}");
    assert!(nothing.text.contains("no ended turn"), "{nothing:?}");

    // A fork at the middle turn, onto another harness, with a message.
    let record = world.path("out/fork-record.json");
    Script {
        lines: claude_turn("sess-fork", "Took another way."),
        write_files: [("other.txt".to_owned(), "other\n".to_owned())].into(),
        read_stdin: true,
        record: Some(record.clone()),
        ..Script::default()
    }
    .write_to(&alt_script)
    .unwrap();
    let forked = api.post(
        &fork_path,
        json!({"turn_id": middle_turn, "harness": "alt-claude", "message": "Try another way."}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    let fork = forked.data();
    let fork_id = fork["id"].as_str().unwrap().to_owned();
    assert_ne!(fork_id, source);
    assert_eq!(fork["task_id"], json!(task));
    assert_eq!(fork["harness"], "alt-claude");
    assert_eq!(fork["fork_mode"], "brief");
    assert_eq!(
        fork["forked_from"],
        json!({"session_id": source, "turn_id": middle_turn})
    );
    let fork_messages = ended(&api, &task, &fork_id, 3);
    let fork_now = api.session(&task, &fork_id);
    assert_eq!(fork_now["harness_session_id"], "sess-fork");

    // Its tree is the middle turn's end, the later turn absent, its own turn's work added.
    let fork_dir = PathBuf::from(fork_now["workspace"].as_str().unwrap());
    assert_ne!(fork_dir, source_dir);
    for (file, there) in [
        ("one.txt", true),
        ("two.txt", true),
        ("three.txt", false),
        ("other.txt", true),
    ] {
        assert_eq!(fork_dir.join(file).exists(), there, "{file} in the fork");
    }
    assert_ne!(fork_now["branch_name"], source_before["branch_name"]);
    assert_eq!(
        git_output(&fork_dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        fork_now["branch_name"].as_str().unwrap()
    );

    // Its conversation: the source's up to the middle turn, marked inherited, then its own.
    let inherited: Vec<&Value> = fork_messages
        .iter()
        .filter(|message| !message["forked_from"].is_null())
        .collect();
    let texts: Vec<&str> = inherited
        .iter()
        .map(|message| message["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["Write one.", "Wrote one.", "Now write two.", "Wrote two."],
        "{fork_messages:#?}"
    );
    for message in &inherited {
        assert_eq!(
            message["forked_from"],
            json!({"session_id": source, "turn_id": middle_turn})
        );
        assert_eq!(message["session_id"], json!(fork_id));
    }
    let own = assistant(&Value::Array(fork_messages.clone()));
    assert!(own["forked_from"].is_null());
    assert_eq!(own["content"], "Took another way.");

    // A new harness session, briefed with the conversation so far.
    let run = read_record(&record);
    let brief = run["stdin"].as_str().unwrap();
    assert!(
        brief.contains(&format!("a fork of session {source}")),
        "{brief}"
    );
    for said in [
        "User: Write one.",
        "Assistant: Wrote two.",
        "Try another way.",
    ] {
        assert!(brief.contains(said), "{said} in {brief}");
    }
    assert!(!brief.contains("And three."), "{brief}");
    assert!(!run["argv"].to_string().contains("--resume"), "{run:#}");

    // The source is untouched: its tree, its conversation, its session.
    for (file, there) in [("three.txt", true), ("other.txt", false)] {
        assert_eq!(
            source_dir.join(file).exists(),
            there,
            "{file} in the source"
        );
    }
    assert_eq!(api.walk(&task, &source, "asc", 200), source_messages);
    let source_after = api.session(&task, &source);
    assert_eq!(source_after["harness_session_id"], "sess-src");
    assert_eq!(source_after["forked_from"], Value::Null);

    // Closing the fork leaves the source's work tree and branch.
    let closed = server.request(
        "PATCH",
        &api.path(&format!("/tasks/{task}/sessions/{fork_id}")),
        Some(&token),
        Some(&json!({"status": "closed"}).to_string()),
    );
    assert_eq!(closed.status, 200, "{closed:?}");
    assert!(source_dir.join("three.txt").exists());
    assert_eq!(
        git_output(&source_dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        source_before["branch_name"].as_str().unwrap()
    );

    // Without a turn id, a fork starts from the latest turn, on the source's harness.
    world.script(turn_writing("sess-latest", "Latest.", "latest.txt"));
    let latest = api.post(&fork_path, json!({"message": "Go on."}));
    assert_eq!(latest.status, 201, "{latest:?}");
    let latest = latest.data();
    assert_eq!(latest["harness"], "claude");
    let last_turn = assistant(&Value::Array(source_messages.clone()));
    assert_eq!(
        latest["forked_from"]["turn_id"],
        last_turn["turn"]["turn_id"]
    );
    let latest_id = latest["id"].as_str().unwrap();
    ended(&api, &task, latest_id, 4);
    let latest_dir = PathBuf::from(
        api.session(&task, latest_id)["workspace"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    assert!(latest_dir.join("three.txt").exists());
    assert!(latest_dir.join("latest.txt").exists());
    assert!(!latest_dir.join("other.txt").exists());

    // A session without an environment has a scratch repository of its own:
    // its fork fetches the checkpoint from the source's folder.
    world.script(turn_writing("sess-scratch", "Scratched.", "scratch.txt"));
    let created = api.post("/tasks", json!({"prompt": "Scratch something."}));
    assert_eq!(created.status, 201, "{created:?}");
    let scratch_task = created.data()["id"].as_str().unwrap().to_owned();
    let scratch = api.first_session(&scratch_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    ended(&api, &scratch_task, &scratch, 1);
    world.script(turn_writing("sess-scratch-fork", "Again.", "again.txt"));
    let forked = api.post(
        &format!("/tasks/{scratch_task}/sessions/{scratch}/fork"),
        json!({"message": "Again."}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    let scratch_fork = forked.data()["id"].as_str().unwrap().to_owned();
    ended(&api, &scratch_task, &scratch_fork, 2);
    let dir = PathBuf::from(
        api.session(&scratch_task, &scratch_fork)["workspace"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("scratch.txt")).unwrap(),
        "scratch.txt\n"
    );
    assert!(dir.join("again.txt").exists());
}

#[test]
fn a_fan_out_of_three_harnesses_completes_and_compares_side_by_side() {
    let world = World::new();
    let alt_script = declare_harness(&world, "alt-claude", "claude");
    let codex_script = declare_harness(&world, "alt-codex", "codex");
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    let writes = |files: &[(&str, &str)]| -> std::collections::BTreeMap<String, String> {
        files
            .iter()
            .map(|(name, text)| ((*name).to_owned(), (*text).to_owned()))
            .collect()
    };
    world.script(Script {
        lines: claude_turn("sess-claude", "Claude's way."),
        write_files: writes(&[("answer.txt", "one\ntwo\nthree\nfour\nfive\nclaude\n")]),
        ..Script::default()
    });
    Script {
        lines: claude_turn("sess-alt", "The other way."),
        write_files: writes(&[("answer.txt", "one\ntwo\nthree\nfour\nfive\nalt\n")]),
        ..Script::default()
    }
    .write_to(&alt_script)
    .unwrap();
    Script {
        replay: Some(recorded("codex/s1.jsonl")),
        write_files: writes(&[("answer.txt", "claude\n"), ("codex.txt", "codex\n")]),
        ..Script::default()
    }
    .write_to(&codex_script)
    .unwrap();

    // Bad fan-outs are refused before anything starts.
    let choices =
        json!([{"harness": "claude"}, {"harness": "alt-claude"}, {"harness": "alt-codex"}]);
    for (body, field) in [
        (json!({"prompt": "p", "sessions": []}), "sessions"),
        (
            json!({"prompt": "p", "sessions": vec![json!({"harness": "claude"}); 9]}),
            "sessions",
        ),
        (json!({"sessions": choices}), "prompt"),
        (
            json!({"prompt": "p", "harness": "claude", "sessions": choices}),
            "sessions",
        ),
        (
            json!({"prompt": "p", "sessions": [{"harness": "claude"}, {"harness": "nobody"}]}),
            "sessions[1].harness",
        ),
    ] {
        let refused = api.post("/tasks", body.clone());
        assert_eq!(refused.status, 422, "{body}: {refused:?}");
        assert!(refused.text.contains(field), "{body}: {refused:?}");
    }
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 0);

    let created = api.post(
        "/tasks",
        json!({"prompt": "Write the answer.", "environment_id": environment, "sessions": choices}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    assert_eq!(created.data()["session_count"], 3);
    let sessions = api.get(&format!("/tasks/{task}/sessions")).data();
    let ids: Vec<String> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["id"].as_str().unwrap().to_owned())
        .collect();
    let harnesses: Vec<&str> = sessions
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["harness"].as_str().unwrap())
        .collect();
    assert_eq!(harnesses, ["claude", "alt-claude", "alt-codex"]);
    let mut dirs = Vec::new();
    for id in &ids {
        let messages = ended(&api, &task, id, 1);
        let turn = assistant(&Value::Array(messages));
        assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
        assert_eq!(turn["turn"]["brief"], "Write the answer.");
        dirs.push(PathBuf::from(
            api.session(&task, id)["workspace"]
                .as_str()
                .unwrap()
                .to_owned(),
        ));
    }
    // Each its own worktree from the same base.
    assert_eq!(
        std::fs::read_to_string(dirs[1].join("answer.txt")).unwrap(),
        "one\ntwo\nthree\nfour\nfive\nalt\n"
    );
    assert!(!dirs[0].join("codex.txt").exists() && dirs[2].join("codex.txt").exists());
    let bases: Vec<String> = dirs
        .iter()
        .map(|dir| git_output(dir, &["rev-parse", "HEAD"]))
        .collect();
    assert!(bases.iter().all(|base| base == &bases[0]), "{bases:?}");
    // Each is one of the repository's linked worktrees as git lists them,
    // on its session's branch, and git's own pruning keeps them.
    let repo = world.path("repo");
    git(&repo, &["worktree", "prune"]);
    let listed = git_output(&repo, &["worktree", "list", "--porcelain"]);
    for (id, dir) in ids.iter().zip(&dirs) {
        let branch = api.session(&task, id)["branch_name"]
            .as_str()
            .unwrap()
            .to_owned();
        let entry = format!(
            "worktree {}\nHEAD {}\nbranch refs/heads/{branch}",
            dir.canonicalize().unwrap().display(),
            bases[0].trim()
        );
        assert!(
            listed.split("\n\n").any(|block| block.trim() == entry),
            "{entry}\n{listed}"
        );
    }

    let compared = api.get(&format!("/tasks/{task}/compare"));
    assert_eq!(compared.status, 200, "{compared:?}");
    let compared = compared.data();
    assert_eq!(compared["base"], json!(bases[0].trim()));
    assert_eq!(
        compared["differing_files"],
        json!(["answer.txt", "codex.txt"])
    );
    let rows = compared["sessions"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (row, (id, files)) in rows.iter().zip(ids.iter().zip([1, 1, 2])) {
        assert_eq!(row["session"]["id"], json!(id));
        assert_eq!(row["session"]["status"], "idle");
        assert_eq!(row["turns"], 1, "{row:#}");
        assert!(row["duration_ms"].as_u64().unwrap() > 0, "{row:#}");
        assert_eq!(row["diffstat"]["total_files"], files, "{row:#}");
        assert_eq!(row["session"]["usage"]["turns"], 1, "{row:#}");
    }
    assert_eq!(rows[0]["last_reply"], "Claude's way.");
    assert_eq!(rows[1]["last_reply"], "The other way.");
    assert!(
        rows[2]["session"]["usage"]["input_tokens"]
            .as_i64()
            .unwrap()
            > 0
    );

    let diff = api.get(&format!(
        "/tasks/{task}/compare/diff?a={}&b={}",
        ids[0], ids[1]
    ));
    assert_eq!(diff.status, 200, "{diff:?}");
    assert!(diff.content_type.starts_with("text/x-diff"), "{diff:?}");
    assert!(diff.text.contains("-claude\n+alt\n"), "{}", diff.text);
    assert!(!diff.text.contains("codex.txt"), "{}", diff.text);
    // Three lines of context by default; the whole file when asked.
    assert!(!diff.text.contains(" one\n"), "{}", diff.text);
    let whole = api.get(&format!(
        "/tasks/{task}/compare/diff?a={}&b={}&context=whole_files",
        ids[0], ids[1]
    ));
    assert_eq!(whole.status, 200, "{whole:?}");
    assert!(
        whole
            .text
            .contains(" one\n two\n three\n four\n five\n-claude\n+alt\n"),
        "{}",
        whole.text
    );
    let unknown = api.get(&format!(
        "/tasks/{task}/compare/diff?a={}&b={}&context=everything",
        ids[0], ids[1]
    ));
    assert_eq!(unknown.status, 422, "{unknown:?}");
    let same = api.get(&format!(
        "/tasks/{task}/compare/diff?a={}&b={}",
        ids[0], ids[0]
    ));
    assert_eq!(same.status, 200);
    assert_eq!(same.text, "");
    let stranger = api.get(&format!(
        "/tasks/{task}/compare/diff?a={}&b=ses_nope",
        ids[0]
    ));
    assert_eq!(stranger.status, 422, "{stranger:?}");
    let missing = api.get(&format!("/tasks/{task}/compare/diff?a={}", ids[0]));
    assert_eq!(missing.status, 422, "{missing:?}");
}

/// Every path under `dir`, with each file's bytes, in order.
fn tree(dir: &Path) -> Vec<(PathBuf, Option<String>)> {
    let mut found = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_symlink() || !path.is_dir() {
            found.push((path.clone(), std::fs::read_to_string(&path).ok()));
        } else {
            found.push((path.clone(), None));
            found.extend(tree(&path));
        }
    }
    found
}

#[test]
fn a_linked_worktrees_folder_is_never_written_through() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let repo = world.path("repo");
    let environment = api.environment(json!({
        "name": "shop",
        "repository": repo.display().to_string(),
    }));
    world.script(Script {
        lines: claude_turn("sess-linked", "Done."),
        ..Script::default()
    });
    // What an agent committing from its worktree could plant: the folder
    // of the repository's worktrees made a link to a folder outside it.
    let outside = world.path("planted");
    std::fs::create_dir_all(outside.join("kept")).unwrap();
    std::fs::write(outside.join("kept/file"), "mine\n").unwrap();
    let worktrees = repo.join(".git/worktrees");
    let _ = std::fs::remove_dir(&worktrees);
    std::os::unix::fs::symlink(&outside, &worktrees).unwrap();
    let before = tree(&outside);
    assert_eq!(before.len(), 2, "{before:?}");

    let created = api.post(
        "/tasks",
        json!({"prompt": "Write the answer.", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    // A worktree git lists lives in the repository's worktrees folder,
    // here the link's target: the session cannot have one, and says why.
    let settled = api.wait(&task, &session, "closed or idle", |session| {
        session["status"] == "closed" || session["status"] == "idle"
    });
    assert_eq!(tree(&outside), before);
    assert_eq!(settled["close_reason"], "vm_failure", "{settled:#}");
    let error = settled["error_message"].as_str().unwrap();
    assert!(error.contains("git worktree add"), "{error}");
    assert!(
        server
            .log()
            .contains("linking a session's worktree directly failed"),
        "{}",
        server.log()
    );

    // With the folder whole again, the next session runs its turn in a
    // worktree of the repository, and nothing went through the link.
    std::fs::remove_file(&worktrees).unwrap();
    let created = api.post(
        "/tasks",
        json!({"prompt": "Write the answer.", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let messages = ended(&api, &task, &session, 1);
    let turn = assistant(&Value::Array(messages));
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    let session = api.session(&task, &session);
    let dir = PathBuf::from(session["workspace"].as_str().unwrap());
    let entry = format!(
        "worktree {}\nHEAD {}\nbranch refs/heads/{}",
        dir.canonicalize().unwrap().display(),
        git_output(&dir, &["rev-parse", "HEAD"]).trim(),
        session["branch_name"].as_str().unwrap()
    );
    git(&repo, &["worktree", "prune"]);
    let listed = git_output(&repo, &["worktree", "list", "--porcelain"]);
    assert!(
        listed.split("\n\n").any(|block| block.trim() == entry),
        "{entry}\n{listed}"
    );
    assert_eq!(tree(&outside), before);
}

#[test]
fn forks_and_fan_outs_wait_for_capacity_like_any_session() {
    let world = World::new();
    let server = world.serve_with(&["--max-turns", "1", "--retry-seconds", "1"]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    let quick = Script {
        lines: claude_turn("sess-cap", "Done."),
        ..Script::default()
    };
    world.script(quick.clone());
    let (task, source) = api.task_on(&environment, "First.");
    ended(&api, &task, &source, 1);

    // The one turn slot is taken by a long turn of the source.
    world.script(Script {
        hang_ms: 120_000,
        ..quick.clone()
    });
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{source}/messages"),
        json!({"message": "Run long."}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    api.wait_turn_message(&task, &source);

    let forked = api.post(
        &format!("/tasks/{task}/sessions/{source}/fork"),
        json!({"message": "Try another way."}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    let fork = forked.data()["id"].as_str().unwrap().to_owned();
    let fanned = api.post(
        "/tasks",
        json!({"prompt": "Race.", "environment_id": environment,
               "sessions": [{"harness": "claude"}, {"harness": "claude"}]}),
    );
    assert_eq!(fanned.status, 201, "{fanned:?}");
    let fan_task = fanned.data()["id"].as_str().unwrap().to_owned();
    let fan_sessions: Vec<String> = api
        .get(&format!("/tasks/{fan_task}/sessions"))
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|session| session["id"].as_str().unwrap().to_owned())
        .collect();
    let waiting: Vec<(&str, &str)> = std::iter::once((task.as_str(), fork.as_str()))
        .chain(
            fan_sessions
                .iter()
                .map(|id| (fan_task.as_str(), id.as_str())),
        )
        .collect();
    for (task, session) in &waiting {
        api.wait(task, session, "waiting for a slot", |s| {
            s["status"] == "waiting" && s["waiting_since"].is_string()
        });
    }

    // Once the long turn is aborted, each gets the slot in turn and completes.
    world.script(quick);
    let aborted = api.post(&format!("/tasks/{task}/sessions/{source}/abort"), json!({}));
    assert_eq!(aborted.status, 202, "{aborted:?}");
    ended(&api, &task, &fork, 2);
    for id in &fan_sessions {
        ended(&api, &fan_task, id, 1);
    }
}
