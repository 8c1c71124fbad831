//! What the HTTP API promises whatever the client does: an idempotent POST
//! runs once (across disconnects, restarts and a crowd of retries), any input
//! gets a 4xx naming its rule, a stranger learns nothing, and a body that
//! never arrives does not hold a connection.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// A POST with an `Idempotency-Key`: status, whether it was replayed,
/// `Retry-After`, and the body.
struct Keyed {
    status: u16,
    replayed: bool,
    retry_after: Option<String>,
    text: String,
}

impl Keyed {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {}", self.text))
    }
}

fn keyed_post(server: &Server, path: &str, token: &str, key: &str, body: &str) -> Keyed {
    let request = ureq::http::Request::builder()
        .method("POST")
        .uri(server.url(path))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .body(body.as_bytes().to_vec())
        .unwrap();
    let mut response = agent().run(request).unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let replayed = header("idempotent-replayed").as_deref() == Some("true");
    let retry_after = header("retry-after");
    Keyed {
        status: response.status().as_u16(),
        replayed,
        retry_after,
        text: response.body_mut().read_to_string().unwrap(),
    }
}

/// Sends a keyed POST over a raw connection and hangs up after `after`,
/// before the answer comes.
fn post_and_hang_up(
    server: &Server,
    path: &str,
    token: &str,
    key: &str,
    body: &str,
    after: Duration,
) {
    let mut stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    write!(
        stream,
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nIdempotency-Key: {key}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    stream.set_read_timeout(Some(after)).unwrap();
    let mut answer = [0u8; 64];
    let read = stream.read(&mut answer);
    assert!(
        !matches!(read, Ok(n) if n > 0),
        "the answer came before the hang-up: make the request slower"
    );
    stream.shutdown(std::net::Shutdown::Both).unwrap();
}

/// The turns a run has had: one harness log each in the home.
fn turns_of_run(world: &World, run: &str) -> usize {
    match std::fs::read_dir(world.path("home/runs").join(run)) {
        Err(_) => 0,
        Ok(entries) => entries
            .filter_map(Result::ok)
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".harness.jsonl")
            })
            .count(),
    }
}

/// A world with one environment `app` on its repository, served; the
/// harness's turn lasts about `turn` seconds.
fn code_task_world(turn: Duration) -> (World, Server, String) {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        hang_ms: turn.as_millis() as i64,
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    api.environment(json!({"name": "app", "repository": world.path("repo").display().to_string()}));
    (world, server, token)
}

const SLOW_TASK: &str = r#"{"brief": "Take your time.", "harness": "claude", "repo": "app"}"#;

/// Retries `key` until it is no longer in flight (each 409 saying when to
/// retry), and returns that answer.
fn retry_until_answered(server: &Server, path: &str, token: &str, key: &str, body: &str) -> Keyed {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let answer = keyed_post(server, path, token, key, body);
        if answer.status != 409 {
            return answer;
        }
        assert_eq!(answer.retry_after.as_deref(), Some("1"), "{}", answer.text);
        assert!(
            Instant::now() < deadline,
            "the key stayed in flight: {}\n{}",
            answer.text,
            server.log()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn a_request_whose_client_hangs_up_finishes_and_replays_across_a_restart() {
    let (world, server, token) = code_task_world(Duration::from_secs(3));
    let path = "/api/runs/run-gone/tasks?wait=true";
    assert_eq!(turns_of_run(&world, "run-gone"), 0);

    post_and_hang_up(
        &server,
        path,
        &token,
        "hang-up-1",
        SLOW_TASK,
        Duration::from_millis(800),
    );
    // The work goes on without its client; a retry waits for it, then gets its answer.
    let answer = retry_until_answered(&server, path, &token, "hang-up-1", SLOW_TASK);
    assert_eq!(answer.status, 201, "{}", answer.text);
    assert!(answer.replayed);
    let task = answer.json();
    assert_eq!(task["status"], "completed", "{task}");
    let call = task["call_id"].as_str().unwrap().to_owned();
    assert_eq!(turns_of_run(&world, "run-gone"), 1);

    drop(server);
    let server = world.serve();
    let again = keyed_post(&server, path, &token, "hang-up-1", SLOW_TASK);
    assert_eq!(again.status, 201, "{}", again.text);
    assert!(again.replayed);
    assert_eq!(again.json()["call_id"], call.as_str());
    assert_eq!(turns_of_run(&world, "run-gone"), 1, "the request ran twice");
}

#[test]
fn a_key_cut_off_by_a_restart_never_runs_again() {
    let (world, server, token) = code_task_world(Duration::from_secs(4));
    let path = "/api/runs/run-cut/tasks?wait=true";
    assert_eq!(turns_of_run(&world, "run-cut"), 0);

    post_and_hang_up(
        &server,
        path,
        &token,
        "cut-1",
        SLOW_TASK,
        Duration::from_millis(800),
    );
    let in_flight = keyed_post(&server, path, &token, "cut-1", SLOW_TASK);
    assert_eq!(in_flight.status, 409, "{}", in_flight.text);
    assert_eq!(in_flight.retry_after.as_deref(), Some("1"));
    assert_eq!(turns_of_run(&world, "run-cut"), 1);

    // Killed while it waits for the turn: its answer was never recorded,
    // but its turn exists, so the key must not start another.
    drop(server);
    let server = world.serve();
    let after = keyed_post(&server, path, &token, "cut-1", SLOW_TASK);
    assert_eq!(after.status, 409, "{}", after.text);
    assert_eq!(after.retry_after, None, "nothing is in flight to wait for");
    assert_eq!(after.json()["type"], "urn:cinch:idempotency_interrupted");
    std::thread::sleep(Duration::from_secs(5));
    let later = keyed_post(&server, path, &token, "cut-1", SLOW_TASK);
    assert_eq!(later.status, 409, "{}", later.text);
    assert_eq!(turns_of_run(&world, "run-cut"), 1, "the request ran twice");
}

#[test]
fn a_hundred_concurrent_posts_with_one_key_make_one_task() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let before = api.get("/tasks?limit=200");
    assert_eq!(before.data().as_array().unwrap().len(), 0);

    let path = api.path("/tasks");
    let body = r#"{"title": "Once", "prompt": "Say hi."}"#;
    let answers: Vec<Keyed> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..100)
            .map(|_| scope.spawn(|| keyed_post(&server, &path, &token, "crowd-1", body)))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().unwrap())
            .collect()
    });
    let mut created = Vec::new();
    for answer in &answers {
        match answer.status {
            201 => created.push(answer.json()["data"]["id"].as_str().unwrap().to_owned()),
            409 => assert_eq!(answer.retry_after.as_deref(), Some("1"), "{}", answer.text),
            other => panic!("{other}: {}", answer.text),
        }
    }
    assert!(!created.is_empty());
    assert!(created.iter().all(|id| *id == created[0]), "{created:?}");
    assert_eq!(
        answers
            .iter()
            .filter(|a| a.status == 201 && !a.replayed)
            .count(),
        1
    );
    let after = api.get("/tasks?limit=200");
    let tasks = after.data();
    assert_eq!(tasks.as_array().unwrap().len(), 1, "{tasks:#}");
    assert_eq!(tasks[0]["id"], created[0].as_str());
}

#[test]
fn the_same_json_laid_out_differently_is_the_same_request() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let path = api.path("/tasks");
    let first = keyed_post(
        &server,
        &path,
        &token,
        "layout-1",
        r#"{"title":"Layout","idle_timeout_seconds":60}"#,
    );
    assert_eq!(first.status, 201, "{}", first.text);
    assert!(!first.replayed);
    let spread = keyed_post(
        &server,
        &path,
        &token,
        "layout-1",
        "{\n  \"idle_timeout_seconds\" : 60,\n  \"title\" : \"Layout\"\n}",
    );
    assert_eq!(spread.status, 201, "{}", spread.text);
    assert!(spread.replayed);
    assert_eq!(spread.json()["data"]["id"], first.json()["data"]["id"]);
    let other = keyed_post(&server, &path, &token, "layout-1", r#"{"title":"Other"}"#);
    assert_eq!(other.status, 422, "{}", other.text);
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 1);
}

#[test]
fn a_key_is_looked_at_only_after_the_token() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let path = api.path("/tasks");
    let bad_key = "k".repeat(300);
    for bearer in [None, Some("cinch_not-a-token")] {
        let mut request = ureq::http::Request::builder()
            .method("POST")
            .uri(server.url(&path))
            .header("Content-Type", "application/json")
            .header("Idempotency-Key", bad_key.as_str());
        if let Some(bearer) = bearer {
            request = request.header("Authorization", format!("Bearer {bearer}"));
        }
        let answer = agent().run(request.body(b"{}".to_vec()).unwrap()).unwrap();
        assert_eq!(answer.status(), 401);
    }
    let with_token = keyed_post(&server, &path, &token, &bad_key, "{}");
    assert_eq!(with_token.status, 422, "{}", with_token.text);
    assert_eq!(with_token.json()["errors"][0]["field"], "Idempotency-Key");
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 0);
    // A tab is a header's to carry but not a key's: the document's pattern
    // is printable ASCII, and the server keeps to it.
    let tabbed = keyed_post(&server, &path, &token, "a\tb", r#"{"prompt": "hi"}"#);
    assert_eq!(tabbed.status, 422, "{}", tabbed.text);
    assert_eq!(tabbed.json()["errors"][0]["field"], "Idempotency-Key");
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 0);
}

/// The status of a GET, without reading its body (a stream never ends).
fn status_only(server: &Server, path: &str, token: &str) -> u16 {
    agent()
        .get(&server.url(path))
        .header("Authorization", format!("Bearer {token}"))
        .call()
        .unwrap()
        .status()
        .as_u16()
}

#[test]
fn the_events_of_a_run_nobody_has_are_404_like_another_accounts() {
    let (world, server, token) = code_task_world(Duration::ZERO);
    let (_, other_token) = world.second_account();
    assert_eq!(
        status_only(&server, "/api/runs/never-started/events", &token),
        404
    );
    let started = server.post(
        "/api/runs/run-mine/tasks?wait=true",
        &token,
        &serde_json::from_str(SLOW_TASK).unwrap(),
    );
    assert_eq!(started.status, 201, "{started:?}");
    assert_eq!(
        status_only(&server, "/api/runs/run-mine/events", &token),
        200
    );
    assert_eq!(
        status_only(&server, "/api/runs/run-mine/events", &other_token),
        404
    );
    let missing = server.get("/api/runs/never-started/events", &other_token);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.content_type, "application/problem+json");
}

#[test]
fn a_body_that_never_arrives_is_cut_off() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let path = api.path("/tasks");
    let head = |length: u64| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    // Announcing more than any body may be is refused at once.
    let started = Instant::now();
    let huge = server.raw(&head(1 << 40), 3);
    assert!(huge.starts_with("HTTP/1.1 413"), "{huge}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // A body that stops coming is given up on.
    let started = Instant::now();
    let stalled = server.raw(&head(100), 3);
    assert!(stalled.starts_with("HTTP/1.1 408"), "{stalled:?}");
    assert!(stalled.contains("urn:cinch:body_timeout"), "{stalled}");
    assert!(started.elapsed() < Duration::from_secs(25));
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 0);
}

#[test]
fn run_ids_git_or_a_folder_cannot_hold_are_refused_naming_the_rule() {
    let (world, server, token) = code_task_world(Duration::ZERO);
    let long = "r".repeat(101);
    for run in ["a:b", ".hidden", long.as_str(), "x..y", "run.lock", "-dash"] {
        let answer = server.post(
            &format!("/api/runs/{run}/tasks"),
            &token,
            &serde_json::from_str(SLOW_TASK).unwrap(),
        );
        assert_eq!(answer.status, 422, "{run}: {answer:?}");
        assert_eq!(answer.field_errors(), ["run"]);
        assert!(
            answer.json()["detail"]
                .as_str()
                .unwrap()
                .contains("1 to 100")
        );
        assert_eq!(turns_of_run(&world, run), 0);
    }
    let fine = "r".repeat(100);
    let answer = server.post(
        &format!("/api/runs/{fine}/tasks?wait=true"),
        &token,
        &serde_json::from_str(SLOW_TASK).unwrap(),
    );
    assert_eq!(answer.status, 201, "{answer:?}");
    assert_eq!(answer.json()["status"], "completed", "{answer:?}");
}

#[test]
fn no_harness_picked_is_harness_missing() {
    let (world, server, token) = code_task_world(Duration::ZERO);
    let answer = server.post(
        "/api/runs/run-1/tasks",
        &token,
        &json!({"brief": "hi", "repo": "app"}),
    );
    assert_eq!(answer.status, 422, "{answer:?}");
    assert_eq!(answer.json()["type"], "urn:cinch:harness.missing");
    assert_eq!(answer.field_errors(), ["harness"]);
    assert_eq!(turns_of_run(&world, "run-1"), 0);
}

#[test]
fn a_cursor_that_no_page_gave_is_refused() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    for title in ["one", "two", "three"] {
        assert_eq!(api.post("/tasks", json!({"title": title})).status, 201);
    }
    let first = api.get("/tasks?limit=2");
    assert_eq!(first.data().as_array().unwrap().len(), 2);
    let next = first.json()["meta"]["next_cursor"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = api.get(&format!("/tasks?limit=2&cursor={next}"));
    assert_eq!(second.status, 200, "{second:?}");
    assert_eq!(second.data().as_array().unwrap().len(), 1);
    for listing in ["/tasks", "/environments", "/agents", "/members"] {
        let garbage = api.get(&format!("{listing}?cursor=garbage"));
        assert_eq!(garbage.status, 422, "{listing}: {garbage:?}");
        assert_eq!(garbage.field_errors(), ["cursor"]);
    }
}

#[test]
fn a_base_branch_the_repository_lacks_is_refused_at_creation() {
    let world = World::new();
    let repo = world.path("repo");
    // A branch only the remote has counts: the boot starts from origin/<branch>.
    git(
        &repo,
        &["update-ref", "refs/remotes/origin/from-origin", "HEAD"],
    );
    git(&repo, &["branch", "local-one"]);
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment =
        api.environment(json!({"name": "app", "repository": repo.display().to_string()}));
    let created = api.post(
        "/tasks",
        json!({"title": "Branches", "environment_id": environment}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let sessions = format!("/tasks/{task}/sessions");
    assert_eq!(api.get(&sessions).data().as_array().unwrap().len(), 0);

    let missing = api.post(&sessions, json!({"base_branch": "no-such-branch"}));
    assert_eq!(missing.status, 422, "{missing:?}");
    assert_eq!(missing.field_errors(), ["base_branch"]);
    assert!(
        missing.json()["detail"]
            .as_str()
            .unwrap()
            .contains("no-such-branch")
    );
    assert_eq!(api.get(&sessions).data().as_array().unwrap().len(), 0);

    for base in ["local-one", "from-origin"] {
        let made = api.post(&sessions, json!({"base_branch": base, "prompt": "hi"}));
        assert_eq!(made.status, 201, "{base}: {made:?}");
        let session = made.data()["id"].as_str().unwrap().to_owned();
        api.wait_status(&task, &session, "idle");
    }
    assert_eq!(api.get(&sessions).data().as_array().unwrap().len(), 2);
}

#[test]
fn the_document_states_the_rules_the_server_applies() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let document: Value = serde_json::from_str(
        &agent()
            .get(&server.url("/openapi.json"))
            .call()
            .unwrap()
            .body_mut()
            .read_to_string()
            .unwrap(),
    )
    .unwrap();
    let schemas = &document["components"]["schemas"];
    // The code-task answer and the /v1 task have names of their own.
    assert!(schemas["CodeTask"]["properties"]["call_id"].is_object());
    let create = &document["paths"]["/v1/accounts/{account}/tasks"]["post"];
    let timeout = &schemas["TaskCreate"]["properties"]["idle_timeout_seconds"];
    assert_eq!(
        (timeout["minimum"].as_i64(), timeout["maximum"].as_i64()),
        (Some(1), Some(604800))
    );
    assert_eq!(schemas["TaskCreate"]["additionalProperties"], false);
    for status in ["400", "408", "409", "413", "415", "422"] {
        assert!(
            create["responses"][status].is_object(),
            "{status} undocumented"
        );
    }
    let list = &document["paths"]["/v1/accounts/{account}/tasks"]["get"];
    let limit = list["parameters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|parameter| parameter["name"] == "limit")
        .unwrap();
    assert_eq!(
        (
            limit["schema"]["minimum"].as_i64(),
            limit["schema"]["maximum"].as_i64()
        ),
        (Some(1), Some(200))
    );
    assert!(list["responses"]["422"].is_object());

    // What the document allows is taken, what it does not is refused naming the field.
    let path = api.path("/tasks");
    for (body, status, field) in [
        (
            json!({"idle_timeout_seconds": 0}),
            422,
            Some("idle_timeout_seconds"),
        ),
        (
            json!({"idle_timeout_seconds": 604801}),
            422,
            Some("idle_timeout_seconds"),
        ),
        (
            json!({"idle_timeout_seconds": "soon"}),
            422,
            Some("idle_timeout_seconds"),
        ),
        (json!({"title": "x", "extra": 1}), 422, Some("extra")),
        (json!({"idle_timeout_seconds": 604800}), 201, None),
    ] {
        let answer = server.post(&path, &token, &body);
        assert_eq!(answer.status, status, "{body}: {answer:?}");
        if let Some(field) = field {
            assert_eq!(answer.field_errors(), [field]);
        }
    }
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 1);
    // An event id past what the document's int64 holds is refused.
    let past_int64 = u64::MAX.to_string();
    let task = api.post("/tasks", json!({"prompt": "hi"}));
    let task_id = task.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task_id)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let answer = agent()
        .get(&server.url(&api.path(&format!("/tasks/{task_id}/sessions/{session}/events"))))
        .header("Authorization", format!("Bearer {token}"))
        .header("Last-Event-ID", past_int64)
        .call()
        .unwrap();
    assert_eq!(answer.status(), 422);
}

#[test]
fn a_server_stopped_by_sigterm_records_the_answer_its_client_left() {
    let (world, server, token) = code_task_world(Duration::from_secs(3));
    let path = "/api/runs/run-term/tasks?wait=true";
    post_and_hang_up(
        &server,
        path,
        &token,
        "term-1",
        SLOW_TASK,
        Duration::from_millis(800),
    );
    assert_eq!(turns_of_run(&world, "run-term"), 1);
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut server = server;
    let deadline = Instant::now() + Duration::from_secs(30);
    while server.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "cinch serve did not stop");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(server);

    let server = world.serve();
    let answer = keyed_post(&server, path, &token, "term-1", SLOW_TASK);
    assert_eq!(answer.status, 201, "{}", answer.text);
    assert!(answer.replayed);
    assert_eq!(answer.json()["status"], "completed", "{}", answer.text);
    assert_eq!(turns_of_run(&world, "run-term"), 1, "the request ran twice");
}

/// Sends a keyed POST over a raw connection and closes it `after` the last
/// byte went out, whether or not the answer came meanwhile.
fn post_and_close(
    server: &Server,
    path: &str,
    token: &str,
    key: &str,
    body: &str,
    after: Duration,
) {
    let mut stream = TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
    stream.set_nodelay(true).unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nIdempotency-Key: {key}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    // Spun rather than slept: a sleep overshoots by more than the window.
    let sent = Instant::now();
    while sent.elapsed() < after {
        std::hint::spin_loop();
    }
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

/// Stops `server` with SIGTERM and returns how long it took to exit.
fn stop_with_sigterm(server: Server) -> Duration {
    let mut server = server;
    let started = Instant::now();
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &server.child.id().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    while server.child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "cinch serve did not stop"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    started.elapsed()
}

#[test]
fn keys_whose_clients_hang_up_at_any_moment_end_created_exactly_once() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    assert_eq!(api.get("/tasks?limit=200").data(), json!([]));
    let path = api.path("/tasks");

    // The whole window: hang-ups from at once to 3 ms after the request
    // went out, every 250 us, in rounds.
    let delays: Vec<Duration> = (0..=12)
        .map(|step| Duration::from_micros(step * 250))
        .collect();
    let keys: Vec<(String, String)> = (0..10)
        .flat_map(|round| delays.iter().map(move |delay| (round, *delay)))
        .enumerate()
        .map(|(index, (round, delay))| {
            let key = format!("hang-up-{round}-{}us", delay.as_micros());
            let body = json!({ "title": format!("hang-up {index}") }).to_string();
            post_and_close(&server, &path, &token, &key, &body, delay);
            (key, body)
        })
        .collect();

    // Retried normally, each key gets its task, the first request's or the
    // retry's, and none stays in flight past a moment.
    let in_flight_limit = Duration::from_secs(5);
    let started = Instant::now();
    let mut created: Vec<Option<String>> = vec![None; keys.len()];
    let mut stranded = Vec::new();
    while created.iter().any(Option::is_none) {
        stranded.clear();
        for ((key, body), id) in keys.iter().zip(created.iter_mut()) {
            if id.is_some() {
                continue;
            }
            let answer = keyed_post(&server, &path, &token, key, body);
            match answer.status {
                201 => *id = Some(answer.json()["data"]["id"].as_str().unwrap().to_owned()),
                409 => {
                    assert_eq!(answer.retry_after.as_deref(), Some("1"), "{}", answer.text);
                    stranded.push(key.clone());
                }
                other => panic!("{key}: {other} {}", answer.text),
            }
        }
        if started.elapsed() > in_flight_limit {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        stranded.is_empty(),
        "{} of {} keys still in flight {in_flight_limit:?} after their clients hung up: {stranded:?}",
        stranded.len(),
        keys.len()
    );
    let created: Vec<String> = created.into_iter().map(Option::unwrap).collect();
    let listed = api.get("/tasks?limit=200").data();
    let mut listed: Vec<(String, String)> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["title"].as_str().unwrap().to_owned(),
                task["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    listed.sort();
    let mut expected: Vec<(String, String)> = created
        .iter()
        .enumerate()
        .map(|(index, id)| (format!("hang-up {index}"), id.clone()))
        .collect();
    expected.sort();
    assert_eq!(listed, expected, "each key must make exactly one task");

    // Nothing is left for SIGTERM to wait for, and after a restart every key
    // replays its task: none claims that the server stopped while answering it.
    let stopping = stop_with_sigterm(server);
    assert!(
        stopping < Duration::from_secs(5),
        "SIGTERM took {stopping:?}: it waited for keys nobody answers"
    );
    let server = world.serve();
    for ((key, body), id) in keys.iter().zip(&created) {
        let again = keyed_post(&server, &path, &token, key, body);
        assert_eq!(again.status, 201, "{key}: {}", again.text);
        assert!(again.replayed, "{key}");
        assert_eq!(again.json()["data"]["id"], id.as_str(), "{key}");
    }
    let api = Api::new(&server, &token);
    assert_eq!(
        api.get("/tasks?limit=200").data().as_array().unwrap().len(),
        keys.len()
    );
}
