//! The supervisor's conversation channel through `cinch supervise`: the lines
//! of a turn's `stdin.jsonl` reach the CLI's stdin as the file grows, and
//! `close-stdin` closes it a moment later; a CLI that does not exit on EOF is
//! ended after a short grace, with no stop reason (the turn was not stopped).
//! The test writes those files as the host does: each write followed by a
//! poke of the supervisor's wake FIFO.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::eventually;

/// A turn folder with a launch record for `script` (run by `sh -c`), as a
/// conversation.
fn conversation_turn(dir: &Path, script: &str) -> PathBuf {
    let turn = dir.join("turn");
    std::fs::create_dir_all(&turn).unwrap();
    let launch = json!({
        "turn": "t1",
        "run": "t1",
        "harness": "acp",
        "repository": "repo",
        "workdir": dir,
        "program": "/bin/sh",
        "args": ["-c", script],
        "stdin": null,
        "log": dir.join("t1.harness.jsonl"),
        "prompt": turn.join("prompt.md"),
        "started_at_ms": now_ms(),
        "timeout_ms": 60_000,
        "idle_limit_ms": 60_000,
        "resumed_session": null,
        "start_checkpoint": null,
        "cli_version": null,
        "conversation": {"model": null, "effort": null, "deny_tools": []}
    });
    std::fs::write(turn.join("launch.json"), launch.to_string()).unwrap();
    turn
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Appends `line` to the turn's stdin lines.
fn append(turn: &Path, line: &str) {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(turn.join("stdin.jsonl"))
        .unwrap();
    file.write_all(format!("{line}\n").as_bytes()).unwrap();
    wake(turn);
}

/// Asks the supervisor to close the CLI's stdin.
fn close_stdin(turn: &Path) {
    std::fs::write(turn.join("close-stdin"), "").unwrap();
    wake(turn);
}

fn wake(turn: &Path) {
    cinch_engine::turn_dir::TurnDir::open(turn)
        .unwrap()
        .0
        .wake_supervisor();
}

fn supervise(turn: &Path) {
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_cinch"))
        .arg("supervise")
        .arg(turn)
        .status()
        .unwrap();
    assert!(status.success());
}

fn log_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("t1.harness.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

fn exit_record(turn: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(turn.join("exit.json")).ok()?;
    serde_json::from_str(&text).ok()
}

#[test]
fn lines_appended_reach_the_cli_in_order_and_close_stdin_ends_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let turn = conversation_turn(
        dir.path(),
        r#"while read -r line; do echo "got $line"; done; echo eof"#,
    );
    append(&turn, r#"{"id":0,"method":"initialize"}"#);
    append(&turn, r#"{"id":1,"method":"session/new"}"#);
    supervise(&turn);
    eventually("the opening lines", || {
        (log_lines(dir.path()).len() == 2).then_some(())
    });
    assert!(
        exit_record(&turn).is_none(),
        "the CLI still waits for input"
    );

    append(&turn, r#"{"id":0,"result":{"outcome":"selected"}}"#);
    eventually("the reply", || {
        (log_lines(dir.path()).len() == 3).then_some(())
    });
    assert_eq!(
        log_lines(dir.path()),
        [
            r#"got {"id":0,"method":"initialize"}"#,
            r#"got {"id":1,"method":"session/new"}"#,
            r#"got {"id":0,"result":{"outcome":"selected"}}"#,
        ]
    );

    close_stdin(&turn);
    let record = eventually("the exit record", || exit_record(&turn));
    assert_eq!(record["code"], 0, "{record}");
    assert_eq!(log_lines(dir.path()).last().unwrap(), "eof");
    assert!(!turn.join("stop").exists(), "the turn was not stopped");
}

#[test]
fn a_cli_that_outlives_its_closed_stdin_is_ended_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    // Like claude-agent-acp and codex-acp: EOF on stdin does not end it.
    let turn = conversation_turn(dir.path(), "cat; echo eof; exec sleep 300");
    append(&turn, r#"{"id":0,"method":"initialize"}"#);
    supervise(&turn);
    eventually("the opening line", || {
        (!log_lines(dir.path()).is_empty()).then_some(())
    });
    let closed = Instant::now();
    close_stdin(&turn);
    eventually("eof", || {
        (log_lines(dir.path()).last()? == "eof").then_some(())
    });
    let record = eventually("the exit record", || exit_record(&turn));
    let waited = closed.elapsed();
    assert_eq!(record["signal"], libc_sigterm(), "{record}");
    assert_eq!(record["survivors"], json!([]));
    assert!(
        waited >= Duration::from_secs(3),
        "the CLI had its settle and its grace: {waited:?}"
    );
    assert!(!turn.join("stop").exists(), "the turn was not stopped");
}

fn libc_sigterm() -> i32 {
    15
}
