//! Conversation turns (the acp driver) against `cinch-fake-acp`, an ACP agent
//! scripted for the edge cases: a permission answered by the turn's policy,
//! asked while no host is attached (the restarted `cinch serve` answers it),
//! an agent that never answers `initialize`, a line that is not JSON, an
//! agent that ignores `session/cancel` and SIGTERM, and a cooperative cancel.
//! The agent records every line it reads, so each test also shows that
//! nothing reached it twice.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cinch_fake_cli::acp::AcpScript;
use serde_json::{Value, json};
use support::{Api, Server, World, assistant};

/// The world with `cinch-fake-acp` installed as `fake-acp` and declared in
/// config.toml as a harness on the acp driver; `extra` goes in its table.
fn acp_world(script: AcpScript, extra: &str, serve_extra: &str) -> World {
    let world = World::new();
    cinch_fake_cli::acp::install(&world.path("bin"), "fake-acp");
    let script = AcpScript {
        record: Some(record_path(&world)),
        ..script
    };
    script.write_to(&script_path(&world)).unwrap();
    let config = format!(
        "[serve]\npass_env = [\"FAKE_CLI_SCRIPT\", \"FAKE_ACP_SCRIPT\", \"ANTHROPIC_API_KEY\"]\n{serve_extra}\n\
         [sandbox]\nread_write = [{:?}]\n\n\
         [harness.fake-acp]\ndriver = \"acp\"\nprogram = \"fake-acp\"\ndisplay_name = \"Fake ACP\"\n{extra}\n",
        world.path("out").display().to_string(),
    );
    std::fs::write(world.path("home/config.toml"), config).unwrap();
    world
}

/// Beside the agent, where the sandbox lets it read.
fn script_path(world: &World) -> PathBuf {
    world.path("bin/fake-acp-script.json")
}

fn record_path(world: &World) -> PathBuf {
    world.path("out/acp-record.jsonl")
}

/// The lines the agent read, parsed.
fn received(world: &World) -> Vec<Value> {
    std::fs::read_to_string(record_path(world))
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

fn methods(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .map(|line| match line["method"].as_str() {
            Some(method) => method.to_owned(),
            None => format!("answer to {}", line["id"]),
        })
        .collect()
}

fn cinch_run(world: &World, brief: &str) -> Value {
    let output = run_command(world, brief).output().unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no JSON result: {output:?}"))
}

fn run_command(world: &World, brief: &str) -> std::process::Command {
    let mut command = world.cinch();
    command
        .env("FAKE_ACP_SCRIPT", script_path(world))
        .args(["run", "--harness", "fake-acp", "--repo"])
        .arg(world.path("repo"))
        .args(["--json", brief]);
    command
}

/// Waits until `check` holds, for at most 60 seconds.
fn eventually<T>(what: &str, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "waited too long for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn files_changed(result: &Value) -> Vec<&str> {
    result["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|file| file["path"].as_str().unwrap())
        .collect()
}

#[test]
fn a_permission_request_is_allowed_and_the_turn_completes_with_its_diff() {
    let world = acp_world(
        AcpScript {
            ask_permission: true,
            ..AcpScript::default()
        },
        "",
        "",
    );
    let result = cinch_run(&world, "Create out.txt");
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["harness"], "fake-acp");
    assert_eq!(
        result["final_message"],
        "done (permission answered: allow-once)"
    );
    assert_eq!(files_changed(&result), ["out.txt"]);
    assert!(result["end_checkpoint"].is_string());
    let lines = received(&world);
    assert_eq!(
        methods(&lines),
        ["initialize", "session/new", "session/prompt", "answer to 0"],
        "each line once, in the protocol's order"
    );
    let prompt = lines[2]["params"]["prompt"][0]["text"].as_str().unwrap();
    assert!(
        prompt.trim_end().ends_with("# Task\n\nCreate out.txt"),
        "{prompt:?}"
    );
}

#[test]
fn a_denied_tool_is_refused_by_the_harness_policy() {
    let world = acp_world(
        AcpScript {
            ask_permission: true,
            ..AcpScript::default()
        },
        "deny_tools = [\"execute\"]",
        "",
    );
    let result = cinch_run(&world, "Create out.txt");
    assert_eq!(
        result["final_message"], "done (permission answered: reject-once)",
        "{result:#}"
    );
    assert!(files_changed(&result).is_empty(), "{result:#}");
}

#[test]
fn an_agent_that_never_answers_initialize_is_stopped_by_the_watchdog() {
    let world = acp_world(
        AcpScript {
            never_answer: true,
            ..AcpScript::default()
        },
        "",
        "watchdog_seconds = 3",
    );
    let result = cinch_run(&world, "Hello?");
    assert_eq!(result["status"], "timed_out", "{result:#}");
    assert_eq!(result["detail"], "No output for 3 seconds; stopped.");
    assert_eq!(methods(&received(&world))[0], "initialize");
}

#[test]
fn a_malformed_line_is_counted_and_the_turn_goes_on() {
    let world = acp_world(
        AcpScript {
            malformed_line: true,
            ..AcpScript::default()
        },
        "",
        "",
    );
    let result = cinch_run(&world, "Create out.txt");
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["not_json_lines"], 1, "{result:#}");
    assert_eq!(result["final_message"], "done (no permission asked)");
}

/// Starts `cinch run` of a turn that hangs; returns it and the turn's id once
/// the agent has the prompt.
fn hanging_run(world: &World) -> (Child, String) {
    let run = run_command(world, "Wait.")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    eventually("the prompt to reach the agent", || {
        methods(&received(world))
            .contains(&"session/prompt".to_owned())
            .then_some(())
    });
    let output = world.cinch().args(["turns", "--json"]).output().unwrap();
    let turns: Value = serde_json::from_slice(&output.stdout).unwrap();
    (run, turns[0]["turn"].as_str().unwrap().to_owned())
}

fn stop_and_wait(world: &World, run: Child, turn: &str) -> Value {
    let stop = world.cinch().args(["stop", turn]).output().unwrap();
    assert!(stop.status.success(), "{stop:?}");
    let output = run.wait_with_output().unwrap();
    serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no JSON result: {output:?}"))
}

#[test]
fn a_cancel_asks_the_agent_first_and_the_turn_ends_cancelled() {
    let world = acp_world(
        AcpScript {
            hang: true,
            ..AcpScript::default()
        },
        "",
        "",
    );
    let (run, turn) = hanging_run(&world);
    let result = stop_and_wait(&world, run, &turn);
    assert_eq!(result["status"], "cancelled", "{result:#}");
    let methods = methods(&received(&world));
    assert_eq!(methods.last().unwrap(), "session/cancel", "{methods:?}");
    assert_eq!(methods.iter().filter(|m| *m == "session/cancel").count(), 1);
}

#[test]
fn an_agent_that_ignores_cancel_and_sigterm_is_still_ended() {
    let world = acp_world(
        AcpScript {
            hang: true,
            ignore_cancel: true,
            ignore_sigterm: true,
            outlive_stdin: true,
            ..AcpScript::default()
        },
        "",
        "",
    );
    let (run, turn) = hanging_run(&world);
    let result = stop_and_wait(&world, run, &turn);
    assert_eq!(result["status"], "cancelled", "{result:#}");
    assert_eq!(methods(&received(&world)).last().unwrap(), "session/cancel");
    let exit: Value = serde_json::from_str(
        &std::fs::read_to_string(world.path(&format!("home/turns/{turn}/exit.json"))).unwrap(),
    )
    .unwrap();
    assert_eq!(exit["signal"], 9, "only SIGKILL ended it: {exit}");
    assert_eq!(exit["survivors"], json!([]));
}

/// `cinch serve` with the agent's script in its environment.
fn serve(world: &World) -> Server {
    let mut command = world.cinch();
    command
        .env("FAKE_ACP_SCRIPT", script_path(world))
        .args(["serve", "--home"])
        .arg(world.path("home"));
    Server::start(command, world.dir.path())
}

/// The raw log of the only turn under the world's home.
fn raw_log(world: &World) -> Option<PathBuf> {
    let runs = std::fs::read_dir(world.path("home/runs")).ok()?;
    for run in runs.filter_map(Result::ok) {
        for file in std::fs::read_dir(run.path()).ok()?.filter_map(Result::ok) {
            if file
                .file_name()
                .to_string_lossy()
                .ends_with(".harness.jsonl")
            {
                return Some(file.path());
            }
        }
    }
    None
}

fn contains(path: &Path, text: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|log| log.contains(text))
}

#[test]
fn a_permission_asked_while_serve_is_down_is_answered_after_its_restart() {
    let gate = tempfile::tempdir().unwrap();
    let gate_file = gate.path().join("go");
    let world = acp_world(
        AcpScript {
            ask_permission: true,
            permission_gate: Some(gate_file.clone()),
            ..AcpScript::default()
        },
        "",
        "",
    );
    let mut server = serve(&world);
    let token = world.admin_token();
    let (task_id, session_id) = {
        let api = Api::new(&server, &token);
        let environment = api.environment(
            json!({"name": "repo", "repository": world.path("repo").display().to_string()}),
        );
        let task = api.post(
            "/tasks",
            json!({"prompt": "Create out.txt", "environment_id": environment, "harness": "fake-acp"}),
        );
        assert_eq!(task.status, 201, "{task:?}");
        let task_id = task.data()["id"].as_str().unwrap().to_owned();
        let session_id = api.first_session(&task_id)["id"]
            .as_str()
            .unwrap()
            .to_owned();
        (task_id, session_id)
    };
    eventually("the prompt to reach the agent", || {
        methods(&received(&world))
            .contains(&"session/prompt".to_owned())
            .then_some(())
    });

    // The host goes; only then does the agent ask.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    std::fs::write(&gate_file, "").unwrap();
    let log = eventually("the raw log", || raw_log(&world));
    eventually("the permission request in the raw log", || {
        contains(&log, "session/request_permission").then_some(())
    });
    assert!(!methods(&received(&world)).contains(&"answer to 0".to_owned()));

    server = serve(&world);
    let api = Api::new(&server, &token);
    let done = api.wait_status(&task_id, &session_id, "idle");
    assert_eq!(done["harness"], "fake-acp", "{done:#}");
    let turn = assistant(&api.messages(&task_id, &session_id, "").data());
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    assert_eq!(turn["content"], "done (permission answered: allow-once)");
    assert_eq!(
        methods(&received(&world)),
        ["initialize", "session/new", "session/prompt", "answer to 0"],
        "the restarted host sent the answer once and nothing else again"
    );
}
