//! Usage and cost, and reverting a turn, over HTTP against a real
//! `cinch serve` with a real SQLite file and the fake CLI as the harness;
//! `cinch run --json`, `cinch turns` and `cinch revert` on the command line.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

/// A claude turn that runs on `model` and reports `usage` and, when given,
/// its own cost.
fn claude_turn_with_usage(
    session: &str,
    model: &str,
    usage: Value,
    cost: Option<f64>,
) -> Vec<Value> {
    let mut result = json!({"type": "result", "subtype": "success", "is_error": false,
        "result": "done", "session_id": session, "usage": usage});
    if let Some(cost) = cost {
        result["total_cost_usd"] = json!(cost);
    }
    vec![
        json!({"type": "system", "subtype": "init", "session_id": session, "model": model}),
        json!({"type": "assistant", "session_id": session,
               "message": {"content": [{"type": "text", "text": "done"}]}}),
        result,
    ]
}

/// The assistant messages (turns) of a session, oldest first.
fn turns(api: &Api, task: &str, session: &str) -> Vec<Value> {
    api.walk(task, session, "asc", 200)
        .into_iter()
        .filter(|message| message["type"] == "assistant")
        .collect()
}

/// Waits until the session is idle with `count` ended turns.
fn wait_turns(api: &Api, task: &str, session: &str, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let session_now = api.session(task, session);
        let all = turns(api, task, session);
        if session_now["status"] == "idle"
            && all.len() == count
            && all.iter().all(|turn| turn["turn"]["status"] != "running")
        {
            return all;
        }
        assert!(
            Instant::now() < deadline,
            "the session never ended {count} turns: {session_now:#}\n{}",
            api.server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn close_to(value: &Value, expected: f64) -> bool {
    value
        .as_f64()
        .is_some_and(|value| (value - expected).abs() < 1e-9)
}

fn account_usage(api: &Api) -> Value {
    let accounts = api.server.get("/v1/accounts", &api.token);
    assert_eq!(accounts.status, 200, "{accounts:?}");
    accounts.data()[0]["usage"].clone()
}

#[test]
fn a_turns_usage_and_cost_are_kept_shown_and_rolled_up() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    assert_eq!(account_usage(&api)["turns"], 0);
    assert_eq!(account_usage(&api)["cost_usd"], 0.0);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));

    // Claude reports its own cost: kept as reported.
    world.script(Script {
        lines: claude_turn_with_usage(
            "sess-u",
            "claude-sonnet-4-5",
            json!({"input_tokens": 100, "cache_creation_input_tokens": 20,
                   "cache_read_input_tokens": 1000, "output_tokens": 50}),
            Some(0.0123),
        ),
        ..Script::default()
    });
    let created = api.post(
        "/tasks",
        json!({"prompt": "Count things", "environment_id": environment, "harness": "claude"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let first = wait_turns(&api, &task, &session, 1);
    let result = &first[0]["turn"]["result"];
    assert_eq!(result["model"], "claude-sonnet-4-5");
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 1120, "output_tokens": 50, "cached_input_tokens": 1000,
               "cost_usd": 0.0123, "cost_source": "reported"})
    );

    // Without a reported cost, cinch estimates it from its price table.
    world.script(Script {
        lines: claude_turn_with_usage(
            "sess-u",
            "claude-sonnet-4-5",
            json!({"input_tokens": 1_000_000, "cache_read_input_tokens": 1_000_000,
                   "output_tokens": 100_000}),
            None,
        ),
        ..Script::default()
    });
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Again"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let both = wait_turns(&api, &task, &session, 2);
    let usage = &both[1]["turn"]["result"]["usage"];
    // 1M fresh at $3, 1M cached at $0.30, 100k out at $15 per million.
    let estimated = 3.0 + 0.3 + 1.5;
    assert_eq!(usage["cost_source"], "estimated", "{usage:#}");
    assert!(close_to(&usage["cost_usd"], estimated), "{usage:#}");
    assert_eq!(usage["input_tokens"], 2_000_000);

    // Rolled up on the session, the task and the account.
    let expected_tokens = (1120 + 2_000_000, 50 + 100_000, 1000 + 1_000_000);
    let check = |usage: &Value| {
        assert_eq!(usage["turns"], 2, "{usage:#}");
        assert_eq!(usage["input_tokens"], expected_tokens.0, "{usage:#}");
        assert_eq!(usage["output_tokens"], expected_tokens.1, "{usage:#}");
        assert_eq!(usage["cached_input_tokens"], expected_tokens.2, "{usage:#}");
        assert!(
            close_to(&usage["cost_usd"], 0.0123 + estimated),
            "{usage:#}"
        );
        assert!(close_to(&usage["reported_cost_usd"], 0.0123), "{usage:#}");
        assert!(
            close_to(&usage["estimated_cost_usd"], estimated),
            "{usage:#}"
        );
        assert_eq!(usage["turns_without_cost"], 0, "{usage:#}");
    };
    check(&api.session(&task, &session)["usage"]);
    let task_view = api.get(&format!("/tasks/{task}"));
    check(&task_view.data()["usage"]);
    let listed = api.get("/tasks");
    check(&listed.data()[0]["usage"]);
    check(&account_usage(&api));

    // The account's usage over a range, grouped (before any code task).
    let report = api.get("/usage?group_by=model");
    assert_eq!(report.status, 200, "{report:?}");
    check(&report.data()["totals"]);
    let groups = report.data()["groups"].clone();
    assert_eq!(groups.as_array().unwrap().len(), 1, "{groups:#}");
    assert_eq!(groups[0]["key"], "claude-sonnet-4-5");
    assert_eq!(groups[0]["turns"], 2);
    let by_harness = api.get("/usage?group_by=harness&from=2000-01-01");
    assert_eq!(by_harness.data()["groups"][0]["key"], "claude");
    let today = api.get("/usage?group_by=day").data()["groups"][0]["key"].clone();
    assert_eq!(today.as_str().unwrap().len(), "2026-12-02".len());
    let future = api.get("/usage?from=2999-01-01T00:00:00Z");
    assert_eq!(future.data()["totals"]["turns"], 0);
    assert_eq!(future.data()["groups"], json!([]));

    // A code task's result carries its usage too, and counts for the account
    // (not for any task's sessions).
    world.script(Script {
        lines: claude_turn_with_usage(
            "sess-code",
            "claude-haiku-4-5",
            json!({"input_tokens": 1_000_000, "output_tokens": 0}),
            None,
        ),
        ..Script::default()
    });
    let code_task = server.post(
        "/api/runs/run-usage/tasks?wait=true",
        &token,
        &json!({"brief": "Count", "harness": "claude", "repo": "shop"}),
    );
    assert_eq!(code_task.status, 201, "{code_task:?}");
    let code_result = &code_task.json()["result"];
    assert_eq!(code_result["model"], "claude-haiku-4-5");
    assert_eq!(code_result["usage"]["cost_source"], "estimated");
    assert!(
        close_to(&code_result["usage"]["cost_usd"], 1.0),
        "{code_result:#}"
    );
    let account = account_usage(&api);
    assert_eq!(account["turns"], 3, "{account:#}");
    assert!(
        close_to(&account["estimated_cost_usd"], estimated + 1.0),
        "{account:#}"
    );
    check(&api.get(&format!("/tasks/{task}")).data()["usage"]);
    let models = api.get("/usage?group_by=model").data()["groups"].clone();
    let keys: Vec<&str> = models
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys, ["claude-haiku-4-5", "claude-sonnet-4-5"]);

    // Another account sees none of it and cannot ask.
    let (other, other_token) = world.second_account();
    let mine = api.path("/usage");
    assert_eq!(server.get(&mine, &other_token).status, 404);
    let theirs = server.get(&format!("/v1/accounts/{other}/usage"), &other_token);
    assert_eq!(theirs.data()["totals"]["turns"], 0, "{theirs:?}");

    // Bad ranges and groupings are 422s naming the parameter.
    assert_eq!(api.get("/usage?group_by=week").field_errors(), ["group_by"]);
    assert_eq!(api.get("/usage?from=yesterday").field_errors(), ["from"]);
    assert_eq!(
        api.get("/usage?from=2026-12-02&to=2026-12-01")
            .field_errors(),
        ["to"]
    );
    assert_eq!(api.get("/usage?group_by=week").status, 422);
}

#[test]
fn codex_turns_count_their_own_share_of_the_threads_running_total() {
    let world = World::new();
    cinch_fake_cli::install(&world.path("bin"), "codex");
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
        "secrets": {"OPENAI_API_KEY": API_KEY},
    }));
    // Codex reports 100 in, 7 out for the thread's first turn, then 201 and
    // 14 for the thread so far after the second.
    world.script(Script {
        replay: Some(recorded("codex/s1.jsonl")),
        ..Script::default()
    });
    let created = api.post(
        "/tasks",
        json!({"prompt": "Reply done", "environment_id": environment, "harness": "codex"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let first = wait_turns(&api, &task, &session, 1);
    assert_eq!(first[0]["turn"]["result"]["usage"]["input_tokens"], 100);
    assert_eq!(first[0]["turn"]["result"]["usage"]["output_tokens"], 7);

    world.script(Script {
        replay: Some(recorded("codex/s4.jsonl")),
        ..Script::default()
    });
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "What did you answer?"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let both = wait_turns(&api, &task, &session, 2);
    let second = &both[1]["turn"]["result"];
    assert_eq!(second["usage"]["input_tokens"], 101, "{second:#}");
    assert_eq!(second["usage"]["output_tokens"], 7, "{second:#}");
    assert_eq!(second["usage"]["cost_source"], "estimated", "{second:#}");
    assert_eq!(second["model"], "openai/gpt-6.2-sol");
    let totals = &api.session(&task, &session)["usage"];
    assert_eq!(totals["input_tokens"], 201, "{totals:#}");
    assert_eq!(totals["output_tokens"], 14, "{totals:#}");
}

#[test]
fn cinch_run_and_turns_show_a_turns_cost() {
    let world = World::new();
    world.script(Script {
        lines: claude_turn_with_usage(
            "sess-cli",
            "claude-sonnet-4-5",
            json!({"input_tokens": 10, "output_tokens": 5}),
            Some(0.5),
        ),
        ..Script::default()
    });
    let before = world.cinch().args(["turns"]).output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&before.stdout).trim(),
        "no turns yet"
    );
    let run = world
        .cinch()
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.path("repo"))
        .arg("Count")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let result: Value = serde_json::from_slice(
        run.stdout
            .split(|byte| *byte == b'\n')
            .rfind(|line| line.starts_with(b"{"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 10, "output_tokens": 5, "cached_input_tokens": null,
               "cost_usd": 0.5, "cost_source": "reported"})
    );
    let listed = world.cinch().args(["turns"]).output().unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.contains("$0.5000"), "{listed}");
    let json = world.cinch().args(["turns", "--json"]).output().unwrap();
    let json: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(json[0]["usage"]["cost_usd"], 0.5);
}

#[test]
fn a_turn_is_reverted_and_the_revert_undone_over_http() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    world.script(Script {
        lines: claude_turn("sess-r", "wrote v1"),
        write_files: [("feature.txt".to_owned(), "v1\n".to_owned())].into(),
        ..Script::default()
    });
    let task = api.post(
        "/tasks",
        json!({"title": "Revertible", "environment_id": environment}),
    );
    assert_eq!(task.status, 201, "{task:?}");
    let task = task.data()["id"].as_str().unwrap().to_owned();
    let created = api.post(
        &format!("/tasks/{task}/sessions"),
        json!({"prompt": "Write v1", "auto_commit": true}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let session = created.data()["id"].as_str().unwrap().to_owned();
    wait_turns(&api, &task, &session, 1);
    let workspace = PathBuf::from(api.session(&task, &session)["workspace"].as_str().unwrap());
    let first_commit = git_output(&workspace, &["rev-parse", "HEAD"]);

    world.script(Script {
        lines: claude_turn("sess-r", "wrote v2"),
        write_files: [
            ("feature.txt".to_owned(), "v2\n".to_owned()),
            ("other.txt".to_owned(), "more\n".to_owned()),
        ]
        .into(),
        ..Script::default()
    });
    let revert_path = format!("/tasks/{task}/sessions/{session}/revert");
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Now v2"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    let both = wait_turns(&api, &task, &session, 2);
    let second_turn = both[1]["turn"]["turn_id"].as_str().unwrap().to_owned();
    let second_commit = git_output(&workspace, &["rev-parse", "HEAD"]);
    assert_ne!(first_commit, second_commit, "the second turn was committed");
    assert_eq!(
        std::fs::read_to_string(workspace.join("feature.txt")).unwrap(),
        "v2\n"
    );
    assert!(workspace.join("other.txt").exists());

    // Bad requests name the field.
    assert_eq!(
        api.post(&revert_path, json!({})).field_errors(),
        ["turn_id"]
    );
    assert_eq!(
        api.post(&revert_path, json!({"turn_id": "t-nope"}))
            .field_errors(),
        ["turn_id"]
    );

    // The revert: the files of the second turn's start, the branch back past
    // its commit, which the answer names.
    let reverted = api.post(&revert_path, json!({"turn_id": second_turn}));
    assert_eq!(reverted.status, 201, "{reverted:?}");
    let revert = reverted.data();
    assert_eq!(revert["type"], "revert");
    // It says which turn, as the conversation shows it.
    let content = revert["content"].as_str().unwrap();
    assert!(
        content.starts_with(&format!(
            "Reverted the work tree to the start of turn {second_turn} (Claude Code: \"Now v2\")."
        )),
        "{content}"
    );
    assert_eq!(revert["turn"]["reverted_turn_id"], second_turn.as_str());
    let undone = &revert["turn"]["result"]["commits_undone"];
    assert_eq!(undone.as_array().unwrap().len(), 1, "{revert:#}");
    assert_eq!(undone[0]["sha"], second_commit.trim());
    assert_eq!(
        std::fs::read_to_string(workspace.join("feature.txt")).unwrap(),
        "v1\n"
    );
    assert!(!workspace.join("other.txt").exists());
    assert_eq!(git_output(&workspace, &["rev-parse", "HEAD"]), first_commit);
    assert_eq!(git_output(&workspace, &["status", "--porcelain"]), "");
    assert_eq!(revert["turn"]["result"]["total_files"], 2);
    let listed = api.walk(&task, &session, "asc", 200);
    assert_eq!(listed.last().unwrap()["id"], revert["id"]);
    let kinds = api.assert_listing_reads_as_its_events(&task, &session);
    assert_eq!(
        kinds.last().map(String::as_str),
        Some("revert"),
        "{kinds:?}"
    );

    // Another account's token cannot revert it.
    let (_, other_token) = world.second_account();
    let foreign = server.post(
        &api.path(&revert_path),
        &other_token,
        &json!({"turn_id": second_turn}),
    );
    assert_eq!(foreign.status, 404, "{foreign:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("feature.txt")).unwrap(),
        "v1\n"
    );

    // Reverting the revert brings the work back.
    let revert_id = revert["turn"]["turn_id"].as_str().unwrap();
    let redone = api.post(&revert_path, json!({"turn_id": revert_id}));
    assert_eq!(redone.status, 201, "{redone:?}");
    let content = redone.data()["content"].as_str().unwrap().to_owned();
    assert!(
        content.starts_with(&format!(
            "Reverted the work tree to the start of revert {revert_id}, undoing it."
        )),
        "{content}"
    );
    assert_eq!(
        redone.data()["turn"]["result"]["commits_redone"][0]["sha"],
        second_commit.trim()
    );
    assert_eq!(
        std::fs::read_to_string(workspace.join("feature.txt")).unwrap(),
        "v2\n"
    );
    assert!(workspace.join("other.txt").exists());
    assert_eq!(
        git_output(&workspace, &["rev-parse", "HEAD"]),
        second_commit
    );

    // Refused while a turn runs.
    world.script(Script {
        lines: claude_turn("sess-r", "slow"),
        hang_ms: 60_000,
        ..Script::default()
    });
    let sent = api.post(
        &format!("/tasks/{task}/sessions/{session}/messages"),
        json!({"message": "Take your time"}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    api.wait_status(&task, &session, "running");
    let busy = api.post(&revert_path, json!({"turn_id": second_turn}));
    assert_eq!(busy.status, 409, "{busy:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.join("feature.txt")).unwrap(),
        "v2\n"
    );
    let aborted = api.post(
        &format!("/tasks/{task}/sessions/{session}/abort"),
        json!({}),
    );
    assert_eq!(aborted.status, 202, "{aborted:?}");
    wait_turns(&api, &task, &session, 3);
}

/// Runs a claude turn in the world's repository with `cinch run`; its id.
fn cinch_run(world: &World, brief: &str) -> String {
    let run = world
        .cinch()
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.path("repo"))
        .arg(brief)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let result: Value = serde_json::from_slice(
        run.stdout
            .split(|byte| *byte == b'\n')
            .rfind(|line| line.starts_with(b"{"))
            .unwrap(),
    )
    .unwrap();
    result["turn"].as_str().unwrap().to_owned()
}

#[test]
fn cinch_revert_restores_a_run_turn_and_undoes_itself() {
    let world = World::new();
    let repo = world.path("repo");
    world.script(Script {
        lines: claude_turn("sess-c", "changed things"),
        write_files: [("readme.txt".to_owned(), "rewritten\n".to_owned())].into(),
        delete_files: Vec::new(),
        ..Script::default()
    });
    let turn = &cinch_run(&world, "Rewrite the readme");
    std::fs::write(repo.join("after.txt"), "written after the turn\n").unwrap();
    assert_eq!(
        std::fs::read_to_string(repo.join("readme.txt")).unwrap(),
        "rewritten\n"
    );

    let reverted = world
        .cinch()
        .args(["revert", turn, "--json"])
        .output()
        .unwrap();
    assert!(reverted.status.success(), "{reverted:?}");
    let record: Value = serde_json::from_slice(&reverted.stdout).unwrap();
    assert_eq!(
        std::fs::read_to_string(repo.join("readme.txt")).unwrap(),
        "hello\n"
    );
    assert!(!repo.join("after.txt").exists());
    assert_eq!(record["result"]["commits_undone"], json!([]));

    let undo = world
        .cinch()
        .args(["revert", record["turn_id"].as_str().unwrap()])
        .output()
        .unwrap();
    assert!(undo.status.success(), "{undo:?}");
    let said = String::from_utf8_lossy(&undo.stdout);
    assert!(
        said.contains("undo it with `cinch revert revert_"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "to the start of revert {} (undoing it: back to before turn {turn} was reverted)",
            record["turn_id"].as_str().unwrap()
        )),
        "{said}"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("readme.txt")).unwrap(),
        "rewritten\n"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("after.txt")).unwrap(),
        "written after the turn\n"
    );

    // Said in words, a revert names the turn, its harness and when it ran.
    let again = world.cinch().args(["revert", turn]).output().unwrap();
    assert!(again.status.success(), "{again:?}");
    let said = String::from_utf8_lossy(&again.stdout);
    assert!(
        said.contains(&format!("to the start of turn {turn} (claude, started ")),
        "{said}"
    );

    let unknown = world.cinch().args(["revert", "t-nope"]).output().unwrap();
    assert!(!unknown.status.success());
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("no turn `t-nope`"),
        "{unknown:?}"
    );
}

#[test]
fn cinch_revert_waits_for_a_turn_starting_in_its_work_tree() {
    let world = World::new();
    let repo = world.path("repo");
    world.script(Script {
        lines: claude_turn("sess-w", "changed things"),
        write_files: [("readme.txt".to_owned(), "rewritten\n".to_owned())].into(),
        ..Script::default()
    });
    let turn = cinch_run(&world, "Rewrite the readme");

    // A start in the work tree holds its lock from before its checks until
    // its CLI runs; a revert meanwhile must not restore the tree under it.
    let home = cinch_engine::home::Home::open(world.path("home")).unwrap();
    let workdir = repo.canonicalize().unwrap();
    let starting = cinch_engine::turn_dir::WorktreeLock::take(&home, &workdir).unwrap();
    let mut revert = world
        .cinch()
        .args(["revert", &turn])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(
        revert.try_wait().unwrap().is_none(),
        "the revert did not wait"
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("readme.txt")).unwrap(),
        "rewritten\n"
    );
    drop(starting);
    assert!(revert.wait().unwrap().success());
    assert_eq!(
        std::fs::read_to_string(repo.join("readme.txt")).unwrap(),
        "hello\n"
    );
}

#[test]
fn a_session_id_from_a_harness_never_names_a_path_outside_cinchs_folders() {
    let world = World::new();
    cinch_fake_cli::install(&world.path("bin"), "codex");
    // Under home/sessions/codex and home/usage/codex, this names the world's own folder.
    let escape = "../../../escape";
    world.script(Script {
        lines: vec![
            json!({"type": "thread.started", "thread_id": escape}),
            json!({"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "done"}}),
            json!({"type": "turn.completed", "usage": {"input_tokens": 3, "cached_input_tokens": 0, "output_tokens": 1}}),
        ],
        ..Script::default()
    });
    assert!(!world.path("escape").exists());
    let run = world
        .cinch()
        .env("OPENAI_API_KEY", API_KEY)
        .args(["run", "--harness", "codex", "--json", "--repo"])
        .arg(world.path("repo"))
        .arg("Count")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let result: Value = serde_json::from_slice(
        run.stdout
            .split(|byte| *byte == b'\n')
            .rfind(|line| line.starts_with(b"{"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["usage"]["input_tokens"], 3);
    assert!(
        !world.path("escape").exists(),
        "a harness's session id wrote outside cinch's home"
    );
}

#[test]
fn cinch_fork_makes_a_worktree_from_a_run_turns_end() {
    let world = World::new();
    let repo = world.path("repo");
    world.script(Script {
        lines: claude_turn("sess-f1", "first"),
        write_files: [("first.txt".to_owned(), "one\n".to_owned())].into(),
        ..Script::default()
    });
    let first = &cinch_run(&world, "First");
    world.script(Script {
        lines: claude_turn("sess-f1", "second"),
        write_files: [("second.txt".to_owned(), "two\n".to_owned())].into(),
        ..Script::default()
    });
    cinch_run(&world, "Second");
    let branch_before = git_output(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]);

    let forked = world
        .cinch()
        .args(["fork", first, "--json"])
        .output()
        .unwrap();
    assert!(forked.status.success(), "{forked:?}");
    let made: Value = serde_json::from_slice(&forked.stdout).unwrap();
    let dir = PathBuf::from(made["workdir"].as_str().unwrap());
    assert_eq!(dir, world.path(&format!("repo-fork-{first}")));
    assert_eq!(made["branch"], json!(format!("cinch/fork-{first}")));
    assert_eq!(made["session_id"], "sess-f1");
    assert_eq!(
        std::fs::read_to_string(dir.join("first.txt")).unwrap(),
        "one\n"
    );
    assert!(!dir.join("second.txt").exists(), "the later turn is absent");
    assert_eq!(
        git_output(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        format!("cinch/fork-{first}")
    );
    assert_eq!(
        git_output(&dir, &["status", "--porcelain"]),
        "?? first.txt\n"
    );
    // The original work tree is as the second turn left it.
    assert!(repo.join("second.txt").exists() && repo.join("first.txt").exists());
    assert_eq!(
        git_output(&repo, &["rev-parse", "--abbrev-ref", "HEAD"]),
        branch_before
    );

    // A cinch run turn goes on in the fork.
    world.script(Script {
        lines: claude_turn("sess-f2", "third"),
        write_files: [("third.txt".to_owned(), "three\n".to_owned())].into(),
        ..Script::default()
    });
    let run = world
        .cinch()
        .args(["run", "--harness", "claude", "--repo"])
        .arg(&dir)
        .arg("Third")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(dir.join("third.txt").exists() && !repo.join("third.txt").exists());

    let again = world.cinch().args(["fork", first]).output().unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("exists already"),
        "{again:?}"
    );
    let text = world
        .cinch()
        .args(["fork", first, "--into"])
        .arg(world.path("elsewhere"))
        .args(["--branch", "try/other"])
        .output()
        .unwrap();
    assert!(text.status.success(), "{text:?}");
    assert!(String::from_utf8_lossy(&text.stdout).contains("on branch try/other"));
    assert!(world.path("elsewhere/first.txt").exists());
    let unknown = world.cinch().args(["fork", "t-nope"]).output().unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no turn `t-nope`"));
}
