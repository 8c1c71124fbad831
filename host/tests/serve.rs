//! `cinch serve` over HTTP on loopback with a real SQLite file: auth,
//! accounts, environments, the code-task API with the fake CLI, live events
//! and a restart.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

const API_KEY: &str = "sk-test-key-0123456789";
const SECRET: &str = "s3cret-value-never-shown";

/// A temp world: cinch's home, a repository, the fake CLI on a bin folder.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let world = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for sub in ["bin", "repo", "user-home", "home"] {
            std::fs::create_dir_all(world.path(sub)).unwrap();
        }
        cinch_fake_cli::install(&world.path("bin"), "claude");
        let repo = world.path("repo");
        git(&repo, &["init", "-q"]);
        std::fs::write(repo.join("readme.txt"), "hello\n").unwrap();
        git(&repo, &["add", "."]);
        git(
            &repo,
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
        world.script(Script::default());
        world
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn script(&self, script: Script) {
        script.write_to(&self.path("script.json")).unwrap();
    }

    fn cinch(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_cinch"));
        command
            .env_clear()
            .env(
                "PATH",
                format!("{}:/usr/bin:/bin", self.path("bin").display()),
            )
            .env("HOME", self.path("user-home"))
            .env("CINCH_HOME", self.path("home"))
            .env("FAKE_CLI_SCRIPT", self.path("script.json"))
            .env("ANTHROPIC_API_KEY", API_KEY)
            .env("CINCH_LOG", "info");
        command
    }

    /// Starts `cinch serve` on a free loopback port and waits until it answers.
    fn serve(&self) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let stdout = std::fs::File::create(self.path(&format!("stdout-{port}"))).unwrap();
        let stderr = std::fs::File::create(self.path(&format!("stderr-{port}"))).unwrap();
        let child = self
            .cinch()
            .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--home"])
            .arg(self.path("home"))
            .stdout(stdout)
            .stderr(stderr)
            .spawn()
            .unwrap();
        let server = Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            stdout: self.path(&format!("stdout-{port}")),
            stderr: self.path(&format!("stderr-{port}")),
        };
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            if let Ok(response) = agent().get(&server.url("/openapi.json")).call()
                && response.status() == 200
            {
                return server;
            }
            assert!(
                Instant::now() < deadline,
                "cinch serve did not start: {}",
                std::fs::read_to_string(&server.stderr).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn admin_token(&self) -> String {
        let path = self.path("home/admin-token");
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        std::fs::read_to_string(path).unwrap().trim().to_owned()
    }

    /// A second account, made with `cinch account create`: its id and token.
    fn second_account(&self) -> (String, String) {
        let output = self
            .cinch()
            .args(["account", "create", "other", "--home"])
            .arg(self.path("home"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let text = String::from_utf8(output.stdout).unwrap();
        let mut lines = text.lines();
        (
            lines.next().unwrap().to_owned(),
            lines.next().unwrap().to_owned(),
        )
    }
}

fn git(repo: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(repo)
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn recorded(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/recorded")
        .join(name)
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .into()
}

/// A running `cinch serve`, killed (by its pid) when dropped.
struct Server {
    child: Child,
    base: String,
    stdout: PathBuf,
    stderr: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An answer: status, content type and body (JSON when it parses).
#[derive(Debug)]
struct Answer {
    status: u16,
    content_type: String,
    text: String,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_str(&self.text).unwrap_or_else(|_| panic!("not JSON: {self:?}"))
    }

    fn data(&self) -> Value {
        self.json()["data"].clone()
    }

    fn field_errors(&self) -> Vec<String> {
        assert_eq!(self.content_type, "application/problem+json", "{self:?}");
        self.json()["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|error| error["field"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Server {
    fn log(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn request(&self, method: &str, path: &str, token: Option<&str>, body: Option<&str>) -> Answer {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(self.url(path));
        if let Some(token) = token {
            builder = builder.header("Authorization", format!("Bearer {token}"));
        }
        let mut response = match body {
            Some(body) => agent().run(
                builder
                    .header("Content-Type", "application/json")
                    .body(body.as_bytes().to_vec())
                    .unwrap(),
            ),
            None => agent().run(builder.body(()).unwrap()),
        }
        .unwrap();
        Answer {
            status: response.status().as_u16(),
            content_type: response
                .headers()
                .get("content-type")
                .map(|value| value.to_str().unwrap().to_owned())
                .unwrap_or_default(),
            text: response.body_mut().read_to_string().unwrap(),
        }
    }

    /// Sends `head` and then `body_bytes` bytes of body (ignoring a server
    /// that stops reading) and returns what comes back until it closes.
    fn raw(&self, head: &str, body_bytes: usize) -> String {
        use std::io::{Read as _, Write as _};
        let mut stream =
            std::net::TcpStream::connect(self.base.trim_start_matches("http://")).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut writer = stream.try_clone().unwrap();
        let head = head.to_owned();
        let sender = std::thread::spawn(move || {
            let _ = writer.write_all(head.as_bytes());
            let _ = writer.write_all(&vec![b'x'; body_bytes]);
        });
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        let _ = stream.shutdown(std::net::Shutdown::Both);
        sender.join().unwrap();
        String::from_utf8_lossy(&answer).into_owned()
    }

    fn get(&self, path: &str, token: &str) -> Answer {
        self.request("GET", path, Some(token), None)
    }

    fn post(&self, path: &str, token: &str, body: &Value) -> Answer {
        self.request("POST", path, Some(token), Some(&body.to_string()))
    }

    /// Reads the SSE stream of `run` until `done` says so: (id, event, data).
    fn events(
        &self,
        run: &str,
        token: &str,
        last_event_id: Option<u64>,
        done: impl Fn(&[(u64, String, Value)]) -> bool,
    ) -> Vec<(u64, String, Value)> {
        let mut request = agent()
            .get(&self.url(&format!("/api/runs/{run}/events")))
            .header("Authorization", format!("Bearer {token}"));
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.call().unwrap();
        assert_eq!(response.status(), 200);
        assert!(
            response.headers()["content-type"]
                .to_str()
                .unwrap()
                .starts_with("text/event-stream")
        );
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
                events.push((
                    id,
                    std::mem::take(&mut name),
                    serde_json::from_str(&data).unwrap(),
                ));
                data.clear();
                if done(&events) {
                    break;
                }
            }
        }
        events
    }
}

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
            "repository": "/srv/shop",
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
            "name",
            "repository",
            "setup",
            "env.1BAD",
            "env.OK",
            "colour"
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
        &json!({"name": "shop", "repository": "/y"}),
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
    ] {
        assert!(openapi["paths"].get(path).is_some(), "{path} missing");
    }

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
            "harness",
            "session_id",
            "notes[0].text",
            "timeout_minutes"
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
