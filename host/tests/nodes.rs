//! Several `cinch serve` nodes, each with its own home and address, over
//! one PostgreSQL database. These run when `CINCH_TEST_DATABASE` names a
//! PostgreSQL server (`.ci/run` starts one); without it there is no second
//! backend to share and they say they were skipped.

use std::io::{BufRead as _, BufReader};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

mod support;

use support::*;

/// A fresh database on the test server, or `None` (said on stderr).
fn shared_database() -> Option<String> {
    let database = test_database();
    if database.is_none() {
        eprintln!("skipped: CINCH_TEST_DATABASE names no PostgreSQL server");
    }
    database
}

#[test]
fn nodes_starting_together_make_one_account_and_later_nodes_none() {
    let Some(database) = shared_database() else {
        return;
    };
    let worlds: Vec<World> = (0..3)
        .map(|_| World::with_database(Some(database.clone())))
        .collect();
    let servers: Vec<Server> = std::thread::scope(|scope| {
        let starting: Vec<_> = worlds
            .iter()
            .map(|world| scope.spawn(|| world.serve()))
            .collect();
        starting
            .into_iter()
            .map(|node| node.join().unwrap())
            .collect()
    });
    let made: Vec<&World> = worlds
        .iter()
        .filter(|world| world.path("home/admin-token").exists())
        .collect();
    assert_eq!(made.len(), 1, "exactly one node writes the admin's token");
    let token = made[0].admin_token();
    for server in &servers {
        let accounts = server.get("/v1/accounts", &token);
        assert_eq!(accounts.status, 200, "{accounts:?}");
        assert_eq!(accounts.data().as_array().unwrap().len(), 1, "{accounts:?}");
    }

    // A node that starts later on the same database creates nothing either.
    let later = World::with_database(Some(database));
    let server = later.serve();
    assert!(!later.path("home/admin-token").exists());
    assert_eq!(std::fs::read_to_string(&server.stdout).unwrap(), "");
    let accounts = server.get("/v1/accounts", &token);
    assert_eq!(accounts.data().as_array().unwrap().len(), 1, "{accounts:?}");
}

#[test]
fn any_node_answers_for_what_another_wrote() {
    let Some(database) = shared_database() else {
        return;
    };
    let first = World::with_database(Some(database.clone()));
    let second = World::with_database(Some(database));
    let one = first.serve();
    let two = second.serve();
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let on_two = Api::new(&two, &token);
    assert_eq!(on_one.account, on_two.account);

    // A token made on one node's command line works on the other.
    let agent = second.agent_token("ci");
    assert_eq!(one.get("/v1/accounts", &agent).status, 200);

    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
    }));
    let read = on_two.get(&format!("/environments/{environment}"));
    assert_eq!(read.status, 200, "{read:?}");
    assert_eq!(read.data()["name"], "shop");

    first.script(Script {
        lines: claude_turn("sess-n", "Done on node one."),
        ..Script::default()
    });
    let created = on_one.post(
        "/tasks",
        json!({"prompt": "Say hello", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = on_one.first_session(&task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    on_one.wait_status(&task, &session, "idle");

    // Node two reads the same conversation, page for page, and sees a
    // message posted on node one at once (it keeps no page of its own).
    let before = on_two.messages(&task, &session, "").data();
    assert_eq!(before, on_one.messages(&task, &session, "").data());
    assert_eq!(assistant(&before)["content"], "Done on node one.");
    let tasks = on_two.get("/tasks").data();
    assert_eq!(tasks[0]["id"], json!(task), "{tasks:#}");
    first.script(Script {
        lines: claude_turn("sess-n", "Again on node one."),
        ..Script::default()
    });
    let sent = on_one.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "once more"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let after = on_two.messages(&task, &session, "").data();
    assert!(
        after
            .as_array()
            .unwrap()
            .iter()
            .any(|message| message["content"] == "once more"),
        "{after:#}"
    );
}

// Events and messages across nodes: a session's run streams from any node
// with the same ids, and a stream moves between nodes with Last-Event-ID.

/// One event as a client got it: its id, name and data, and when it came.
type Received = (u64, String, Value, Instant);

/// Reads the SSE stream at `path` on `server` until `done` says so.
fn timed_stream(
    server: &Server,
    path: &str,
    token: &str,
    last_event_id: Option<u64>,
    done: impl Fn(&[Received]) -> bool,
) -> Vec<Received> {
    let mut request = agent()
        .get(&server.url(path))
        .header("Authorization", format!("Bearer {token}"));
    if let Some(id) = last_event_id {
        request = request.header("Last-Event-ID", id.to_string());
    }
    let response = request.call().unwrap();
    assert_eq!(response.status(), 200, "{}", server.log());
    let reader = BufReader::new(response.into_body().into_reader());
    let mut events = Vec::new();
    let (mut id, mut name, mut data) = (0, String::new(), String::new());
    for line in reader.lines() {
        let line = line.unwrap();
        if let Some(value) = line.strip_prefix("id:") {
            id = value.trim().parse().unwrap();
        } else if let Some(value) = line.strip_prefix("event:") {
            name = value.trim().to_owned();
        } else if let Some(value) = line.strip_prefix("data:") {
            data.push_str(value.trim());
        } else if line.is_empty() && !data.is_empty() {
            let parsed = serde_json::from_str(&data).unwrap();
            events.push((id, std::mem::take(&mut name), parsed, Instant::now()));
            data.clear();
            if done(&events) {
                break;
            }
        }
    }
    events
}

/// The number of `tool.ended` events among `events`.
fn turns_ended(events: &[Received]) -> usize {
    events
        .iter()
        .filter(|(_, name, _, _)| name == "tool.ended")
        .count()
}

/// A claude turn that writes `steps` tool calls, `gap_ms` apart.
fn slow_turn(session: &str, steps: usize, gap_ms: u64) -> Script {
    let mut lines = claude_turn(session, "Took a while.");
    lines.splice(
        1..1,
        (0..steps).map(|n| {
            json!({"type": "assistant", "session_id": session,
            "message": {"content": [{"type": "tool_use", "id": format!("t{n}"), "name": "Bash",
                                     "input": {"command": format!("echo step-{n}")}}]}})
        }),
    );
    Script {
        lines,
        line_delay_ms: gap_ms,
        ..Script::default()
    }
}

/// The id, name and data of each event: what must be the same on every node.
fn contents(events: &[Received]) -> Vec<(u64, String, Value)> {
    events
        .iter()
        .map(|(id, name, data, _)| (*id, name.clone(), data.clone()))
        .collect()
}

/// The median and the largest of `samples`.
fn median_and_max(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], *samples.last().unwrap())
}

#[test]
fn a_session_running_on_one_node_streams_live_on_another() {
    let Some(database) = shared_database() else {
        return;
    };
    let first = World::with_database(Some(database.clone()));
    let second = World::with_database(Some(database));
    let one = first.serve();
    let two = second.serve();
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let on_two = Api::new(&two, &token);
    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
    }));
    first.script(slow_turn("sess-live", 12, 300));
    let created = on_one.post(
        "/tasks",
        json!({"prompt": "Take a while", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = on_one.first_session(&task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = on_one.path(&format!("/tasks/{task}/sessions/{session}/events"));

    // One client on the node that runs the turn, one on the other, at once.
    let (on_runner, elsewhere) = std::thread::scope(|scope| {
        let on_runner =
            scope.spawn(|| timed_stream(&one, &path, &token, None, |e| turns_ended(e) == 1));
        let elsewhere =
            scope.spawn(|| timed_stream(&two, &path, &token, None, |e| turns_ended(e) == 1));
        (on_runner.join().unwrap(), elsewhere.join().unwrap())
    });
    on_one.wait_status(&task, &session, "idle");

    // The same events under the same ids, numbered from 1 with no gap.
    assert_eq!(contents(&elsewhere), contents(&on_runner));
    let ids: Vec<u64> = elsewhere.iter().map(|(id, ..)| *id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let steps = elsewhere
        .iter()
        .filter(|(_, name, data, _)| name == "tool.progress" && data.to_string().contains("step-"))
        .count();
    assert!(
        steps >= 2,
        "the turn's steps came in several events: {ids:?}"
    );

    // Live: the other node's client had the turn's first steps while it ran,
    // well before its end.
    let first_step = elsewhere
        .iter()
        .find(|(_, _, data, _)| data.to_string().contains("step-0"))
        .unwrap()
        .3;
    let ended = on_runner.last().unwrap().3;
    assert!(
        ended.duration_since(first_step) > Duration::from_secs(1),
        "the other node showed the first step only {:?} before the turn ended",
        ended.duration_since(first_step)
    );
    let delays: Vec<Duration> = on_runner
        .iter()
        .zip(&elsewhere)
        .map(|(here, there)| there.3.saturating_duration_since(here.3))
        .collect();
    let (median, max) = median_and_max(delays);
    eprintln!(
        "the other node's client got each event {median:?} after the runner's (median), {max:?} at most"
    );
    // Both nodes read the same stored conversation too.
    assert_eq!(
        on_two.messages(&task, &session, "").data(),
        on_one.messages(&task, &session, "").data()
    );
}

#[test]
fn a_stream_moved_to_another_node_resumes_with_no_gap_and_no_repeat() {
    let Some(database) = shared_database() else {
        return;
    };
    let worlds: Vec<World> = (0..3)
        .map(|_| World::with_database(Some(database.clone())))
        .collect();
    let nodes: Vec<Server> = worlds.iter().map(World::serve).collect();
    let token = worlds
        .iter()
        .find(|world| world.path("home/admin-token").exists())
        .unwrap()
        .admin_token();
    let on_one = Api::new(&nodes[0], &token);
    let on_two = Api::new(&nodes[1], &token);
    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": worlds[0].path("repo").display().to_string(),
    }));
    worlds[0].script(slow_turn("sess-move", 20, 200));
    let created = on_one.post(
        "/tasks",
        json!({"prompt": "Take a while", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = on_one.first_session(&task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let path = on_one.path(&format!("/tasks/{task}/sessions/{session}/events"));

    // The client reads a few of the turn's steps on node 1 and leaves.
    let before = timed_stream(&nodes[0], &path, &token, None, |events| {
        events
            .iter()
            .any(|(_, _, data, _)| data.to_string().contains("step-3"))
    });
    let seen = before.last().unwrap().0;
    // Meanwhile node 2 takes a message for the running session: its events
    // land between node 1's in the same run.
    let sent = on_two.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "and then some"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");

    // It comes back on node 3 where it left off and reads to the end of the
    // second turn (the message's).
    let after = timed_stream(&nodes[2], &path, &token, Some(seen), |events| {
        turns_ended(events) == 2
    });
    assert_eq!(
        after[0].0,
        seen + 1,
        "the first event after the last one seen"
    );
    on_one.wait_status(&task, &session, "idle");

    // What it got is what node 1 serves, whole: nothing missed, nothing twice.
    let whole = timed_stream(&nodes[0], &path, &token, None, |events| {
        turns_ended(events) == 2
    });
    let mut got = contents(&before);
    got.extend(contents(&after));
    assert_eq!(got, contents(&whole));
    let ids: Vec<u64> = whole.iter().map(|(id, ..)| *id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    assert!(
        whole
            .iter()
            .any(|(_, name, data, _)| name == "message.created"
                && data["content"] == "and then some"),
        "{:#?}",
        contents(&whole)
    );
    // Each node serves the same from the start.
    for node in &nodes[1..] {
        let there = timed_stream(node, &path, &token, None, |events| turns_ended(events) == 2);
        assert_eq!(contents(&there), contents(&whole));
    }
}

#[test]
fn a_code_task_running_on_one_node_is_followed_from_another() {
    let Some(database) = shared_database() else {
        return;
    };
    let first = World::with_database(Some(database.clone()));
    let second = World::with_database(Some(database));
    let one = first.serve();
    let two = second.serve();
    let token = first.admin_token();
    Api::new(&one, &token).environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
    }));
    first.script(slow_turn("sess-task", 12, 250));
    let started = one.post(
        "/api/runs/run-nodes/tasks",
        &token,
        &json!({"brief": "Work.", "harness": "claude", "repo": "shop"}),
    );
    assert_eq!(started.status, 201, "{started:?}\n{}", one.log());
    let call = started.json()["call_id"].as_str().unwrap().to_owned();
    let task_path = format!("/api/runs/run-nodes/tasks/{call}");

    // While it runs on node 1, node 2 says so and streams its events live.
    let running = two.get(&task_path, &token);
    assert_eq!(running.status, 200, "{running:?}\n{}", two.log());
    assert_eq!(running.json()["status"], "running", "{running:?}");
    let elsewhere = timed_stream(&two, "/api/runs/run-nodes/events", &token, None, |e| {
        turns_ended(e) == 1
    });
    let on_runner = timed_stream(&one, "/api/runs/run-nodes/events", &token, None, |e| {
        turns_ended(e) == 1
    });
    assert_eq!(contents(&elsewhere), contents(&on_runner));
    assert!(
        elsewhere
            .iter()
            .any(|(_, _, data, _)| data.to_string().contains("step-11")),
        "{:#?}",
        contents(&elsewhere)
    );

    // Ended, both nodes answer the same status, result and diff.
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        let read = one.get(&task_path, &token).json();
        if read["status"] != "running" {
            break read;
        }
        assert!(Instant::now() < deadline, "{read:#}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(two.get(&task_path, &token).json(), ended);
    let diff = format!("{task_path}/diff");
    let (here, there) = (one.get(&diff, &token), two.get(&diff, &token));
    assert_eq!((there.status, &there.text), (here.status, &here.text));
    let log = format!("{task_path}/log");
    assert_eq!(one.get(&log, &token).status, 200);
    // The log stays in the home of the node that ran the task, which says so
    // (not that it was pruned).
    let there = two.get(&log, &token);
    assert_eq!(there.status, 404, "{there:?}");
    assert_eq!(there.json()["type"], "urn:cinch:log.elsewhere", "{there:?}");
}
