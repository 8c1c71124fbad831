//! `cinch serve` over HTTP on loopback with a real SQLite file: auth,
//! accounts, environments, the code-task API with the fake CLI, live events
//! and a restart.

use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

use crate::support;

use support::*;

#[test]
fn auth_accounts_environments_and_a_restart() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    // The token was printed once, on the first start.
    assert_eq!(
        std::fs::read_to_string(&server.stdout).unwrap().trim(),
        token
    );

    // No token, a bad token: 401 as problem+json.
    for bad in [None, Some("cinch_not-a-token")] {
        let answer = server.request("GET", "/v1/accounts", bad, None);
        assert_eq!(answer.status, 401, "{answer:?}");
        assert_eq!(answer.content_type, "application/problem+json");
        let problem = answer.json();
        assert_eq!(problem["status"], 401);
        assert!(problem["type"].as_str().unwrap().starts_with("urn:cinch:"));
        assert!(problem["title"].is_string() && problem["detail"].is_string());
    }
    assert_eq!(server.request("GET", "/v1/models", None, None).status, 401);

    let accounts = server.get("/v1/accounts", &token);
    assert_eq!(accounts.status, 200);
    assert_eq!(accounts.json()["meta"]["next_cursor"], Value::Null);
    let account = accounts.data()[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(accounts.data().as_array().unwrap().len(), 1);
    let members = server
        .get(&format!("/v1/accounts/{account}/members"), &token)
        .data();
    assert_eq!(members[0]["name"], "admin");
    assert_eq!(members[0]["role"], "admin");
    let agents = server
        .get(&format!("/v1/accounts/{account}/agents"), &token)
        .data();
    assert_eq!(agents[0]["connected"], true);
    let models = server.get("/v1/models", &token).data();
    let claude = models
        .as_array()
        .unwrap()
        .iter()
        .find(|harness| harness["harness"] == "claude")
        .unwrap();
    assert!(claude["efforts"].is_array() && claude["display_name"] == "Claude Code");

    // Environments: create, read, list, update, delete; secrets never come back.
    let environments = format!("/v1/accounts/{account}/environments");
    let created = server.post(
        &environments,
        &token,
        &json!({
            "name": "shop",
            "repository": world.path("repo").display().to_string(),
            "setup": ["npm ci"],
            "env": {"NODE_ENV": "test"},
            "secrets": {"NPM_TOKEN": SECRET}
        }),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let environment = created.data();
    let id = environment["id"].as_str().unwrap().to_owned();
    assert_eq!(environment["secret_names"], json!(["NPM_TOKEN"]));
    assert_eq!(environment["env"], json!({"NODE_ENV": "test"}));
    let one = format!("{environments}/{id}");
    let patched = server.request(
        "PATCH",
        &one,
        Some(&token),
        Some(&json!({"setup": ["npm ci", "npm run build"], "secrets": {"OTHER": "x-other-secret", "NPM_TOKEN": null}}).to_string()),
    );
    assert_eq!(patched.status, 200, "{patched:?}");
    assert_eq!(patched.data()["secret_names"], json!(["OTHER"]));
    assert_eq!(patched.data()["setup"], json!(["npm ci", "npm run build"]));
    for answer in [
        &created,
        &patched,
        &server.get(&one, &token),
        &server.get(&environments, &token),
    ] {
        assert_eq!(answer.status, 200.max(answer.status.min(201)), "{answer:?}");
        assert!(!answer.text.contains(SECRET) && !answer.text.contains("x-other-secret"));
    }
    let stderr = std::fs::read_to_string(&server.stderr).unwrap();
    assert!(
        !stderr.contains(SECRET) && !stderr.contains(&token),
        "{stderr}"
    );

    // Malformed bodies: 422 with every field at fault, and nothing stored.
    let invalid = server.post(
        &environments,
        &token,
        &json!({"name": "bad name!", "repository": "relative/path", "setup": "npm ci",
                "env": {"1BAD": "x", "OK": 3}, "colour": "blue"}),
    );
    assert_eq!(invalid.status, 422, "{invalid:?}");
    assert_eq!(
        invalid.field_errors(),
        [
            "colour",
            "env.1BAD",
            "env.OK",
            "name",
            "repository",
            "setup"
        ]
    );
    let missing = server.post(&environments, &token, &json!({}));
    assert_eq!(missing.field_errors(), ["name", "repository"]);
    for (body, status) in [("{not json", 400), ("[1, 2]", 422), ("", 400)] {
        let answer = server.request("POST", &environments, Some(&token), Some(body));
        assert_eq!(answer.status, status, "{body}: {answer:?}");
        assert_eq!(answer.content_type, "application/problem+json");
    }
    // A body past the limit is refused.
    let size = 2 << 20;
    let head = server.raw(
        &format!(
            "POST {environments} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nConnection: close\r\nContent-Length: {size}\r\n\r\n"
        ),
        size,
    );
    assert!(head.starts_with("HTTP/1.1 413"), "{head}");
    assert!(head.contains("application/problem+json"), "{head}");
    let duplicate = server.post(
        &environments,
        &token,
        &json!({"name": "shop", "repository": world.path("repo").display().to_string()}),
    );
    assert_eq!(duplicate.status, 409, "{duplicate:?}");
    assert_eq!(duplicate.field_errors(), ["name"]);
    assert_eq!(
        server
            .get(&environments, &token)
            .data()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(server.get("/v1/nothing", &token).status, 404);

    // Another account sees none of this one's objects.
    let (other_account, other) = world.second_account();
    let theirs = server.get("/v1/accounts", &other).data();
    assert_eq!(theirs.as_array().unwrap().len(), 1);
    assert_eq!(theirs[0]["id"], other_account.as_str());
    for path in [
        &environments,
        &one,
        &format!("/v1/accounts/{account}/members"),
    ] {
        let answer = server.get(path, &other);
        assert_eq!(answer.status, 404, "{path}: {answer:?}");
        assert_eq!(answer.content_type, "application/problem+json");
    }
    assert_eq!(
        server.request("DELETE", &one, Some(&other), None).status,
        404
    );
    assert_eq!(
        server
            .get(
                &format!("/v1/accounts/{other_account}/environments/{id}"),
                &other
            )
            .status,
        404
    );
    // A token made with `cinch token create` works.
    let output = world
        .cinch()
        .args([
            "token",
            "create",
            "--member",
            "alice",
            "--account",
            &account,
            "--home",
        ])
        .arg(world.path("home"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let alice = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    assert_eq!(server.get(&one, &alice).status, 200);

    // The OpenAPI document lists the routes.
    let openapi = server.request("GET", "/openapi.json", None, None).json();
    assert!(openapi["openapi"].as_str().unwrap().starts_with("3.1"));
    for path in [
        "/v1/accounts",
        "/v1/accounts/{account}/environments/{id}",
        "/api/runs/{run}/tasks",
        "/api/runs/{run}/tasks/{call}/log",
        "/api/runs/{run}/events",
        "/v1/accounts/{account}/agents/{agent}",
        "/v1/accounts/{account}/tasks",
        "/v1/accounts/{account}/tasks/{task}/attachments/{attachment}/contents",
        "/v1/accounts/{account}/tasks/{task}/sessions/{session}",
        "/v1/accounts/{account}/tasks/{task}/sessions/{session}/abort",
        "/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages",
        "/v1/accounts/{account}/tasks/{task}/sessions/{session}/events",
    ] {
        assert!(openapi["paths"].get(path).is_some(), "{path} missing");
    }
    // Every operation has an id of its own: generated clients name their
    // calls (and TypeScript its `operations` type) by it.
    let mut operation_ids: Vec<&str> = openapi["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|item| item.as_object().unwrap().values())
        .map(|operation| operation["operationId"].as_str().unwrap())
        .collect();
    let count = operation_ids.len();
    operation_ids.sort_unstable();
    operation_ids.dedup();
    assert_eq!(operation_ids.len(), count, "an operationId repeats");

    // A restart keeps what was acknowledged, and prints no token again.
    drop(server);
    let server = world.serve();
    assert_eq!(std::fs::read_to_string(&server.stdout).unwrap(), "");
    let kept = server.get(&one, &token);
    assert_eq!(kept.status, 200);
    assert_eq!(kept.data()["setup"], json!(["npm ci", "npm run build"]));
    assert_eq!(
        server.request("DELETE", &one, Some(&token), None).status,
        204
    );
    assert_eq!(server.get(&one, &token).status, 404);
}

#[test]
fn code_tasks_with_the_fake_cli() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tasks = "/api/runs/run-1/tasks";

    // No environment yet: the error says how to make one.
    let none = server.post(tasks, &token, &json!({"brief": "hi", "harness": "claude"}));
    assert_eq!(none.status, 422, "{none:?}");
    assert_eq!(none.field_errors(), ["repo"]);
    let environments = format!("/v1/accounts/{account}/environments");
    let repo = world.path("repo").display().to_string();
    for name in ["app", "other"] {
        let created = server.post(
            &environments,
            &token,
            &json!({"name": name, "repository": repo}),
        );
        assert_eq!(created.status, 201, "{created:?}");
    }
    let ambiguous = server.post(tasks, &token, &json!({"brief": "hi", "harness": "claude"}));
    assert!(
        ambiguous.json()["detail"]
            .as_str()
            .unwrap()
            .contains("app, other"),
        "{ambiguous:?}"
    );
    let unknown = server.post(
        tasks,
        &token,
        &json!({"brief": "hi", "harness": "claude", "repo": "nope"}),
    );
    assert!(
        unknown.json()["detail"]
            .as_str()
            .unwrap()
            .contains("there are app, other")
    );
    let invalid = server.post(
        tasks,
        &token,
        &json!({"harness": "nope", "timeout_minutes": 61, "session_id": "a b",
                "notes": [{"name": "x"}], "repo": "app"}),
    );
    assert_eq!(
        invalid.field_errors(),
        [
            "brief",
            "notes[0].text",
            "session_id",
            "timeout_minutes",
            "harness"
        ]
    );

    // A completed turn, waited for.
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        line_delay_ms: 20,
        write_files: [("out.txt".to_owned(), "hello\n".to_owned())].into(),
        ..Script::default()
    });
    let done = server.post(
        &format!("{tasks}?wait=true"),
        &token,
        &json!({"brief": "Create out.txt.", "harness": "claude", "repo": "app",
                "notes": [{"name": "style.md", "text": "Be brief."}], "timeout_minutes": 5}),
    );
    assert_eq!(done.status, 201, "{done:?} {}", server.log());
    let task = done.json();
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["run_id"], "run-1");
    assert_eq!(task["session_id"], "e0771f6d-6bd9-438b-9a0b-2885249e66ac");
    let result = &task["result"];
    assert_eq!(result["files_changed"][0]["path"], "out.txt");
    assert!(
        result["result_text"]
            .as_str()
            .unwrap()
            .starts_with("completed · Claude Code · ")
    );
    let call = task["call_id"].as_str().unwrap().to_owned();

    let again = server.get(&format!("{tasks}/{call}"), &token);
    assert_eq!(again.json()["status"], "completed");
    let log = server.get(&format!("{tasks}/{call}/log"), &token).json();
    let keys: Vec<&str> = log
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "bytes",
            "driver",
            "events",
            "lines",
            "lines_truncated",
            "raw",
            "raw_truncated",
            "unparsed"
        ]
    );
    assert_eq!(log["lines"][1], "Bash: echo hello > out.txt");
    assert!(log["raw"].as_str().unwrap().ends_with('\n'));
    let diff = server.get(&format!("{tasks}/{call}/diff"), &token);
    assert_eq!(diff.status, 200);
    assert!(diff.content_type.starts_with("text/x-diff"));
    assert!(
        diff.text.contains("+++ b/out.txt\n@@ -0,0 +1 @@\n+hello\n"),
        "{}",
        diff.text
    );
    let missing = server.get(&format!("{tasks}/call_nope/log"), &token);
    assert_eq!(missing.status, 404);
    assert_eq!(missing.json()["detail"], "that call has no harness log");

    // The run's events, from the start and resumed.
    let events = server.events("run-1", &token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    let progress: Vec<&Value> = events
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .map(|(_, _, data)| data)
        .collect();
    let lines: Vec<&str> = progress
        .iter()
        .flat_map(|data| data["lines"].as_array().unwrap())
        .map(|line| line.as_str().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "Claude Code started (claude-sonnet-4-5)",
            "Bash: echo hello > out.txt",
            "I ran the command; out.txt now contains hello."
        ]
    );
    assert_eq!(progress[0]["run_id"], "run-1");
    assert_eq!(progress[0]["tool_call_id"], call.as_str());
    let ids: Vec<u64> = events.iter().map(|(id, _, _)| *id).collect();
    assert_eq!(ids, (1..=ids.len() as u64).collect::<Vec<_>>());
    let resumed = server.events("run-1", &token, Some(ids[ids.len() - 2]), |events| {
        !events.is_empty()
    });
    assert_eq!(resumed[0].0, ids[ids.len() - 1]);
    assert_eq!(resumed[0].1, "tool.ended");

    // Another account: the run and its calls are 404.
    let (_, other) = world.second_account();
    assert_eq!(server.get(&format!("{tasks}/{call}"), &other).status, 404);
    assert_eq!(
        server.get(&format!("{tasks}/{call}/log"), &other).status,
        404
    );
    assert_eq!(server.get("/api/runs/run-1/events", &other).status, 404);
    assert_eq!(
        server
            .post(tasks, &other, &json!({"brief": "hi", "harness": "claude"}))
            .status,
        404
    );

    // A hanging turn: cancelled, then 409 on a second cancel.
    world.script(Script {
        lines: vec![
            json!({"type": "system", "subtype": "init", "session_id": "s-hang", "model": "m"}),
        ],
        hang_ms: -1,
        ..Script::default()
    });
    let started = server.post(
        "/api/runs/run-2/tasks",
        &token,
        &json!({"brief": "Hang.", "harness": "claude", "repo": "other"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    assert_eq!(started.json()["status"], "running");
    let call = started.json()["call_id"].as_str().unwrap().to_owned();
    let path = format!("/api/runs/run-2/tasks/{call}");
    assert_eq!(server.get(&format!("{path}/diff"), &token).status, 409);
    // Cancelled once the harness has said which session it runs.
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.get(&path, &token).json()["session_id"] != "s-hang" {
        assert!(
            Instant::now() < deadline,
            "the turn never named its session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let cancel = server.request("POST", &format!("{path}/cancel"), Some(&token), None);
    assert_eq!(cancel.status, 202, "{cancel:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    let ended = loop {
        let task = server.get(&path, &token).json();
        if task["status"] != "running" {
            break task;
        }
        assert!(Instant::now() < deadline, "the cancelled turn did not end");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(ended["status"], "cancelled", "{ended}");
    assert_eq!(ended["session_id"], "s-hang");
    assert_eq!(
        server
            .request("POST", &format!("{path}/cancel"), Some(&token), None)
            .status,
        409
    );

    // After a restart, a call's result is read back from cinch's home.
    drop(server);
    let server = world.serve();
    let kept = server.get(&path, &token);
    assert_eq!(kept.json()["status"], "cancelled", "{kept:?}");
}

/// The README's quick start, `cargo run --release -- serve`, runs the server:
/// the package has a second binary, the helper, so cargo must be told which
/// one `cargo run` means. Asked of cargo itself rather than by building
/// again, which would compile cinch with other features.
#[test]
fn cargo_run_means_the_cinch_binary() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let metadata: Value = serde_json::from_slice(&output.stdout).unwrap();
    let package = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|package| package["name"] == "cinch")
        .unwrap();
    let binaries: Vec<&str> = package["targets"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|target| target["kind"] == json!(["bin"]))
        .map(|target| target["name"].as_str().unwrap())
        .collect();
    assert!(binaries.contains(&"cinch-helper"), "{binaries:?}");
    assert_eq!(package["default_run"], "cinch", "{binaries:?}");
}

/// A JSON-RPC request to `/mcp` as `token`: the status, `WWW-Authenticate`
/// and the answer's JSON.
fn mcp(server: &Server, token: Option<&str>, method: &str, params: Value) -> (u16, String, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
    let mut request = ureq::http::Request::builder()
        .method("POST")
        .uri(server.url("/mcp"))
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    if let Some(token) = token {
        request = request.header("Authorization", format!("Bearer {token}"));
    }
    let mut response = agent()
        .run(request.body(body.to_string().into_bytes()).unwrap())
        .unwrap();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|value| value.to_str().unwrap().to_owned())
        .unwrap_or_default();
    let text = response.body_mut().read_to_string().unwrap();
    let json = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    (response.status().as_u16(), challenge, json)
}

/// A tool's answer (`result` of `tools/call`) as `token`.
fn mcp_tool(server: &Server, token: &str, tool: &str, arguments: Value) -> Value {
    let (status, _, answer) = mcp(
        server,
        Some(token),
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    );
    assert_eq!(status, 200, "{answer:#}");
    answer["result"].clone()
}

#[test]
fn the_mcp_endpoint_needs_a_token_and_keeps_to_its_account() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    world.script(Script {
        lines: claude_turn("sess-mcp", "Hello from the agent."),
        write_files: [("hello.txt".to_owned(), "hello\n".to_owned())].into(),
        ..Script::default()
    });
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    let (task, session) = api.task_on(&environment, "Say hello.");
    api.wait(&task, &session, "idle after its turn", |s| {
        s["status"] == "idle" && s["harness_session_id"] == "sess-mcp"
    });
    let (_, other_token) = world.second_account();

    // No token, a bad token: 401 before any MCP, saying what to send.
    for bad in [None, Some("cinch_not-a-token")] {
        let (status, challenge, problem) = mcp(&server, bad, "tools/list", json!({}));
        assert_eq!(status, 401, "{problem:#}");
        assert_eq!(challenge, "Bearer");
        assert_eq!(problem["status"], 401);
    }
    // JSON-RPC, not REST: the API's document does not describe it.
    let document = server.request("GET", "/openapi.json", None, None).json();
    assert!(document["paths"].get("/mcp").is_none());
    assert!(document["paths"].get("/v1/accounts").is_some());

    let (status, _, initialized) = mcp(
        &server,
        Some(&token),
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "serve-test", "version": "1"}}),
    );
    assert_eq!(status, 200, "{initialized:#}");
    assert_eq!(initialized["result"]["serverInfo"]["name"], "cinch");
    let (_, _, listed) = mcp(&server, Some(&token), "tools/list", json!({}));
    let mut names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "abort_task",
            "get_result",
            "list_environments",
            "send_message",
            "start_task",
            "wait_for_task"
        ]
    );

    // The account's token reads its environment and its task's turn.
    let mine = mcp_tool(&server, &token, "list_environments", json!({}));
    assert_eq!(mine["isError"], false, "{mine:#}");
    assert_eq!(
        mine["structuredContent"]["environments"][0]["id"],
        json!(environment)
    );
    let result = mcp_tool(&server, &token, "get_result", json!({"task_id": task}));
    assert_eq!(result["isError"], false, "{result:#}");
    let result = &result["structuredContent"];
    assert_eq!(result["session_id"], json!(session));
    assert_eq!(result["turn"]["status"], "completed");
    assert_eq!(result["turn"]["final_message"], "Hello from the agent.");
    assert!(
        result["diff"]["text"]
            .as_str()
            .unwrap()
            .contains("+++ b/hello.txt"),
        "{result:#}"
    );

    // A follow-up, waited for at once: done means its turn ran, not the
    // moment its message was handed to a turn that had yet to start.
    world.script(Script {
        lines: claude_turn("sess-mcp", "Followed up."),
        ..Script::default()
    });
    let sent = mcp_tool(
        &server,
        &token,
        "send_message",
        json!({"task_id": task, "message": "Follow up."}),
    );
    assert_eq!(sent["isError"], false, "{sent:#}");
    let waited = mcp_tool(
        &server,
        &token,
        "wait_for_task",
        json!({"task_id": task, "timeout_seconds": 60}),
    );
    assert_eq!(waited["structuredContent"]["done"], true, "{waited:#}");
    let result = mcp_tool(&server, &token, "get_result", json!({"task_id": task}));
    assert_eq!(
        result["structuredContent"]["turn"]["final_message"], "Followed up.",
        "{result:#}"
    );

    // Another account's token: no environments, and the task is not found,
    // as a tool error; nothing of the task changes.
    let before = api.messages(&task, &session, "").data();
    let theirs = mcp_tool(&server, &other_token, "list_environments", json!({}));
    assert_eq!(theirs["structuredContent"]["environments"], json!([]));
    for (tool, arguments) in [
        ("get_result", json!({"task_id": task})),
        (
            "wait_for_task",
            json!({"task_id": task, "timeout_seconds": 1}),
        ),
        (
            "send_message",
            json!({"task_id": task, "message": "do something else"}),
        ),
        (
            "abort_task",
            json!({"task_id": task, "session_id": session}),
        ),
    ] {
        let refused = mcp_tool(&server, &other_token, tool, arguments);
        assert_eq!(refused["isError"], true, "{tool}: {refused:#}");
        let text = refused["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("not_found: no such"), "{tool}: {text}");
    }
    assert_eq!(api.messages(&task, &session, "").data(), before);
    // At CINCH_LOG=info, the MCP SDK's notes on each request stay out of the log.
    let log = server.log();
    assert!(log.contains("environment created"), "{log}");
    assert!(!log.contains("rmcp::"), "{log}");
}

/// A turn of a task on `environment` that records the harness's
/// invocation: the variables it ran with.
fn turn_env(world: &World, api: &Api, environment: &str, record: &str) -> Value {
    let path = world.path(&format!("out/{record}.json"));
    world.script(Script {
        lines: claude_turn("sess-k", "Done."),
        record: Some(path.clone()),
        ..Script::default()
    });
    let (task, session) = api.task_on(environment, "Deploy");
    api.wait_status(&task, &session, "idle");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    record["env"].clone()
}

#[test]
fn rotating_the_secrets_key_seals_every_secret_again_and_turns_still_get_them() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
        "secrets": {"DEPLOY_TOKEN": SECRET, "OTHER_TOKEN": "other-secret-value"},
    }));
    let sealed = || world.query_text("SELECT owner_id, name, sealed FROM secrets ORDER BY name");
    let before = sealed();
    assert_eq!(before.len(), 2, "{before:?}");
    let home_key = world.path("home/secrets.key");
    let old_key = std::fs::read_to_string(&home_key).unwrap();
    if world.database.is_none() {
        // A first start with no key made one, private, and said where.
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&home_key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert!(
            server.log().contains("made the secrets key"),
            "{}",
            server.log()
        );
        assert_eq!(old_key.trim().len(), 64);
    }
    drop(server);

    // A current key that is not the database's changes nothing.
    let new_key = "a1".repeat(32);
    std::fs::write(world.path("new.key"), format!("{new_key}\n")).unwrap();
    let rotate = |current: &[&str]| {
        world
            .cinch()
            .args(["secrets", "rotate-key", "--new-key-file"])
            .arg(world.path("new.key"))
            .arg("--home")
            .arg(world.path("home"))
            .args(current)
            .output()
            .unwrap()
    };
    std::fs::write(world.path("wrong.key"), "b2".repeat(32)).unwrap();
    let wrong = rotate(&[
        "--secrets-key-file",
        world.path("wrong.key").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&wrong.stderr);
    assert!(!wrong.status.success(), "{wrong:?}");
    assert!(
        stderr.contains("is not the one this database's secrets are sealed with"),
        "{stderr}"
    );
    assert_eq!(sealed(), before);

    // With the home's key: every value sealed again, and the home's key file
    // holds the new key.
    let rotated = rotate(&[]);
    let stdout = String::from_utf8_lossy(&rotated.stdout);
    assert!(rotated.status.success(), "{rotated:?}");
    assert!(stdout.contains("sealed 2 secrets again"), "{stdout}");
    let after = sealed();
    assert_eq!(after.len(), 2);
    for (old, new) in before.iter().zip(&after) {
        assert_eq!(old[..2], new[..2]);
        assert_ne!(old[2], new[2], "{} sealed again", new[1]);
        assert!(!new[2].contains(SECRET) && !new[2].contains("other-secret-value"));
    }
    assert_eq!(std::fs::read_to_string(&home_key).unwrap().trim(), new_key);

    // The old key no longer opens the database.
    std::fs::write(world.path("old.key"), &old_key).unwrap();
    let stderr = world.refused_start(
        &[
            "--secrets-key-file",
            world.path("old.key").to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        stderr.contains("is not the one this database's secrets are sealed with"),
        "{stderr}"
    );

    // A node with the new key gives turns the secrets.
    let server = world.serve();
    let api = Api::new(&server, &token);
    let env = turn_env(&world, &api, &environment, "after-rotation");
    assert_eq!(env["DEPLOY_TOKEN"], SECRET);
    assert_eq!(env["OTHER_TOKEN"], "other-secret-value");
}

#[test]
fn the_secret_files_of_an_older_version_move_into_the_database_once() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let environment = api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    drop(server);

    // What an older version left in the home: an environment's file, one
    // half written, one of an environment since deleted, and a running
    // turn's values to mask, which stay.
    let vault = world.path("home/secrets");
    std::fs::create_dir_all(vault.join("turns")).unwrap();
    let file = vault.join(format!("{environment}.json"));
    std::fs::write(&file, json!({"LEGACY_TOKEN": SECRET}).to_string()).unwrap();
    let partial = vault.join(format!("{environment}.partial"));
    std::fs::write(&partial, json!({"LEGACY_TOKEN": SECRET}).to_string()).unwrap();
    let orphan = vault.join("env_0123456789abcdef0123456789a.json");
    std::fs::write(&orphan, json!({"GONE": SECRET}).to_string()).unwrap();
    let turn = vault.join("turns/turn_0123456789abcdef0123456789a.json");
    std::fs::write(&turn, "[\"masked-while-it-runs\"]").unwrap();

    let server = world.serve();
    let api = Api::new(&server, &token);
    assert!(server.log().contains("moved 1 secrets from 1 files in"));
    let read = api.get(&format!("/environments/{environment}"));
    assert_eq!(
        read.data()["secret_names"],
        json!(["LEGACY_TOKEN"]),
        "{read:?}"
    );
    for gone in [&file, &partial, &orphan] {
        assert!(!gone.exists(), "{} stayed", gone.display());
    }
    assert!(turn.exists());
    let sealed = world.query_text("SELECT owner_id, name, sealed FROM secrets");
    assert_eq!(sealed.len(), 1, "{sealed:?}");
    assert_eq!(
        sealed[0][..2],
        [environment.clone(), "LEGACY_TOKEN".to_owned()]
    );
    assert!(!world.database_text().contains(SECRET));
    assert_eq!(
        world.home_files_holding(SECRET),
        Vec::<std::path::PathBuf>::new()
    );
    let env = turn_env(&world, &api, &environment, "imported");
    assert_eq!(env["LEGACY_TOKEN"], SECRET);

    // A restart finds nothing more to import and keeps what was.
    drop(server);
    let server = world.serve();
    assert!(!server.log().contains("moved"), "{}", server.log());
    let read = Api::new(&server, &token).get(&format!("/environments/{environment}"));
    assert_eq!(read.data()["secret_names"], json!(["LEGACY_TOKEN"]));
    assert_eq!(
        world.query_text("SELECT owner_id, name, sealed FROM secrets"),
        sealed
    );
}

/// While a turn runs, the values its output is masked with wait in the home
/// sealed under the node's secrets key: no file holds the environment's
/// secret. A server killed and started again opens them and still masks
/// what the turn shows afterwards.
#[test]
fn a_running_turns_secrets_wait_sealed_and_a_restarted_server_still_masks_them() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    api.environment(json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
        "secrets": {"DEPLOY_TOKEN": SECRET},
    }));
    // The secret comes out only after a pause long enough for a restart.
    world.script(Script {
        lines: vec![
            json!({"type": "system", "subtype": "init", "session_id": "s-kept", "model": "m"}),
            json!({"type": "assistant", "session_id": "s-kept",
                   "message": {"content": [{"type": "text", "text": format!("deploying with {SECRET}")}]}}),
        ],
        line_delay_ms: 6000,
        hang_ms: 60_000,
        ..Script::default()
    });
    let started = server.post(
        "/api/runs/run-k/tasks",
        &token,
        &json!({"brief": "Deploy.", "harness": "claude", "repo": "shop"}),
    );
    assert_eq!(started.status, 201, "{started:?}");
    let call = started.json()["call_id"].as_str().unwrap().to_owned();
    let path = format!("/api/runs/run-k/tasks/{call}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.get(&path, &token).json()["session_id"] != "s-kept" {
        assert!(
            Instant::now() < deadline,
            "the turn never named its session"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // Running: the values to mask are kept, sealed.
    let kept: Vec<_> = std::fs::read_dir(world.path("home/secrets/turns"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        world.home_files_holding(SECRET),
        Vec::<std::path::PathBuf>::new()
    );
    assert!(
        std::fs::read_to_string(&kept[0])
            .unwrap()
            .contains("\"sealed\"")
    );

    // Killed (SIGKILL) and started again: the turn, still running, is
    // followed again and what it shows next is masked.
    drop(server);
    let server = world.serve();
    assert_eq!(server.get(&path, &token).json()["status"], "running");
    let shows_the_message = |events: &[(u64, String, Value)]| {
        events
            .iter()
            .any(|(_, _, data)| data.to_string().contains("deploying with"))
    };
    let events = server.events("run-k", &token, None, shows_the_message);
    let shown: Vec<String> = events.iter().map(|(_, _, data)| data.to_string()).collect();
    assert!(
        shown
            .iter()
            .any(|data| data.contains("deploying with [redacted]")),
        "{shown:#?}"
    );
    assert!(
        !shown.iter().any(|data| data.contains(SECRET)),
        "{shown:#?}"
    );
    let log = server.get(&format!("{path}/log"), &token);
    assert_eq!(log.status, 200, "{log:?}");
    assert!(
        log.text.contains("deploying with [redacted]"),
        "{}",
        log.text
    );
    assert!(!log.text.contains(SECRET));

    // Once it has ended, the kept values are gone and nothing holds the secret.
    let cancel = server.request("POST", &format!("{path}/cancel"), Some(&token), None);
    assert_eq!(cancel.status, 202, "{cancel:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while server.get(&path, &token).json()["status"] == "running" {
        assert!(Instant::now() < deadline, "the cancelled turn did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(!kept[0].exists(), "{} stayed", kept[0].display());
    assert_eq!(
        world.home_files_holding(SECRET),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn an_environment_and_its_secrets_are_stored_together_or_not_at_all() {
    let world = World::new();
    let server = world.serve();
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let body = |name: &str| {
        json!({
            "name": name,
            "repository": world.path("repo").display().to_string(),
            "secrets": {"DEPLOY_TOKEN": SECRET},
        })
    };

    // No file of the home is written: a folder that cannot be written
    // where secret files once went changes nothing.
    let folder = world.path("home/secrets");
    let _ = std::fs::remove_dir_all(&folder);
    std::fs::write(&folder, "not a folder").unwrap();
    let created = api.post("/environments", body("first"));
    assert_eq!(created.status, 201, "{created:?}");
    assert_eq!(created.data()["secret_names"], json!(["DEPLOY_TOKEN"]));
    std::fs::remove_file(&folder).unwrap();

    // The database refuses the secret's row, as a full disk would: the
    // environment is not stored either, and the same request, once the
    // fault is gone, creates it.
    let (inject, heal) = match world.database {
        None => (
            "CREATE TRIGGER no_room BEFORE INSERT ON secrets \
             BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END",
            "DROP TRIGGER no_room",
        ),
        Some(_) => (
            "CREATE FUNCTION no_room() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'could not extend file: No space left on device'; END $$; \
             CREATE TRIGGER no_room BEFORE INSERT ON secrets FOR EACH ROW EXECUTE FUNCTION no_room()",
            "DROP TRIGGER no_room ON secrets",
        ),
    };
    world.execute_sql(inject);
    let refused = api.post("/environments", body("second"));
    assert!(refused.status >= 500, "{refused:?}");
    assert!(!refused.text.contains(SECRET));
    let names = || -> Vec<Value> {
        api.get("/environments")
            .data()
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].clone())
            .collect()
    };
    assert_eq!(names(), [json!("first")]);
    world.execute_sql(heal);
    let retried = api.post("/environments", body("second"));
    assert_eq!(retried.status, 201, "{retried:?}");
    assert_eq!(retried.data()["secret_names"], json!(["DEPLOY_TOKEN"]));
    assert_eq!(names(), [json!("first"), json!("second")]);
    let sealed = world.query_text("SELECT name FROM secrets");
    assert_eq!(sealed.len(), 2, "{sealed:?}");
}

/// `/v1/accounts/{a}/tokens`: a member makes a token for themselves or an
/// agent (its text answered once), lists the account's tokens (never their
/// text), revokes their own or an agent's (refused at once, however recently
/// it was seen) but not another member's; agents' tokens and other accounts
/// get nothing.
#[test]
fn tokens_are_made_listed_and_revoked_within_their_account() {
    let world = World::new();
    let server = world.serve();
    let admin = world.admin_token();
    let account = server.get("/v1/accounts", &admin).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let tokens = format!("/v1/accounts/{account}/tokens");
    let listed = |token: &str| -> Vec<Value> {
        let answer = server.get(&tokens, token);
        assert_eq!(answer.status, 200, "{answer:?}");
        assert!(
            !answer.text.contains("cinch_"),
            "a listing holds no token's text: {answer:?}"
        );
        answer.data().as_array().unwrap().clone()
    };
    let before = listed(&admin);
    assert_eq!(before.len(), 1, "{before:?}");
    assert_eq!(before[0]["owner_kind"], "member");
    assert_eq!(before[0]["owner_name"], "admin");

    // One for the caller: its text once, and it works.
    let made = server.post(&tokens, &admin, &json!({}));
    assert_eq!(made.status, 201, "{made:?}");
    let mine = made.data();
    let secret = mine["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("cinch_"), "{mine}");
    assert!(mine["id"].as_str().unwrap().starts_with("tok_"), "{mine}");
    assert_eq!(mine["owner_name"], "admin");
    assert_eq!(server.get("/v1/accounts", &secret).status, 200);
    assert_eq!(listed(&admin).len(), 2);

    // One for the connected agent; none for an agent of nobody's.
    let agent = server
        .get(&format!("/v1/accounts/{account}/agents"), &admin)
        .data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agents = server.post(
        &tokens,
        &admin,
        &json!({"agent_id": agent, "name": "  CI  "}),
    );
    assert_eq!(agents.status, 201, "{agents:?}");
    assert_eq!(agents.data()["owner_kind"], "agent");
    assert_eq!(agents.data()["name"], "CI");
    // A name is one line of at most 100 characters, or none at all.
    for bad in [json!(" "), json!("x".repeat(101)), json!("two\nlines")] {
        let refused = server.post(&tokens, &admin, &json!({"name": bad}));
        assert_eq!(refused.status, 422, "{bad}: {refused:?}");
        assert_eq!(refused.field_errors(), ["name"], "{bad}");
    }
    let names: Vec<Value> = listed(&admin)
        .iter()
        .map(|token| token["name"].clone())
        .collect();
    assert_eq!(names, [Value::Null, Value::Null, json!("CI")]);
    let agent_secret = agents.data()["secret"].as_str().unwrap().to_owned();
    let unknown = server.post(&tokens, &admin, &json!({"agent_id": "agt_nope"}));
    assert_eq!(unknown.status, 422, "{unknown:?}");
    assert_eq!(unknown.field_errors(), ["agent_id"]);
    assert_eq!(listed(&admin).len(), 3);

    // An agent's token manages no tokens; another account sees none of these.
    assert_eq!(server.get(&tokens, &agent_secret).status, 403);
    let (_, other) = world.second_account();
    assert_eq!(server.get(&tokens, &other).status, 404);
    let mine_path = format!("{tokens}/{}", mine["id"].as_str().unwrap());
    assert_eq!(
        server
            .request("DELETE", &mine_path, Some(&other), None)
            .status,
        404
    );
    assert_eq!(server.get("/v1/accounts", &secret).status, 200);

    // Another member's token is theirs to revoke. `cinch token create` names
    // a token as the API does, with the same rules.
    let create = |name: &str| {
        world
            .cinch()
            .args(["token", "create", "--member", "bob", "--account", &account])
            .args(["--name", name, "--home"])
            .arg(world.path("home"))
            .output()
            .unwrap()
    };
    let before = listed(&admin).len();
    let blank = create("  ");
    assert!(!blank.status.success(), "{blank:?}");
    let said = String::from_utf8_lossy(&blank.stderr);
    assert!(
        said.contains("--name: a token's name cannot be blank"),
        "{said}"
    );
    assert_eq!(listed(&admin).len(), before, "a refused name made no token");
    let output = create(" bob's laptop ");
    assert!(output.status.success(), "{output:?}");
    let bob = String::from_utf8(output.stdout).unwrap().trim().to_owned();
    let bobs = listed(&admin)
        .into_iter()
        .find(|token| token["owner_name"] == "bob")
        .unwrap();
    assert_eq!(bobs["name"], "bob's laptop", "{bobs:#}");
    let bobs_path = format!("{tokens}/{}", bobs["id"].as_str().unwrap());
    let refused = server.request("DELETE", &bobs_path, Some(&admin), None);
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(server.get("/v1/accounts", &bob).status, 200);

    // Revoked: refused at once, though the server saw it valid a moment ago.
    assert_eq!(
        server
            .request("DELETE", &mine_path, Some(&admin), None)
            .status,
        204
    );
    assert_eq!(server.get("/v1/accounts", &secret).status, 401);
    assert_eq!(
        server
            .request("DELETE", &mine_path, Some(&admin), None)
            .status,
        404
    );
    assert_eq!(
        server
            .request("DELETE", &format!("{tokens}/tok_zz"), Some(&admin), None)
            .status,
        404
    );
    assert_eq!(
        listed(&admin).len(),
        3,
        "admin's, the agent's and bob's are left"
    );
    assert_eq!(
        server
            .request("DELETE", &bobs_path, Some(&bob), None)
            .status,
        204
    );
    assert_eq!(server.get("/v1/accounts", &bob).status, 401);
}

/// The claude entry of `GET /v1/models`: its `credential`.
fn claude_credential(api: &Api) -> Value {
    let models = api.server.get("/v1/models", &api.token);
    assert_eq!(models.status, 200, "{models:?}");
    models
        .data()
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["harness"] == "claude")
        .unwrap()["credential"]
        .clone()
}

/// A server's turn gets a key only as its environment's secret, from `[secrets]` or by
/// `[serve] pass_env`, never from the server's own environment as such: the server says so
/// per harness at its start and in `GET /v1/models`, and a turn without one fails naming
/// those ways (before, it said "set ANTHROPIC_API_KEY, or log in with `claude`", which a
/// server's operator had done).
#[test]
fn a_servers_turns_get_a_key_only_the_ways_it_names() {
    let world = World::new();
    // The operator passes on the fake CLI's script, not the model key.
    let config = world
        .operator_config()
        .replace(", \"ANTHROPIC_API_KEY\"", "");
    std::fs::write(world.path("home/config.toml"), &config).unwrap();
    let mut serve = world.cinch();
    serve
        .env_remove("ANTHROPIC_API_KEY")
        .args(["serve", "--home"])
        .arg(world.path("home"));
    let server = Server::start(serve, world.dir.path());
    let token = world.admin_token();
    let api = Api::new(&server, &token);
    let log = server.log();
    assert!(
        log.contains("claude: turns have a credential only from their environment's secrets; to give one: add ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN as a secret of the task's environment"),
        "{log}"
    );
    assert!(!log.contains("is set where cinch serve started"), "{log}");
    let credential = claude_credential(&api);
    assert_eq!(credential["available"], false, "{credential:#}");
    assert_eq!(credential["source"], Value::Null);
    assert_eq!(
        credential["variables"],
        json!(["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"])
    );
    let ways = credential["how_to_add"].as_array().unwrap();
    assert!(
        ways[0]
            .as_str()
            .unwrap()
            .contains("secret of the task's environment")
    );
    assert!(ways[1].as_str().unwrap().contains("under [secrets]"));
    assert!(
        ways[2]
            .as_str()
            .unwrap()
            .contains("pass_env = [\"ANTHROPIC_API_KEY\"]")
    );

    // A task on an environment without the key fails, naming the ways.
    let bare = api.environment(json!({
        "name": "bare", "repository": world.path("repo").display().to_string(),
    }));
    let (task, session) = api.task_on(&bare, "Deploy");
    let failed = api.wait(&task, &session, "a refused turn", |s| {
        s["close_reason"] == "turn_failure"
    });
    let error = failed["error_message"].as_str().unwrap();
    assert!(error.contains("harness.no_credential"), "{error}");
    assert!(
        error.contains("a server turn gets only what cinch gives it")
            && error.contains("secret of the task's environment")
            && error.contains("under [secrets]")
            && error.contains("pass_env"),
        "{error}"
    );
    assert!(
        !error.contains("or log in with `claude` (it writes"),
        "{error}"
    );

    // The key as the environment's secret reaches the turn.
    let keyed = api.environment(json!({
        "name": "keyed", "repository": world.path("repo").display().to_string(),
        "secrets": {"ANTHROPIC_API_KEY": "sk-from-the-environment"},
    }));
    let env = turn_env(&world, &api, &keyed, "environment-secret");
    assert_eq!(env["ANTHROPIC_API_KEY"], "sk-from-the-environment");
    drop(server);

    // The key in the server's environment, not passed on: the start names it.
    let server = Server::start(
        {
            let mut serve = world.cinch();
            serve.args(["serve", "--home"]).arg(world.path("home"));
            serve
        },
        world.dir.path(),
    );
    let log = server.log();
    assert!(
        log.contains("(ANTHROPIC_API_KEY is set where cinch serve started, but a turn gets none of the server's variables unless [serve] pass_env lists it)"),
        "{log}"
    );
    let api = Api::new(&server, &token);
    assert_eq!(claude_credential(&api)["available"], false);
    drop(server);

    // Passed on by pass_env: every turn has it, and the server says where it comes from.
    std::fs::write(world.path("home/config.toml"), world.operator_config()).unwrap();
    let server = world.serve();
    let log = server.log();
    assert!(
        log.contains("claude: every turn has a credential: ANTHROPIC_API_KEY, passed on from the server's environment by [serve] pass_env"),
        "{log}"
    );
    let api = Api::new(&server, &token);
    let credential = claude_credential(&api);
    assert_eq!(credential["available"], true, "{credential:#}");
    assert_eq!(credential["source"], "pass_env");
    assert_eq!(credential["variable"], "ANTHROPIC_API_KEY");
    let env = turn_env(&world, &api, &bare, "pass-env");
    assert_eq!(env["ANTHROPIC_API_KEY"], API_KEY);
    drop(server);

    // From [secrets]: the same, named so.
    std::fs::write(
        world.path("home/config.toml"),
        format!("{config}\n[secrets]\nANTHROPIC_API_KEY = \"sk-from-the-config\"\n"),
    )
    .unwrap();
    let server = world.serve();
    let api = Api::new(&server, &token);
    let credential = claude_credential(&api);
    assert_eq!(credential["source"], "server_secrets", "{credential:#}");
    let env = turn_env(&world, &api, &bare, "server-secrets");
    assert_eq!(env["ANTHROPIC_API_KEY"], "sk-from-the-config");
}
