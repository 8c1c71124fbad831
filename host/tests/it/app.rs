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

use crate::support;
use crate::support::gate::{self, Load};

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
    run_node(node, &server);
}

/// Runs a browser test's `node` to its end, within 5 minutes; fails with
/// the server's log when it fails.
fn run_node(mut node: Command, server: &support::Server) {
    let _browser = gate::hold(Load::Agent);
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

/// Getting a session's result out in the app: `tests/browser/result.test.mjs`
/// reads the session's branch, commits with the drafted message, pushes under
/// another name and finds the branch in the source repository, then starts a
/// second session on the task; on a github.com remote, Push shows the link
/// that opens a pull request.
#[test]
fn the_result_out_in_a_browser() {
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    let mut lines = vec![init()];
    lines.extend(answer("Wrote the notes\n\nThey list every step."));
    world.script(Script {
        lines,
        write_files: [("notes.txt".to_owned(), "step one\nstep two\n".to_owned())].into(),
        ..Script::default()
    });
    // github.com's repository is a bare one here: the agent's git config
    // sends its URL to it (the tests reach no network).
    let bare = world.path("out/widget.git");
    let cloned = Command::new("git")
        .args(["clone", "-q", "--bare"])
        .arg(world.path("repo"))
        .arg(&bare)
        .status()
        .unwrap();
    assert!(cloned.success());
    let server = world.serve();
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agents = server.get(&format!("/v1/accounts/{account}/agents"), &token);
    let agent_home = world
        .path("home/agents")
        .join(agents.data()[0]["id"].as_str().unwrap());
    std::fs::create_dir_all(&agent_home).unwrap();
    std::fs::write(
        agent_home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = https://github.com/acme/widget.git\n",
            bare.display()
        ),
    )
    .unwrap();
    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut node = Command::new("node");
    node.arg(browser_dir().join("result.test.mjs"))
        .env("CINCH_FORGE_REPO", &bare)
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_REPO", world.path("repo"));
    run_node(node, &server);
}

/// The settings file of the newcomer's repository: twelve lines, the
/// tenth of which the turn changes, so a hunk leaves its start out.
fn settings_file(retries: u32) -> String {
    (1..=12)
        .map(|n| match n {
            10 => format!("export const retries = {retries};\n"),
            _ => format!("// line {n} of the settings\n"),
        })
        .collect()
}

/// The fake CLI's scripts of the newcomer's turns: one that changes a file,
/// adds two (one in a folder) and answers; one that fails as a CLI with a
/// wrong key does, before any event, its cause after a line of chatter.
fn newcomer_scripts() -> [(&'static str, String); 2] {
    let mut lines = vec![init(), tool_use("n1", "cat src/config.js")];
    lines.push(tool_use("n2", "sed -i s/3/5/ src/config.js"));
    lines.extend(answer("I raised the retries to 5 and added greet()."));
    let change = Script {
        lines,
        line_delay_ms: 700,
        write_files: [
            ("src/config.js".to_owned(), settings_file(5)),
            (
                "src/greet.js".to_owned(),
                "export function greet(name) {\n  return \"hello, \" + name; // a greeting for a name\n}\n"
                    .to_owned(),
            ),
            ("NOTES.md".to_owned(), "# Notes\n\nRetries are 5 now.\n".to_owned()),
        ]
        .into(),
        ..Script::default()
    };
    // Nothing on stdout: the turn's detail is the stderr's tail.
    let fail = Script {
        stderr: Some(
            "YOLO mode is enabled. All tool calls will be automatically approved.\n\
             Error: 401 Unauthorized: invalid x-api-key\n"
                .to_owned(),
        ),
        exit_code: 1,
        ..Script::default()
    };
    [("CINCH_SCRIPT_CHANGE", change), ("CINCH_SCRIPT_FAIL", fail)]
        .map(|(name, script)| (name, serde_json::to_string(&script).unwrap()))
}

/// A newcomer's path in the app alone (`tests/browser/newcomer.test.mjs`):
/// an environment with a secret made in the app (read back over HTTP: its
/// name, not its value), a task in it whose state changes live, its ended
/// turn's Revert and Fork one size, the Diff view (tree, side by side, whole
/// file, highlighting), a failed setup and a failed turn reading "failed"
/// with their cause (the failed setup with no Result panel, for it has no
/// work tree), Agents, Tokens, Usage.
#[test]
fn a_newcomers_path_in_the_app() {
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    let repo = world.path("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/config.js"), settings_file(3)).unwrap();
    support::git(&repo, &["add", "."]);
    support::git(
        &repo,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qm",
            "settings",
        ],
    );
    let server = world.serve();
    let token = world.admin_token();
    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut node = Command::new("node");
    node.arg(browser_dir().join("newcomer.test.mjs"))
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_FAKE_SCRIPT", world.script_path())
        .env("CINCH_REPO", &repo);
    for (name, script) in newcomer_scripts() {
        node.env(name, script);
    }
    run_node(node, &server);
}

/// New task's key note (`tests/browser/credentials.test.mjs`): on a server whose turns get no
/// model key of their own, it says so for a task on an environment without one, adds the key
/// the user types as that environment's secret, and the task then runs.
#[test]
fn new_task_offers_to_add_the_missing_key() {
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    // The model key stays the operator's: turns get it only from their environment.
    let config = world
        .operator_config()
        .replace(", \"ANTHROPIC_API_KEY\"", "");
    std::fs::write(world.path("home/config.toml"), config).unwrap();
    world.script(Script {
        lines: support::claude_turn("s-key", "Hello."),
        ..Script::default()
    });
    let server = world.serve();
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let created = server.post(
        &format!("/v1/accounts/{account}/environments"),
        &token,
        &json!({"name": "bare", "repository": world.path("repo")}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let environment = created.data()["id"].as_str().unwrap().to_owned();

    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut node = Command::new("node");
    node.arg(browser_dir().join("credentials.test.mjs"))
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_ENVIRONMENT", &environment);
    run_node(node, &server);
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
    let mut node = Command::new("node");
    node.arg(browser_dir().join("fork.test.mjs"))
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
        .env("CINCH_SCRIPT_FORK", turn("sess-fork", "Howdy.", "howdy"));
    run_node(node, &server);
}

/// The fake CLI as Claude Code asking the user a question (its
/// AskUserQuestion tool, a `can_use_tool` control request), then waiting
/// until it is stopped.
fn question_script() -> String {
    let ask = json!({"type": "control_request", "request_id": "q-1", "request": {
        "subtype": "can_use_tool", "tool_name": "AskUserQuestion",
        "input": {"questions": [{"question": "Which greeting should I write?", "header": "Greeting",
            "options": [{"label": "hello", "description": "the usual"},
                        {"label": "howdy", "description": "the friendly one"}],
            "multiSelect": false}]}}});
    serde_json::to_string(&Script {
        lines: vec![init(), ask],
        read_stdin: false,
        hang_ms: -1,
        ..Script::default()
    })
    .unwrap()
}

/// Approvals in the app (`tests/browser/approvals.test.mjs`): an ACP agent
/// (`cinch-fake-acp`) asks before it writes out.txt, under an environment
/// whose policy asks; the card shows up live in the conversation with the
/// count in the page title and the task in the "Needs someone" filter,
/// Allow once lets the tool run, and Deny with a note refuses it; a
/// question of Claude Code's (the fake CLI) is answered from its options.
#[test]
fn approvals_answered_in_a_browser() {
    use cinch_fake_cli::acp::AcpScript;
    let chromium = PathBuf::from(
        std::env::var_os("CINCH_CHROMIUM").unwrap_or_else(|| "/usr/bin/chromium".into()),
    );
    check_prerequisites(&chromium);
    let world = World::new();
    std::fs::create_dir_all(world.path("browser-profile")).unwrap();
    cinch_fake_cli::acp::install(&world.path("bin"), "fake-acp");
    // The agent asks once this file exists: the test makes it while the
    // task's page is open, so the first card comes live.
    let gate = world.path("out/ask-now");
    let script = world.path("bin/fake-acp-script.json");
    AcpScript {
        ask_permission: true,
        permission_gate: Some(gate.clone()),
        ..AcpScript::default()
    }
    .write_to(&script)
    .unwrap();
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[harness.fake-acp]\ndriver = \"acp\"\nprogram = \"fake-acp\"\ndisplay_name = \"Fake ACP\"\n",
            world
                .operator_config()
                .replace("\"FAKE_CLI_SCRIPT\"", "\"FAKE_CLI_SCRIPT\", \"FAKE_ACP_SCRIPT\"")
        ),
    )
    .unwrap();
    let mut command = world.cinch();
    command
        .env("FAKE_ACP_SCRIPT", &script)
        .args(["serve", "--home"])
        .arg(world.path("home"));
    let server = support::Server::start(command, world.dir.path());
    let token = world.admin_token();
    let account = server.get("/v1/accounts", &token).data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let created = server.post(
        &format!("/v1/accounts/{account}/environments"),
        &token,
        &json!({"name": "asks", "repository": world.path("repo"),
                "approvals": {"mode": "ask", "timeout_seconds": 600}}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let environment = created.data()["id"].as_str().unwrap().to_owned();
    let screenshots = screenshot_dir();
    std::fs::create_dir_all(&screenshots).unwrap();
    let mut node = Command::new("node");
    node.arg(browser_dir().join("approvals.test.mjs"))
        .env("CINCH_URL", &server.base)
        .env("CINCH_TOKEN", &token)
        .env("CINCH_CHROMIUM", &chromium)
        .env("CINCH_PROFILE", world.path("browser-profile"))
        .env("CINCH_SCREENSHOTS", &screenshots)
        .env("CINCH_ENVIRONMENT", &environment)
        .env("CINCH_GATE", &gate)
        .env("CINCH_FAKE_SCRIPT", world.script_path())
        .env("CINCH_SCRIPT_QUESTION", question_script());
    run_node(node, &server);
}
