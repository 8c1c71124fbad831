//! Several `cinch serve` nodes, each with its own home and address, over
//! one PostgreSQL database: one account, any node answering, sessions
//! owned through leases, taken over when their node dies, handed over when
//! it drains. These run when `CINCH_TEST_DATABASE` names a PostgreSQL
//! server (`.ci/run` starts one); without it there is no second backend to
//! share and they say they were skipped.

use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// `N` worlds over one fresh database on the test server, or `None` (said
/// on stderr) when there is no server.
fn shared_worlds<const N: usize>() -> Option<[World; N]> {
    let database = shared_database()?;
    Some(std::array::from_fn(|_| {
        World::with_database(Some(database.clone()))
    }))
}

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

    let environment = shop(&on_one, &first);
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
            scope.spawn(|| one.timed_stream(&path, &token, None, |e| turns_ended(e) == 1));
        let elsewhere =
            scope.spawn(|| two.timed_stream(&path, &token, None, |e| turns_ended(e) == 1));
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
    let before = nodes[0].timed_stream(&path, &token, None, |events| {
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
    let after = nodes[2].timed_stream(&path, &token, Some(seen), |events| turns_ended(events) == 2);
    assert_eq!(
        after[0].0,
        seen + 1,
        "the first event after the last one seen"
    );
    on_one.wait_status(&task, &session, "idle");

    // What it got is what node 1 serves, whole: nothing missed, nothing twice.
    let whole = nodes[0].timed_stream(&path, &token, None, |events| turns_ended(events) == 2);
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
        let there = node.timed_stream(&path, &token, None, |events| turns_ended(events) == 2);
        assert_eq!(contents(&there), contents(&whole));
    }
}

/// The lease of these tests' nodes, in seconds: short, so that a node's
/// death shows soon.
const LEASE_TTL: u64 = 5;

/// Starts `cinch serve` for `world` as node `id`, with a short lease.
fn node(world: &World, id: &str, extra: &[&str]) -> Server {
    let ttl = LEASE_TTL.to_string();
    let mut args = vec!["--node-id", id, "--lease-ttl", &ttl];
    args.extend(extra);
    world.serve_with(&args)
}

/// Gives every node the same fake CLI script (each reads its own world's),
/// recording the invocation under the node's `out/{record}.json`.
fn script_everywhere(worlds: &[&World], record: &str, script: Script) {
    for world in worlds {
        world.script(Script {
            record: Some(world.path(&format!("out/{record}.json"))),
            ..script.clone()
        });
    }
}

/// The index of the one node that ran the turn recorded as `record`.
fn ran_on(worlds: &[&World], record: &str) -> usize {
    let ran: Vec<usize> = (0..worlds.len())
        .filter(|at| worlds[*at].path(&format!("out/{record}.json")).exists())
        .collect();
    assert_eq!(ran.len(), 1, "{record} ran on nodes {ran:?}");
    ran[0]
}

fn read_record(world: &World, record: &str) -> Value {
    let path = world.path(&format!("out/{record}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The host's id of the running fake CLI that wrote `record` (see [`host_pid`]).
fn running_harness(record: &Value) -> i64 {
    let turn = record["env"]["CINCH_TURN_ID"].as_str().unwrap();
    host_pid(record["pid"].as_i64().unwrap(), turn)
}

/// Waits until `path` exists (a fake CLI's record: the turn started).
fn wait_for_file(path: &std::path::Path) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !path.exists() {
        assert!(Instant::now() < deadline, "{} never came", path.display());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the process `pid` still exists.
fn alive(pid: i64) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    unsafe { libc::kill(pid as i32, 0) == 0 }
}

/// The session's messages of `kind` (`user`, `assistant`), in order.
fn of_type(api: &Api, task: &str, session: &str, kind: &str) -> Vec<Value> {
    api.walk(task, session, "asc", 100)
        .into_iter()
        .filter(|message| message["type"] == kind)
        .collect()
}

/// Waits until the session runs its `count`th turn with the turn's message
/// made (the session shows running just before).
fn wait_running_turn(api: &Api, task: &str, session: &str, count: usize) {
    api.wait(task, session, "its turn recorded", |current| {
        current["status"] == "running" && of_type(api, task, session, "assistant").len() == count
    });
}

fn post_message(api: &Api, task: &str, session: &str, text: &str) {
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({ "message": text }),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
}

/// An environment `shop` on the repository of `world`, which every node
/// of these tests reaches: its id.
fn shop(api: &Api, world: &World) -> String {
    api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }))
}

#[test]
fn a_starting_node_leaves_the_sessions_other_nodes_run_alone() {
    let Some([first, second]) = shared_worlds() else {
        return;
    };
    let one = node(&first, "n1", &[]);
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let environment = shop(&on_one, &first);
    script_everywhere(
        &[&first, &second],
        "turn-1",
        Script {
            lines: claude_turn("sess-1", "Finished on node one."),
            hang_ms: 20_000,
            ..Script::default()
        },
    );
    let (task, session) = on_one.task_on(&environment, "Take your time");
    wait_for_file(&first.path("out/turn-1.json"));
    let running = on_one.wait_status(&task, &session, "running");

    // A second node starts while node one's turn runs: it picks up no
    // session of node one's (it answers only once its recovery is done).
    let two = node(&second, "n2", &[]);
    let on_two = Api::new(&two, &token);
    let seen = on_two.session(&task, &session);
    assert_eq!(seen["status"], "running", "{seen:#}");
    assert_eq!(seen["updated_at"], running["updated_at"], "{seen:#}");
    let turn = assistant(&on_two.messages(&task, &session, "").data());
    assert_eq!(turn["turn"]["status"], "running", "{turn:#}");

    // Node one's turn ends as it went, recorded by node one.
    on_one.wait_status(&task, &session, "idle");
    let turn = assistant(&on_two.messages(&task, &session, "").data());
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    assert_eq!(turn["content"], "Finished on node one.");
    assert!(!second.path("out/turn-1.json").exists());
}

#[test]
fn a_killed_nodes_session_moves_to_another_node_and_loses_nothing() {
    let Some(worlds) = shared_worlds::<3>() else {
        return;
    };
    let all: Vec<&World> = worlds.iter().collect();
    let remote = worlds[0].path("checkpoints.git");
    git(
        &worlds[0].path(""),
        &["init", "-q", "--bare", "checkpoints.git"],
    );
    let remote_arg = remote.display().to_string();
    let start = |at: usize| {
        node(
            &worlds[at],
            &format!("n{}", at + 1),
            &["--checkpoint-remote", &remote_arg],
        )
    };
    let (one, mut two, three) = (start(0), start(1), start(2));
    let token = worlds[0].admin_token();
    let on_one = &Api::new(&one, &token);
    let on_three = &Api::new(&three, &token);
    let environment = shop(on_one, &worlds[0]);

    // Sessions spread over the nodes: each runs on the node it was made on.
    let mut sessions = Vec::new();
    for at in 0..3 {
        let server = [&one, &two, &three][at];
        let api = &Api::new(server, &token);
        let record = format!("spread-{at}");
        script_everywhere(
            &all,
            &record,
            Script {
                lines: claude_turn(&format!("sess-spread-{at}"), "Spread."),
                ..Script::default()
            },
        );
        let (task, session) = api.task_on(&environment, &format!("Hello node {at}"));
        api.wait_status(&task, &session, "idle");
        assert_eq!(ran_on(&all, &record), at);
        sessions.push((task, session));
    }
    let (task, session) = sessions[1].clone();

    // Turn two, on node two: it leaves a file uncommitted.
    script_everywhere(
        &all,
        "turn-2",
        Script {
            lines: claude_turn("sess-two", "Wrote the notes."),
            write_files: [("notes.txt".to_owned(), "from turn two\n".to_owned())].into(),
            ..Script::default()
        },
    );
    // A message posted on node one for node two's session runs on node two.
    post_message(on_one, &task, &session, "Write the notes");
    on_one.wait(&task, &session, "two turns", |_| {
        of_type(on_one, &task, &session, "assistant")
            .iter()
            .filter(|turn| turn["turn"]["status"] == "completed")
            .count()
            == 2
    });
    assert_eq!(ran_on(&all, "turn-2"), 1);
    let end_checkpoint =
        of_type(on_one, &task, &session, "assistant")[1]["turn"]["result"]["end_checkpoint"]
            .as_str()
            .unwrap()
            .to_owned();

    // Turn three runs long on node two, which is killed mid-turn.
    script_everywhere(
        &all,
        "turn-3",
        Script {
            lines: claude_turn("sess-two", "Never seen."),
            hang_ms: 120_000,
            ..Script::default()
        },
    );
    post_message(on_one, &task, &session, "Take long");
    wait_for_file(&worlds[1].path("out/turn-3.json"));
    wait_running_turn(on_one, &task, &session, 3);
    let harness_pid = running_harness(&read_record(&worlds[1], "turn-3"));
    two.child.kill().unwrap();
    two.child.wait().unwrap();
    let died = Instant::now();

    // Another node takes it over within the lease and a few seconds: the
    // turn is recorded interrupted, and the session says what happened.
    on_one.wait(&task, &session, "taken over", |session| {
        session["moved_from_node"] == "n2" || session["rebuilt_from"].is_string()
    });
    let takeover = died.elapsed();
    assert!(
        takeover < Duration::from_secs(LEASE_TTL + 10),
        "taken over after {takeover:?}"
    );
    let taken = on_one.wait(&task, &session, "its work tree rebuilt", |session| {
        session["rebuilt_from"] == "checkpoint" && session["status"] == "idle"
    });
    assert_eq!(taken["status"], "idle", "{taken:#}");
    assert_eq!(taken["close_reason"], "turn_interrupted", "{taken:#}");
    let said = taken["error_message"].as_str().unwrap();
    assert!(
        said.contains("node n2") && said.contains("checkpoint"),
        "{said}"
    );
    let turns = of_type(on_one, &task, &session, "assistant");
    assert_eq!(turns[2]["turn"]["status"], "interrupted", "{turns:#?}");
    assert_eq!(
        turns[2]["turn"]["result"]["detail"],
        "The harness's state is gone: the machine restarted or its container was recreated."
    );

    // The next message runs on the node that took it, in a work tree that is
    // the last end checkpoint's, as a new harness session told it continues.
    script_everywhere(
        &all,
        "turn-4",
        Script {
            lines: claude_turn("sess-new", "Carried on."),
            ..Script::default()
        },
    );
    post_message(on_three, &task, &session, "Carry on");
    let owner = on_one.wait(&task, &session, "four turns", |current| {
        current["status"] == "idle" && of_type(on_one, &task, &session, "assistant").len() == 4
    });
    let ran = ran_on(&all, "turn-4");
    assert_ne!(ran, 1, "{owner:#}");
    let record = read_record(&worlds[ran], "turn-4");
    let workdir = std::path::PathBuf::from(record["cwd"].as_str().unwrap());
    assert!(workdir.starts_with(worlds[ran].path("home")), "{workdir:?}");
    let expected = git_output(
        &worlds[0].path("repo"),
        &["ls-tree", "-r", "--name-only", &end_checkpoint],
    );
    let mut present = git_output(
        &workdir,
        &["ls-files", "--cached", "--others", "--exclude-standard"],
    )
    .lines()
    .map(str::to_owned)
    .collect::<Vec<_>>();
    present.sort();
    assert_eq!(present.join("\n") + "\n", expected);
    for file in expected.lines() {
        let then = git_output(
            &worlds[0].path("repo"),
            &["show", &format!("{end_checkpoint}:{file}")],
        );
        assert_eq!(
            std::fs::read_to_string(workdir.join(file)).unwrap(),
            then,
            "{file}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(workdir.join("notes.txt")).unwrap(),
        "from turn two\n"
    );
    let brief = format!("{} {}", record["argv"], record["stdin"]);
    assert!(brief.contains("continues from node n2"), "{brief}");
    assert!(brief.contains("Wrote the notes."), "{brief}");
    assert!(
        !brief.contains("--resume"),
        "a new harness session: {brief}"
    );
    let turns = of_type(on_one, &task, &session, "assistant");
    assert_eq!(turns[3]["content"], "Carried on.");

    // Nothing lost, nothing twice: four messages, each delivered to one turn.
    let users: Vec<Value> = of_type(on_one, &task, &session, "user");
    let texts: Vec<&str> = users
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        texts,
        ["Hello node 1", "Write the notes", "Take long", "Carry on"]
    );
    assert!(users.iter().all(|m| m["sequence"].is_i64()), "{users:#?}");
    let statuses: Vec<&str> = turns
        .iter()
        .map(|turn| turn["turn"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(
        statuses,
        ["completed", "completed", "interrupted", "completed"]
    );

    // Node two comes back: it stops the turn it still ran for the session
    // (no process is left) and writes nothing to it.
    let before = on_one.session(&task, &session);
    let messages_before = on_one.walk(&task, &session, "asc", 100);
    assert!(alive(harness_pid), "the killed node's harness ran on");
    drop(two);
    let back = start(1);
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(harness_pid) {
        assert!(
            Instant::now() < deadline,
            "the stray harness {harness_pid} still runs"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(LEASE_TTL));
    assert_eq!(on_one.session(&task, &session), before);
    assert_eq!(on_one.walk(&task, &session, "asc", 100), messages_before);
    assert!(
        back.log()
            .contains("stopping a turn of a session another node took over")
    );
}

#[test]
fn a_terminated_node_drains_and_hands_its_sessions_over() {
    let Some([first, second]) = shared_worlds() else {
        return;
    };
    let all = [&first, &second];
    // The default lease (30 s): the hand-over must not wait for it.
    let one = first.serve_with(&["--node-id", "n1"]);
    let mut two = second.serve_with(&["--node-id", "n2", "--drain-grace", "30"]);
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let environment = shop(&on_one, &first);
    script_everywhere(
        &all,
        "turn-1",
        Script {
            lines: claude_turn("sess-1", "Finished while draining."),
            hang_ms: 4000,
            ..Script::default()
        },
    );
    let (task, session) = Api::new(&two, &token).task_on(&environment, "Work a while");
    wait_for_file(&second.path("out/turn-1.json"));
    on_one.wait_status(&task, &session, "running");
    script_everywhere(
        &all,
        "turn-2",
        Script {
            lines: claude_turn("sess-2", "Ran on node one."),
            ..Script::default()
        },
    );
    post_message(&on_one, &task, &session, "Then this");

    // SIGTERM: the running turn finishes, the node exits 0 well before its
    // lease would have run out, and node one runs the queued message.
    let asked = Instant::now();
    // SAFETY: a signal to the server this test started.
    assert_eq!(
        unsafe { libc::kill(two.child.id() as i32, libc::SIGTERM) },
        0
    );
    let status = two.child.wait().unwrap();
    assert!(status.success(), "{status:?}: {}", two.log());
    let drained = two.log();
    on_one.wait(&task, &session, "both turns", |_| {
        let turns = of_type(&on_one, &task, &session, "assistant");
        turns.len() == 2 && turns[1]["turn"]["status"] == "completed"
    });
    assert!(
        asked.elapsed() < Duration::from_secs(25),
        "{:?}",
        asked.elapsed()
    );
    let turns = of_type(&on_one, &task, &session, "assistant");
    assert_eq!(
        turns[0]["turn"]["status"], "completed",
        "{turns:#?}\n{drained}"
    );
    assert_eq!(turns[0]["content"], "Finished while draining.");
    assert_eq!(turns[1]["content"], "Ran on node one.");
    assert_eq!(ran_on(&all, "turn-1"), 1);
    assert_eq!(ran_on(&all, "turn-2"), 0);
    let users: Vec<Value> = of_type(&on_one, &task, &session, "user");
    assert_eq!(users.len(), 2, "{users:#?}");
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
    let elsewhere = two.timed_stream("/api/runs/run-nodes/events", &token, None, |e| {
        turns_ended(e) == 1
    });
    let on_runner = one.timed_stream("/api/runs/run-nodes/events", &token, None, |e| {
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
    let here = one.get(&log, &token);
    assert_eq!(here.status, 200, "{here:?}");
    // The log stays in the home of the node that ran the task: the other
    // node fetches it from there, as the caller.
    let there = two.get(&log, &token);
    assert_eq!(there.status, 200, "{there:?}");
    assert_eq!(there.json(), here.json());
    assert!(here.json()["events"].as_u64().unwrap() > 0, "{here:?}");
    let stranger = two.get(&log, "not-a-token");
    assert_eq!(stranger.status, 401, "{stranger:?}");
}

#[test]
fn a_message_posted_on_another_node_runs_on_the_sessions_node() {
    let Some(worlds) = shared_worlds::<2>() else {
        return;
    };
    let all: Vec<&World> = worlds.iter().collect();
    let one = node(&worlds[0], "node-1", &[]);
    let two = node(&worlds[1], "node-2", &[]);
    let token = worlds[0].admin_token();
    let (on_one, on_two) = (&Api::new(&one, &token), &Api::new(&two, &token));
    let environment = shop(on_one, &worlds[0]);
    script_everywhere(
        &all,
        "first",
        Script {
            lines: claude_turn("sess-wake", "First."),
            ..Script::default()
        },
    );
    let (task, session) = on_one.task_on(&environment, "Hello");
    on_one.wait_status(&task, &session, "idle");
    assert_eq!(ran_on(&all, "first"), 0);

    // Each message posted on node 2 runs on node 1, which holds the session.
    let mut delays = Vec::new();
    for n in 0..5 {
        let record = format!("posted-{n}");
        script_everywhere(
            &all,
            &record,
            Script {
                lines: claude_turn("sess-wake", "Again."),
                ..Script::default()
            },
        );
        let posted = Instant::now();
        post_message(on_two, &task, &session, &format!("message {n}"));
        wait_for_file(&worlds[0].path(&format!("out/{record}.json")));
        delays.push(posted.elapsed());
        on_one.wait(&task, &session, "the turn's end", |current| {
            current["status"] == "idle"
                && of_type(on_one, &task, &session, "assistant").len() == n + 2
        });
        assert_eq!(ran_on(&all, &record), 0);
    }
    let (median, max) = median_and_max(delays);
    eprintln!(
        "a message posted on node 2 started its turn on node 1 after {median:?} (median), {max:?} at most"
    );
}

#[test]
fn a_wait_on_a_full_node_is_claimed_by_a_node_with_a_slot_free_and_any_node_stops_a_turn() {
    let Some(worlds) = shared_worlds::<2>() else {
        return;
    };
    let all: Vec<&World> = worlds.iter().collect();
    let one = node(
        &worlds[0],
        "node-1",
        &["--max-turns", "1", "--retry-seconds", "1"],
    );
    let two = node(&worlds[1], "node-2", &["--retry-seconds", "1"]);
    let token = worlds[0].admin_token();
    let (on_one, on_two) = (&Api::new(&one, &token), &Api::new(&two, &token));
    let environment = shop(on_one, &worlds[0]);
    script_everywhere(
        &all,
        "long",
        Script {
            lines: claude_turn("sess-long", "never gets here")[..1].to_vec(),
            hang_ms: -1,
            ..Script::default()
        },
    );
    let (long_task, long_session) = on_one.task_on(&environment, "Run long.");
    wait_running_turn(on_one, &long_task, &long_session, 1);
    wait_for_file(&worlds[0].path("out/long.json"));
    assert_eq!(ran_on(&all, "long"), 0);

    // Node 1 is full: the next session waits there, then node 2, which has
    // slots free, takes the wait and runs it.
    script_everywhere(
        &all,
        "waited",
        Script {
            lines: claude_turn("sess-waited", "Done."),
            ..Script::default()
        },
    );
    let (task, session) = on_one.task_on(&environment, "Wait for a slot.");
    let waiting = on_two.wait(&task, &session, "waiting", |s| s["status"] == "waiting");
    assert!(waiting["error_message"].is_string(), "{waiting:#}");
    on_one.wait(&task, &session, "its turn on node 2", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-waited"
    });
    assert_eq!(ran_on(&all, "waited"), 1);
    let turns = of_type(on_one, &task, &session, "assistant");
    assert_eq!(turns.len(), 1, "{turns:#?}");
    assert_eq!(turns[0]["turn"]["status"], "completed", "{turns:#?}");
    assert_eq!(of_type(on_two, &task, &session, "user").len(), 1);

    // The long turn still runs on node 1, untouched; an abort taken by
    // node 2 stops it there.
    let long = on_two.get(&format!("/tasks/{long_task}/sessions/{long_session}"));
    assert_eq!(long.data()["status"], "running", "{long:?}");
    let aborted = on_two.post(
        &format!("/tasks/{long_task}/sessions/{long_session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
    on_two.wait_status(&long_task, &long_session, "idle");
    let stopped = of_type(on_two, &long_task, &long_session, "assistant");
    assert_eq!(stopped[0]["turn"]["status"], "cancelled", "{stopped:#?}");

    // So does a close: node 1 runs the next turn, node 2 closes the session.
    script_everywhere(
        &all,
        "long-again",
        Script {
            lines: claude_turn("sess-long", "never gets here")[..1].to_vec(),
            hang_ms: -1,
            ..Script::default()
        },
    );
    post_message(on_one, &long_task, &long_session, "Again.");
    wait_running_turn(on_one, &long_task, &long_session, 2);
    wait_for_file(&worlds[0].path("out/long-again.json"));
    let pid = running_harness(&read_record(&worlds[0], "long-again"));
    let closed = two.patch(
        &on_two.path(&format!("/tasks/{long_task}/sessions/{long_session}")),
        &token,
        &json!({"status": "closed"}),
    );
    assert_eq!(closed.status, 200, "{closed:?}");
    on_two.wait(&long_task, &long_session, "its turn stopped", |current| {
        current["status"] == "closed"
            && of_type(on_two, &long_task, &long_session, "assistant")[1]["turn"]["status"]
                == "cancelled"
    });
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(pid), "the closed session's CLI still runs");
}

#[test]
fn a_paused_node_whose_lease_was_taken_stops_its_turn_and_writes_nothing() {
    let Some([first, second]) = shared_worlds() else {
        return;
    };
    let all = [&first, &second];
    let one = node(&first, "n1", &[]);
    let two = node(&second, "n2", &[]);
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let environment = shop(&on_one, &first);
    script_everywhere(
        &all,
        "turn-1",
        Script {
            lines: claude_turn("sess-1", "Never recorded."),
            hang_ms: 120_000,
            ..Script::default()
        },
    );
    let (task, session) = Api::new(&two, &token).task_on(&environment, "Run long");
    wait_for_file(&second.path("out/turn-1.json"));
    wait_running_turn(&on_one, &task, &session, 1);
    let harness_pid = running_harness(&read_record(&second, "turn-1"));

    // Node two stops (a pause, a partition) past its lease: node one takes
    // the session over.
    let pid = two.child.id() as i32;
    // SAFETY: signals to the server this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    let taken = on_one.wait(&task, &session, "taken over", |current| {
        current["status"] == "idle" && current["rebuilt_from"].is_string()
    });
    // No checkpoint remote: the work tree came from the branch, and it says so.
    assert_eq!(taken["rebuilt_from"], "branch", "{taken:#}");
    let messages = on_one.walk(&task, &session, "asc", 100);
    assert_eq!(assistant(&json!(messages))["turn"]["status"], "interrupted");
    assert!(alive(harness_pid));

    // It comes back: its heartbeat finds the lease moved on, it stops the
    // turn it ran, and it writes nothing to the session.
    // SAFETY: as above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    let deadline = Instant::now() + Duration::from_secs(30);
    while alive(harness_pid) {
        assert!(
            Instant::now() < deadline,
            "the fenced node's harness still runs: {}",
            two.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(LEASE_TTL));
    // Only the usage may grow: the stopped turn's tokens were spent, and
    // its run's follower stores them with its call.
    let without_usage = |mut session: Value| {
        session.as_object_mut().unwrap().remove("usage");
        session
    };
    assert_eq!(
        without_usage(on_one.session(&task, &session)),
        without_usage(taken)
    );
    assert_eq!(on_one.walk(&task, &session, "asc", 100), messages);
    assert!(
        two.log().contains("another node took the session over"),
        "{}",
        two.log()
    );
    assert_eq!(ran_on(&all, "turn-1"), 1);
}

/// Takeover time after kill -9: ten times, a node running a turn is killed
/// and another takes its session over; prints the median and the maximum
/// from the kill to the session seen idle with its turn interrupted. A
/// measurement, not a check: `cargo test -p cinch --test it -- --ignored
/// --nocapture nodes::takeover_time` with `CINCH_TEST_DATABASE` set.
#[test]
#[ignore = "a measurement of ten takeovers, run by hand"]
fn takeover_time_after_kill_9() {
    let Some(database) = shared_database() else {
        return;
    };
    let survivor_world = World::with_database(Some(database.clone()));
    let survivor = node(&survivor_world, "survivor", &[]);
    let token = survivor_world.admin_token();
    let on_survivor = Api::new(&survivor, &token);
    let environment = shop(&on_survivor, &survivor_world);
    let mut times = Vec::new();
    for round in 0..10 {
        let world = World::with_database(Some(database.clone()));
        world.script(Script {
            lines: claude_turn("sess-long", "Never seen."),
            hang_ms: 120_000,
            record: Some(world.path("out/turn.json")),
            ..Script::default()
        });
        let mut victim = node(&world, &format!("victim-{round}"), &[]);
        let (task, session) = Api::new(&victim, &token).task_on(&environment, "Run long");
        wait_for_file(&world.path("out/turn.json"));
        on_survivor.wait_status(&task, &session, "running");
        let harness_pid = running_harness(&read_record(&world, "turn"));
        victim.child.kill().unwrap();
        victim.child.wait().unwrap();
        let killed = Instant::now();
        on_survivor.wait(&task, &session, "taken over", |current| {
            current["status"] == "idle" && current["close_reason"] == "turn_interrupted"
        });
        times.push(killed.elapsed());
        // The harness ran on under the dead node's supervisor: end it.
        // SAFETY: the fake CLI this round's node started.
        unsafe { libc::kill(harness_pid as i32, libc::SIGKILL) };
    }
    times.sort();
    eprintln!(
        "takeover after kill -9, lease {LEASE_TTL} s, 10 rounds: median {:?}, max {:?}, all {times:?}",
        times[4] + (times[5] - times[4]) / 2,
        times[9]
    );
}

// Secrets across nodes: sealed in the database with the key every node is
// given, so that whichever node runs a turn gives it the environment's
// secrets, and every node reads the same names.

#[test]
fn a_secret_set_through_one_node_reaches_a_turn_another_node_runs_sealed() {
    let Some([first, second]) = shared_worlds::<2>() else {
        return;
    };
    let one = first.serve();
    let two = second.serve();
    let token = first.admin_token();
    let on_one = Api::new(&one, &token);
    let on_two = Api::new(&two, &token);
    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
        "setup": ["true"],
        "secrets": {"DEPLOY_TOKEN": SECRET},
    }));
    let path = format!("/environments/{environment}");
    let names = |api: &Api| api.get(&path).data()["secret_names"].clone();
    assert_eq!(names(&on_one), json!(["DEPLOY_TOKEN"]));
    assert_eq!(
        names(&on_two),
        json!(["DEPLOY_TOKEN"]),
        "node two reads the names"
    );

    // A change of another field through node two keeps the secret.
    let patched = two.patch(&on_two.path(&path), &token, &json!({"setup": []}));
    assert_eq!(patched.status, 200, "{patched:?}");
    assert_eq!(patched.data()["secret_names"], json!(["DEPLOY_TOKEN"]));
    assert_eq!(patched.data()["setup"], json!([]));
    assert_eq!(names(&on_one), json!(["DEPLOY_TOKEN"]));
    assert_eq!(on_one.get(&path).data()["setup"], json!([]));

    // A task created on node two runs there with the secret, and what the
    // harness says of it is masked on both nodes.
    let said = format!("The token is {SECRET}.");
    script_everywhere(
        &[&first, &second],
        "secret-turn",
        Script {
            lines: claude_turn("sess-s", &said),
            ..Script::default()
        },
    );
    let (task, session) = on_two.task_on(&environment, "Deploy");
    on_two.wait_status(&task, &session, "idle");
    assert_eq!(ran_on(&[&first, &second], "secret-turn"), 1);
    let record = read_record(&second, "secret-turn");
    assert_eq!(record["env"]["DEPLOY_TOKEN"], SECRET);
    for api in [&on_one, &on_two] {
        let messages = api.messages(&task, &session, "").data();
        let reply = assistant(&messages)["content"].as_str().unwrap().to_owned();
        assert_eq!(reply, "The token is [redacted].");
    }

    // The database holds it sealed only, and no file of either home holds it.
    let sealed = first.query_text("SELECT owner_id, name, sealed FROM secrets");
    assert_eq!(sealed.len(), 1, "{sealed:?}");
    assert_eq!(
        sealed[0][..2],
        [environment.clone(), "DEPLOY_TOKEN".to_owned()]
    );
    assert!(!sealed[0][2].contains(SECRET));
    assert!(!first.database_text().contains(SECRET));
    for world in [&first, &second] {
        assert_eq!(
            world.home_files_holding(SECRET),
            Vec::<std::path::PathBuf>::new()
        );
    }
}

#[test]
fn a_node_without_the_secrets_key_or_with_another_refuses_to_start() {
    let Some([first, second]) = shared_worlds::<2>() else {
        return;
    };
    let one = first.serve();
    let token = first.admin_token();
    Api::new(&one, &token).environment(json!({
        "name": "shop",
        "repository": first.path("repo").display().to_string(),
        "secrets": {"DEPLOY_TOKEN": SECRET},
    }));

    // Without a key, it says which is missing and how to give it.
    std::fs::remove_file(second.path("home/secrets.key")).unwrap();
    let stderr = second.refused_start(&[], &[]);
    assert!(
        stderr.contains("sealed with a key this node was not given")
            && stderr.contains("--secrets-key-file")
            && stderr.contains("CINCH_SECRETS_KEY"),
        "{stderr}"
    );
    assert!(
        !second.path("home/secrets.key").exists(),
        "it made no key of its own"
    );

    // With another key, in a file or in the variable, it says so.
    let other = second.path("other.key");
    std::fs::write(&other, format!("{}\n", "ab".repeat(32))).unwrap();
    let other_file = ["--secrets-key-file", other.to_str().unwrap()];
    let stderr = second.refused_start(&other_file, &[]);
    assert!(
        stderr.contains("is not the one this database's secrets are sealed with")
            && stderr.contains(other.to_str().unwrap()),
        "{stderr}"
    );
    let stderr = second.refused_start(&[], &[("CINCH_SECRETS_KEY", &"cd".repeat(32))]);
    assert!(
        stderr.contains("the secrets key from CINCH_SECRETS_KEY is not the one"),
        "{stderr}"
    );
    let stderr = second.refused_start(&["--secrets-key-file", "/nonexistent/key"], &[]);
    assert!(stderr.contains("/nonexistent/key"), "{stderr}");
    std::fs::write(&other, "not a key\n").unwrap();
    let stderr = second.refused_start(&other_file, &[]);
    assert!(stderr.contains("64 hex digits"), "{stderr}");

    // With the key, it starts and reads the secret's name.
    let key = second.path("shared.key");
    std::fs::write(&key, SHARED_SECRETS_KEY).unwrap();
    let two = second.serve_with(&["--secrets-key-file", key.to_str().unwrap()]);
    let environments = Api::new(&two, &token).get("/environments").data();
    assert_eq!(environments[0]["secret_names"], json!(["DEPLOY_TOKEN"]));
}

#[test]
fn a_fork_on_another_node_starts_from_the_checkpoint_remote() {
    let Some(worlds) = shared_worlds::<2>() else {
        return;
    };
    let all: Vec<&World> = worlds.iter().collect();
    git(
        &worlds[0].path(""),
        &["init", "-q", "--bare", "checkpoints.git"],
    );
    let remote = worlds[0].path("checkpoints.git").display().to_string();
    let one = node(&worlds[0], "node-1", &["--checkpoint-remote", &remote]);
    let two = node(&worlds[1], "node-2", &["--checkpoint-remote", &remote]);
    let token = worlds[0].admin_token();
    let (on_one, on_two) = (&Api::new(&one, &token), &Api::new(&two, &token));
    // A git URL: each node clones it into its own home, so node 2's clone
    // never saw the checkpoints node 1 took.
    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": format!("file://{}", worlds[0].path("repo").display()),
    }));
    script_everywhere(
        &all,
        "source",
        Script {
            lines: claude_turn("sess-source", "Wrote the notes."),
            write_files: [("notes.txt".to_owned(), "from node one\n".to_owned())].into(),
            ..Script::default()
        },
    );
    let (task, source) = on_one.task_on(&environment, "Write the notes");
    on_one.wait_status(&task, &source, "idle");
    assert_eq!(ran_on(&all, "source"), 0);
    let turn = of_type(on_one, &task, &source, "assistant")[0].clone();
    let checkpoint = turn["turn"]["result"]["end_checkpoint"]
        .as_str()
        .unwrap()
        .to_owned();
    let node_two_clone = std::fs::read_dir(worlds[1].path("home/repos"))
        .map(|entries| entries.count())
        .unwrap_or(0);
    assert_eq!(node_two_clone, 0, "node 2 has cloned nothing yet");

    // Forked on node 2, which boots and runs the fork.
    script_everywhere(
        &all,
        "fork",
        Script {
            lines: claude_turn("sess-fork", "Went on from the notes."),
            write_files: [("more.txt".to_owned(), "from node two\n".to_owned())].into(),
            read_stdin: true,
            ..Script::default()
        },
    );
    let forked = on_two.post(
        &format!("/tasks/{task}/sessions/{source}/fork"),
        json!({"message": "Go on from there."}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    let fork = forked.data()["id"].as_str().unwrap().to_owned();
    wait_for_file(&worlds[1].path("out/fork.json"));
    let done = on_two.wait(&task, &fork, "its turn ended", |current| {
        current["status"] == "idle"
            && of_type(on_two, &task, &fork, "assistant")
                .last()
                .is_some_and(|turn| {
                    turn["forked_from"].is_null() && turn["turn"]["status"] == "completed"
                })
    });
    assert_eq!(ran_on(&all, "fork"), 1, "the fork ran on node 2");
    let dir = std::path::PathBuf::from(done["workspace"].as_str().unwrap());
    assert!(dir.starts_with(worlds[1].path("home")), "{dir:?}");
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.txt")).unwrap(),
        "from node one\n"
    );
    assert!(dir.join("more.txt").exists());
    // Node 2's clone has the source's checkpoint now, fetched from the remote.
    let clone = worlds[1].path(&format!("home/repos/{environment}"));
    git(
        &clone,
        &["cat-file", "-e", &format!("{checkpoint}^{{commit}}")],
    );
    let brief = read_record(&worlds[1], "fork")["stdin"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(brief.contains("Assistant: Wrote the notes."), "{brief}");

    // The source, on node 1, is as it was.
    let source_now = on_one.session(&task, &source);
    assert_eq!(source_now["status"], "idle");
    assert_eq!(of_type(on_one, &task, &source, "assistant").len(), 1);
    let source_dir = std::path::PathBuf::from(source_now["workspace"].as_str().unwrap());
    assert!(!source_dir.join("more.txt").exists());

    // Node 2 compares the two though the source's work tree is not there (moved away here,
    // as if node 1 were another machine): the source's tree comes from the checkpoint remote.
    let away = source_dir.with_extension("away");
    std::fs::rename(&source_dir, &away).unwrap();
    let compared = on_two.get(&format!("/tasks/{task}/compare"));
    let diff = on_two.get(&format!("/tasks/{task}/compare/diff?a={source}&b={fork}"));
    std::fs::rename(&away, &source_dir).unwrap();
    assert_eq!(compared.status, 200, "{compared:?}");
    let rows = compared.data()["sessions"].as_array().unwrap().clone();
    let files: Vec<&Value> = rows
        .iter()
        .map(|row| &row["diffstat"]["total_files"])
        .collect();
    assert_eq!(files, [&json!(1), &json!(2)], "{rows:#?}");
    assert_eq!(compared.data()["differing_files"], json!(["more.txt"]));
    assert_eq!(diff.status, 200, "{diff:?}");
    assert!(diff.text.contains("+from node two"), "{}", diff.text);
}

/// `world`'s node running the fake ACP agent as `fake-acp`, which asks
/// permission before it writes out.txt and records what it reads in
/// `out/acp-record.jsonl`.
fn asking_node(world: &World, id: &str) -> Server {
    use cinch_fake_cli::acp::AcpScript;
    cinch_fake_cli::acp::install(&world.path("bin"), "fake-acp");
    let script = world.path("bin/fake-acp-script.json");
    AcpScript {
        ask_permission: true,
        record: Some(world.path("out/acp-record.jsonl")),
        ..AcpScript::default()
    }
    .write_to(&script)
    .unwrap();
    let config =
        world
            .operator_config()
            .replacen("pass_env = [", "pass_env = [\"FAKE_ACP_SCRIPT\", ", 1)
            + "\n[harness.fake-acp]\ndriver = \"acp\"\nprogram = \"fake-acp\"\n";
    std::fs::write(world.path("home/config.toml"), config).unwrap();
    let ttl = LEASE_TTL.to_string();
    let mut command = world.cinch();
    command
        .env("FAKE_ACP_SCRIPT", &script)
        .args(["serve", "--home"])
        .arg(world.path("home"))
        .args(["--node-id", id, "--lease-ttl", &ttl]);
    Server::start(command, world.dir.path())
}

#[test]
fn an_approval_decided_on_another_node_reaches_the_agent_on_the_turns_node() {
    let Some(worlds) = shared_worlds::<2>() else {
        return;
    };
    let one = asking_node(&worlds[0], "node-1");
    let two = asking_node(&worlds[1], "node-2");
    let token = worlds[0].admin_token();
    let (on_one, on_two) = (&Api::new(&one, &token), &Api::new(&two, &token));
    let environment = on_one.environment(json!({
        "name": "shop",
        "repository": worlds[0].path("repo").display().to_string(),
        "approvals": {"mode": "ask"},
    }));
    let created = on_one.post(
        "/tasks",
        json!({"prompt": "Create out.txt", "environment_id": environment, "harness": "fake-acp"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = on_one.first_session(&task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Node 2 lists what node 1's turn asks.
    let deadline = Instant::now() + Duration::from_secs(60);
    let approval = loop {
        let listed = on_two.get(&format!("/approvals?status=pending&session_id={session}"));
        assert_eq!(listed.status, 200, "{listed:?}");
        if let Some(first) = listed.data().as_array().unwrap().first() {
            break first.clone();
        }
        assert!(
            Instant::now() < deadline,
            "no pending approval: {}",
            one.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let record = worlds[0].path("out/acp-record.jsonl");
    let answered = || {
        std::fs::read_to_string(&record)
            .unwrap_or_default()
            .contains("allow-once")
    };
    assert!(!answered());
    let decided = Instant::now();
    let id = approval["id"].as_str().unwrap();
    let decision = on_two.post(
        &format!("/approvals/{id}/decision"),
        json!({"decision": "allow"}),
    );
    assert_eq!(decision.status, 200, "{decision:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !answered() {
        assert!(
            Instant::now() < deadline,
            "node 1's agent never got node 2's decision: {}",
            one.log()
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    eprintln!(
        "a decision posted on node 2 reached the agent on node 1 after {:?}",
        decided.elapsed()
    );
    on_one.wait_status(&task, &session, "idle");
    let turn = assistant(&on_one.messages(&task, &session, "").data());
    assert_eq!(
        turn["content"], "done (permission answered: allow-once)",
        "{turn:#}"
    );
    assert!(
        !worlds[1].path("out/acp-record.jsonl").exists(),
        "the turn ran on node 1 only"
    );
    let seen = on_one.get(&format!("/approvals/{id}")).data();
    assert_eq!(seen["status"], "allowed");
}

/// A commit or a push asked of a node that does not run the session is
/// carried out by the node that does, on its work tree, and its answer
/// (success or problem) is the caller's.
#[test]
fn a_commit_and_a_push_asked_of_another_node_run_on_the_sessions_node() {
    let Some(worlds) = shared_worlds::<2>() else {
        return;
    };
    let all: Vec<&World> = worlds.iter().collect();
    let one = node(&worlds[0], "node-1", &[]);
    let two = node(&worlds[1], "node-2", &[]);
    let token = worlds[0].admin_token();
    let (on_one, on_two) = (&Api::new(&one, &token), &Api::new(&two, &token));
    let environment = shop(on_one, &worlds[0]);
    for world in &all {
        world.script(Script {
            record: Some(world.path("out/greet.json")),
            lines: claude_turn("sess-out", "Fixed the greeting."),
            write_files: [("greeting.txt".to_owned(), "hello, world\n".to_owned())].into(),
            ..Script::default()
        });
    }
    let (task, session) = on_one.task_on(&environment, "Fix the greeting");
    let idle = on_one.wait(&task, &session, "its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-out"
    });
    assert_eq!(ran_on(&all, "greet"), 0);
    let repo = worlds[0].path("repo");
    let branch = idle["branch_name"].as_str().unwrap().to_owned();
    let path = |rest: &str| format!("/tasks/{task}/sessions/{session}/{rest}");
    let base = git_output(&repo, &["rev-parse", &branch]);

    let committed = on_two.post(&path("commit"), json!({"message": "Fix the greeting"}));
    assert_eq!(committed.status, 201, "{committed:?}");
    let commit = committed.data()["commit"].as_str().unwrap().to_owned();
    assert_ne!(git_output(&repo, &["rev-parse", &branch]), base);
    assert_eq!(git_output(&repo, &["rev-parse", &branch]).trim(), commit);
    let log = |server: &Server| {
        server
            .log()
            .matches("committed the session's changes")
            .count()
    };
    assert_eq!(
        (log(&one), log(&two)),
        (1, 0),
        "node 1, which runs the session, committed"
    );
    // Its refusals come back as they are.
    let again = on_two.post(&path("commit"), json!({"message": "Again"}));
    assert_eq!(again.status, 409, "{again:?}");
    assert!(again.text.contains("nothing to commit"), "{again:?}");

    assert!(!git_output(&repo, &["branch", "--list"]).contains("feature/greeting"));
    let pushed = on_two.post(&path("push"), json!({"branch": "feature/greeting"}));
    assert_eq!(pushed.status, 200, "{pushed:?}");
    assert_eq!(pushed.data()["pushed_as"], "feature/greeting");
    assert_eq!(pushed.data()["uncommitted_changes"], false);
    assert_eq!(
        git_output(&repo, &["rev-parse", "feature/greeting"]).trim(),
        commit
    );
    // And a caller of another account is refused by the node that runs the
    // session as by any.
    let (_, stranger) = worlds[0].second_account();
    let refused = two.post(
        &format!("/v1/accounts/{}{}", on_one.account, path("commit")),
        &stranger,
        &json!({"message": "Not mine"}),
    );
    assert!(
        refused.status == 403 || refused.status == 404,
        "{refused:?}"
    );
}
