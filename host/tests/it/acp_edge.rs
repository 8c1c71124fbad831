//! Conversation turns (the acp driver) against `cinch-fake-acp`, an ACP agent
//! scripted for the edge cases: a permission answered by the turn's policy,
//! asked while no host is attached (the restarted `cinch serve` answers it),
//! an agent that never answers `initialize`, a line that is not JSON, an
//! agent that ignores `session/cancel` and SIGTERM, and a cooperative cancel.
//! The agent records every line it reads, so each test also shows that
//! nothing reached it twice.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use cinch_fake_cli::acp::AcpScript;
use serde_json::{Value, json};
use support::{Api, Server, World, assistant, eventually, poll_every};

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

/// A served world whose agent asks permission before it writes out.txt,
/// with an environment under `approvals` and a task on it; the server, the
/// token, the task's and its session's ids.
fn asking_task(approvals: Value, serve_extra: &str) -> (World, Server, String, String, String) {
    let world = acp_world(
        AcpScript {
            ask_permission: true,
            ..AcpScript::default()
        },
        "",
        serve_extra,
    );
    let server = serve(&world);
    let token = world.admin_token();
    let (task, session) = {
        let api = Api::new(&server, &token);
        let environment = api.environment(json!({
            "name": "repo",
            "repository": world.path("repo").display().to_string(),
            "approvals": approvals,
        }));
        let created = api.post(
            "/tasks",
            json!({"prompt": "Create out.txt", "environment_id": environment, "harness": "fake-acp"}),
        );
        assert_eq!(created.status, 201, "{created:?}");
        let task = created.data()["id"].as_str().unwrap().to_owned();
        let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
        (task, session)
    };
    (world, server, token, task, session)
}

/// The account's approvals listed with `query`.
fn approvals(api: &Api, query: &str) -> Vec<Value> {
    let listed = api.get(&format!("/approvals{query}"));
    assert_eq!(listed.status, 200, "{listed:?}");
    listed.data().as_array().unwrap().clone()
}

/// Waits for the session's one pending approval.
fn pending_approval(api: &Api, session: &str) -> Value {
    eventually("a pending approval", || {
        approvals(api, &format!("?status=pending&session_id={session}"))
            .first()
            .cloned()
    })
}

fn decide(api: &Api, approval: &Value, body: Value) -> support::Answer {
    let id = approval["id"].as_str().unwrap();
    api.post(&format!("/approvals/{id}/decision"), body)
}

/// The session's turn, once it has ended.
fn ended_turn(api: &Api, task: &str, session: &str) -> Value {
    api.wait_status(task, session, "idle");
    assistant(&api.messages(task, session, "").data())
}

fn out_file(turn: &Value) -> PathBuf {
    Path::new(turn["turn"]["workspace"].as_str().unwrap()).join("out.txt")
}

/// The session's messages that record decisions.
fn decision_messages(api: &Api, task: &str, session: &str) -> Vec<String> {
    api.walk(task, session, "asc", 50)
        .into_iter()
        .filter(|message| message["type"] == "approval")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_approval_waits_past_the_watchdog_for_a_person_whose_allow_lets_the_tool_run() {
    let (world, server, token, task, session) =
        asking_task(json!({"mode": "ask"}), "watchdog_seconds = 2");
    let api = Api::new(&server, &token);
    let asked = pending_approval(&api, &session);
    assert_eq!(asked["status"], "pending", "{asked:#}");
    assert_eq!(asked["task_id"], task.as_str());
    assert_eq!(asked["harness"], "fake-acp");
    assert_eq!(asked["kind"], "shell");
    assert_eq!(asked["title"], "echo hello > out.txt");
    assert_eq!(asked["input"], "echo hello > out.txt");
    assert_eq!(asked["options"][0]["kind"], "allow_once");
    assert!(asked["deadline"].is_string(), "{asked:#}");
    let id = asked["id"].as_str().unwrap();
    assert_eq!(api.get(&format!("/approvals/{id}")).data()["id"], id);
    let events_path = api.path(&format!("/tasks/{task}/sessions/{session}/events"));
    let events = server.stream(&events_path, &token, None, |events| {
        events
            .iter()
            .any(|(_, name, _)| name == "approval.requested")
    });
    let (_, _, requested) = events.last().unwrap();
    assert_eq!(requested["id"], id);
    // The task waits on someone: the "needs someone" queue shows it.
    let queue = api.get("/tasks?owner=none").data();
    assert!(
        queue
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == task.as_str()),
        "{queue:#}"
    );

    // Longer than the watchdog: a turn waiting on a person is not silent.
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(api.session(&task, &session)["status"], "running");
    assert!(!methods(&received(&world)).contains(&"answer to 0".to_owned()));

    let decided = decide(
        &api,
        &asked,
        json!({"decision": "allow", "message": "go ahead"}),
    );
    assert_eq!(decided.status, 200, "{decided:?}");
    assert_eq!(decided.data()["status"], "allowed");
    assert_eq!(decided.data()["decision"], "allow");
    assert!(
        decided.data()["decided_by"]
            .as_str()
            .unwrap()
            .starts_with("mem"),
        "{decided:?}"
    );
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    assert_eq!(turn["content"], "done (permission answered: allow-once)");
    assert!(out_file(&turn).exists(), "the allowed tool ran");
    assert_eq!(
        methods(&received(&world)),
        ["initialize", "session/new", "session/prompt", "answer to 0"]
    );
    let again = decide(&api, &asked, json!({"decision": "allow"}));
    assert_eq!(again.status, 200, "the same decision again: {again:?}");
    let other = decide(&api, &asked, json!({"decision": "deny"}));
    assert_eq!(other.status, 409, "{other:?}");
    let detail = other.json()["detail"].as_str().unwrap().to_owned();
    assert!(detail.contains("allow by mem"), "{detail}");
    let recorded = decision_messages(&api, &task, &session);
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert!(recorded[0].contains("allowed by mem"), "{recorded:?}");
    assert!(recorded[0].ends_with("go ahead"), "{recorded:?}");
    let kinds = api.assert_listing_reads_as_its_events(&task, &session);
    assert!(kinds.iter().any(|kind| kind == "approval"), "{kinds:?}");
    let queue = api.get("/tasks?owner=none").data();
    assert!(
        !queue
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["id"] == task.as_str())
    );
    assert!(approvals(&api, "?status=pending").is_empty());
    assert_eq!(approvals(&api, "?status=resolved").len(), 1);
}

#[test]
fn a_denial_is_the_agents_answer_and_of_100_racing_decisions_the_first_wins() {
    let (world, server, token, task, session) = asking_task(json!({"mode": "ask"}), "");
    let api = Api::new(&server, &token);
    let asked = pending_approval(&api, &session);
    let id = asked["id"].as_str().unwrap().to_owned();
    // An answer is for a question; this asks permission for a tool.
    let answered = decide(&api, &asked, json!({"answer": "yes"}));
    assert_eq!(answered.status, 422, "{answered:?}");
    assert_eq!(answered.field_errors(), ["answer"]);
    assert!(
        answered.text.contains(r#"{\"decision\": \"allow\"}"#),
        "the 422 says what to send: {answered:?}"
    );
    assert_eq!(
        api.get(&format!("/approvals/{id}")).data()["status"],
        "pending"
    );
    let answers: Vec<(String, u16)> = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..100)
            .map(|n| {
                let decision = if n % 2 == 0 { "deny" } else { "allow" };
                let (server, path, token) = (
                    &server,
                    api.path(&format!("/approvals/{id}/decision")),
                    &token,
                );
                scope.spawn(move || {
                    let answer = server.post(&path, token, &json!({"decision": decision}));
                    (decision.to_owned(), answer.status)
                })
            })
            .collect();
        racers
            .into_iter()
            .map(|racer| racer.join().unwrap())
            .collect()
    });
    let stored = api.get(&format!("/approvals/{id}")).data();
    let winner = stored["decision"].as_str().unwrap().to_owned();
    for (decision, status) in &answers {
        let expected = if *decision == winner { 200 } else { 409 };
        assert_eq!(
            *status, expected,
            "{decision} against {winner}: {answers:?}"
        );
    }
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    let option = if winner == "deny" {
        "reject-once"
    } else {
        "allow-once"
    };
    assert_eq!(
        turn["content"],
        format!("done (permission answered: {option})")
    );
    assert_eq!(out_file(&turn).exists(), winner == "allow");
    let lines = methods(&received(&world));
    assert_eq!(
        lines.iter().filter(|line| *line == "answer to 0").count(),
        1,
        "the agent was answered once: {lines:?}"
    );
    assert_eq!(decision_messages(&api, &task, &session).len(), 1);
}

#[test]
fn a_deadline_denies_and_rules_decide_without_asking() {
    let (world, server, token, task, session) =
        asking_task(json!({"mode": "ask", "timeout_seconds": 1}), "");
    let api = Api::new(&server, &token);
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(
        turn["content"], "done (permission answered: reject-once)",
        "{turn:#}"
    );
    assert!(!out_file(&turn).exists());
    let decided = approvals(&api, &format!("?session_id={session}"));
    assert_eq!(decided.len(), 1, "{decided:?}");
    assert_eq!(decided[0]["status"], "expired");
    assert_eq!(decided[0]["decision"], "deny");
    assert_eq!(decided[0]["decided_by"], "timeout");
    drop((world, server));

    for (rules, option, status) in [
        (
            json!({"mode": "ask", "deny": ["execute(echo *)"]}),
            "reject-once",
            "denied",
        ),
        (
            json!({"mode": "ask", "allow": ["shell(echo hello*)"]}),
            "allow-once",
            "allowed",
        ),
    ] {
        let (_world, server, token, task, session) = asking_task(rules, "");
        let api = Api::new(&server, &token);
        let turn = ended_turn(&api, &task, &session);
        assert_eq!(
            turn["content"],
            format!("done (permission answered: {option})")
        );
        let decided = approvals(&api, "");
        assert_eq!(decided.len(), 1, "{decided:?}");
        assert_eq!(decided[0]["status"], status);
        assert_eq!(decided[0]["decided_by"], "policy");
        assert_eq!(decided[0]["deadline"], Value::Null);
    }
}

#[test]
fn an_abort_cancels_what_waits_and_a_late_decision_conflicts() {
    let (_world, server, token, task, session) = asking_task(json!({"mode": "ask"}), "");
    let api = Api::new(&server, &token);
    let asked = pending_approval(&api, &session);
    let aborted = api.post(
        &format!("/tasks/{task}/sessions/{session}/abort"),
        json!({}),
    );
    assert!(aborted.status < 300, "{aborted:?}");
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(turn["turn"]["status"], "cancelled", "{turn:#}");
    let id = asked["id"].as_str().unwrap();
    let cancelled = eventually("the approval cancelled", || {
        let approval = api.get(&format!("/approvals/{id}")).data();
        (approval["status"] == "cancelled").then_some(approval)
    });
    assert_eq!(cancelled["decision"], Value::Null);
    let late = decide(&api, &asked, json!({"decision": "allow"}));
    assert_eq!(late.status, 409, "{late:?}");
    assert!(
        late.json()["detail"]
            .as_str()
            .unwrap()
            .contains("turn ended"),
        "{late:?}"
    );
}

#[test]
fn approvals_refuse_bad_input_and_harnesses_that_cannot_ask() {
    let world = acp_world(AcpScript::default(), "", "");
    let server = serve(&world);
    let api = Api::new(&server, &world.admin_token());
    let repository = world.path("repo").display().to_string();
    let bad = api.post(
        "/environments",
        json!({"name": "bad", "repository": repository,
               "approvals": {"mode": "ask", "allow": ["Bash(git"], "timeout_seconds": 0}}),
    );
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(
        bad.field_errors(),
        ["approvals.allow[0]", "approvals.timeout_seconds"]
    );
    let before = api.get("/tasks").data().as_array().unwrap().len();
    let refused = api.post(
        "/tasks",
        json!({"prompt": "Hi", "harness": "codex", "approvals": {"mode": "ask"}}),
    );
    assert_eq!(refused.status, 422, "{refused:?}");
    let detail = refused.json().to_string();
    assert!(
        detail.contains("cannot ask") && detail.contains("fake-acp"),
        "{detail}"
    );
    assert_eq!(
        api.get("/tasks").data().as_array().unwrap().len(),
        before,
        "no task made"
    );
    assert_eq!(api.get("/approvals/apr_nothing").status, 404);
    let unknown = api.post(
        "/approvals/apr_nothing/decision",
        json!({"decision": "allow"}),
    );
    assert_eq!(unknown.status, 404, "{unknown:?}");
    let malformed = api.post(
        "/approvals/apr_nothing/decision",
        json!({"decision": "maybe"}),
    );
    assert_eq!(malformed.status, 422, "{malformed:?}");
    // A decision or an answer, never both, never neither; an answer alone.
    for (body, field) in [
        (json!({}), "decision"),
        (json!({"decision": "allow", "answer": "yes"}), "answer"),
        (json!({"answer": "yes", "scope": "session"}), "scope"),
        (json!({"answer": "yes", "message": "a note"}), "message"),
        (json!({"answer": "  "}), "answer"),
    ] {
        let refused = api.post("/approvals/apr_nothing/decision", body.clone());
        assert_eq!(refused.status, 422, "{body}: {refused:?}");
        assert_eq!(refused.field_errors(), [field], "{body}: {refused:?}");
    }
    let filter = api.get("/approvals?status=waiting");
    assert_eq!(filter.status, 422, "{filter:?}");
    let (other_account, other_token) = world.second_account();
    let foreign = server.get(
        &format!("/v1/accounts/{other_account}/approvals"),
        &api.token,
    );
    assert_eq!(foreign.status, 404, "{foreign:?}");
    let unauthenticated = server.get(&api.path("/approvals"), "not-a-token");
    assert_eq!(unauthenticated.status, 401);
    let own = server.get(
        &format!("/v1/accounts/{other_account}/approvals"),
        &other_token,
    );
    assert_eq!(own.status, 200);
}

#[test]
fn a_pending_approval_survives_a_sigkill_of_serve_and_is_answered_once() {
    let (world, mut server, token, task, session) = asking_task(json!({"mode": "ask"}), "");
    let asked = pending_approval(&Api::new(&server, &token), &session);
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = serve(&world);
    let api = Api::new(&server, &token);
    // The restarted server reads the request again: the same approval, still
    // waiting; nothing was answered meanwhile.
    std::thread::sleep(Duration::from_secs(1));
    let listed = approvals(&api, "");
    assert_eq!(listed.len(), 1, "asked once: {listed:?}");
    assert_eq!(listed[0]["id"], asked["id"]);
    assert_eq!(listed[0]["status"], "pending");
    assert!(!methods(&received(&world)).contains(&"answer to 0".to_owned()));
    let decided = decide(&api, &asked, json!({"decision": "allow"}));
    assert_eq!(decided.status, 200, "{decided:?}");
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(
        turn["content"], "done (permission answered: allow-once)",
        "{turn:#}"
    );
    assert_eq!(
        methods(&received(&world)),
        ["initialize", "session/new", "session/prompt", "answer to 0"],
        "the answer reached the agent once"
    );
    assert_eq!(approvals(&api, "").len(), 1);
}

/// How many of `text` the raw logs of the session's turns hold together.
fn count_in_logs(world: &World, session: &str, text: &str) -> usize {
    let Ok(files) = std::fs::read_dir(world.path(&format!("home/runs/{session}"))) else {
        return 0;
    };
    files
        .filter_map(Result::ok)
        .filter(|file| {
            file.file_name()
                .to_string_lossy()
                .ends_with(".harness.jsonl")
        })
        .map(|file| {
            std::fs::read_to_string(file.path())
                .unwrap_or_default()
                .matches(text)
                .count()
        })
        .sum()
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|meta| meta.len()).unwrap_or(0)
}

/// The `p`th percentile of `samples` (sorted here), in milliseconds.
fn percentile(samples: &mut [Duration], p: usize) -> f64 {
    samples.sort();
    let index = (samples.len() * p).div_ceil(100).saturating_sub(1);
    samples[index.min(samples.len() - 1)].as_secs_f64() * 1000.0
}

/// Twenty turns of one session, each asking once and allowed: the time
/// from the agent's request (its line in the raw log) to the approval on
/// the session's SSE stream, and from the decision to its answer in the
/// agent's stdin file, each well under a second (p50 and p99 printed).
#[test]
fn approvals_are_shown_and_answered_within_milliseconds() {
    const ROUNDS: usize = 20;
    let (world, server, token, task, session) = asking_task(json!({"mode": "ask"}), "");
    let api = Api::new(&server, &token);
    let events = api.path(&format!("/tasks/{task}/sessions/{session}/events"));
    let (seen, arrivals) = std::sync::mpsc::channel();
    let (mut shown, mut answered) = (Vec::new(), Vec::new());
    std::thread::scope(|scope| {
        let (server, token) = (&server, &token);
        scope.spawn(move || {
            let sent = std::sync::atomic::AtomicUsize::new(0);
            server.timed_stream(&events, token, None, |events| {
                let requested: Vec<_> = events
                    .iter()
                    .filter(|(_, name, _, _)| name == "approval.requested")
                    .collect();
                if let Some((_, _, approval, at)) = requested.last()
                    && requested.len() > sent.load(std::sync::atomic::Ordering::SeqCst)
                {
                    sent.store(requested.len(), std::sync::atomic::Ordering::SeqCst);
                    let _ = seen.send((approval.clone(), *at));
                }
                requested.len() == ROUNDS
            });
        });
        for round in 0..ROUNDS {
            if round > 0 {
                let sent = api.post(
                    &format!("/tasks/{task}/sessions/{session}/messages"),
                    json!({"message": format!("Again, {round}")}),
                );
                assert_eq!(sent.status, 201, "{sent:?}");
            }
            let asked_at = poll_every(Duration::from_millis(1), "the agent's request", || {
                (count_in_logs(&world, &session, "session/request_permission") > round)
                    .then(Instant::now)
            });
            let (approval, shown_at) = arrivals.recv_timeout(Duration::from_secs(60)).unwrap();
            shown.push(shown_at.saturating_duration_since(asked_at));
            let stdin = world.path(&format!(
                "home/turns/{}/stdin.jsonl",
                approval["turn_id"].as_str().unwrap()
            ));
            let before = file_len(&stdin);
            let decided_at = Instant::now();
            let decided = decide(&api, &approval, json!({"decision": "allow"}));
            assert_eq!(decided.status, 200, "{decided:?}");
            poll_every(Duration::from_millis(1), "the answer", || {
                (file_len(&stdin) > before).then_some(())
            });
            answered.push(decided_at.elapsed());
            api.wait(&task, &session, "the turn's end", |current| {
                current["status"] == "idle" && approvals(&api, "?status=pending").is_empty()
            });
        }
    });
    let listed = approvals(&api, &format!("?session_id={session}&limit=100"));
    assert_eq!(listed.len(), ROUNDS);
    assert!(
        listed
            .iter()
            .all(|approval| approval["status"] == "allowed")
    );
    let (shown_p50, shown_p99) = (percentile(&mut shown, 50), percentile(&mut shown, 99));
    let (answered_p50, answered_p99) =
        (percentile(&mut answered, 50), percentile(&mut answered, 99));
    eprintln!(
        "fake-acp, {ROUNDS} approvals: request to SSE p50 {shown_p50:.1} ms, p99 {shown_p99:.1} ms; \
         decision to the agent's stdin p50 {answered_p50:.1} ms, p99 {answered_p99:.1} ms"
    );
    assert!(shown_p99 < 1000.0 && answered_p99 < 1000.0);
}

#[test]
fn an_allow_for_the_session_decides_the_same_request_of_later_turns() {
    let (_world, server, token, task, session) = asking_task(json!({"mode": "ask"}), "");
    let api = Api::new(&server, &token);
    let asked = pending_approval(&api, &session);
    let decided = decide(
        &api,
        &asked,
        json!({"decision": "allow", "scope": "session"}),
    );
    assert_eq!(decided.status, 200, "{decided:?}");
    ended_turn(&api, &task, &session);
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Again"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let decided = eventually("the second turn's approval", || {
        let listed = approvals(&api, &format!("?session_id={session}"));
        (listed.len() == 2 && listed[0]["status"] != "pending").then_some(listed)
    });
    assert_eq!(decided[0]["status"], "allowed", "{decided:?}");
    assert_eq!(
        decided[0]["decided_by"], "policy",
        "asked no one: {decided:?}"
    );
    api.wait(&task, &session, "the second turn's end", |current| {
        current["status"] == "idle"
    });
    let turn = assistant(&api.messages(&task, &session, "").data());
    assert_eq!(
        turn["content"], "done (permission answered: allow-once)",
        "{turn:#}"
    );
}

/// What a webhook receiver got: each body with its `X-Cinch-Signature`.
type Deliveries = std::sync::Arc<std::sync::Mutex<Vec<(String, Value)>>>;

/// An HTTP receiver on loopback that answers 200 and keeps what it got.
fn webhook_receiver() -> (String, Deliveries) {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/hooks", listener.local_addr().unwrap());
    let seen = Deliveries::default();
    let record = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut line, mut length, mut signature) = (String::new(), 0, String::new());
            reader.read_line(&mut line).unwrap();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                let Some((name, value)) = line.trim_end().split_once(": ") else {
                    break;
                };
                match name.to_ascii_lowercase().as_str() {
                    "content-length" => length = value.parse().unwrap(),
                    "x-cinch-signature" => signature = value.to_owned(),
                    _ => {}
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body = serde_json::from_slice(&body).unwrap();
            record.lock().unwrap().push((signature, body));
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            );
        }
    });
    (url, seen)
}

#[test]
fn a_webhook_hears_of_a_request_and_its_decision_is_posted_back() {
    let world = acp_world(
        AcpScript {
            ask_permission: true,
            ..AcpScript::default()
        },
        "",
        "",
    );
    let mut command = world.cinch();
    command
        .env("FAKE_ACP_SCRIPT", script_path(&world))
        .args(["serve", "--webhook-allow-private", "--home"])
        .arg(world.path("home"));
    let server = Server::start(command, world.dir.path());
    let api = Api::new(&server, &world.admin_token());
    let (url, seen) = webhook_receiver();
    let hook = api.post(
        "/webhooks",
        json!({"url": url, "secret": "whsec-0123456789abcdef"}),
    );
    assert_eq!(hook.status, 201, "{hook:?}");
    let environment = api.environment(json!({
        "name": "repo",
        "repository": world.path("repo").display().to_string(),
        "approvals": {"mode": "ask"},
    }));
    let created = api.post(
        "/tasks",
        json!({"prompt": "Create out.txt", "environment_id": environment, "harness": "fake-acp"}),
    );
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    // A bot that hears of the request answers it from the webhook's body.
    let (signature, body) = eventually("approval.requested at the webhook", || {
        seen.lock()
            .unwrap()
            .iter()
            .find(|(_, body)| body["type"] == "approval.requested")
            .cloned()
    });
    assert!(signature.starts_with("t="), "signed: {signature}");
    assert_eq!(body["data"]["session_id"], session.as_str());
    assert_eq!(body["data"]["status"], "pending");
    let id = body["data"]["id"].as_str().unwrap();
    let decided = api.post(
        &format!("/approvals/{id}/decision"),
        json!({"decision": "deny"}),
    );
    assert_eq!(decided.status, 200, "{decided:?}");
    let turn = ended_turn(&api, &task, &session);
    assert_eq!(
        turn["content"], "done (permission answered: reject-once)",
        "{turn:#}"
    );
}
