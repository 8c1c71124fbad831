//! Each behaviour of the script, exercised by running the `fake-cli` binary.

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use cinch_fake_cli::{Record, SCRIPT_ENV, Script};
use serde_json::json;

/// A scratch directory, removed when the test ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Scratch {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "fake-cli-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// A command for fake-cli in this directory, following `script`.
    fn command(&self, script: &Script) -> Command {
        let path = self.path("script.json");
        script.write_to(&path).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fake-cli"));
        cmd.current_dir(&self.0)
            .env(SCRIPT_ENV, &path)
            .stdin(Stdio::null());
        cmd
    }

    fn run(&self, script: &Script) -> Output {
        self.command(script).output().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// SIGKILLs the processes it holds when the test ends, passed or failed, so
/// no SIGTERM-proof sleeper outlives the tests.
#[derive(Default)]
struct Reaper(Vec<i32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in &self.0 {
            signal(*pid, libc::SIGKILL);
        }
    }
}

fn signal(pid: i32, sig: i32) {
    // SAFETY: kill() only sends a signal; these pids are the test's own.
    unsafe { libc::kill(pid, sig) };
}

/// Whether a process is gone: no such pid, or a zombie waiting for a reaper
/// (the grandchild's new parent may never reap it in a container).
fn is_dead(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        // The state follows the parenthesised command name.
        Ok(stat) => stat
            .rsplit_once(')')
            .unwrap()
            .1
            .trim_start()
            .starts_with('Z'),
    }
}

fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

fn wait_for_file(path: &Path) -> String {
    wait_for(&path.display().to_string(), || path.exists());
    fs::read_to_string(path).unwrap()
}

fn stdout_lines(out: &Output) -> Vec<String> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Runs fake-cli with piped stdout and reads it line by line, noting how
/// long after the spawn each line arrived and whether fake-cli was still
/// running then (so it was not holding output back until its exit).
fn timed_lines(mut cmd: Command) -> Vec<(String, Duration, bool)> {
    let started = Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let lines = stdout
        .lines()
        .map(|l| {
            (
                l.unwrap(),
                started.elapsed(),
                child.try_wait().unwrap().is_none(),
            )
        })
        .collect();
    assert!(child.wait().unwrap().success());
    lines
}

/// Checks the lines arrived no sooner than the `gaps_ms` between them allow
/// (fake-cli cannot print early; a busy machine can only make it late), and
/// the last no later than `slack_ms` after its time.
fn assert_paced(lines: &[(String, Duration, bool)], gaps_ms: &[u64], slack_ms: u64) {
    assert_eq!(lines.len(), gaps_ms.len() + 1);
    let mut due = 0;
    for ((_, at, _), gap) in lines[1..].iter().zip(gaps_ms) {
        due += gap;
        assert!(
            *at >= Duration::from_millis(due),
            "{at:?} < {due} ms: {lines:?}"
        );
    }
    let last = lines.last().unwrap().1;
    assert!(last < Duration::from_millis(due + slack_ms), "{lines:?}");
}

#[test]
fn replays_a_log_line_by_line_with_a_delay() {
    let dir = Scratch::new();
    let log = "{\"type\":\"a\"}\nnot json at all\n\n{\"type\":\"b\", \"spaced\": true}\n";
    fs::write(dir.path("log.jsonl"), log).unwrap();
    let script = Script {
        replay: Some(dir.path("log.jsonl")),
        line_delay_ms: 300,
        ..Script::default()
    };
    let lines = timed_lines(dir.command(&script));
    let texts: Vec<&str> = lines.iter().map(|(l, ..)| l.as_str()).collect();
    assert_eq!(texts, log.lines().collect::<Vec<_>>());
    assert_paced(&lines, &[300, 300, 300], 3000);
    // The first line arrived while 900 ms of delays were still ahead: flushed.
    assert!(lines[0].2, "the first line came only at the exit");
}

#[test]
fn replays_recorded_gaps_capped() {
    let dir = Scratch::new();
    let log = [
        json!({"type": "init", "timestamp": "2026-12-02T07:52:37.000Z"}),
        json!({"type": "message", "timestamp": "2026-12-02T07:52:37.300Z"}),
        // A minute's gap, capped.
        json!({"type": "result", "timestamp": "2026-12-02T07:53:37.300Z"}),
        // Next to a line without a timestamp, the gap is line_delay_ms.
        json!({"type": "untimed"}),
        json!({"type": "x", "timestamp_ms": 5}),
        // Cursor's field.
        json!({"type": "y", "timestamp_ms": 255}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    fs::write(dir.path("log.jsonl"), log).unwrap();
    let script = Script {
        replay: Some(dir.path("log.jsonl")),
        use_timestamps: true,
        max_gap_ms: 500,
        line_delay_ms: 10,
        lines: vec![json!("plain"), json!({"type": "inline"})],
        ..Script::default()
    };
    let lines = timed_lines(dir.command(&script));
    assert_eq!(lines[6].0, "plain");
    assert_eq!(lines[7].0, r#"{"type":"inline"}"#);
    // Uncapped, the minute's gap would blow the slack.
    assert_paced(&lines, &[300, 500, 10, 10, 250, 10, 10], 5000);
}

#[test]
fn prints_ticks_at_a_steady_rate() {
    let dir = Scratch::new();
    let script = Script {
        lines_per_second: Some(50.0),
        duration_ms: 400,
        ..Script::default()
    };
    let started = Instant::now();
    let out = dir.run(&script);
    let elapsed = started.elapsed();
    assert!(out.status.success());
    let expected: Vec<String> = (1..=20)
        .map(|n| format!(r#"{{"type":"tick","n":{n}}}"#))
        .collect();
    assert_eq!(stdout_lines(&out), expected);
    assert!(elapsed >= Duration::from_millis(400), "{elapsed:?}");
}

#[test]
fn stamps_ticks_with_their_number_and_write_time() {
    let dir = Scratch::new();
    let script = Script {
        lines_per_second: Some(100.0),
        duration_ms: 50,
        tick_line: Some(r#"{"type":"x","text":"tick {n} {now_us}"}"#.into()),
        ..Script::default()
    };
    let micros = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_micros()
    };
    let before = micros();
    let out = dir.run(&script);
    let after = micros();
    assert!(out.status.success());
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), 5);
    let mut previous = before;
    for (n, line) in (1..).zip(&lines) {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        let text = value["text"].as_str().unwrap();
        let (tick, stamp) = text
            .strip_prefix("tick ")
            .and_then(|rest| rest.split_once(' '))
            .unwrap();
        assert_eq!(tick, n.to_string());
        let stamp: u128 = stamp.parse().unwrap();
        // Written in order, while fake-cli ran, each no earlier than its
        // place on a 10 ms schedule (a late tick lets the next catch up, so
        // two may be closer than 10 ms on a busy machine).
        assert!(stamp >= previous && stamp <= after, "{lines:?}");
        assert!(stamp >= before + (n - 1) * 10_000, "{lines:?}");
        previous = stamp;
    }
}

#[test]
fn exits_with_the_code_and_writes_stderr() {
    let dir = Scratch::new();
    let script = Script {
        stderr: Some("Error: quota exceeded\nsecond line\n".to_owned()),
        lines: vec![json!({"type": "result"})],
        exit_code: 3,
        ..Script::default()
    };
    let out = dir.run(&script);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(out.stderr, b"Error: quota exceeded\nsecond line\n");
    assert_eq!(stdout_lines(&out), [r#"{"type":"result"}"#]);
}

#[test]
fn records_argv_cwd_env_and_stdin() {
    let dir = Scratch::new();
    let script = Script {
        record: Some(dir.path("record.json")),
        ..Script::default()
    };
    let mut child = dir
        .command(&script)
        .args(["-p", "--output-format", "stream-json"])
        .env("CINCH_TEST_MARK", "marked")
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"# Task\n\nDo the thing.\n").unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let rec = Record::read_from(&dir.path("record.json")).unwrap();
    assert_eq!(rec.argv[1..], ["-p", "--output-format", "stream-json"]);
    assert_eq!(rec.cwd, dir.0.canonicalize().unwrap());
    assert_eq!(rec.env["CINCH_TEST_MARK"], "marked");
    assert_eq!(rec.stdin, "# Task\n\nDo the thing.\n");
    assert_eq!(rec.pid, child.id());
}

#[test]
fn leaves_stdin_alone_when_told() {
    let dir = Scratch::new();
    let script = Script {
        read_stdin: false,
        record: Some(dir.path("record.json")),
        ..Script::default()
    };
    // stdin stays open and unwritten: a reader would block forever.
    let mut child = dir.command(&script).stdin(Stdio::piped()).spawn().unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(
        Record::read_from(&dir.path("record.json")).unwrap().stdin,
        ""
    );
}

#[test]
fn writes_and_deletes_files() {
    let dir = Scratch::new();
    fs::write(dir.path("old.txt"), "old").unwrap();
    let script = Script {
        write_files: [
            ("out.txt".to_owned(), "hello\n".to_owned()),
            ("src/deep/new.rs".to_owned(), "fn main() {}\n".to_owned()),
        ]
        .into(),
        delete_files: vec!["old.txt".to_owned(), "never-there.txt".to_owned()],
        ..Script::default()
    };
    assert!(dir.run(&script).status.success());
    assert_eq!(fs::read_to_string(dir.path("out.txt")).unwrap(), "hello\n");
    assert_eq!(
        fs::read_to_string(dir.path("src/deep/new.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert!(!dir.path("old.txt").exists());
}

#[test]
fn hangs_for_a_while() {
    let dir = Scratch::new();
    let started = Instant::now();
    let out = dir.run(&Script {
        lines: vec![json!("done")],
        hang_ms: 300,
        ..Script::default()
    });
    assert!(out.status.success());
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[test]
fn sigterm_ends_a_hang_unless_ignored_and_sigkill_always_does() {
    let dir = Scratch::new();
    for ignore_sigterm in [false, true] {
        let record = dir.path(&format!("record-{ignore_sigterm}.json"));
        let script = Script {
            ignore_sigterm,
            record: Some(record.clone()),
            hang_ms: -1,
            ..Script::default()
        };
        let mut child = dir.command(&script).spawn().unwrap();
        let mut reaper = Reaper::default();
        reaper.0.push(child.id() as i32);
        // The record is written after SIGTERM's disposition is set.
        wait_for_file(&record);
        signal(child.id() as i32, libc::SIGTERM);
        thread::sleep(Duration::from_millis(300));
        if ignore_sigterm {
            assert!(child.try_wait().unwrap().is_none(), "SIGTERM ended it");
            signal(child.id() as i32, libc::SIGKILL);
            assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
        } else {
            assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
        }
    }
}

/// Starts fake-cli in a process group of its own (as the supervisor does)
/// with a grandchild, and returns it with the grandchild's pid.
fn start_with_grandchild(dir: &Scratch, script: Script, reaper: &mut Reaper) -> (Child, i32) {
    let pid_file = dir.path("grandchild.pid");
    let script = Script {
        grandchild: true,
        grandchild_pid_file: Some(pid_file.clone()),
        hang_ms: -1,
        ..script
    };
    let child = dir.command(&script).process_group(0).spawn().unwrap();
    reaper.0.push(child.id() as i32);
    let grandchild: i32 = wait_for_file(&pid_file).parse().unwrap();
    reaper.0.push(grandchild);
    (child, grandchild)
}

#[test]
fn a_grandchild_stays_in_the_group_and_outlives_sigterm() {
    let dir = Scratch::new();
    let mut reaper = Reaper::default();
    let (mut child, grandchild) = start_with_grandchild(&dir, Script::default(), &mut reaper);
    let pgid = child.id() as i32;
    // SAFETY: getpgid only reads another process's group id.
    assert_eq!(unsafe { libc::getpgid(grandchild) }, pgid);
    // Its output goes nowhere unless asked for.
    let stdout = fs::read_link(format!("/proc/{grandchild}/fd/1")).unwrap();
    assert_eq!(stdout, Path::new("/dev/null"));

    // A polite stop to the group ends the harness but not the grandchild.
    signal(-pgid, libc::SIGTERM);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGTERM));
    thread::sleep(Duration::from_millis(300));
    assert!(!is_dead(grandchild), "SIGTERM ended the grandchild");
    // SIGKILL to the group does.
    signal(-pgid, libc::SIGKILL);
    wait_for("the grandchild to die", || is_dead(grandchild));
}

#[test]
fn a_setsid_grandchild_escapes_the_group() {
    let dir = Scratch::new();
    let mut reaper = Reaper::default();
    let script = Script {
        grandchild_setsid: true,
        grandchild_inherits_stdio: true,
        ..Script::default()
    };
    let (mut child, grandchild) = start_with_grandchild(&dir, script, &mut reaper);
    // SAFETY: getsid and getpgid only read another process's ids.
    let (sid, pgid) = unsafe { (libc::getsid(grandchild), libc::getpgid(grandchild)) };
    assert_eq!((sid, pgid), (grandchild, grandchild));
    // It holds the harness's stdout open.
    let mine = fs::read_link(format!("/proc/{}/fd/1", child.id())).unwrap();
    let its = fs::read_link(format!("/proc/{grandchild}/fd/1")).unwrap();
    assert_eq!(mine, its);

    // Killing the harness's whole group leaves it running.
    signal(-(child.id() as i32), libc::SIGKILL);
    assert_eq!(child.wait().unwrap().signal(), Some(libc::SIGKILL));
    thread::sleep(Duration::from_millis(100));
    assert!(!is_dead(grandchild), "the group's SIGKILL reached it");
    signal(grandchild, libc::SIGKILL);
    wait_for("the grandchild to die", || is_dead(grandchild));
}

#[test]
fn answers_the_version_whatever_the_script() {
    let dir = Scratch::new();
    let stubborn = Script {
        exit_code: 7,
        hang_ms: -1,
        stderr: Some("should not appear".to_owned()),
        ..Script::default()
    };
    for args in [
        &["--version"][..],
        &["-v"],
        &["version"],
        &["-p", "--version"],
    ] {
        let out = dir.command(&stubborn).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(out.stdout, b"fake-cli 1.2.3\n", "{args:?}");
        assert!(out.stderr.is_empty());
    }
    let named = Script {
        version: "2.0.14 (Claude Code)".to_owned(),
        ..stubborn
    };
    let out = dir.command(&named).arg("--version").output().unwrap();
    assert_eq!(out.stdout, b"2.0.14 (Claude Code)\n");
    // No script is needed to answer.
    let out = Command::new(env!("CARGO_BIN_EXE_fake-cli"))
        .arg("--version")
        .env_remove(SCRIPT_ENV)
        .output()
        .unwrap();
    assert_eq!(
        (out.status.code(), &out.stdout[..]),
        (Some(0), &b"fake-cli 1.2.3\n"[..])
    );
}

#[test]
fn fails_loudly_without_a_usable_script() {
    let cases = [
        None,
        Some("/nonexistent/script.json".to_owned()),
        Some(r#"{"exit_cod": 1}"#.to_owned()),
    ];
    for spec in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_fake-cli"));
        cmd.stdin(Stdio::null());
        match &spec {
            Some(spec) => cmd.env(SCRIPT_ENV, spec),
            None => cmd.env_remove(SCRIPT_ENV),
        };
        let out = cmd.output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{spec:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        let error: serde_json::Value = serde_json::from_str(&stderr).unwrap();
        assert!(error["fake_cli_error"].is_string(), "{error}");
    }
}

#[test]
fn takes_an_inline_script() {
    let out = Command::new(env!("CARGO_BIN_EXE_fake-cli"))
        .env(SCRIPT_ENV, r#"{"lines": ["inline"], "exit_code": 4}"#)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    assert_eq!(out.stdout, b"inline\n");
}

#[test]
fn a_script_round_trips_through_its_file() {
    let dir = Scratch::new();
    let script = Script {
        replay: Some("x.jsonl".into()),
        lines: vec![json!("a"), json!({"b": 1})],
        write_files: [("f".to_owned(), "c".to_owned())].into(),
        lines_per_second: Some(50.0),
        tick_line: Some("tick {n} {now_us}".into()),
        hang_ms: -1,
        ..Script::default()
    };
    let path = dir.path("s.json");
    script.write_to(&path).unwrap();
    assert_eq!(Script::load(path.to_str().unwrap()).unwrap(), script);
    // Every field is optional, and read_stdin defaults to true.
    assert_eq!(Script::load("{}").unwrap(), Script::default());
    assert!(Script::default().read_stdin);
}

#[test]
fn installs_under_a_harness_name() {
    let dir = Scratch::new();
    let link = cinch_fake_cli::install(&dir.0, "cursor-agent");
    assert_eq!(link, dir.path("cursor-agent"));
    // Installing again replaces the link.
    cinch_fake_cli::install(&dir.0, "cursor-agent");
    let script = Script {
        record: Some(dir.path("record.json")),
        lines: vec![json!({"type": "result"})],
        ..Script::default()
    };
    script.write_to(&dir.path("script.json")).unwrap();
    let path = format!("{}:{}", dir.0.display(), std::env::var("PATH").unwrap());
    let out = Command::new("cursor-agent")
        .env("PATH", path)
        .env(SCRIPT_ENV, dir.path("script.json"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(stdout_lines(&out), [r#"{"type":"result"}"#]);
    let rec = Record::read_from(&dir.path("record.json")).unwrap();
    assert_eq!(rec.argv[0], "cursor-agent");
}
