//! Running cinch day to day: the watchdog that stops a harness writing
//! nothing, the health and metrics routes, traces to an OTLP collector, the
//! graceful shutdown, the log format, the database going away, slow and
//! stalled clients and a full disk. Each over a real `cinch serve` on
//! loopback, or `cinch run`.

use crate::otlp;
use crate::support;
use crate::support::gate::{self, Load};

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{World, claude_turn};

use cinch_fake_cli::Script;

/// A claude turn whose lines come `gap_ms` apart, in `lines` lines.
fn slow_turn(session: &str, lines: usize, gap_ms: u64) -> Script {
    let mut turn = claude_turn(session, "done");
    let result = turn.pop().unwrap();
    while turn.len() < lines - 1 {
        turn.push(turn[1].clone());
    }
    turn.push(result);
    Script {
        lines: turn,
        line_delay_ms: gap_ms,
        ..Script::default()
    }
}

/// Starts a code task in environment `repo` and waits for its end.
fn code_task(server: &support::Server, token: &str, run: &str, repo: &str) -> Value {
    let path = format!("/api/runs/{run}/tasks");
    let ended = server.post(
        &format!("{path}?wait=true"),
        token,
        &json!({"brief": "Work.", "harness": "claude", "repo": repo}),
    );
    assert_eq!(ended.status, 201, "{ended:?}\n{}", server.log());
    let task = ended.json();
    let call = task["call_id"].as_str().unwrap();
    let read = server.get(&format!("{path}/{call}"), token).json();
    assert_eq!(read["status"], task["status"], "{read}");
    task
}

#[test]
fn a_harness_that_writes_nothing_is_stopped_by_the_watchdog() {
    let world = World::new();
    // Seconds instead of minutes: the knob for tests.
    world.configure("watchdog_seconds = 3");
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();

    // An environment may set its own watchdog, 1 to 60 minutes.
    let refused = api.post(
        "/environments",
        json!({"name": "patient", "repository": repo, "watchdog_minutes": 0}),
    );
    assert_eq!(refused.status, 422, "{refused:?}");
    assert_eq!(refused.field_errors(), ["watchdog_minutes"]);
    assert_eq!(api.get("/environments").data(), json!([]));
    let quiet = api.environment(json!({"name": "quiet", "repository": repo}));
    let patient =
        api.environment(json!({"name": "patient", "repository": repo, "watchdog_minutes": 1}));
    assert_eq!(
        api.get(&format!("/environments/{quiet}")).data()["watchdog_minutes"],
        Value::Null
    );
    assert_eq!(
        api.get(&format!("/environments/{patient}")).data()["watchdog_minutes"],
        1
    );

    // Output now and then keeps a turn alive past the limit: four gaps of a
    // second are longer together than three seconds.
    world.script(slow_turn("s-steady", 5, 1_000));
    let steady = code_task(&server, &token, "run-steady", "quiet");
    assert_eq!(steady["status"], "completed", "{steady}");

    // Five quiet seconds: the server's watchdog stops it.
    world.script(slow_turn("s-quiet", 2, 5_000));
    let stopped = code_task(&server, &token, "run-quiet", "quiet");
    assert_eq!(stopped["status"], "timed_out", "{stopped}");
    assert_eq!(
        stopped["result"]["detail"],
        "No output for 3 seconds; stopped."
    );
    assert!(
        stopped["result"]["result_text"]
            .as_str()
            .unwrap()
            .contains("No output for 3 seconds; stopped."),
        "{stopped}"
    );

    // The same turn in the environment whose watchdog waits a minute.
    let waited = code_task(&server, &token, "run-patient", "patient");
    assert_eq!(waited["status"], "completed", "{waited}");

    // Going back to the server's watchdog.
    let cleared = server.patch(
        &api.path(&format!("/environments/{patient}")),
        &token,
        &json!({"watchdog_minutes": null}),
    );
    assert_eq!(cleared.status, 200, "{cleared:?}");
    assert_eq!(
        api.get(&format!("/environments/{patient}")).data()["watchdog_minutes"],
        Value::Null
    );
    let too_long = server.patch(
        &api.path(&format!("/environments/{patient}")),
        &token,
        &json!({"watchdog_minutes": 61}),
    );
    assert_eq!(too_long.field_errors(), ["watchdog_minutes"]);
    let again = code_task(&server, &token, "run-patient-again", "patient");
    assert_eq!(again["status"], "timed_out", "{again}");
}

#[test]
fn cinch_run_takes_the_configured_watchdog_and_its_own_flag() {
    let world = World::new();
    world.configure("watchdog_seconds = 2");
    world.script(slow_turn("s-run", 2, 4_000));
    let run = |extra: &[&str]| {
        let output = world
            .cinch()
            .args(["run", "--harness", "claude", "--repo"])
            .arg(world.path("repo"))
            .args(extra)
            .args(["--json", "Work."])
            .output()
            .unwrap();
        let result: Value = serde_json::from_slice(&output.stdout)
            .unwrap_or_else(|_| panic!("no JSON result: {output:?}"));
        (output.status.success(), result)
    };
    let (succeeded, stopped) = run(&[]);
    assert!(!succeeded);
    assert_eq!(stopped["status"], "timed_out", "{stopped}");
    assert_eq!(stopped["detail"], "No output for 2 seconds; stopped.");
    let (succeeded, waited) = run(&["--watchdog-minutes", "1"]);
    assert!(succeeded, "{waited}");
    assert_eq!(waited["status"], "completed");
}

/// The value of the sample `name{labels}` in a Prometheus text page, when
/// there is one with all of `labels` (in any order).
fn sample(page: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    page.lines().find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
        let rest = rest.strip_suffix('}')?;
        let present: Vec<&str> = rest.split(',').filter(|pair| !pair.is_empty()).collect();
        let wanted = labels
            .iter()
            .all(|(key, value)| present.contains(&format!("{key}=\"{value}\"").as_str()));
        (metric == name && wanted && present.len() == labels.len())
            .then(|| value.parse().ok())
            .flatten()
    })
}

fn metrics_page(server: &support::Server) -> String {
    let page = server.request("GET", "/metrics", None, None);
    assert_eq!(page.status, 200, "{page:?}");
    assert!(page.content_type.starts_with("text/plain"), "{page:?}");
    page.text
}

/// Holds the SQLite database's write lock until dropped, as a stuck writer would.
struct DatabaseLock {
    runtime: tokio::runtime::Runtime,
    connection: Option<sqlx::SqliteConnection>,
}

impl DatabaseLock {
    fn take(database: &std::path::Path) -> Self {
        use sqlx::{Connection as _, Executor as _};
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let url = format!("sqlite:{}", database.display());
        let mut connection = runtime
            .block_on(sqlx::SqliteConnection::connect(&url))
            .unwrap();
        runtime
            .block_on(connection.execute("BEGIN IMMEDIATE"))
            .unwrap();
        Self {
            runtime,
            connection: Some(connection),
        }
    }
}

impl Drop for DatabaseLock {
    fn drop(&mut self) {
        use sqlx::{Connection as _, Executor as _};
        if let Some(mut connection) = self.connection.take() {
            let _ = self.runtime.block_on(connection.execute("ROLLBACK"));
            let _ = self.runtime.block_on(connection.close());
        }
    }
}

#[test]
fn healthz_answers_without_a_token_and_says_when_the_database_does_not() {
    let world = World::new();
    let server = world.serve();
    let healthy = server.request("GET", "/healthz", None, None);
    assert_eq!(healthy.status, 200, "{healthy:?}");
    let health = healthy.json();
    assert_eq!(health["status"], "ok");
    assert_eq!(health["database"]["reachable"], true);
    let loaded = health["drivers"]["loaded"].as_array().unwrap();
    for driver in ["claude", "codex", "cursor", "gemini"] {
        assert!(loaded.contains(&json!(driver)), "{health}");
    }
    assert_eq!(health["drivers"]["failed"], json!([]));
    assert_eq!(health["sandbox"]["enforced"], true);
    assert_eq!(
        health["sandbox"]["landlock_abi"],
        server.get("/v1/server", &world.admin_token()).data()["sandbox"]["landlock_abi"]
    );

    // A writer holding SQLite's write lock: the server cannot serve, and
    // says so. (PostgreSQL locks rows, not the database.)
    if world.database.is_some() {
        return;
    }
    let lock = DatabaseLock::take(&world.path("home/cinch.db"));
    let stuck = server.request("GET", "/healthz", None, None);
    assert_eq!(stuck.status, 503, "{stuck:?}");
    assert_eq!(stuck.json()["status"], "unavailable");
    assert_eq!(stuck.json()["database"]["reachable"], false);
    drop(lock);
    let recovered = server.request("GET", "/healthz", None, None);
    assert_eq!(recovered.status, 200, "{recovered:?}");
    assert_eq!(recovered.json()["database"]["reachable"], true);
}

#[test]
fn a_write_that_another_sqlite_writer_holds_off_is_503_then_goes_through() {
    let world = World::new();
    if world.database.is_some() {
        return;
    }
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    assert_eq!(api.get("/tasks").data(), json!([]));
    let lock = DatabaseLock::take(&world.path("home/cinch.db"));
    let started = Instant::now();
    let held_off = timed(
        &server,
        "POST",
        &api.path("/tasks"),
        &token,
        Some(&json!({"title": "Held off"})),
        None,
    );
    assert_eq!(held_off.answer.status, 503, "{:?}", held_off.answer);
    assert_eq!(held_off.answer.json()["type"], "urn:cinch:unavailable");
    assert!(held_off.retry_after.is_some());
    // SQLite's busy wait, then the answer.
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(api.get("/tasks").data(), json!([]), "reads go on");
    drop(lock);
    let through = api.post("/tasks", json!({"title": "Held off"}));
    assert_eq!(through.status, 201, "{through:?}");
    assert_eq!(api.get("/tasks").data().as_array().unwrap().len(), 1);
}

/// The tick lines among a stream's events.
fn ticks(events: &[(u64, String, Value)]) -> usize {
    events
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .flat_map(|(_, _, data)| data["lines"].as_array().into_iter().flatten())
        .filter(|line| line.as_str().is_some_and(|line| line.contains("tick")))
        .count()
}

#[test]
fn lines_reach_their_stream_while_another_sqlite_writer_holds_the_database() {
    let world = World::new();
    if world.database.is_some() {
        // PostgreSQL locks rows, not the database.
        return;
    }
    world.script(Script {
        lines: vec![claude_turn("s-held", "done")[0].clone()],
        lines_per_second: Some(20.0),
        duration_ms: 20_000,
        tick_line: Some(TICK.replace("s-long", "s-held")),
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "held", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Tick.");
    let path = api.path(&format!("/tasks/{task}/sessions/{session}/events"));
    let before = server.stream(&path, &token, None, |events| ticks(events) > 0);
    let last_id = before.last().unwrap().0;

    // Another writer takes SQLite's write lock, as a backup or a second
    // process would; the turn's lines go on reaching the stream meanwhile.
    let lock = DatabaseLock::take(&world.path("home/cinch.db"));
    let held = Instant::now();
    let during = server.stream_within(
        &path,
        &token,
        Some(last_id),
        Duration::from_secs(8),
        |events| ticks(events) >= 20,
    );
    let held_for = held.elapsed();
    drop(lock);
    assert!(
        ticks(&during) >= 20,
        "{} tick lines reached the stream in {held_for:?} while the database was held: {during:?}",
        ticks(&during)
    );
    let ids: Vec<u64> = during.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(
        ids,
        (last_id + 1..=last_id + ids.len() as u64).collect::<Vec<_>>()
    );

    // A server killed at once, and started again, reads back what it
    // showed: from the start, in order, the same events.
    let shown: Vec<(u64, String, Value)> = before.into_iter().chain(during).collect();
    let through = shown.last().unwrap().0;
    drop(server);
    let server = world.serve();
    let again = server.stream(&path, &token, None, |events| {
        events.last().is_some_and(|(id, _, _)| *id >= through)
    });
    assert_eq!(again[..shown.len()], shown[..]);
}

#[test]
fn metrics_count_turns_lines_waits_and_requests() {
    let world = World::new();
    let server = world.serve_with(&["--max-turns", "1", "--retry-seconds", "1"]);
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let before = metrics_page(&server);
    assert_eq!(
        sample(
            &before,
            "cinch_turns_ended_total",
            &[("harness", "claude"), ("status", "completed")]
        ),
        None
    );
    let environment = api.environment(
        json!({"name": "app", "repository": world.path("repo").display().to_string()}),
    );

    // A code task: its end, its progress lines and its request are counted.
    world.script(slow_turn("s-metrics", 4, 0));
    let task = code_task(&server, &token, "run-metrics", "app");
    assert_eq!(task["status"], "completed", "{task}");
    let call = task["call_id"].as_str().unwrap();
    let log = server
        .get(&format!("/api/runs/run-metrics/tasks/{call}/log"), &token)
        .json();
    let lines = log["lines"].as_array().unwrap().len() as f64;
    assert!(lines > 0.0, "{log}");
    let after = metrics_page(&server);
    let claude = [("harness", "claude")];
    assert_eq!(
        sample(
            &after,
            "cinch_turns_ended_total",
            &[("harness", "claude"), ("status", "completed")]
        ),
        Some(1.0),
        "{after}"
    );
    assert_eq!(
        sample(&after, "cinch_progress_lines_total", &claude),
        Some(lines)
    );
    assert_eq!(sample(&after, "cinch_turns_running", &claude), Some(0.0));
    assert_eq!(sample(&after, "cinch_sessions_waiting", &[]), Some(0.0));
    let posted = [
        ("method", "POST"),
        ("route", "/api/runs/{run}/tasks"),
        ("status", "201"),
    ];
    assert_eq!(
        sample(&after, "cinch_http_request_duration_seconds_count", &posted),
        Some(1.0),
        "{after}"
    );
    let mut bucket = posted.to_vec();
    bucket.push(("le", "+Inf"));
    assert_eq!(
        sample(
            &after,
            "cinch_http_request_duration_seconds_bucket",
            &bucket
        ),
        Some(1.0)
    );
    assert!(
        sample(
            &after,
            "cinch_http_request_duration_seconds_count",
            &[
                ("method", "GET"),
                ("route", "/api/runs/{run}/tasks/{call}/log"),
                ("status", "200"),
            ]
        )
        .is_some(),
        "routes are labelled by their template, not their ids: {after}"
    );

    // One turn runs (it hangs), so the next session waits for the slot.
    let record = world.path("out/hang.json");
    world.script(Script {
        lines: claude_turn("s-hang", "never")[..1].to_vec(),
        hang_ms: -1,
        record: Some(record.clone()),
        ..Script::default()
    });
    let first = api.post(
        "/tasks",
        json!({"prompt": "Hang.", "environment_id": environment}),
    );
    let first_task = first.data()["id"].as_str().unwrap().to_owned();
    let first_session = api.first_session(&first_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Running, once its CLI has read its script (the next one changes it).
    api.wait(&first_task, &first_session, "its CLI started", |session| {
        session["status"] == "running" && record.exists()
    });
    let second = api.post(
        "/tasks",
        json!({"prompt": "Wait.", "environment_id": environment}),
    );
    let second_task = second.data()["id"].as_str().unwrap().to_owned();
    let second_session = api.first_session(&second_task)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    api.wait_status(&second_task, &second_session, "waiting");
    let busy = metrics_page(&server);
    assert_eq!(sample(&busy, "cinch_turns_running", &claude), Some(1.0));
    assert_eq!(sample(&busy, "cinch_sessions_waiting", &[]), Some(1.0));

    // The first is aborted; the second gets the slot and completes.
    world.script(slow_turn("s-next", 3, 0));
    let aborted = api.post(
        &format!("/tasks/{first_task}/sessions/{first_session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
    api.wait(&second_task, &second_session, "its turn's end", |session| {
        session["status"] == "idle"
    });
    let done = metrics_page(&server);
    assert_eq!(
        sample(
            &done,
            "cinch_turns_ended_total",
            &[("harness", "claude"), ("status", "cancelled")]
        ),
        Some(1.0),
        "{done}"
    );
    assert_eq!(
        sample(
            &done,
            "cinch_turns_ended_total",
            &[("harness", "claude"), ("status", "completed")]
        ),
        Some(2.0)
    );
    assert_eq!(sample(&done, "cinch_turns_running", &claude), Some(0.0));
    assert_eq!(sample(&done, "cinch_sessions_waiting", &[]), Some(0.0));
}

#[test]
fn a_metrics_token_closes_the_metrics_but_not_the_health() {
    let world = World::new();
    let server = world.serve_with(&["--metrics-token", "m-0123456789"]);
    let bare = server.request("GET", "/metrics", None, None);
    assert_eq!(bare.status, 401, "{bare:?}");
    assert_eq!(bare.content_type, "application/problem+json");
    let admin = server.request("GET", "/metrics", Some(&world.admin_token()), None);
    assert_eq!(
        admin.status, 401,
        "an account's token is not the metrics token"
    );
    let right = server.request("GET", "/metrics", Some("m-0123456789"), None);
    assert_eq!(right.status, 200, "{right:?}");
    assert!(
        right.text.contains("cinch_http_request_duration_seconds"),
        "{right:?}"
    );
    assert_eq!(server.request("GET", "/healthz", None, None).status, 200);
}

#[test]
fn the_openapi_document_lists_the_operations_routes() {
    let world = World::new();
    let server = world.serve();
    let document = server.request("GET", "/openapi.json", None, None).json();
    let health = &document["paths"]["/healthz"]["get"];
    assert!(health["responses"]["200"].is_object(), "{health}");
    assert!(health["responses"]["503"].is_object(), "{health}");
    assert_eq!(health["security"], json!([{}]), "no token: {health}");
    let metrics = &document["paths"]["/metrics"]["get"];
    assert!(
        metrics["responses"]["200"]["content"]
            .as_object()
            .unwrap()
            .keys()
            .any(|kind| kind.starts_with("text/plain")),
        "{metrics}"
    );
}

#[test]
fn logs_come_as_json_lines_when_asked() {
    let world = World::new();
    for asked in [["--log-format", "json"], ["", ""]] {
        let mut command = world.cinch();
        if asked[0].is_empty() {
            command.env("CINCH_LOG_FORMAT", "json");
        } else {
            command.args(asked);
        }
        command.args(["serve", "--home"]).arg(world.path("home"));
        let server = support::Server::start(command, world.dir.path());
        assert_eq!(server.request("GET", "/healthz", None, None).status, 200);
        let stderr = server.stderr.clone();
        drop(server);
        let log = std::fs::read_to_string(stderr).unwrap();
        // cinch's own notices to the operator stay plain; its logs are JSON.
        let logs: Vec<Value> = log
            .lines()
            .filter(|line| !line.starts_with("cinch: "))
            .map(|line| {
                serde_json::from_str(line).unwrap_or_else(|_| panic!("not JSON: {line}\n{log}"))
            })
            .collect();
        assert!(
            logs.iter()
                .any(|line| line["level"] == "INFO" && line["fields"].is_object()),
            "{log}"
        );
    }
}

#[test]
fn sigterm_finishes_requests_in_flight_and_leaves_turns_to_their_supervisors() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    // A second repository, so that two turns run at once.
    let other = world.path("other-repo");
    std::fs::create_dir_all(&other).unwrap();
    support::git(&other, &["init", "-q"]);
    std::fs::write(other.join("readme.txt"), "other\n").unwrap();
    support::git(&other, &["add", "."]);
    support::git(
        &other,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "init",
        ],
    );
    api.environment(
        json!({"name": "long", "repository": world.path("repo").display().to_string()}),
    );
    api.environment(json!({"name": "short", "repository": other.display().to_string()}));

    // A turn that outlives the server: it ends a while after it starts.
    world.script(slow_turn("s-long", 2, 8_000));
    let started = server.post(
        "/api/runs/run-long/tasks",
        &token,
        &json!({"brief": "Take long.", "harness": "claude", "repo": "long"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let long_call = started.json()["call_id"].as_str().unwrap().to_owned();
    let long_path = format!("/api/runs/run-long/tasks/{long_call}");
    // Running, once its CLI has read its script and said its session.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let task = server.get(&long_path, &token).json();
        assert_eq!(task["status"], "running", "{task}");
        if task["session_id"] == "s-long" {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{task}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // A request in flight: it waits for a turn of its own.
    let record = world.path("out/short.json");
    world.script(Script {
        record: Some(record.clone()),
        ..slow_turn("s-short", 3, 1_500)
    });
    let in_flight = {
        let url = server.url("/api/runs/run-short/tasks?wait=true");
        let token = token.clone();
        std::thread::spawn(move || {
            let mut response = support::agent()
                .post(&url)
                .header("Authorization", format!("Bearer {token}"))
                .header("Content-Type", "application/json")
                .send(
                    json!({"brief": "Be quick.", "harness": "claude", "repo": "short"}).to_string(),
                )
                .unwrap();
            let status = response.status().as_u16();
            (status, response.body_mut().read_to_string().unwrap())
        })
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !record.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "the short turn never started: {}",
            server.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // SIGTERM: the request in flight is answered, then the server exits 0.
    let mut server = server;
    // SAFETY: signalling the server this test started, by its pid.
    assert_eq!(
        unsafe { libc::kill(server.child.id() as i32, libc::SIGTERM) },
        0
    );
    let (status, body) = in_flight.join().unwrap();
    assert_eq!(status, 201, "{body}");
    let short: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(short["status"], "completed", "{short}");
    let exit = server.child.wait().unwrap();
    assert_eq!(exit.code(), Some(0), "{}", server.log());
    assert!(
        server.log().contains("running turns carry on"),
        "{}",
        server.log()
    );
    drop(server);

    // The long turn's supervisor carried on; a new server follows it to its end.
    let server = world.serve();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let ended = loop {
        let task = server.get(&long_path, &token).json();
        if task["status"] != "running" {
            break task;
        }
        assert!(std::time::Instant::now() < deadline, "{task}");
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(ended["status"], "completed", "{ended}");
    assert_eq!(ended["session_id"], "s-long");
}

/// The faulty test driver (`tests/drivers/faulty`) as a component, built
/// the way the tests' build script builds it (a no-op when it is fresh).
fn faulty_driver() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    // <target>/<profile>/deps/<test>
    let target = exe.ancestors().nth(3).unwrap();
    let components = target.join("components");
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = std::process::Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--quiet", "--target", "wasm32-wasip2"])
        .args(["--profile", "driver", "-p", "cinch-test-driver-faulty"])
        .arg("--target-dir")
        .arg(&components)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_TARGET")
        .output()
        .unwrap();
    assert!(built.status.success(), "{built:?}");
    components.join("wasm32-wasip2/driver/cinch_test_driver_faulty.wasm")
}

#[test]
fn a_driver_that_fails_is_counted() {
    let world = World::new();
    let added = world
        .cinch()
        .args(["driver", "add"])
        .arg(faulty_driver())
        .output()
        .unwrap();
    assert!(added.status.success(), "{added:?}");
    cinch_fake_cli::install(&world.path("bin"), "faulty-cli-that-does-not-exist");
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let health = server.request("GET", "/healthz", None, None).json();
    assert!(
        health["drivers"]["loaded"]
            .as_array()
            .unwrap()
            .contains(&json!("faulty")),
        "{health}"
    );
    let faulty = [("harness", "faulty")];
    assert_eq!(
        sample(
            &metrics_page(&server),
            "cinch_driver_failures_total",
            &faulty
        ),
        None
    );
    api.environment(json!({
        "name": "app",
        "repository": world.path("repo").display().to_string(),
        "secrets": {"FAULTY_TOKEN": "faulty-token-value"},
    }));

    world.script(Script {
        lines: vec![json!({"type": "panic"})],
        ..Script::default()
    });
    let ended = server.post(
        "/api/runs/run-faulty/tasks?wait=true",
        &token,
        &json!({"brief": "Fail.", "harness": "faulty", "repo": "app"}),
    );
    assert_eq!(ended.status, 201, "{ended:?}\n{}", server.log());
    let task = ended.json();
    assert_eq!(task["status"], "failed", "{task}");
    assert!(
        task["result"]["detail"]
            .as_str()
            .unwrap()
            .contains("panicked"),
        "{task}"
    );
    let page = metrics_page(&server);
    assert_eq!(
        sample(&page, "cinch_driver_failures_total", &faulty),
        Some(1.0),
        "{page}"
    );
    assert_eq!(
        sample(
            &page,
            "cinch_turns_ended_total",
            &[("harness", "faulty"), ("status", "failed")]
        ),
        Some(1.0)
    );
}

#[test]
fn a_sessions_turn_follows_its_environments_watchdog() {
    let world = World::new();
    world.configure("watchdog_seconds = 2");
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();
    let quiet = api.environment(json!({"name": "quiet", "repository": repo}));
    let patient =
        api.environment(json!({"name": "patient", "repository": repo, "watchdog_minutes": 1}));
    // Four quiet seconds before the turn's result.
    world.script(slow_turn("s-session", 2, 4_000));
    let run = |environment: &str| {
        let task = api.post(
            "/tasks",
            json!({"prompt": "Work.", "environment_id": environment}),
        );
        assert_eq!(task.status, 201, "{task:?}");
        let task = task.data()["id"].as_str().unwrap().to_owned();
        let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
        api.wait(&task, &session, "its turn's end", |session| {
            (session["status"] == "idle" && session["harness_session_id"] == "s-session")
                || session["close_reason"] == "turn_failure"
        })
    };
    let stopped = run(&quiet);
    assert_eq!(stopped["close_reason"], "turn_failure", "{stopped}");
    assert!(
        stopped["error_message"]
            .as_str()
            .unwrap()
            .contains("timed out: No output for 2 seconds; stopped."),
        "{stopped}"
    );
    let waited = run(&patient);
    assert_eq!(waited["close_reason"], Value::Null, "{waited}");
    assert_eq!(waited["error_message"], Value::Null, "{waited}");
}

/// A PostgreSQL server of the test's own, which it stops and starts: made
/// as `.ci/postgres` makes the suite's (as root, it runs as the
/// unprivileged `cinch-ci`, since PostgreSQL refuses root), and removed
/// when dropped.
struct OwnPostgres {
    dir: tempfile::TempDir,
    bin: std::path::PathBuf,
    port: u16,
    password: String,
    as_user: Vec<String>,
}

impl OwnPostgres {
    fn start() -> Self {
        let bin = postgres_bin();
        let dir = tempfile::tempdir().unwrap();
        let mut as_user = Vec::new();
        if unsafe { libc::geteuid() } == 0 {
            let known = std::process::Command::new("id")
                .arg("cinch-ci")
                .output()
                .unwrap();
            if !known.status.success() {
                run_checked(std::process::Command::new("useradd").args([
                    "--system",
                    "--no-create-home",
                    "--shell",
                    "/usr/sbin/nologin",
                    "cinch-ci",
                ]));
            }
            run_checked(
                std::process::Command::new("chown")
                    .arg("cinch-ci")
                    .arg(dir.path()),
            );
            as_user = ["runuser", "-u", "cinch-ci", "--"]
                .map(String::from)
                .to_vec();
        }
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let password = format!("pw{}", std::process::id());
        let password_file = dir.path().join("password");
        std::fs::write(&password_file, format!("{password}\n")).unwrap();
        std::fs::set_permissions(&password_file, std::fs::Permissions::from_mode(0o644)).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let cluster = Self {
            dir,
            bin,
            port,
            password,
            as_user,
        };
        let data = cluster.dir.path().join("data");
        run_checked(
            cluster
                .command("initdb")
                .arg("-D")
                .arg(&data)
                .args(["-U", "postgres", "--auth=scram-sha-256", "--encoding=UTF8"])
                .arg(format!("--pwfile={}", password_file.display())),
        );
        std::fs::remove_file(password_file).unwrap();
        cluster.resume();
        cluster
    }

    fn command(&self, program: &str) -> std::process::Command {
        let program = self.bin.join(program);
        let mut command = match self.as_user.split_first() {
            Some((first, rest)) => {
                let mut command = std::process::Command::new(first);
                command.args(rest).arg(program);
                command
            }
            None => std::process::Command::new(program),
        };
        command.stdout(std::process::Stdio::null());
        command
    }

    fn url(&self) -> String {
        format!(
            "postgres://postgres:{}@127.0.0.1:{}/postgres",
            self.password, self.port
        )
    }

    /// Starts the server and waits until it takes connections.
    fn resume(&self) {
        let dir = self.dir.path();
        run_checked(
            self.command("pg_ctl")
                .arg("-D")
                .arg(dir.join("data"))
                .arg("-l")
                .arg(dir.join("server.log"))
                .args(["-w", "start", "-o"])
                .arg(format!(
                    "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off",
                    self.port,
                    dir.display()
                )),
        );
    }

    /// Stops the server (its connections cut, as an operator's restart does).
    fn stop(&self) {
        run_checked(
            self.command("pg_ctl")
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .args(["-m", "fast", "-w", "stop"]),
        );
    }
}

impl Drop for OwnPostgres {
    fn drop(&mut self) {
        let _ = self
            .command("pg_ctl")
            .arg("-D")
            .arg(self.dir.path().join("data"))
            .args(["-m", "immediate", "-w", "stop"])
            .stderr(std::process::Stdio::null())
            .status();
    }
}

/// The folder of PostgreSQL's programs: on PATH, or Debian's newest.
fn postgres_bin() -> std::path::PathBuf {
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| dir.join("initdb").is_file());
    on_path.unwrap_or_else(|| {
        let mut versions: Vec<(u32, std::path::PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .expect("PostgreSQL's programs are neither on PATH nor in /usr/lib/postgresql")
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let version = entry.file_name().to_str()?.parse().ok()?;
                Some((version, entry.path().join("bin")))
            })
            .collect();
        versions.sort();
        versions
            .pop()
            .expect("no PostgreSQL in /usr/lib/postgresql")
            .1
    })
}

fn run_checked(command: &mut std::process::Command) {
    let status = command.status().unwrap();
    assert!(status.success(), "{command:?}: {status}");
}

/// An answer, how long it took, and its `Retry-After`.
struct Timed {
    answer: support::Answer,
    retry_after: Option<String>,
    took: Duration,
}

/// Sends a request with `token` (and `key` as its `Idempotency-Key`) and times it.
fn timed(
    server: &support::Server,
    method: &str,
    path: &str,
    token: &str,
    body: Option<&Value>,
    key: Option<&str>,
) -> Timed {
    let mut request = ureq::http::Request::builder()
        .method(method)
        .uri(server.url(path))
        .header("Authorization", format!("Bearer {token}"))
        .header("Content-Type", "application/json");
    if let Some(key) = key {
        request = request.header("Idempotency-Key", key);
    }
    let body = body.map(Value::to_string).unwrap_or_default();
    let started = Instant::now();
    let mut response = support::agent()
        .run(request.body(body.into_bytes()).unwrap())
        .unwrap();
    let took = started.elapsed();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|value| value.to_str().unwrap().to_owned())
    };
    let (content_type, retry_after) = (header("content-type"), header("retry-after"));
    Timed {
        answer: support::Answer {
            status: response.status().as_u16(),
            content_type: content_type.unwrap_or_default(),
            text: response.body_mut().read_to_string().unwrap(),
        },
        retry_after,
        took,
    }
}

#[test]
fn while_postgresql_is_stopped_every_route_answers_503_at_once_and_works_again_after() {
    let _machine = gate::hold(Load::Machine);
    if std::env::var("CINCH_TEST_DATABASE")
        .unwrap_or_default()
        .is_empty()
    {
        eprintln!("skipped: CINCH_TEST_DATABASE names no PostgreSQL server");
        return;
    }
    let postgres = OwnPostgres::start();
    let world = World::with_database(Some(postgres.url()));
    world.script(Script {
        lines: claude_turn("sess-down", "Hi."),
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    // A token the server has not seen yet: checking it takes the database.
    let unseen_token = world.agent_token("unseen");
    let api = support::Api::new(&server, &token);
    let repository = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "app", "repository": repository}));
    let (task, session) = api.task_on(&environment, "Say hi.");
    // The turn's end, not its start: a turn this short may run and end
    // between two looks at the session.
    api.wait(&task, &session, "idle after its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-down"
    });
    let account = api.path("");
    let session_path = format!("{account}/tasks/{task}/sessions/{session}");
    let tasks = format!("{account}/tasks");
    let gets = [
        "/v1/accounts".to_owned(),
        tasks.clone(),
        format!("{tasks}/{task}"),
        format!("{tasks}/{task}/sessions"),
        session_path.clone(),
        format!("{session_path}/messages"),
        format!("{tasks}/{task}/attachments"),
        format!("{account}/agents"),
        format!("{account}/members"),
        format!("{account}/environments"),
        format!("{account}/environments/{environment}"),
        format!("{account}/webhooks"),
        format!("{account}/usage"),
    ];
    let writes = [
        ("POST", tasks.clone(), json!({"title": "While down"})),
        (
            "POST",
            format!("{session_path}/messages"),
            json!({"message": "Still there?"}),
        ),
        (
            "POST",
            format!("{account}/environments"),
            json!({"name": "down", "repository": repository}),
        ),
        ("PATCH", session_path.clone(), json!({"status": "closed"})),
        ("POST", format!("{session_path}/abort"), json!({})),
    ];
    for path in &gets {
        let answer = server.get(path, &token);
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
    }
    let tasks_before = api.get("/tasks").data();
    let messages_before = api.messages(&task, &session, "").data();

    postgres.stop();
    let mut answers: Vec<(String, Timed)> = Vec::new();
    for path in &gets {
        answers.push((
            format!("GET {path}"),
            timed(&server, "GET", path, &token, None, None),
        ));
    }
    answers.push((
        format!("GET {tasks} (a token not seen yet)"),
        timed(&server, "GET", &tasks, &unseen_token, None, None),
    ));
    for (method, path, body) in &writes {
        answers.push((
            format!("{method} {path}"),
            timed(&server, method, path, &token, Some(body), None),
        ));
    }
    answers.push((
        format!("POST {tasks} (Idempotency-Key)"),
        timed(
            &server,
            "POST",
            &tasks,
            &token,
            Some(&json!({"title": "Keyed"})),
            Some("while-down-1"),
        ),
    ));
    let report: Vec<String> = answers
        .iter()
        .map(|(what, timed)| format!("{what}: {} in {:?}", timed.answer.status, timed.took))
        .collect();
    eprintln!("while PostgreSQL is stopped:\n{}", report.join("\n"));
    for (what, timed) in &answers {
        let answer = &timed.answer;
        assert_eq!(answer.status, 503, "{what}: {answer:?}");
        assert_eq!(answer.content_type, "application/problem+json", "{what}");
        assert_eq!(answer.json()["type"], "urn:cinch:unavailable", "{what}");
        assert!(timed.retry_after.is_some(), "{what}: no Retry-After");
        assert!(
            timed.took < Duration::from_secs(3),
            "{what} took {:?}",
            timed.took
        );
    }
    let health = server.request("GET", "/healthz", None, None);
    assert_eq!(health.status, 503, "{health:?}");
    assert_eq!(health.json()["database"]["reachable"], false);

    // Back without a restart of cinch, and nothing was written meanwhile.
    postgres.resume();
    let deadline = Instant::now() + Duration::from_secs(20);
    while server.request("GET", "/healthz", None, None).status != 200 {
        assert!(Instant::now() < deadline, "no recovery: {}", server.log());
        std::thread::sleep(Duration::from_millis(200));
    }
    for path in &gets {
        let answer = server.get(path, &token);
        assert_eq!(answer.status, 200, "{path}: {answer:?}");
    }
    assert_eq!(api.get("/tasks").data(), tasks_before);
    assert_eq!(api.messages(&task, &session, "").data(), messages_before);
    assert_eq!(server.get(&tasks, &unseen_token).status, 200);
    let keyed = timed(
        &server,
        "POST",
        &tasks,
        &token,
        Some(&json!({"title": "Keyed"})),
        Some("while-down-1"),
    );
    assert_eq!(keyed.answer.status, 201, "{:?}", keyed.answer);
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Back?"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    // The session runs its turn: the message and the turn's answer.
    let deadline = Instant::now() + Duration::from_secs(60);
    let before = messages_before.as_array().unwrap().len();
    while api
        .messages(&task, &session, "")
        .data()
        .as_array()
        .unwrap()
        .len()
        < before + 2
    {
        assert!(
            Instant::now() < deadline,
            "no turn after the outage: {}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        api.get("/tasks").data().as_array().unwrap().len(),
        tasks_before.as_array().unwrap().len() + 1
    );
}

/// `cinch serve` exporting its traces to `collector`, with `extra` options;
/// the exporter sends its batches every 50 ms instead of every 5 s.
fn traced_server(world: &World, collector: &otlp::Collector, extra: &[&str]) -> support::Server {
    let mut command = world.cinch();
    command
        .args(["serve", "--home"])
        .arg(world.path("home"))
        .args(["--otlp-endpoint", &collector.url, "--webhook-allow-private"])
        .args(extra)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50");
    support::Server::start(command, world.dir.path())
}

/// A claude turn that used tokens and cost money.
fn costly_turn(session: &str, text: &str) -> Vec<Value> {
    let mut turn = claude_turn(session, text);
    let result = turn.last_mut().unwrap();
    result["usage"] = json!({"input_tokens": 1200, "output_tokens": 345});
    result["total_cost_usd"] = json!(0.0125);
    turn
}

/// The turn spans that have ended, oldest first.
fn ended_turns(spans: &[otlp::Span]) -> Vec<&otlp::Span> {
    spans
        .iter()
        .filter(|span| span.name == "invoke_agent claude")
        .filter(|span| span.attributes.contains_key("cinch.turn.status"))
        .collect()
}

#[test]
fn traces_reach_an_otlp_collector_joined_to_the_caller_the_harness_and_webhooks() {
    let world = World::new();
    let collector = otlp::Collector::start();
    let record = world.path("out/record.json");
    world.script(Script {
        lines: costly_turn("o-1", "renamed"),
        record: Some(record.clone()),
        ..Script::default()
    });
    let server = traced_server(&world, &collector, &[]);
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let hook = api.post(
        "/webhooks",
        json!({"url": format!("{}/hooks", collector.url), "secret": "whsec-0123456789abcdef"}),
    );
    assert_eq!(hook.status, 201, "{hook:?}");

    // The caller's trace, as a traced client sends it.
    let (trace, caller) = ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7");
    let prompt = "Rename the widget, says prompt PROMPT-1b7e";
    let mut created = support::agent()
        .post(&server.url(&api.path("/tasks")))
        .header("Authorization", &format!("Bearer {token}"))
        .header("traceparent", &format!("00-{trace}-{caller}-01"))
        .send_json(json!({"prompt": prompt}))
        .unwrap();
    assert_eq!(created.status(), 201);
    let task: Value = created.body_mut().read_json().unwrap();
    let task = task["data"]["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    api.wait_status(&task, &session, "idle");

    let spans = collector.wait_for("the turn's end and its webhook's delivery", |spans| {
        ended_turns(spans).len() == 1
            && spans
                .iter()
                .any(|span| span.name == "POST webhook turn.ended")
    });
    assert!(spans.iter().all(|span| span.service == "cinch"));
    // The request continues the caller's trace.
    let request = spans
        .iter()
        .find(|span| span.name == "POST /v1/accounts/{account}/tasks")
        .unwrap_or_else(|| panic!("no span of the request: {spans:#?}"));
    assert_eq!(
        (request.trace_id.as_str(), request.parent_span_id.as_str()),
        (trace, caller)
    );
    assert_eq!(request.kind, 2, "a server span");
    assert_eq!(request.attribute("http.request.method"), "POST");
    assert_eq!(
        request.attribute("http.route"),
        "/v1/accounts/{account}/tasks"
    );
    assert_eq!(request.attribute("http.response.status_code"), 201);

    // The session's work tree, then its turn, under the request.
    let children_of = |parent: &otlp::Span| -> Vec<&otlp::Span> {
        spans
            .iter()
            .filter(|span| span.parent_span_id == parent.span_id)
            .collect()
    };
    let under_request: Vec<&str> = children_of(request)
        .iter()
        .map(|span| span.name.as_str())
        .collect();
    assert!(under_request.contains(&"worktree"), "{under_request:?}");
    let turn = ended_turns(&spans)[0];
    assert_eq!(turn.trace_id, trace);
    assert_eq!(turn.parent_span_id, request.span_id);
    assert_eq!(turn.attribute("gen_ai.operation.name"), "invoke_agent");
    assert_eq!(turn.attribute("gen_ai.system"), "claude");
    assert_eq!(turn.attribute("gen_ai.response.model"), "m");
    assert_eq!(turn.attribute("gen_ai.conversation.id"), "o-1");
    assert_eq!(turn.attribute("gen_ai.usage.input_tokens"), 1200);
    assert_eq!(turn.attribute("gen_ai.usage.output_tokens"), 345);
    assert_eq!(turn.attribute("cinch.cost_usd"), 0.0125);
    assert_eq!(turn.attribute("cinch.turn.status"), "completed");
    assert_eq!(turn.attribute("cinch.run.id"), session.as_str());
    // Its steps, each a child of the turn.
    let steps = children_of(turn);
    let mut names: Vec<&str> = steps.iter().map(|span| span.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "checkpoint end",
            "checkpoint start",
            "driver parse",
            "spawn",
            "worktree"
        ],
        "{steps:#?}"
    );
    let parse = steps
        .iter()
        .find(|span| span.name == "driver parse")
        .unwrap();
    assert!(parse.attribute("cinch.parse.bytes").as_i64().unwrap() > 0);
    assert!(parse.attribute("cinch.parse.reads").as_i64().unwrap() > 0);
    assert!(parse.attribute("cinch.parse.busy_ns").as_i64().unwrap() > 0);
    let spawn = steps.iter().find(|span| span.name == "spawn").unwrap();
    assert_eq!(spawn.attribute("cinch.sandboxed"), true);

    // The harness got the turn's span as its parent.
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(
        record["env"]["TRACEPARENT"],
        format!("00-{trace}-{}-01", turn.span_id)
    );

    // The webhook's delivery carries its span's context.
    let delivered = collector.posts_to("/hooks");
    let ended = delivered
        .iter()
        .find(|post| post.headers["x-cinch-event"] == "turn.ended")
        .unwrap();
    let delivery = spans
        .iter()
        .find(|span| span.name == "POST webhook turn.ended")
        .unwrap();
    assert_eq!(delivery.kind, 3, "a client span");
    assert_eq!(delivery.attribute("http.response.status_code"), 200);
    assert_eq!(
        ended.headers["traceparent"],
        format!("00-{}-{}-01", delivery.trace_id, delivery.span_id)
    );

    // No attribute holds the prompt, the answer or a secret.
    let text_of = |spans: &[otlp::Span]| -> String {
        spans
            .iter()
            .flat_map(|span| span.attributes.values())
            .map(Value::to_string)
            .collect()
    };
    let everything = text_of(&spans);
    for hidden in ["PROMPT-1b7e", "renamed", support::API_KEY, &token] {
        assert!(!everything.contains(hidden), "{hidden} in {spans:#?}");
    }

    // Asked to, the spans carry the brief and the answer.
    drop(server);
    let server = traced_server(&world, &collector, &["--otlp-include-content"]);
    world.script(Script {
        lines: costly_turn("o-1", "renamed again"),
        ..Script::default()
    });
    let api = support::Api::new(&server, &token);
    let path = format!("/tasks/{task}/sessions/{session}/messages");
    let posted = api.post(&path, json!({"message": "Once more, PROMPT-9c4d"}));
    assert_eq!(posted.status, 201, "{posted:?}");
    api.wait_status(&task, &session, "idle");
    let spans = collector.wait_for("the second turn's end", |spans| {
        ended_turns(spans).len() == 2
    });
    let second = ended_turns(&spans)[1];
    let input = second.attribute("gen_ai.input.messages").as_str().unwrap();
    assert!(input.contains("PROMPT-9c4d"), "{input}");
    let output = second.attribute("gen_ai.output.messages").as_str().unwrap();
    assert!(output.contains("renamed again"), "{output}");

    // A code task's turn belongs under its request too.
    let repo = world.path("repo").display().to_string();
    api.environment(json!({"name": "app", "repository": repo}));
    let code_trace = "0af7651916cd43dd8448eb211c80319c";
    let ended = support::agent()
        .post(&server.url("/api/runs/run-traced/tasks?wait=true"))
        .header("Authorization", &format!("Bearer {token}"))
        .header(
            "traceparent",
            &format!("00-{code_trace}-b7ad6b7169203331-01"),
        )
        .send_json(json!({"brief": "Work.", "harness": "claude", "repo": "app"}))
        .unwrap();
    assert_eq!(ended.status(), 201);
    // Its request ends after its turn, answered with the result.
    let spans = collector.wait_for("the code task's turn and request", |spans| {
        ended_turns(spans).len() == 3
            && spans
                .iter()
                .any(|span| span.name == "POST /api/runs/{run}/tasks")
    });
    let request = spans
        .iter()
        .find(|span| span.name == "POST /api/runs/{run}/tasks")
        .unwrap_or_else(|| panic!("no span of the code task's request: {spans:#?}"));
    assert_eq!(request.trace_id, code_trace);
    let turn = ended_turns(&spans)[2];
    assert_eq!(
        (turn.trace_id.as_str(), turn.parent_span_id.as_str()),
        (code_trace, request.span_id.as_str())
    );
    assert_eq!(turn.attribute("cinch.run.id"), "run-traced");
}

/// The server process's resident memory, in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The clients' connections the server process holds open: its sockets
/// whose local end is the server's port (the listening one aside). Its
/// database connections, which a PostgreSQL pool opens as it needs them,
/// are not counted.
fn client_connections(server: &support::Server) -> usize {
    let port = server
        .base
        .rsplit(':')
        .next()
        .unwrap()
        .parse::<u16>()
        .unwrap();
    let mut inodes = std::collections::HashSet::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let local_port = fields[1].rsplit(':').next().unwrap();
            let listening = fields[3] == "0A";
            if u16::from_str_radix(local_port, 16) == Ok(port) && !listening {
                inodes.insert(format!("socket:[{}]", fields[9]));
            }
        }
    }
    std::fs::read_dir(format!("/proc/{}/fd", server.child.id()))
        .unwrap()
        .filter_map(|entry| std::fs::read_link(entry.ok()?.path()).ok())
        .filter(|target| inodes.contains(target.to_string_lossy().as_ref()))
        .count()
}

/// A connection to `server` whose socket holds at most about
/// `receive_buffer` bytes its reader has not read: a stalled reader's
/// kernel keeps little, so what piles up is the server's.
fn connect(server: &support::Server, receive_buffer: Option<i32>) -> std::net::TcpStream {
    use std::os::fd::FromRawFd as _;
    let address: std::net::SocketAddrV4 =
        server.base.trim_start_matches("http://").parse().unwrap();
    // SAFETY: a new socket, set up and connected by its descriptor, then owned.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "{}", std::io::Error::last_os_error());
        if let Some(size) = receive_buffer {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUF,
                (&raw const size).cast(),
                size_of::<i32>() as libc::socklen_t,
            );
        }
        let to = libc::sockaddr_in {
            sin_family: libc::AF_INET as libc::sa_family_t,
            sin_port: address.port().to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from(*address.ip()).to_be(),
            },
            sin_zero: [0; 8],
        };
        let connected = libc::connect(
            fd,
            (&raw const to).cast(),
            size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        let stream = std::net::TcpStream::from_raw_fd(fd);
        assert_eq!(connected, 0, "{}", std::io::Error::last_os_error());
        stream
    }
}

/// Whether the server closed `stream`: what it sent is read (and dropped)
/// without waiting, then an end or an error means closed.
fn closed_by_server(stream: &mut std::net::TcpStream) -> bool {
    use std::io::Read as _;
    stream.set_nonblocking(true).unwrap();
    let mut buffer = [0u8; 16 << 10];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => return false,
            Err(_) => return true,
        }
    }
}

/// Median and slowest of `rounds` answers to `GET path`, each on a new
/// connection, in milliseconds.
fn latency(server: &support::Server, path: &str, token: Option<&str>, rounds: usize) -> (f64, f64) {
    let mut took: Vec<f64> = (0..rounds)
        .map(|_| {
            let started = std::time::Instant::now();
            let answer = server.request("GET", path, token, None);
            assert_eq!(answer.status, 200, "{answer:?}\n{}", server.log());
            started.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    took.sort_by(f64::total_cmp);
    (took[rounds / 2], took[rounds - 1])
}

#[test]
fn clients_sending_their_headers_slowly_are_cut_off_while_others_are_served() {
    let _machine = gate::hold(Load::Machine);
    let world = World::new();
    world.configure("header_timeout_seconds = 4");
    let server = world.serve();
    let token = world.admin_token();
    let health_before = latency(&server, "/healthz", None, 20);
    let accounts_before = latency(&server, "/v1/accounts", Some(&token), 20);

    // 200 clients trickle a request's head, a byte a second: 40 seconds' worth.
    use std::io::Write as _;
    let head = format!(
        "GET /v1/accounts HTTP/1.1\r\nHost: cinch\r\nX-Slow: {}\r\n\r\n",
        "s".repeat(4)
    );
    let started = std::time::Instant::now();
    let mut slow: Vec<(std::net::TcpStream, Option<std::time::Duration>)> =
        (0..200).map(|_| (connect(&server, None), None)).collect();
    let mut sent = 0;
    let mut health_during = None;
    let mut accounts_during = None;
    while slow.iter().any(|(_, cut)| cut.is_none()) && started.elapsed().as_secs() < 20 {
        for (stream, cut) in slow.iter_mut().filter(|(_, cut)| cut.is_none()) {
            let gone = closed_by_server(stream)
                || (sent < head.len() && stream.write_all(&head.as_bytes()[sent..=sent]).is_err());
            if gone {
                *cut = Some(started.elapsed());
            }
        }
        sent += 1;
        if health_during.is_none() && started.elapsed().as_secs() >= 1 {
            // While every slow client still holds its connection.
            health_during = Some(latency(&server, "/healthz", None, 20));
            accounts_during = Some(latency(&server, "/v1/accounts", Some(&token), 20));
        }
        std::thread::sleep(std::time::Duration::from_millis(1000));
    }
    let cut: Vec<f64> = slow
        .iter()
        .map(|(_, cut)| cut.map_or(f64::INFINITY, |cut| cut.as_secs_f64()))
        .collect();
    let latest = cut.iter().copied().fold(0.0, f64::max);
    let earliest = cut.iter().copied().fold(f64::INFINITY, f64::min);
    eprintln!(
        "slow headers: 200 cut off between {earliest:.1} and {latest:.1} s (header timeout 4 s, {sent} bytes of {} sent)",
        head.len()
    );
    assert!(
        latest <= 7.0,
        "slow clients were not all cut off within the header timeout: {cut:?}"
    );
    assert!(
        earliest >= 3.0,
        "cut off before the header timeout: {cut:?}"
    );
    let (health_during, accounts_during) = (health_during.unwrap(), accounts_during.unwrap());
    eprintln!(
        "latency (median, slowest ms) without slow clients: /healthz {health_before:.1?}, /v1/accounts {accounts_before:.1?}; with 200 hanging: /healthz {health_during:.1?}, /v1/accounts {accounts_during:.1?}"
    );
    assert!(health_during.1 < 1000.0 && accounts_during.1 < 1000.0);
    assert_eq!(
        client_connections(&server),
        0,
        "connections held after the slow clients were cut off"
    );
}

#[test]
fn connections_past_the_cap_are_refused_at_once_and_healthz_still_answers() {
    let _machine = gate::hold(Load::Machine);
    let world = World::new();
    world.configure("max_connections = 20\nheader_timeout_seconds = 30");
    let server = world.serve();
    // 150 clients that connect and send nothing: 20 are served, 64 more
    // get a moment to send a request, the rest are told to come back.
    use std::io::Read as _;
    let mut idle: Vec<std::net::TcpStream> = (0..150).map(|_| connect(&server, None)).collect();
    std::thread::sleep(std::time::Duration::from_millis(500));
    let mut refused = 0;
    for stream in &mut idle {
        stream.set_nonblocking(true).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let answer = String::from_utf8_lossy(&answer);
        if !answer.is_empty() {
            assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
            assert!(answer.contains("retry-after: 1"), "{answer}");
            assert!(
                answer.contains("urn:cinch:too_many_connections"),
                "{answer}"
            );
            refused += 1;
        }
    }
    // One more may be refused while the start-up probe's own connection is
    // still counted (seen once on a loaded 2-core machine: 67).
    assert!(
        (150 - 20 - 64..=150 - 20 - 64 + 1).contains(&refused),
        "{refused} connections past the cap and its overflow refused, not 66"
    );
    let held = client_connections(&server);
    assert!(
        held <= 20 + 64,
        "{held} connections held for 150 idle clients"
    );
    // Past the cap, a connection gets two seconds for its request: then a
    // health probe is served, the cap's 20 idle clients still connected.
    std::thread::sleep(std::time::Duration::from_millis(2500));
    let started = std::time::Instant::now();
    let health = server.request("GET", "/healthz", None, None);
    assert_eq!(health.status, 200, "{health:?}");
    eprintln!(
        "past the cap: {refused} of 150 refused at once, {held} connections held, /healthz in {:.1} ms",
        started.elapsed().as_secs_f64() * 1000.0
    );
    let still_held = idle
        .iter_mut()
        .map(closed_by_server)
        .filter(|closed| !closed)
        .count();
    assert_eq!(
        still_held,
        150 - refused - 64,
        "the cap's connections wait for their header timeout"
    );
}

/// A tick of the fake CLI as claude writes an assistant message: one
/// progress line each.
const TICK: &str = r#"{"type":"assistant","session_id":"s-long","message":{"content":[{"type":"text","text":"tick {n} of a long turn, a line of some length as harnesses write them"}]}}"#;

/// Sends a request for the SSE stream at `path` on `stream`.
fn ask_events(
    stream: &mut std::net::TcpStream,
    path: &str,
    token: &str,
    last_event_id: Option<u64>,
) {
    use std::io::Write as _;
    let resume = last_event_id.map_or(String::new(), |id| format!("Last-Event-ID: {id}\r\n"));
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: cinch\r\nAuthorization: Bearer {token}\r\n{resume}\r\n"
    )
    .unwrap();
}

/// The ids of the whole events in what a stream sent (an event cut off
/// midway, without its closing blank line, does not count).
fn event_ids(sent: &[u8]) -> Vec<u64> {
    let text = String::from_utf8_lossy(sent);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    // Chunked: the events' lines, between chunk sizes.
    let mut ids = Vec::new();
    let mut id = None;
    let mut data = false;
    for line in body.split('\n') {
        let line = line.trim_end_matches('\r');
        if let Some(value) = line.strip_prefix("id:") {
            id = value.trim().parse().ok();
        } else if line.starts_with("data:") {
            data = true;
        } else if line.is_empty() {
            if let (Some(seen), true) = (id.take(), data) {
                ids.push(seen);
            }
            data = false;
        }
    }
    ids
}

/// Reads `stream` until it ends or sends nothing for `quiet`.
fn read_until_quiet(
    stream: &mut std::net::TcpStream,
    quiet: std::time::Duration,
) -> (Vec<u8>, bool) {
    use std::io::Read as _;
    stream.set_nonblocking(false).unwrap();
    stream.set_read_timeout(Some(quiet)).unwrap();
    let mut sent = Vec::new();
    let mut buffer = [0u8; 64 << 10];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) => return (sent, true),
            Ok(read) => sent.extend_from_slice(&buffer[..read]),
            Err(error)
                if matches!(
                    error.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                return (sent, false);
            }
            Err(_) => return (sent, true),
        }
    }
}

#[test]
fn stalled_event_readers_hold_little_are_cut_off_and_resume_exactly_once() {
    let _machine = gate::hold(Load::Machine);
    let world = World::new();
    world.configure("idle_timeout_seconds = 20");
    // A turn of 30,000 lines, a few to an event as they come.
    world.script(Script {
        lines: vec![claude_turn("s-long", "done")[0].clone()],
        lines_per_second: Some(3000.0),
        duration_ms: 10_000,
        tick_line: Some(TICK.to_owned()),
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "long", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Talk at length.");
    api.wait(&task, &session, "its long turn's end", |session| {
        session["status"] == "idle" || session["status"] == "closed"
    });
    let path = api.path(&format!("/tasks/{task}/sessions/{session}/events"));
    let quiet = std::time::Duration::from_millis(1500);
    let whole = {
        let mut reader = connect(&server, None);
        ask_events(&mut reader, &path, &token, None);
        event_ids(&read_until_quiet(&mut reader, quiet).0)
    };
    assert!(whole.len() > 5_000, "{} events", whole.len());
    assert!(whole.windows(2).all(|pair| pair[0] < pair[1]));

    let pid = server.child.id();
    let memory_before = resident_kib(pid);
    let readers = 300;
    let mut stalled: Vec<std::net::TcpStream> = (0..readers)
        .map(|_| {
            let mut reader = connect(&server, Some(4096));
            ask_events(&mut reader, &path, &token, None);
            reader
        })
        .collect();
    // Every reader has been answered (300 requests at once take seconds
    // to authenticate), then sent what its socket takes, and no more.
    let opened = std::time::Instant::now();
    for reader in &mut stalled {
        reader.set_nonblocking(true).unwrap();
        while !reader.peek(&mut [0u8; 1]).is_ok_and(|read| read > 0) {
            assert!(opened.elapsed().as_secs() < 60, "a stream never started");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    eprintln!(
        "{readers} streams started in {:.1} s",
        opened.elapsed().as_secs_f64()
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    let memory_stalled = resident_kib(pid);
    let health = latency(&server, "/healthz", None, 20);
    let per_reader = (memory_stalled.saturating_sub(memory_before)) as f64 / readers as f64;
    eprintln!(
        "stalled readers: {} events of history; server {memory_before} KiB before, {memory_stalled} KiB with {readers} stalled ({per_reader:.0} KiB each); /healthz meanwhile (median, slowest ms) {health:.1?}",
        whole.len()
    );
    // A stream that copied the whole history into its queue held 32 bytes
    // an event, for each reader.
    let copied = (whole.len() * 32) as f64 / 1024.0;
    assert!(
        per_reader < copied / 2.0,
        "{per_reader:.0} KiB held by each stalled reader (the whole history's copy: {copied:.0} KiB)"
    );
    assert!(health.1 < 2000.0);

    // None reads for the idle timeout: each is cut off, and what it was
    // sent ends before the end of the history.
    std::thread::sleep(std::time::Duration::from_secs(20));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut sent_before_cut = Vec::new();
    for reader in &mut stalled {
        let (sent, ended) = read_until_quiet(
            reader,
            deadline
                .saturating_duration_since(std::time::Instant::now())
                .max(std::time::Duration::from_millis(10)),
        );
        assert!(ended, "a stalled reader was not cut off");
        sent_before_cut.push(sent);
    }
    // Closed on the server's side too, soon after.
    let closing = std::time::Instant::now();
    while client_connections(&server) > 0 && closing.elapsed().as_secs() < 10 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let memory_after = resident_kib(pid);
    eprintln!("after they were cut off: {memory_after} KiB");
    assert_eq!(
        client_connections(&server),
        0,
        "connections held after the readers were cut off"
    );
    drop(stalled);

    // One resumes where its stream was cut, and gets every event once, in order.
    let first = event_ids(&sent_before_cut[0]);
    assert!(
        !first.is_empty() && first.len() < whole.len(),
        "{} events",
        first.len()
    );
    let mut resumed = connect(&server, None);
    ask_events(&mut resumed, &path, &token, first.last().copied());
    let rest = event_ids(&read_until_quiet(&mut resumed, quiet).0);
    let together: Vec<u64> = first.iter().chain(&rest).copied().collect();
    assert_eq!(together.len(), whole.len());
    assert!(
        together == whole,
        "the resumed stream lost or repeated events"
    );
}

/// A small file system mounted over a folder until dropped (root only).
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    /// Mounts `mib` MiB of tmpfs at `dir`; none when this process may not.
    fn mount(dir: &std::path::Path, mib: u64) -> Option<Self> {
        // SAFETY: geteuid reads the process's effective user.
        if unsafe { libc::geteuid() } != 0 {
            return None;
        }
        let mounted = std::process::Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={mib}m,mode=0700"),
                "tmpfs",
            ])
            .arg(dir)
            .status()
            .unwrap();
        assert!(mounted.success(), "mount tmpfs at {}", dir.display());
        Some(Self(dir.to_owned()))
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .status();
    }
}

/// Writes zeros to `path` until the disk is full.
fn fill(path: &std::path::Path) {
    use std::io::Write as _;
    let mut file = std::fs::File::create(path).unwrap();
    let block = vec![0u8; 1 << 20];
    while file.write_all(&block).is_ok() {}
    let small = [0u8; 4096];
    while file.write_all(&small).is_ok() {}
    let _ = file.sync_all();
}

#[test]
fn a_full_disk_is_said_where_the_turn_is_read_and_in_the_health_and_then_passes() {
    let world = World::new();
    // cinch's home on a disk of its own, 64 MiB: the compiled drivers stay
    // outside it (a link to the tests' shared cache), as in every world.
    let home = world.path("home");
    let components = std::fs::read_link(home.join("cache/components")).unwrap();
    let Some(_disk) = Tmpfs::mount(&home, 64) else {
        eprintln!("SKIPPED: mounting a small disk for cinch's home needs root (CI runs as root)");
        return;
    };
    std::fs::create_dir_all(home.join("cache")).unwrap();
    std::os::unix::fs::symlink(&components, home.join("cache/components")).unwrap();
    world.configure("min_free_disk_mib = 16");
    // A turn that writes a few lines over five seconds, its result last:
    // time enough to fill the disk before it ends, however loaded the machine.
    world.script(slow_turn("s-disk", 11, 500));
    // The database elsewhere (PostgreSQL's, or a SQLite file beside the
    // home), as the README advises: it records what went wrong.
    let database = world.path("cinch.db").display().to_string();
    let server = match world.database {
        Some(_) => world.serve(),
        None => world.serve_with(&["--database", &database]),
    };
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let health = server.request("GET", "/healthz", None, None);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.json()["status"], "ok", "{health:?}");
    assert_eq!(health.json()["disk"]["state"], "ok", "{health:?}");
    assert_eq!(health.json()["disk"]["total_bytes"], 64 << 20, "{health:?}");
    let page = metrics_page(&server);
    assert_eq!(
        sample(&page, "cinch_home_disk_size_bytes", &[]),
        Some(f64::from(64 << 20)),
        "{page}"
    );
    let free = sample(&page, "cinch_home_disk_free_bytes", &[]).unwrap();
    assert!(free > f64::from(16 << 20), "{page}");

    let repo = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "small", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Work.");
    api.wait_turn_message(&task, &session);
    // The disk fills while the turn runs: its result cannot be written.
    let ballast = home.join("ballast");
    fill(&ballast);
    let full = server.request("GET", "/healthz", None, None);
    assert_eq!(full.status, 503, "{full:?}");
    assert_eq!(full.json()["status"], "unavailable", "{full:?}");
    assert_eq!(full.json()["disk"]["state"], "full", "{full:?}");
    let page = metrics_page(&server);
    let free = sample(&page, "cinch_home_disk_free_bytes", &[]).unwrap();
    assert!(free < f64::from(1 << 20), "{page}");
    let ended = api.wait(&task, &session, "its turn's end", |session| {
        session["status"] != "running"
    });
    let said = ended["error_message"].as_str().unwrap_or_default();
    assert!(said.contains("no space left on device"), "{ended:#}");
    let turn = support::assistant(&api.messages(&task, &session, "").data());
    let detail = turn["turn"]["result"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("no space left on device"), "{turn:#}");

    // Room again: the next turn runs, and the health says so.
    std::fs::remove_file(&ballast).unwrap();
    let health = server.request("GET", "/healthz", None, None);
    assert_eq!(health.status, 200, "{health:?}");
    assert_eq!(health.json()["disk"]["state"], "ok", "{health:?}");
    world.script(slow_turn("s-disk", 3, 10));
    let posted = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Again."}),
    );
    assert_eq!(posted.status, 201, "{posted:?}");
    let done = api.wait(&task, &session, "its next turn's end", |session| {
        session["status"] == "idle" && session["error_message"].is_null()
    });
    assert_eq!(done["close_reason"], Value::Null, "{done:#}");
    let turn = support::assistant(&api.messages(&task, &session, "").data());
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
}

#[test]
fn a_turn_that_ended_while_the_database_disk_was_full_is_recorded_once_there_is_room() {
    let world = World::new();
    if world.database.is_some() {
        // PostgreSQL keeps its data elsewhere: the test above covers it.
        return;
    }
    // The SQLite database in the home, on the disk that fills.
    let home = world.path("home");
    let components = std::fs::read_link(home.join("cache/components")).unwrap();
    let Some(_disk) = Tmpfs::mount(&home, 64) else {
        eprintln!("SKIPPED: mounting a small disk for cinch's home needs root (CI runs as root)");
        return;
    };
    std::fs::create_dir_all(home.join("cache")).unwrap();
    std::os::unix::fs::symlink(&components, home.join("cache/components")).unwrap();
    world.configure("min_free_disk_mib = 16");
    world.script(slow_turn("s-disk", 11, 500));
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "small", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Work.");
    api.wait_turn_message(&task, &session);
    let ballast = home.join("ballast");
    fill(&ballast);
    let full = server.request("GET", "/healthz", None, None);
    assert_eq!(full.status, 503, "{full:?}");
    assert_eq!(full.json()["disk"]["state"], "full", "{full:?}");
    // The turn ends (five seconds of lines) while nothing can be recorded.
    std::thread::sleep(std::time::Duration::from_secs(7));
    assert_eq!(api.session(&task, &session)["status"], "running");

    std::fs::remove_file(&ballast).unwrap();
    let ended = api.wait(&task, &session, "its turn's end, recorded", |session| {
        session["status"] != "running"
    });
    let said = ended["error_message"].as_str().unwrap_or_default();
    assert!(said.contains("no space left on device"), "{ended:#}");
    let turn = support::assistant(&api.messages(&task, &session, "").data());
    let detail = turn["turn"]["result"]["detail"]
        .as_str()
        .unwrap_or_default();
    assert!(detail.contains("no space left on device"), "{turn:#}");
    // Its result is kept too, once there is room (the session's usage
    // counts turns by their stored results).
    assert_eq!(ended["usage"]["turns"], 1, "{ended:#}");
    world.script(slow_turn("s-disk", 3, 10));
    let posted = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Again."}),
    );
    assert_eq!(posted.status, 201, "{posted:?}");
    let done = api.wait(&task, &session, "its next turn's end", |session| {
        session["status"] == "idle" && session["error_message"].is_null()
    });
    assert_eq!(done["close_reason"], Value::Null, "{done:#}");
}

/// The tick numbers of the `tool.progress` lines of `events`, in order.
fn ticks_of(events: &[(u64, String, Value)]) -> Vec<u64> {
    events
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .flat_map(|(_, _, data)| data["lines"].as_array().cloned().unwrap_or_default())
        .filter_map(|line| {
            let text = line.as_str()?.to_owned();
            text.strip_prefix("tick ")?.split(' ').next()?.parse().ok()
        })
        .collect()
}

#[test]
fn a_long_turn_holds_little_memory_and_late_streams_get_every_line_once_in_order() {
    let _machine = gate::hold(Load::Machine);
    let world = World::new();
    let lines: u64 = 60_000;
    world.script(Script {
        lines: vec![claude_turn("s-long", "done")[0].clone()],
        lines_per_second: Some(6000.0),
        duration_ms: lines * 1000 / 6000,
        tick_line: Some(TICK.to_owned()),
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let api = support::Api::new(&server, &token);
    let repo = world.path("repo").display().to_string();
    let environment = api.environment(json!({"name": "long", "repository": repo}));
    let (task, session) = api.task_on(&environment, "Talk at length.");
    let path = api.path(&format!("/tasks/{task}/sessions/{session}/events"));
    let ended = |events: &[(u64, String, Value)]| {
        events
            .last()
            .is_some_and(|(_, name, _)| name == "tool.ended")
    };

    // A stream opened once a quarter of the turn is out: it reads the start
    // from the store, then the rest live.
    let pid = server.child.id();
    let quarter = server.stream(&path, &token, None, |events| {
        ticks_of(events).len() as u64 >= lines / 4
    });
    let memory_early = resident_kib(pid);
    let late = server.stream(&path, &token, None, ended);
    let memory_late = resident_kib(pid);
    eprintln!(
        "{} events before a quarter; server {memory_early} KiB then, {memory_late} KiB at the end",
        quarter.len()
    );
    let all: Vec<u64> = (1..=lines).collect();
    assert_eq!(
        ticks_of(&late),
        all,
        "the late stream lost, repeated or reordered lines"
    );
    let ids: Vec<u64> = late.iter().map(|(id, _, _)| *id).collect();
    assert!(
        ids.windows(2).all(|pair| pair[1] == pair[0] + 1),
        "ids not consecutive"
    );

    // Once it has ended: from the start, and resumed from an event long
    // gone from memory, every line once, in order.
    let whole = server.stream(&path, &token, None, ended);
    assert_eq!(ticks_of(&whole), all);
    let (resume_at, _, _) = whole[whole.len() / 3].clone();
    let resumed = server.stream(&path, &token, Some(resume_at), ended);
    assert_eq!(resumed.first().map(|(id, _, _)| *id), Some(resume_at + 1));
    let before: Vec<(u64, String, Value)> = whole
        .iter()
        .filter(|(id, _, _)| *id <= resume_at)
        .cloned()
        .collect();
    let together: Vec<u64> = ticks_of(&before)
        .into_iter()
        .chain(ticks_of(&resumed))
        .collect();
    assert_eq!(together, all, "the resumed stream lost or repeated lines");

    // Three quarters of the turn's lines (45,000) came after the first
    // measure: a server holding them all (the turn's events and its run's,
    // about 0.5 KiB a line in all) grew by 23 MiB; one holding the newest
    // grows only by its caches (SQLite's pages among them, the allocator's
    // arenas), 1 to 9 MiB in runs here.
    let grown = memory_late.saturating_sub(memory_early);
    assert!(
        grown < 15 * 1024,
        "the server grew by {grown} KiB over 45,000 lines of one turn"
    );
}
