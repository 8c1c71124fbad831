//! What cinch promises of every turn, over HTTP against a real `cinch serve`
//! (and through the `cinch` commands): no secret leaves it, a turn's result
//! outlives its raw log, one turn at a time in a working tree and no more
//! than the cap, a code task runs in its agent's home, a turn always ends in
//! one of the five statuses, each harness lists its models and efforts, and
//! Codex runs on the model provider its config names.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

const CONFIG_SECRET: &str = "cfg-secret-0f3a9c1d";
const ENV_SECRET: &str = "env-secret-7b2e4d8a";

/// A claude stream-json turn that says `text`, runs `command` and ends
/// with `result` (an error when `is_error`).
fn claude_turn(
    session: &str,
    text: &str,
    command: &str,
    result: &str,
    is_error: bool,
) -> Vec<Value> {
    vec![
        json!({"type": "system", "subtype": "init", "session_id": session, "model": "m"}),
        json!({"type": "assistant", "session_id": session,
               "message": {"content": [{"type": "text", "text": text}]}}),
        json!({"type": "assistant", "session_id": session,
               "message": {"content": [{"type": "tool_use", "id": "t1", "name": "Bash",
                                        "input": {"command": command}}]}}),
        json!({"type": "result", "subtype": "success", "is_error": is_error, "result": result,
               "session_id": session}),
    ]
}

/// The admin's account, its environment `name` on `repo` (with `secrets`).
fn environment(api: &Api, name: &str, repo: &Path, secrets: Value) -> String {
    api.environment(json!({
        "name": name,
        "repository": repo.display().to_string(),
        "secrets": secrets,
    }))
}

/// A new git repository `name` with one commit, beside the world's.
fn another_repo(world: &World, name: &str) -> PathBuf {
    let repo = world.path(name);
    committed_repo(&repo, "two\n");
    repo
}

/// Polls the code task at `path` until it has ended.
fn wait_ended(server: &Server, path: &str, token: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let task = server.get(path, token);
        assert_eq!(task.status, 200, "{task:?}");
        let task = task.json();
        if task["status"] != "running" {
            return task;
        }
        assert!(Instant::now() < deadline, "the task never ended: {task}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Every file under `dir`, but those under `except`.
fn files_under(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::symlink_metadata(&path).unwrap();
        if meta.is_dir() {
            files_under(&path, found);
        } else if meta.is_file() {
            found.push(path);
        }
    }
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|window| window == needle.as_bytes())
}

/// The agents of the admin's account: (id, name, connected).
fn agents(api: &Api) -> Vec<(String, String, bool)> {
    let answer = api.get("/agents");
    assert_eq!(answer.status, 200, "{answer:?}");
    answer
        .data()
        .as_array()
        .unwrap()
        .iter()
        .map(|agent| {
            (
                agent["id"].as_str().unwrap().to_owned(),
                agent["name"].as_str().unwrap().to_owned(),
                agent["connected"].as_bool().unwrap(),
            )
        })
        .collect()
}

#[test]
fn no_secret_leaves_cinch() {
    let world = World::new();
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[secrets]\nCONFIG_TOKEN = \"{CONFIG_SECRET}\"\n",
            world.operator_config()
        ),
    )
    .unwrap();
    let secrets = [CONFIG_SECRET, ENV_SECRET, API_KEY];
    let all = secrets.join(" ");
    world.script(Script {
        lines: claude_turn(
            "sess-secret",
            &format!("I can see {all}"),
            &format!("echo {all} > out.txt"),
            &format!("The keys are {all}"),
            true,
        ),
        stderr: Some(format!("warning: keys {all}\n")),
        exit_code: 1,
        line_delay_ms: 20,
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = environment(
        &api,
        "app",
        &world.path("repo"),
        json!({"ENV_TOKEN": ENV_SECRET}),
    );
    let mut answers: Vec<String> = Vec::new();

    // A code task: its answer, status, log, diff and events.
    let started = server.post(
        "/api/runs/run-secret/tasks?wait=true",
        &token,
        &json!({"brief": "Print the keys.", "harness": "claude", "repo": "app"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let task = started.json();
    assert_eq!(task["status"], "failed", "{task}");
    assert!(
        task["result"]["result_text"]
            .as_str()
            .unwrap()
            .contains("[redacted]"),
        "{task}"
    );
    let call = task["call_id"].as_str().unwrap();
    let turn = task["turn_id"].as_str().unwrap().to_owned();
    answers.push(started.text.clone());
    let task_path = format!("/api/runs/run-secret/tasks/{call}");
    for path in [
        task_path.clone(),
        format!("{task_path}/log"),
        format!("{task_path}/diff"),
    ] {
        let answer = server.get(&path, &token);
        assert!(answer.status < 500, "{path}: {answer:?}");
        answers.push(answer.text);
    }
    let log = server.get(&format!("{task_path}/log"), &token).json();
    assert!(
        log["raw"].as_str().unwrap().contains("[redacted]"),
        "the log shows the masked lines: {log}"
    );
    let events = server.events("run-secret", &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    assert!(events.len() > 1);
    answers.extend(events.iter().map(|(_, _, data)| data.to_string()));

    // A session's turn: its messages and events.
    let created = api.post(
        "/tasks",
        json!({"prompt": "Print the keys.", "environment_id": environment, "harness": "claude"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task_id = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task_id);
    let session_id = session["id"].as_str().unwrap().to_owned();
    let settled = api.wait(&task_id, &session_id, "the end of its turn", |session| {
        session["status"] == "idle" || session["status"] == "closed"
    });
    answers.push(settled.to_string());
    let messages = api.messages(&task_id, &session_id, "");
    assert_eq!(messages.status, 200);
    assert!(messages.text.contains("[redacted]"), "{messages:?}");
    answers.push(messages.text);
    answers.push(api.get(&format!("/tasks/{task_id}")).text);
    let session_events = server.events(&session_id, &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    answers.extend(session_events.iter().map(|(_, _, data)| data.to_string()));

    // `cinch log` and `cinch turns`.
    for args in [
        vec!["log", turn.as_str(), "--json"],
        vec!["log", turn.as_str()],
        vec!["turns", "--json"],
    ] {
        let output = world.cinch().args(&args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        answers.push(String::from_utf8_lossy(&output.stdout).into_owned());
        answers.push(String::from_utf8_lossy(&output.stderr).into_owned());
    }
    for answer in &answers {
        for secret in secrets {
            assert!(!answer.contains(secret), "{secret} in an answer: {answer}");
        }
    }

    // Nothing on disk, the database and its WAL included, nor the server's
    // own output: environments' secrets are sealed in the database.
    let home = world.path("home");
    drop(server);
    let mut files = Vec::new();
    files_under(&home, &mut files);
    // The configured secrets' own file, which the operator wrote.
    files.retain(|file| file != &home.join("config.toml"));
    if world.database.is_none() {
        assert!(files.iter().any(|file| file.ends_with("cinch.db-wal")));
    } else {
        let database = world.database_text();
        for secret in secrets {
            assert!(!database.contains(secret), "{secret} in the database");
        }
    }
    assert!(
        files
            .iter()
            .any(|file| file.to_string_lossy().ends_with(".harness.jsonl"))
    );
    let server_output = std::fs::read_dir(world.dir.path())
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            let name = path.file_name().unwrap().to_string_lossy();
            name.starts_with("stdout-") || name.starts_with("stderr-")
        });
    for file in files.into_iter().chain(server_output) {
        let bytes = std::fs::read(&file).unwrap();
        for secret in secrets {
            assert!(!contains(&bytes, secret), "{secret} in {}", file.display());
        }
    }
}

#[test]
fn a_turns_result_outlives_its_raw_log() {
    let world = World::new();
    let server = world.serve();
    let admin = world.admin_token();
    let second = world.agent_token("second");
    let api = Api::new(&server, &admin);
    environment(&api, "app", &world.path("repo"), json!({}));
    let start = |token: &str, run: &str, n: usize| -> String {
        world.script(Script {
            lines: claude_turn("s", "done", "true", "done", false),
            write_files: [("count.txt".to_owned(), format!("{n}\n"))].into(),
            ..Script::default()
        });
        let done = server.post(
            &format!("/api/runs/{run}/tasks?wait=true"),
            token,
            &json!({"brief": "Count.", "harness": "claude"}),
        );
        assert_eq!(done.status, 201, "{done:?}");
        assert_eq!(done.json()["status"], "completed", "{done:?}");
        done.json()["call_id"].as_str().unwrap().to_owned()
    };
    // Another agent's run first: the oldest of all, yet its agent's newest.
    let theirs = start(&second, "theirs", 0);
    let mut ours = Vec::new();
    for n in 0..=20 {
        ours.push(start(&admin, &format!("ours-{n:02}"), n + 1));
    }
    let log = |token: &str, run: &str, call: &str| {
        server.get(&format!("/api/runs/{run}/tasks/{call}/log"), token)
    };
    // Turns ending this fast have their prunes done together a moment
    // after (`turn_dir::retention`).
    let pruned = eventually("the oldest run's log pruned", || {
        let answer = log(&admin, "ours-00", &ours[0]);
        (answer.status == 404).then_some(answer)
    });
    assert_eq!(log(&second, "theirs", &theirs).status, 200);
    assert_eq!(log(&admin, "ours-01", &ours[1]).status, 200);
    assert_eq!(pruned.json()["type"], "urn:cinch:log.pruned");
    assert!(
        pruned.json()["detail"]
            .as_str()
            .unwrap()
            .contains("20 most recent runs"),
        "{pruned:?}"
    );

    // Its status, result and diff stay, across a restart too.
    let oldest = format!("/api/runs/ours-00/tasks/{}", ours[0]);
    let check = |server: &Server| {
        let task = server.get(&oldest, &admin);
        assert_eq!(task.status, 200, "{task:?}");
        assert_eq!(task.json()["status"], "completed");
        assert_eq!(
            task.json()["result"]["files_changed"][0]["path"],
            "count.txt"
        );
        let diff = server.get(&format!("{oldest}/diff"), &admin);
        assert_eq!(diff.status, 200, "{diff:?}");
        assert!(diff.text.contains("+1\n"), "{}", diff.text);
    };
    check(&server);
    drop(server);
    let server = world.serve();
    check(&server);
    assert_eq!(
        server.get(&format!("{oldest}/log"), &admin).json()["type"],
        "urn:cinch:log.pruned"
    );
}

#[test]
fn one_turn_at_a_time_in_a_working_tree_and_no_more_than_the_cap() {
    let world = World::new();
    let server = world.serve_with(&["--max-turns", "2"]);
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    environment(&api, "app", &world.path("repo"), json!({}));
    environment(&api, "same", &world.path("repo"), json!({}));
    environment(&api, "other", &another_repo(&world, "repo-2"), json!({}));
    environment(&api, "third", &another_repo(&world, "repo-3"), json!({}));
    world.script(Script {
        lines: claude_turn("s", "working", "true", "done", false),
        write_files: [("a.txt".to_owned(), "a\n".to_owned())].into(),
        hang_ms: 60_000,
        ..Script::default()
    });
    let post = |run: &str, repo: &str| {
        server.post(
            &format!("/api/runs/{run}/tasks"),
            &token,
            &json!({"brief": "Work.", "harness": "claude", "repo": repo}),
        )
    };
    let first = post("run-a", "app");
    assert_eq!(first.status, 201, "{first:?}");
    let first_turn = first.json()["turn_id"].as_str().unwrap().to_owned();
    let first_path = format!(
        "/api/runs/run-a/tasks/{}",
        first.json()["call_id"].as_str().unwrap()
    );

    // The same working tree, under another name: refused while the first runs.
    let busy = post("run-b", "same");
    assert_eq!(busy.status, 409, "{busy:?}");
    assert_eq!(busy.json()["type"], "urn:cinch:worktree.busy");
    assert!(
        busy.json()["detail"]
            .as_str()
            .unwrap()
            .contains(&first_turn),
        "{busy:?}"
    );
    // Other working trees run beside it, up to the cap of two turns at once.
    let beside = post("run-c", "other");
    assert_eq!(beside.status, 201, "{beside:?}");
    let full = post("run-d", "third");
    assert_eq!(full.status, 429, "{full:?}");
    assert_eq!(full.json()["type"], "urn:cinch:capacity.full");
    assert!(
        full.json()["detail"]
            .as_str()
            .unwrap()
            .contains("--max-turns")
    );
    assert_eq!(server.get(&first_path, &token).json()["status"], "running");
    // The home indexes each running turn under its working tree.
    let indexed = working_tree_index(&world);
    assert_eq!(indexed.len(), 2, "{indexed:?}");
    assert!(
        indexed.iter().any(|turns| turns.contains(&first_turn)),
        "{indexed:?}"
    );

    let cancel = server.request("POST", &format!("{first_path}/cancel"), Some(&token), None);
    assert_eq!(cancel.status, 202, "{cancel:?}");
    assert_eq!(
        wait_ended(&server, &first_path, &token)["status"],
        "cancelled"
    );
    world.script(Script {
        lines: claude_turn("s", "done", "true", "done", false),
        write_files: [("b.txt".to_owned(), "b\n".to_owned())].into(),
        ..Script::default()
    });
    let beside_path = format!(
        "/api/runs/run-c/tasks/{}",
        beside.json()["call_id"].as_str().unwrap()
    );
    let cancel = server.request("POST", &format!("{beside_path}/cancel"), Some(&token), None);
    assert_eq!(cancel.status, 202, "{cancel:?}");
    let deadline = Instant::now() + Duration::from_secs(30);
    let second = loop {
        // The slot comes free a moment after the result.
        let answer = post("run-b", "same");
        if answer.status != 429 || Instant::now() > deadline {
            break answer;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(second.status, 201, "{second:?}");
    let second_path = format!(
        "/api/runs/run-b/tasks/{}",
        second.json()["call_id"].as_str().unwrap()
    );
    let ended = wait_ended(&server, &second_path, &token);
    assert_eq!(ended["status"], "completed");
    // Its diff is its own: b.txt, not the first turn's a.txt.
    let diff = server.get(&format!("{second_path}/diff"), &token);
    assert!(diff.text.contains("b/b.txt"), "{}", diff.text);
    assert!(!diff.text.contains("a.txt"), "{}", diff.text);

    // Once every turn has ended, the home keeps no lock file and no folder
    // of the working trees' index: they do not pile up, one per session.
    assert_eq!(
        wait_ended(&server, &beside_path, &token)["status"],
        "cancelled"
    );
    assert_eq!(working_tree_index(&world), Vec::<Vec<String>>::new());
    let locks: Vec<_> = std::fs::read_dir(world.path("home/locks"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    assert!(locks.is_empty(), "{locks:?}");
}

/// The turns the home's index lists under each working tree.
fn working_tree_index(world: &World) -> Vec<Vec<String>> {
    let mut index = Vec::new();
    for entry in std::fs::read_dir(world.path("home/worktrees")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            let turns = std::fs::read_dir(entry.path())
                .unwrap()
                .map(|turn| turn.unwrap().file_name().into_string().unwrap())
                .collect();
            index.push(turns);
        }
    }
    index
}

#[test]
fn a_code_task_runs_in_its_agents_home_and_reports_its_metadata() {
    let world = World::new();
    let server = world.serve();
    let admin = world.admin_token();
    let second = world.agent_token("second");
    let api = Api::new(&server, &admin);
    environment(&api, "app", &world.path("repo"), json!({}));
    let agents = agents(&api);
    let connected = agents.iter().find(|agent| agent.2).unwrap().0.clone();
    let other = agents
        .iter()
        .find(|agent| agent.1 == "second")
        .unwrap()
        .0
        .clone();
    let record = world.path("out/record.json");
    for (token, agent, run) in [(&admin, &connected, "run-1"), (&second, &other, "run-2")] {
        world.script(Script {
            lines: claude_turn("s", "done", "true", "done", false),
            write_files: [("out.txt".to_owned(), format!("{run}\n"))].into(),
            record: Some(record.clone()),
            ..Script::default()
        });
        let done = server.post(
            &format!("/api/runs/{run}/tasks?wait=true"),
            token,
            &json!({"brief": "Write.", "harness": "claude"}),
        );
        assert_eq!(done.status, 201, "{done:?}");
        let seen: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
        assert_eq!(
            seen["env"]["HOME"],
            world.path("home/agents").join(agent).display().to_string()
        );
        let task = server.get(
            &format!(
                "/api/runs/{run}/tasks/{}",
                done.json()["call_id"].as_str().unwrap()
            ),
            token,
        );
        let result = &task.json()["result"];
        assert_eq!(result["repository"], "app", "{result}");
        let log_path = result["log_path"].as_str().unwrap();
        assert!(log_path.ends_with(".harness.jsonl"), "{log_path}");
        assert!(Path::new(log_path).is_file(), "{log_path}");
        for sha in ["start_sha", "end_sha"] {
            let value = result[sha].as_str().unwrap_or_default();
            assert_eq!(value.len(), 40, "{sha}: {result}");
        }
        assert_ne!(result["start_sha"], result["end_sha"]);
    }
}

#[test]
fn a_turn_whose_result_cannot_be_read_ends_interrupted() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    environment(&api, "app", &world.path("repo"), json!({}));
    world.script(Script {
        lines: vec![
            json!({"type": "system", "subtype": "init", "session_id": "s-lost", "model": "m"}),
        ],
        hang_ms: 1_500,
        ..Script::default()
    });
    let started = server.post(
        "/api/runs/run-1/tasks",
        &token,
        &json!({"brief": "Work.", "harness": "claude"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let turn = started.json()["turn_id"].as_str().unwrap().to_owned();
    let path = format!(
        "/api/runs/run-1/tasks/{}",
        started.json()["call_id"].as_str().unwrap()
    );
    // Where the result goes, something that is not a file: it cannot be written.
    std::fs::create_dir_all(world.path("home/turns").join(&turn).join("result.json")).unwrap();
    let ended = wait_ended(&server, &path, &token);
    assert_eq!(ended["status"], "interrupted", "{ended}");
    assert_eq!(ended["session_id"], "s-lost");
    assert_eq!(
        ended["result"]["detail"],
        "The harness exited, and its result could not be read."
    );
    let events = server.events("run-1", &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    let (_, _, data) = events.last().unwrap();
    assert_eq!(data["status"], "interrupted");
}

#[test]
fn each_harness_lists_its_models_and_an_unknown_model_falls_back() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let models = server.get("/v1/models", &token);
    assert_eq!(models.status, 200);
    let models = models.data();
    let harness = |name: &str| {
        models
            .as_array()
            .unwrap()
            .iter()
            .find(|entry| entry["harness"] == name)
            .unwrap_or_else(|| panic!("no {name} in {models}"))
            .clone()
    };
    for name in ["claude", "codex", "gemini", "cursor"] {
        let entry = harness(name);
        let listed = entry["models"].as_array().unwrap();
        assert!(!listed.is_empty(), "{entry}");
        assert!(listed.contains(&entry["default_model"]), "{entry}");
        if let Some(effort) = entry["default_effort"].as_str() {
            assert!(
                entry["efforts"]
                    .as_array()
                    .unwrap()
                    .contains(&json!(effort))
            );
        }
    }
    let claude = harness("claude");
    for effort in ["low", "medium", "high"] {
        assert!(
            claude["efforts"]
                .as_array()
                .unwrap()
                .contains(&json!(effort))
        );
    }
    assert!(
        harness("codex")["efforts"]
            .as_array()
            .unwrap()
            .contains(&json!("xhigh"))
    );
    assert!(
        harness("codex")["models"]
            .as_array()
            .unwrap()
            .contains(&json!("openai/gpt-5.6-sol")),
        "the spec's example id"
    );

    // An unknown model gets the default; a known effort is passed on.
    let environment = environment(&api, "app", &world.path("repo"), json!({}));
    let record = world.path("out/record.json");
    world.script(Script {
        lines: claude_turn("s", "done", "true", "done", false),
        record: Some(record.clone()),
        ..Script::default()
    });
    let created = api.post(
        "/tasks",
        json!({"prompt": "Hi.", "environment_id": environment, "harness": "claude",
               "model": "claude-no-such-model", "effort": "xhigh"}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task_id = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task_id);
    assert_eq!(
        session["harness_model"], claude["default_model"],
        "{session}"
    );
    assert_eq!(session["harness_effort"], "xhigh", "{session}");
    let session_id = session["id"].as_str().unwrap();
    api.wait_status(&task_id, session_id, "idle");
    let argv = |record: &Path| -> Vec<String> {
        let seen: Value = serde_json::from_str(&std::fs::read_to_string(record).unwrap()).unwrap();
        seen["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|arg| arg.as_str().unwrap().to_owned())
            .collect()
    };
    let args = argv(&record);
    let default = claude["default_model"].as_str().unwrap();
    assert!(
        args.windows(2).any(|pair| pair == ["--model", default]),
        "{args:?}"
    );
    assert!(
        args.windows(2).any(|pair| pair == ["--effort", "xhigh"]),
        "{args:?}"
    );

    // A code task too: the unknown model never reaches the CLI.
    std::fs::remove_file(&record).unwrap();
    let done = server.post(
        "/api/runs/run-1/tasks?wait=true",
        &token,
        &json!({"brief": "Hi.", "harness": "claude", "model": "claude-no-such-model"}),
    );
    assert_eq!(done.status, 201, "{done:?}");
    let args = argv(&record);
    assert!(
        !args.iter().any(|arg| arg.contains("no-such-model")),
        "{args:?}"
    );
}

#[test]
fn codex_runs_on_the_model_provider_its_config_names() {
    let world = World::new();
    cinch_fake_cli::install(&world.path("bin"), "codex");
    let codex_home = world.path("user-home/.codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let check = |extra: &[(&str, &str)]| {
        let mut command = world.cinch();
        command.args(["check", "codex"]);
        for (name, value) in extra {
            command.env(name, value);
        }
        command.output().unwrap()
    };

    // A custom provider whose key is set: that is the credential.
    std::fs::write(
        codex_home.join("config.toml"),
        "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\nenv_key = \"MOCK_API_KEY\"\nwire_api = \"responses\"\n",
    )
    .unwrap();
    let output = check(&[("MOCK_API_KEY", "sk-mock-provider-key")]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        text.contains("credential: model provider mock (MOCK_API_KEY)"),
        "{text}"
    );
    // Without its key it cannot run, and the problem names the provider.
    let output = check(&[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(!output.status.success(), "{output:?}");
    assert!(
        text.contains("model provider `mock`") && text.contains("MOCK_API_KEY"),
        "{text}"
    );

    // A turn runs on it, on the model its config names, and its key is
    // masked like any credential.
    let record = world.path("out/record.json");
    world.script(Script {
        replay: Some(recorded("codex/s1.jsonl")),
        lines: vec![json!({"type": "item.completed", "item": {"id": "x", "type": "agent_message", "text": "key sk-mock-provider-key"}})],
        record: Some(record.clone()),
        ..Script::default()
    });
    let run = world
        .cinch()
        .env("MOCK_API_KEY", "sk-mock-provider-key")
        .args([
            "run",
            "--harness",
            "codex",
            "--model",
            "openai/gpt-5.6-sol",
            "--repo",
        ])
        .arg(world.path("repo"))
        .args(["--json", "Say hi."])
        .output()
        .unwrap();
    let seen: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let argv: Vec<&str> = seen["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arg| arg.as_str().unwrap())
        .collect();
    assert!(!argv.contains(&"-m"), "{argv:?}");
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!stderr.contains("no_credential"), "{stderr}");
    let result: Value = serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{run:?}"));
    assert_eq!(result["status"], "completed", "{result}");
    assert!(!stdout.contains("sk-mock-provider-key"), "{stdout}");

    // A local provider needs no key at all.
    std::fs::write(
        codex_home.join("config.toml"),
        "model_provider = \"ollama\"\n",
    )
    .unwrap();
    let output = check(&[]);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        text.contains("credential: model provider ollama (local, no key)"),
        "{text}"
    );
}
