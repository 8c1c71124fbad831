//! Event types a driver does not know: counted by type in a turn's result
//! (non-JSON lines apart), and kept server-wide per driver and CLI version
//! with when each was first seen. Over HTTP against a real `cinch serve` with
//! a real SQLite file and the fake CLI as the harness; `cinch run --json`,
//! `cinch turns` and `cinch drivers --seen` on the command line.

use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// A claude turn whose CLI, between its start and its result, writes two
/// lines of a type the claude driver does not know, one of a `system`
/// subtype it does not know, and a line that is not JSON.
fn turn_with_unknown_events(session: &str, version: &str) -> Script {
    let mut lines = claude_turn(session, "done");
    let result = lines.pop().unwrap();
    lines.extend([
        json!({"type": "brand_new_event", "session_id": session, "detail": {"x": 1}}),
        json!({"type": "brand_new_event", "session_id": session}),
        json!({"type": "system", "subtype": "fresh_subtype", "session_id": session}),
        Value::String("Warning: this line is not JSON".into()),
        result,
    ]);
    Script {
        version: version.to_owned(),
        lines,
        ..Script::default()
    }
}

/// The claude driver's entry in `GET /v1/drivers`.
fn claude_driver(server: &Server, token: &str) -> Value {
    let drivers = server.get("/v1/drivers", token);
    assert_eq!(drivers.status, 200, "{drivers:?}");
    drivers
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|driver| driver["name"] == "claude")
        .unwrap_or_else(|| panic!("no claude driver: {drivers:?}"))
        .clone()
}

/// Waits until the session is idle with `count` ended turns; the turns.
fn ended_turns(api: &Api, task: &str, session: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = api.session(task, session);
        let turns: Vec<Value> = api
            .walk(task, session, "asc", 200)
            .into_iter()
            .filter(|message| message["type"] == "assistant")
            .collect();
        if now["status"] == "idle"
            && turns.len() == count
            && turns.iter().all(|turn| turn["turn"]["status"] != "running")
        {
            return turns;
        }
        assert!(
            Instant::now() < deadline,
            "the session never ended {count} turns: {now:#}\n{}",
            api.server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn unknown_events_are_counted_per_turn_and_listed_per_cli_version_with_first_seen() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);

    // Before any turn: every driver is listed, none has seen anything.
    let before = server.get("/v1/drivers", &token);
    assert_eq!(before.status, 200, "{before:?}");
    let names: Vec<Value> = before
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|driver| driver["name"].clone())
        .collect();
    assert_eq!(names, ["acp", "claude", "codex", "cursor", "gemini"]);
    let claude = claude_driver(&server, &token);
    assert_eq!(claude["display_name"], "Claude Code");
    assert_eq!(claude["source"], "builtin");
    assert_eq!(claude["contract_version"], "0.3.0");
    assert_eq!(claude["cli_versions"], json!([]));
    assert_eq!(server.get("/v1/drivers", "not-a-token").status, 401);

    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    world.script(turn_with_unknown_events("sess-unk", "fake-cli 1.2.3"));
    let created = api.post(
        "/tasks",
        json!({"prompt": "Work", "environment_id": environment, "harness": "claude"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let first = ended_turns(&api, &task, &session, 1);
    let result = &first[0]["turn"]["result"];
    assert_eq!(first[0]["turn"]["status"], "completed", "{result:#}");
    assert_eq!(
        result["unknown_events"],
        json!({"brand_new_event": 2, "system/fresh_subtype": 1}),
        "{result:#}"
    );
    assert_eq!(result["not_json_lines"], 1, "{result:#}");
    assert_eq!(result["cli_version"], "1.2.3", "{result:#}");

    let claude = claude_driver(&server, &token);
    let versions = claude["cli_versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{claude:#}");
    assert_eq!(versions[0]["cli_version"], "1.2.3");
    let seen = versions[0]["unknown_events"].as_array().unwrap();
    let types: Vec<(&str, u64)> = seen
        .iter()
        .map(|event| {
            (
                event["type"].as_str().unwrap(),
                event["count"].as_u64().unwrap(),
            )
        })
        .collect();
    // The line that is not JSON is no unknown event.
    assert_eq!(types, [("brand_new_event", 2), ("system/fresh_subtype", 1)]);
    let first_seen = seen[0]["first_seen"].as_str().unwrap().to_owned();
    assert!(
        time::OffsetDateTime::parse(&first_seen, &time::format_description::well_known::Rfc3339)
            .is_ok(),
        "{first_seen}"
    );
    // Nothing beyond the type, when and how often: no account, turn or line.
    let keys: Vec<&String> = seen[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["count", "first_seen", "type"]);

    // A second turn: counts grow, the first sighting stays.
    std::thread::sleep(Duration::from_millis(20));
    world.script(turn_with_unknown_events("sess-unk", "fake-cli 1.2.3"));
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Again"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let both = ended_turns(&api, &task, &session, 2);
    assert_eq!(
        both[1]["turn"]["result"]["unknown_events"],
        json!({"brand_new_event": 2, "system/fresh_subtype": 1})
    );
    let claude = claude_driver(&server, &token);
    let versions = claude["cli_versions"].as_array().unwrap();
    assert_eq!(versions.len(), 1, "{claude:#}");
    let seen = &versions[0]["unknown_events"];
    assert_eq!(seen[0]["type"], "brand_new_event");
    assert_eq!(seen[0]["first_seen"], first_seen.as_str(), "{claude:#}");
    assert_eq!(seen[0]["count"], 4, "{claude:#}");
    assert_eq!(seen[1]["count"], 2, "{claude:#}");

    // A new CLI release that prints the same type: listed under its version.
    // An upgrade replaces the CLI's files, which is what tells the server to
    // ask its version again.
    let cli = world.path("bin/claude");
    std::fs::remove_file(&cli).unwrap();
    std::fs::copy(cinch_fake_cli::binary_path(), &cli).unwrap();
    world.script(turn_with_unknown_events("sess-unk", "fake-cli 1.3.0"));
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Once more"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    ended_turns(&api, &task, &session, 3);
    let claude = claude_driver(&server, &token);
    let versions: Vec<&str> = claude["cli_versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|version| version["cli_version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["1.2.3", "1.3.0"], "{claude:#}");
    assert_eq!(claude["cli_versions"][0]["unknown_events"][0]["count"], 4);
    assert_eq!(claude["cli_versions"][1]["unknown_events"][0]["count"], 2);

    // Drivers are the server's: another account reads the same list.
    let (_, other_token) = world.second_account();
    assert_eq!(
        claude_driver(&server, &other_token)["cli_versions"],
        claude["cli_versions"]
    );

    // `cinch drivers --seen` reads the same from the home's database.
    let listed = world.cinch().args(["drivers", "--seen"]).output().unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let text = String::from_utf8_lossy(&listed.stdout);
    let row = text
        .lines()
        .find(|line| {
            line.starts_with("claude") && line.contains("1.2.3") && line.contains("brand_new_event")
        })
        .unwrap_or_else(|| panic!("no row: {text}"));
    assert!(
        row.contains(&first_seen) && row.trim_end().ends_with(" 4"),
        "{row}"
    );
    let json_listed = world
        .cinch()
        .args(["drivers", "--seen", "--json"])
        .output()
        .unwrap();
    let json_listed: Value = serde_json::from_slice(&json_listed.stdout).unwrap();
    assert_eq!(
        json_listed,
        json!([{"name": "claude", "cli_versions": claude["cli_versions"]}])
    );
}

#[test]
fn the_openapi_document_describes_the_drivers_and_the_results_counts() {
    let world = World::new();
    let server = world.serve();
    let document = server.request("GET", "/openapi.json", None, None).json();
    let drivers = &document["paths"]["/v1/drivers"]["get"];
    assert!(drivers["responses"]["200"].is_object(), "{drivers}");
    assert!(drivers["responses"]["401"].is_object(), "{drivers}");
    let schemas = &document["components"]["schemas"];
    for (schema, fields) in [
        (
            "DriverView",
            &[
                "name",
                "display_name",
                "program",
                "contract_version",
                "source",
                "cli_versions",
            ][..],
        ),
        ("CliVersionSeen", &["cli_version", "unknown_events"][..]),
        ("UnknownEventSeen", &["type", "first_seen", "count"][..]),
        (
            "TaskResult",
            &["cli_version", "unknown_events", "not_json_lines"][..],
        ),
    ] {
        for field in fields {
            assert!(
                schemas[schema]["properties"][field].is_object(),
                "{schema}.{field}: {:#}",
                schemas[schema]
            );
        }
    }
    assert_eq!(
        schemas["TaskResult"]["properties"]["unknown_events"]["additionalProperties"]["type"],
        "integer"
    );
}

#[test]
fn a_code_tasks_result_counts_unknown_events_and_not_json_lines() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    api.environment(json!({
        "name": "app",
        "repository": world.path("repo").display().to_string(),
    }));
    world.script(turn_with_unknown_events("sess-code", "fake-cli 1.2.3"));
    let path = "/api/runs/run-unknown/tasks";
    let ended = server.post(
        &format!("{path}?wait=true"),
        &token,
        &json!({"brief": "Work.", "harness": "claude", "repo": "app"}),
    );
    assert_eq!(ended.status, 201, "{ended:?}\n{}", server.log());
    let task = ended.json();
    let call = task["call_id"].as_str().unwrap();
    let read = server.get(&format!("{path}/{call}"), &token).json();
    for result in [&task["result"], &read["result"]] {
        assert_eq!(
            result["unknown_events"],
            json!({"brand_new_event": 2, "system/fresh_subtype": 1}),
            "{result:#}"
        );
        assert_eq!(result["not_json_lines"], 1);
        assert_eq!(result["cli_version"], "1.2.3");
    }
    let claude = claude_driver(&server, &token);
    assert_eq!(
        claude["cli_versions"][0]["unknown_events"][0]["count"], 2,
        "{claude:#}"
    );
}

#[test]
fn cinch_run_and_turns_show_a_turns_unknown_events() {
    let world = World::new();
    // A turn without any: nothing to show.
    world.script(Script {
        lines: claude_turn("sess-clean", "done"),
        ..Script::default()
    });
    let clean = run_json(&world);
    assert_eq!(clean["unknown_events"], json!({}));
    assert_eq!(clean["not_json_lines"], 0);
    let listed = world.cinch().args(["turns"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(!listed.contains("unknown:"), "{listed}");

    world.script(turn_with_unknown_events("sess-cli", "fake-cli 1.2.3"));
    let result = run_json(&world);
    assert_eq!(
        result["unknown_events"],
        json!({"brand_new_event": 2, "system/fresh_subtype": 1})
    );
    assert_eq!(result["not_json_lines"], 1);
    assert_eq!(result["cli_version"], "1.2.3");
    let listed = world.cinch().args(["turns"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains("unknown: brand_new_event ×2, system/fresh_subtype ×1"),
        "{listed}"
    );
    let json = world.cinch().args(["turns", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json[0]["unknown_events"]["brand_new_event"], 2);
}

/// `cinch run --json` in the world's repository: its result.
fn run_json(world: &World) -> Value {
    let run = world
        .cinch()
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.path("repo"))
        .arg("Work")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    serde_json::from_slice(
        run.stdout
            .split(|byte| *byte == b'\n')
            .rfind(|line| line.starts_with(b"{"))
            .unwrap(),
    )
    .unwrap()
}

/// A claude turn on a CLI outside the versions config.toml says its driver
/// was tested with: it runs, and its result, `GET /v1/drivers`, `/metrics`
/// and `cinch check` report the drift; the tested range of a built-in comes
/// with cinch (`GET /v1/drivers` names it for every harness).
#[test]
fn a_turn_on_a_cli_outside_the_tested_range_reports_the_drift() {
    let world = World::new();
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[harness.claude]\ntested = \">=1.0.0, <1.1.0\"\n",
            world.operator_config()
        ),
    )
    .unwrap();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);

    // Before any turn: the range is stated, no version has run.
    let claude = claude_driver(&server, &token);
    let harnesses = claude["harnesses"].as_array().unwrap();
    assert_eq!(harnesses.len(), 1, "{claude:#}");
    assert_eq!(harnesses[0]["name"], "claude");
    assert_eq!(harnesses[0]["package"], "npm:@anthropic-ai/claude-code");
    assert_eq!(harnesses[0]["tested_versions"], ">=1.0.0, <1.1.0");
    assert_eq!(harnesses[0]["pinned_version"], Value::Null);
    assert_eq!(harnesses[0]["cli_versions_run"], json!([]));
    let drivers = server.get("/v1/drivers", &token).data();
    let acp = drivers
        .as_array()
        .unwrap()
        .iter()
        .find(|driver| driver["name"] == "acp")
        .unwrap();
    let opencode = acp["harnesses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|harness| harness["name"] == "opencode")
        .unwrap_or_else(|| panic!("no opencode under acp: {acp:#}"));
    assert_eq!(opencode["package"], "npm:opencode-ai");
    assert_eq!(opencode["tested_versions"], ">=1.18.0, <1.19.0");
    let metrics = server.request("GET", "/metrics", None, None);
    assert!(
        !metrics.text.contains("cinch_turns_untested_cli_total{"),
        "{}",
        metrics.text
    );

    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    world.script(Script {
        version: "fake-cli 1.2.3".to_owned(),
        lines: claude_turn("sess-drift", "done"),
        ..Script::default()
    });
    let created = api.post(
        "/tasks",
        json!({"prompt": "Work", "environment_id": environment, "harness": "claude"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let turns = ended_turns(&api, &task, &session, 1);
    let result = &turns[0]["turn"]["result"];
    // It ran all the same.
    assert_eq!(turns[0]["turn"]["status"], "completed", "{result:#}");
    assert_eq!(result["cli_version"], "1.2.3", "{result:#}");
    assert_eq!(result["cli_tested"], ">=1.0.0, <1.1.0", "{result:#}");
    assert_eq!(result["cli_drift"], "untested", "{result:#}");

    let claude = claude_driver(&server, &token);
    let runs = claude["harnesses"][0]["cli_versions_run"]
        .as_array()
        .unwrap();
    assert_eq!(runs.len(), 1, "{claude:#}");
    assert_eq!(runs[0]["cli_version"], "1.2.3");
    assert_eq!(runs[0]["drift"], "untested");
    assert_eq!(runs[0]["turns"], 1);
    let metrics = server.request("GET", "/metrics", None, None);
    assert!(
        metrics
            .text
            .lines()
            .any(|line| line.starts_with("cinch_turns_untested_cli_total{")
                && line.contains("harness=\"claude\"")
                && line.contains("cli_version=\"1.2.3\"")
                && line.ends_with(" 1")),
        "{}",
        metrics.text
    );

    // `cinch check` says it too, in words and as a field.
    let check = world.cinch().args(["check", "claude"]).output().unwrap();
    let text = String::from_utf8_lossy(&check.stdout);
    assert!(
        text.contains("not pinned (PATH's runs)")
            && text.contains("tested with: >=1.0.0, <1.1.0")
            && text.contains("OUTSIDE the tested range"),
        "{text}"
    );
    let check = world
        .cinch()
        .args(["check", "claude", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(report["harnesses"][0]["drift"], "untested", "{report:#}");
    assert_eq!(report["harnesses"][0]["tested"], ">=1.0.0, <1.1.0");

    // A CLI in the range: no drift.
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[harness.claude]\ntested = \">=1.2.0, <1.3.0\"\n",
            world.operator_config()
        ),
    )
    .unwrap();
    let check = world
        .cinch()
        .args(["check", "claude", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(report["harnesses"][0]["drift"], "tested", "{report:#}");
}
