//! The web app in a real headless Chromium against a real `cinch serve` with
//! the fake CLI as `claude`: `tests/browser/app.test.mjs` signs in, starts a
//! task from the form, watches its code-task block run and finish with its
//! cost and its reply, opens every view (Metadata with the event types the
//! driver did not know), sends a follow-up, reverts it and undoes the revert,
//! aborts a long turn, and reads a turn's markdown reply (rendered, folded,
//! its HTML and script link inert, live and after a reload); then, with tasks
//! made through the API (one by an agent's token), it switches between a
//! task's sessions, reads the internal lines and the "needs someone" queue,
//! and checks the pages at a phone's width.
//!
//! It needs Chromium and the browser tests' npm packages, which `.ci/run`
//! installs; without them it fails and says so rather than passing unseen.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cinch_fake_cli::Script;
use serde_json::{Value, json};

mod support;

use support::{World, claude_turn, git};

const SESSION: &str = "s-app-1";

/// A Claude stream-json event line of the fake CLI's scripts.
fn tool_use(id: &str, command: &str) -> Value {
    json!({"type": "assistant", "session_id": SESSION, "message": {"role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": id, "name": "Bash", "input": {"command": command}}]}})
}

fn init() -> Value {
    json!({"type": "system", "subtype": "init", "session_id": SESSION, "model": "claude-sonnet-4-5",
        "cwd": "/repo", "tools": ["Bash"]})
}

fn answer(text: &str) -> Vec<Value> {
    vec![
        json!({"type": "assistant", "session_id": SESSION, "message": {"role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": text,
            "session_id": SESSION, "num_turns": 2, "duration_ms": 100,
            "usage": {"input_tokens": 1000, "output_tokens": 200}, "total_cost_usd": 0.0123}),
    ]
}

/// The final message of the queued turn: markdown the app renders under its
/// block, long enough to be folded, with raw HTML and a `javascript:` link
/// that must stay inert (`window.pwned` stays unset).
fn markdown_reply() -> String {
    let long_line = "a-long-unbroken-word-".repeat(12);
    let mut reply = format!(
        r#"## What I changed

I added **one line** to `out.txt`, as *asked*:

```sh
echo again >> out.txt
# {long_line}
```

- checked the file
- ran the tests
  1. unit
  2. browser

> Nothing else changed.

<script>window.pwned = "script"</script>
<img src="x" onerror="window.pwned = 'img'">
[a trap](javascript:window.pwned='link') and [the docs](https://example.com/docs).

### Every step
"#
    );
    for n in 1..=30 {
        reply.push_str(&format!("{n}. step {n} of the long part\n"));
    }
    reply
}

/// The fake CLI's scripts for the browser test's turns, as JSON.
fn scripts() -> [(&'static str, String); 4] {
    // A few seconds of progress, one line at a time, and a file written.
    let mut first = vec![init()];
    for (n, command) in [
        "ls",
        "cat readme.txt",
        "echo hello > out.txt",
        "git status --short",
        "cat out.txt",
        "wc -l out.txt",
        "git diff --stat",
    ]
    .iter()
    .enumerate()
    {
        first.push(tool_use(&format!("t{n}"), command));
    }
    // A newer CLI's event the driver does not know, twice, and a line that
    // is not JSON: Metadata counts them.
    first.push(json!({"type": "brand_new_event", "session_id": SESSION}));
    first.push(json!({"type": "brand_new_event", "session_id": SESSION}));
    first.push(Value::String("Warning: not JSON".into()));
    first.extend(answer("I wrote out.txt; it says hello."));
    let first = Script {
        lines: first,
        line_delay_ms: 700,
        write_files: [("out.txt".to_owned(), "hello\n".to_owned())].into(),
        ..Script::default()
    };
    let mut follow_up = vec![init(), tool_use("t9", "echo again >> out.txt")];
    follow_up.extend(answer("I added a second line."));
    let follow_up = Script {
        lines: follow_up,
        line_delay_ms: 200,
        write_files: [("out.txt".to_owned(), "hello\nagain\n".to_owned())].into(),
        ..Script::default()
    };
    let mut markdown = vec![init(), tool_use("t11", "echo again >> out.txt")];
    markdown.extend(answer(&markdown_reply()));
    let markdown = Script {
        lines: markdown,
        line_delay_ms: 200,
        ..Script::default()
    };
    // Runs until it is stopped.
    let hang = Script {
        lines: vec![init(), tool_use("t10", "sleep 1000")],
        hang_ms: -1,
        ..Script::default()
    };
    [
        ("CINCH_SCRIPT_FIRST", first),
        ("CINCH_SCRIPT_FOLLOW_UP", follow_up),
        ("CINCH_SCRIPT_HANG", hang),
        ("CINCH_SCRIPT_MARKDOWN", markdown),
    ]
    .map(|(name, script)| (name, serde_json::to_string(&script).unwrap()))
}

/// Where the browser tests and their packages are.
fn browser_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/browser")
}

/// Screenshots go here, so CI's output can point at them.
fn screenshot_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CINCH_SCREENSHOTS") {
        return PathBuf::from(dir);
    }
    // The binary is <target>/<profile>/cinch.
    Path::new(env!("CARGO_BIN_EXE_cinch"))
        .ancestors()
        .nth(2)
        .unwrap()
        .join("cinch-screenshots")
}

/// Fails with what to run when the browser or the packages are missing.
fn check_prerequisites(chromium: &Path) {
    const INSTALL: &str = "run the install step of .ci/run \
        (apt-get install -y chromium; npm ci --prefix tests/browser)";
    assert!(
        chromium.exists(),
        "the app's browser test needs Chromium at {}: {INSTALL}",
        chromium.display()
    );
    assert!(
        browser_dir()
            .join("node_modules/playwright-core/package.json")
            .exists(),
        "the app's browser test needs tests/browser/node_modules: {INSTALL}"
    );
    let node = Command::new("node").arg("--version").output();
    assert!(
        node.is_ok_and(|output| output.status.success()),
        "the app's browser test needs node on PATH: {INSTALL}"
    );
}

#[test]
fn the_app_in_a_browser() {
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    let server = world.serve();
    let token = world.admin_token();

    // The pages need no token; everything else does.
    let page = server.request("GET", "/", None, None);
    assert_eq!(page.status, 200);
    assert!(page.text.contains("/assets/app.js"), "{page:?}");
    assert_eq!(
        server.request("GET", "/assets/app.js", None, None).status,
        200
    );
    assert_eq!(
        server.request("GET", "/assets/nope.js", None, None).status,
        404
    );
    assert_eq!(
        server.request("GET", "/v1/accounts", None, None).status,
        401
    );

    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let created = server.post(
        &format!("/v1/accounts/{account}/environments"),
        &token,
        &json!({"name": "app", "repository": world.path("repo")}),
    );
    assert_eq!(created.status, 201, "{created:?}");

    // A token of the account's agent: the tasks it opens are nobody's.
    let agent_token = world.agent_token("agent");

    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut node = Command::new("node");
    node.arg(browser_dir().join("app.test.mjs"))
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_AGENT_TOKEN", &agent_token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_FAKE_SCRIPT", world.script_path())
        .env("CINCH_REPO", world.path("repo"));
    for (name, script) in scripts() {
        node.env(name, script);
    }
    let mut child = node.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the browser test took over 5 minutes\n--- cinch serve ---\n{}",
                server.log()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert!(
        status.success(),
        "the browser test failed ({status}); its output is above\n--- cinch serve ---\n{}",
        server.log()
    );
}

/// Fork on a turn's block and the Compare view, in the browser
/// (`tests/browser/fork.test.mjs`).
#[test]
fn fork_and_compare_in_a_browser() {
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    std::fs::write(world.path("repo/greeting.txt"), "hello\n").unwrap();
    git(&world.path("repo"), &["add", "greeting.txt"]);
    git(&world.path("repo"), &["commit", "-q", "-m", "greeting"]);
    let server = world.serve();
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let created = server.post(
        &format!("/v1/accounts/{account}/environments"),
        &token,
        &json!({"name": "app", "repository": world.path("repo")}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let environment = created.data()["id"].as_str().unwrap().to_owned();
    let turn = |session: &str, text: &str, greeting: &str| {
        serde_json::to_string(&Script {
            lines: claude_turn(session, text),
            write_files: [("greeting.txt".to_owned(), format!("{greeting}\n"))].into(),
            ..Script::default()
        })
        .unwrap()
    };
    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let status = Command::new("node")
        .arg(browser_dir().join("fork.test.mjs"))
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_FAKE_SCRIPT", world.script_path())
        .env("CINCH_ENVIRONMENT", &environment)
        .env(
            "CINCH_SCRIPT_SOURCE",
            turn("sess-source", "Hello.", "hello"),
        )
        .env("CINCH_SCRIPT_FORK", turn("sess-fork", "Howdy.", "howdy"))
        .status()
        .unwrap();
    assert!(
        status.success(),
        "the fork browser test failed ({status}); its output is above\n--- cinch serve ---\n{}",
        server.log()
    );
}
