//! The turn engine end to end with the fake CLI: every status and every
//! stop path, with real git repositories, real supervisors and real signals.

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cinch_engine::engine::events::{Next, TurnEventKind};
use cinch_engine::engine::result::{Status, TurnResult};
use cinch_engine::engine::{Engine, RefusalCode, StartError, Turn, TurnRequest};
use cinch_engine::home::Home;
use cinch_engine::supervisor::KILL_GRACE;
use cinch_fake_cli::{Probe, ProbeOutcome, Record, Script};
use cinch_runtime::{Limits, Runtime};

use crate::support::{eventually, host_pid};

const API_KEY: &str = "sk-test-key-0123456789";

/// One test's world: a home, a repository, a bin folder with the fake CLI.
struct World {
    dir: tempfile::TempDir,
}

impl World {
    fn new() -> Self {
        let world = Self {
            dir: tempfile::tempdir().unwrap(),
        };
        for sub in ["bin", "repo", "user-home", "cinch-home"] {
            std::fs::create_dir_all(world.path(sub)).unwrap();
        }
        // The scripts replay recorded logs: the operator lets harnesses read them.
        std::fs::write(
            world.path("cinch-home/config.toml"),
            format!(
                "[sandbox]\nread_only = [{:?}]\n",
                recorded("").display().to_string()
            ),
        )
        .unwrap();
        cinch_fake_cli::install(&world.path("bin"), "claude");
        init_repo(&world.repo());
        world
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn repo(&self) -> PathBuf {
        self.path("repo")
    }

    fn env(&self) -> BTreeMap<String, String> {
        [
            (
                "PATH",
                format!("{}:/usr/bin:/bin", self.path("bin").display()),
            ),
            ("HOME", self.path("user-home").display().to_string()),
            ("FAKE_CLI_SCRIPT", self.script_path().display().to_string()),
            ("ANTHROPIC_API_KEY", API_KEY.to_owned()),
            ("GH_TOKEN", "gh-token-must-not-pass".to_owned()),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
    }

    fn engine_with(&self, env: BTreeMap<String, String>) -> Engine {
        let home = Home::open(self.path("cinch-home")).unwrap();
        let runtime = Runtime::new(Some(compiled_drivers()), Limits::default()).unwrap();
        let helper = cinch_engine::helper::program(Path::new(env!("CARGO_BIN_EXE_cinch")));
        Engine::new(home, &runtime, helper, env).unwrap()
    }

    fn engine(&self) -> Engine {
        self.engine_with(self.env())
    }

    /// Beside the CLI, where the sandbox lets the harness read it.
    fn script_path(&self) -> PathBuf {
        self.path("bin/fake-cli-script.json")
    }

    fn script(&self, script: Script) {
        script.write_to(&self.script_path()).unwrap();
    }

    fn record(&self) -> PathBuf {
        self.path("user-home/record.json")
    }

    fn request(&self, brief: &str) -> TurnRequest {
        TurnRequest {
            harness: "claude".into(),
            repo: self.repo(),
            brief: brief.into(),
            notes: Vec::new(),
            model: None,
            effort: None,
            session_id: None,
            timeout: Duration::from_secs(60),
            idle_limit: None,
            run: None,
            env: Default::default(),
            secrets: Vec::new(),
            tcp_ports: None,
            allowed_hosts: None,
            agent: None,
            mcp_servers: Vec::new(),
            ask: false,
            trace_parent: None,
            fork: false,
        }
    }
}

fn git(repo: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(repo)
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

fn recorded(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/recorded")
        .join(name)
}

/// Writes `script` at `path` (whatever was there goes), executable.
fn write_script(path: &Path, script: &str) {
    use std::os::unix::fs::PermissionsExt as _;
    let _ = std::fs::remove_file(path);
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Collects every progress line of a turn, then its result.
fn run_to_end(turn: Turn) -> (Vec<String>, Vec<TurnEventKind>, TurnResult) {
    let mut subscription = turn.subscribe();
    let mut events = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(Instant::now() < deadline, "the turn did not end");
        match subscription.next(Duration::from_millis(200)) {
            Next::Events(batch) => {
                let seqs: Vec<u64> = batch.iter().map(|event| event.seq).collect();
                assert!(
                    seqs.windows(2).all(|pair| pair[1] == pair[0] + 1),
                    "{seqs:?}"
                );
                events.extend(batch.into_iter().map(|event| event.kind));
            }
            Next::Idle => {}
            Next::Closed => break,
        }
    }
    let lines = events
        .iter()
        .filter_map(|event| match event {
            TurnEventKind::Progress { line } => Some(line.clone()),
            _ => None,
        })
        .collect();
    (lines, events, turn.wait())
}

fn is_alive(pid: i32) -> bool {
    // A zombie is dead for our purposes.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| !stat[stat.rfind(')').unwrap() + 2..].starts_with('Z'))
        .unwrap_or(false)
}

/// The host's id of the fake CLI that wrote `world`'s record (see [`host_pid`]).
fn cli_pid(world: &World) -> i32 {
    let record = Record::read_from(&world.record()).unwrap();
    host_pid(record.pid.into(), &record.env["CINCH_TURN_ID"]) as i32
}

/// The host's id of the grandchild the fake CLI of `turn` started (see [`host_pid`]).
fn grandchild_pid(world: &World, turn: &str) -> i32 {
    let seen = read_pid(&world.path("user-home/grandchild.pid"));
    host_pid(seen.into(), turn) as i32
}

fn read_pid(path: &Path) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        assert!(Instant::now() < deadline, "no pid in {}", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_turns_cli_yields_the_cpu_to_the_server_moving_every_turns_lines() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        record: Some(world.record()),
        hang_ms: -1,
        ..Script::default()
    });
    let running = world.engine().start(world.request("hi")).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let record = loop {
        if let Ok(record) = Record::read_from(&world.record()) {
            break record;
        }
        assert!(Instant::now() < deadline, "the CLI wrote no record");
        std::thread::sleep(Duration::from_millis(20));
    };
    running.cancel();
    assert_eq!(run_to_end(running).2.status, Status::Cancelled);

    // Where the kernel groups processes by session, the CLI's session (the
    // supervisor's) as a whole weighs less than this one.
    let own_group = std::fs::read_to_string("/proc/self/autogroup").ok();
    assert_eq!(record.autogroup.is_some(), own_group.is_some());
    if let Some(group) = &record.autogroup {
        assert!(group.ends_with(" nice 10"), "{group}");
    }
}

#[test]
fn a_completed_turn_has_its_diff_and_leaves_head_and_index_alone() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        line_delay_ms: 20,
        write_files: [("out.txt".to_owned(), "hello\n".to_owned())].into(),
        record: Some(world.record()),
        ..Script::default()
    });
    let head = git(&world.repo(), &["rev-parse", "HEAD"]);
    let index = std::fs::read(world.repo().join(".git/index")).unwrap();

    let engine = world.engine();
    let mut request = world.request("Create out.txt containing hello.");
    request.notes = vec![cinch_engine::engine::brief::Note {
        name: "style.md".into(),
        text: "Be brief.".into(),
    }];
    let (lines, events, result) = run_to_end(engine.start(request).unwrap());

    assert_eq!(result.status, Status::Completed, "{}", result.result_text);
    assert_eq!(
        lines,
        [
            "Claude Code started (claude-sonnet-4-5)",
            "Bash: echo hello > out.txt",
            "I ran the command; out.txt now contains hello."
        ]
    );
    assert!(
        matches!(&events[0], TurnEventKind::Session { session_id } if session_id == "e0771f6d-6bd9-438b-9a0b-2885249e66ac")
    );
    assert!(matches!(
        events.last(),
        Some(TurnEventKind::Ended {
            status: Status::Completed
        })
    ));
    assert_eq!(
        result.session_id.as_deref(),
        Some("e0771f6d-6bd9-438b-9a0b-2885249e66ac")
    );
    assert_eq!(
        result.final_message.as_deref(),
        Some("I ran the command; out.txt now contains hello.")
    );
    assert_eq!(result.exit_code, Some(0));
    assert_eq!(
        (
            result.changes.insertions,
            result.changes.deletions,
            result.changes.files_changed.len()
        ),
        (1, 0, 1)
    );
    assert_eq!(result.changes.files_changed[0].path, "out.txt");
    assert!(result.result_text.starts_with("completed · Claude Code · "));
    assert!(
        result
            .result_text
            .contains("\n1 file changed, +1 −0\nout.txt (+1 −0)\n"),
        "{}",
        result.result_text
    );

    // Checkpoints hold the trees; HEAD, the index and the files are as the harness left them.
    let end = result.end_checkpoint.as_deref().unwrap();
    assert_eq!(
        git(&world.repo(), &["show", &format!("{end}:out.txt")]),
        "hello\n"
    );
    let start = result.start_checkpoint.as_deref().unwrap();
    assert!(
        git(&world.repo(), &["ls-tree", "--name-only", start])
            .lines()
            .all(|name| name != "out.txt")
    );
    assert_eq!(git(&world.repo(), &["rev-parse", "HEAD"]), head);
    assert_eq!(
        std::fs::read(world.repo().join(".git/index")).unwrap(),
        index
    );
    assert_eq!(
        git(&world.repo(), &["status", "--porcelain"]),
        "?? out.txt\n"
    );

    // The brief came on stdin, never on the command line; the environment is the harness's.
    let record = Record::read_from(&world.record()).unwrap();
    assert!(
        record
            .stdin
            .contains("# Task\n\nCreate out.txt containing hello.\n")
    );
    assert!(record.stdin.contains("# style.md\n\nBe brief.\n"));
    assert!(
        record
            .argv
            .iter()
            .all(|arg| !arg.contains("Create out.txt")),
        "{:?}",
        record.argv
    );
    assert_eq!(
        record.cwd.canonicalize().unwrap(),
        world.repo().canonicalize().unwrap()
    );
    assert!(!record.env.contains_key("GH_TOKEN"));
    assert_eq!(record.env.get("TERM").map(String::as_str), Some("dumb"));
    assert_eq!(record.env.get("IS_SANDBOX").map(String::as_str), Some("1"));
    assert_eq!(
        record.env.get("CINCH_TURN_ID").map(String::as_str),
        Some(result.turn.as_str())
    );
    // Its own process group, in a session of its supervisor's; in a PID namespace of its own
    // (as root), where it is process 2, the group is its init's, process 1.
    let leader = if record.pid == 2 {
        1
    } else {
        record.pid as i32
    };
    assert_eq!(record.pgid, leader);
    assert_ne!(record.sid, record.pid as i32);
    // The raw log is kept; the prompt file is gone.
    assert_eq!(
        std::fs::read(&result.log_path).unwrap(),
        std::fs::read(recorded("claude/s2.jsonl")).unwrap()
    );
    let turn_dir = world.path("cinch-home/turns").join(&result.turn);
    assert!(!turn_dir.join("prompt.md").exists());
}

#[test]
fn a_cli_that_prints_no_event_fails_with_the_end_of_its_stderr() {
    let world = World::new();
    let stderr: String =
        (1..=8).map(|n| format!("line {n}\n")).collect::<String>() + "Authentication required\n";
    world.script(Script {
        stderr: Some(stderr),
        exit_code: 1,
        ..Script::default()
    });
    let (_, _, result) = run_to_end(world.engine().start(world.request("hi")).unwrap());
    assert_eq!(result.status, Status::Failed);
    assert_eq!(
        result.detail.as_deref(),
        Some("line 5\nline 6\nline 7\nline 8\nAuthentication required")
    );
    assert_eq!(result.exit_code, Some(1));
    assert!(result.result_text.contains("no files changed"));
    assert!(result.result_text.contains("(no final message)"));
}

#[test]
fn output_the_driver_cannot_read_is_named_with_the_cli_version() {
    let world = World::new();
    world.script(Script {
        lines: vec!["this is not JSON".into(), "neither is this".into()],
        ..Script::default()
    });
    let (_, _, result) = run_to_end(world.engine().start(world.request("hi")).unwrap());
    assert_eq!(result.status, Status::Failed);
    assert_eq!(
        result.detail.as_deref(),
        Some("The claude driver could not read any of the output of claude 1.2.3.")
    );
}

#[test]
fn a_turn_past_its_timeout_is_stopped_and_says_so() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        hang_ms: -1,
        ..Script::default()
    });
    let mut request = world.request("hi");
    request.timeout = Duration::from_secs(2);
    let (_, _, result) = run_to_end(world.engine().start(request).unwrap());
    assert_eq!(result.status, Status::TimedOut);
    assert_eq!(
        result.detail.as_deref(),
        Some("Stopped after 2 seconds. Resume the session to continue.")
    );
    assert_eq!(
        result.session_id.as_deref(),
        Some("526e215c-c3e8-478e-8c4a-102cd4152018")
    );
    // Timed by the turn's own clock (its start to its CLI's exit), not the
    // test's, which also counts starting and finishing on a busy machine:
    // stopped no sooner than its timeout, and by SIGTERM, not by the SIGKILL
    // that would follow the grace.
    let ran = Duration::from_millis(result.duration_ms);
    assert!(
        ran >= Duration::from_secs(2) && ran < Duration::from_secs(2) + KILL_GRACE,
        "{ran:?}"
    );
}

#[test]
fn a_turn_holds_its_working_tree_even_if_started_before_the_worktree_index() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        hang_ms: -1,
        ..Script::default()
    });
    let engine = world.engine();
    let busy = |brief: &str| {
        let refusal = engine
            .start(world.request(brief))
            .err()
            .expect("a second turn in a busy working tree is refused")
            .to_string();
        assert!(refusal.starts_with("worktree.busy"), "{refusal}");
    };
    let running = engine.start(world.request("one")).unwrap();
    busy("two");
    // A home as a cinch from before the index leaves it: nothing says which
    // working tree the running turn holds.
    let index = world.path("cinch-home/worktrees");
    std::fs::remove_dir_all(&index).unwrap();
    busy("three");

    running.cancel();
    assert_eq!(run_to_end(running).2.status, Status::Cancelled);
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        ..Script::default()
    });
    let (_, _, result) = run_to_end(engine.start(world.request("four")).unwrap());
    assert_eq!(result.status, Status::Completed);
    // Ended turns leave the index.
    let indexed: Vec<PathBuf> = std::fs::read_dir(&index)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_dir())
        .flat_map(|dir| std::fs::read_dir(dir).unwrap())
        .map(|entry| entry.unwrap().path())
        .collect();
    assert!(indexed.is_empty(), "{indexed:?}");
}

#[test]
fn a_cancel_leaves_no_process_behind_even_ones_that_ignore_sigterm() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        ignore_sigterm: true,
        grandchild: true,
        grandchild_pid_file: Some(world.path("user-home/grandchild.pid")),
        hang_ms: -1,
        record: Some(world.record()),
        ..Script::default()
    });
    let turn = world.engine().start(world.request("hi")).unwrap();
    let grandchild = grandchild_pid(&world, turn.id());
    let cli = cli_pid(&world);
    assert!(is_alive(grandchild) && is_alive(cli));
    turn.cancel();
    let started = Instant::now();
    let (_, _, result) = run_to_end(turn);
    assert_eq!(result.status, Status::Cancelled);
    assert_eq!(
        result.detail.as_deref(),
        Some("Stopped: the turn was cancelled.")
    );
    // SIGTERM was ignored, so SIGKILL came ten seconds later.
    assert!(
        started.elapsed() >= Duration::from_secs(9),
        "{:?}",
        started.elapsed()
    );
    assert!(!is_alive(cli), "the CLI survived");
    assert!(!is_alive(grandchild), "the grandchild survived");
}

#[test]
fn a_grandchild_that_escapes_into_its_own_session_is_still_killed() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        grandchild: true,
        grandchild_setsid: true,
        grandchild_pid_file: Some(world.path("user-home/grandchild.pid")),
        // Running while the test finds the grandchild.
        hang_ms: 3_000,
        ..Script::default()
    });
    let turn = world.engine().start(world.request("hi")).unwrap();
    let grandchild = grandchild_pid(&world, turn.id());
    assert!(is_alive(grandchild));
    let (_, _, result) = run_to_end(turn);
    assert_eq!(result.status, Status::Completed, "{}", result.result_text);
    assert!(
        !is_alive(grandchild),
        "the setsid grandchild survived the turn"
    );
}

#[test]
fn a_turn_whose_supervisor_dies_is_interrupted_with_its_session_and_end_checkpoint() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        hang_ms: -1,
        record: Some(world.record()),
        ..Script::default()
    });
    let turn = world.engine().start(world.request("hi")).unwrap();
    let mut subscription = turn.subscribe();
    // Wait for the session id, then kill the supervisor as a machine restart would.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        assert!(Instant::now() < deadline);
        if let Next::Events(events) = subscription.next(Duration::from_millis(200))
            && events
                .iter()
                .any(|event| matches!(event.kind, TurnEventKind::Session { .. }))
        {
            break;
        }
    }
    let turn_dir = world.path("cinch-home/turns").join(turn.id());
    let supervisor = read_pid(&turn_dir.join("supervisor.pid"));
    let cli = cli_pid(&world);
    assert!(is_alive(cli));
    kill(supervisor);
    let (_, _, result) = run_to_end(turn);
    assert_eq!(result.status, Status::Interrupted);
    assert!(
        result
            .detail
            .as_deref()
            .unwrap()
            .starts_with("The harness's state is gone")
    );
    assert_eq!(
        result.session_id.as_deref(),
        Some("526e215c-c3e8-478e-8c4a-102cd4152018")
    );
    assert!(result.end_checkpoint.is_some());
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_alive(cli) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!is_alive(cli), "the orphaned CLI was not killed");
}

/// SIGKILL to a process this test started (through the engine), by its id.
fn kill(pid: i32) {
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn another_process_can_attach_and_both_see_one_result() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        line_delay_ms: 300,
        ..Script::default()
    });
    let first = world.engine().start(world.request("hi")).unwrap();
    let second = world.engine().attach(first.id(), &[]).unwrap();
    let (lines_first, _, result_first) = run_to_end(first);
    let (lines_second, _, result_second) = run_to_end(second);
    assert_eq!(lines_first, lines_second);
    assert_eq!(result_first, result_second);
    assert_eq!(result_first.status, Status::Completed);
}

#[test]
fn turns_are_refused_before_they_start_with_a_clear_code() {
    let world = World::new();
    world.script(Script::default());
    let engine = world.engine();
    let error = |request: TurnRequest| {
        engine
            .start(request)
            .err()
            .expect("should be refused")
            .to_string()
    };

    let mut bad_session = world.request("hi");
    bad_session.session_id = Some("../../etc/passwd".into());
    assert!(error(bad_session).starts_with("session.invalid"));
    let mut long_session = world.request("hi");
    long_session.session_id = Some("a".repeat(201));
    assert!(error(long_session).starts_with("session.invalid"));

    let mut unknown = world.request("hi");
    unknown.harness = "nope".into();
    assert_eq!(
        error(unknown),
        "harness.missing: no driver named `nope`; installed: claude, claude-acp, cline, codex, codex-acp, copilot, cursor, droid, gemini, gemini-acp, kilo, opencode, qwen"
    );
    let mut codex = world.request("hi");
    codex.harness = "codex".into();
    assert!(error(codex).starts_with("harness.cli_missing: codex (Codex) is not on PATH"));

    let mut not_git = world.request("hi");
    not_git.repo = world.path("bin");
    assert!(error(not_git).starts_with("repo.invalid"));

    let mut env = world.env();
    env.remove("ANTHROPIC_API_KEY");
    let no_key = world.engine_with(env);
    let message = no_key.start(world.request("hi")).err().unwrap().to_string();
    assert!(
        message.starts_with(
            "harness.no_credential: Claude Code has no credential: set ANTHROPIC_API_KEY"
        ),
        "{message}"
    );

    std::fs::write(
        world.path("cinch-home/config.toml"),
        "[harness.claude]\nenabled = false\n",
    )
    .unwrap();
    let off = world.engine();
    assert!(
        off.start(world.request("hi"))
            .err()
            .unwrap()
            .to_string()
            .starts_with("harness.off")
    );
    // The reason is a type: a refusal carries its code, anything else fails.
    let mut zero = world.request("hi");
    zero.timeout = Duration::ZERO;
    match engine.start(zero) {
        Err(StartError::Refused(refusal)) => {
            assert_eq!(refusal.code, RefusalCode::TimeoutInvalid)
        }
        other => panic!("not a refusal: {:?}", other.err()),
    }
    let mut unknown = world.request("hi");
    unknown.harness = "nope".into();
    assert!(matches!(engine.start(unknown), Err(StartError::Failed(_))));
    // Nothing was started: no turn folders.
    assert!(engine.list().unwrap().is_empty());
}

#[test]
fn a_work_tree_that_cannot_be_snapshotted_fails_the_start_checkpoint() {
    let world = World::new();
    world.script(Script::default());
    // The repository is there, but git cannot read its HEAD.
    std::fs::write(world.repo().join(".git/HEAD"), "not a ref\n").unwrap();
    let engine = world.engine();
    match engine.start(world.request("hi")) {
        Err(error @ StartError::CheckpointFailed(_)) => assert!(
            format!("{error:#}").starts_with("taking the start checkpoint: "),
            "{error:#}"
        ),
        other => panic!("not a checkpoint failure: {:?}", other.err()),
    }
}

#[test]
fn a_resume_passes_the_session_and_runs_where_the_session_started() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        ..Script::default()
    });
    let engine = world.engine();
    let (_, _, first) = run_to_end(engine.start(world.request("hi")).unwrap());
    let session = first.session_id.unwrap();

    // Claude resumes only from the session's directory: asked for another repo, it runs in the first.
    let other = world.path("other");
    std::fs::create_dir_all(&other).unwrap();
    git(&other, &["init", "-q"]);
    world.script(Script {
        replay: Some(recorded("claude/s4.jsonl")),
        record: Some(world.record()),
        ..Script::default()
    });
    let mut request = world.request("What did you answer?");
    request.repo = other;
    request.session_id = Some(session.clone());
    let (_, _, second) = run_to_end(engine.start(request).unwrap());
    assert_eq!(second.session_id.as_deref(), Some(session.as_str()));
    let record = Record::read_from(&world.record()).unwrap();
    let resume = record
        .argv
        .iter()
        .position(|arg| arg == "--resume")
        .expect("--resume passed");
    assert_eq!(record.argv[resume + 1], session);
    assert_eq!(
        record.cwd.canonicalize().unwrap(),
        world.repo().canonicalize().unwrap()
    );
}

#[test]
fn secrets_are_masked_in_progress_and_results() {
    let world = World::new();
    std::fs::create_dir_all(world.path("cinch-home")).unwrap();
    std::fs::write(
        world.path("cinch-home/config.toml"),
        "[secrets]\nDEPLOY_TOKEN = \"deploy-secret-998877\"\n",
    )
    .unwrap();
    let message = format!("the token is deploy-secret-998877 and the key is {API_KEY}");
    world.script(Script {
        lines: vec![
            serde_json::json!({"type":"system","subtype":"init","session_id":"s-1","model":"m"}),
            serde_json::json!({"type":"assistant","message":{"content":[{"type":"text","text": message}]},"session_id":"s-1"}),
            serde_json::json!({"type":"result","subtype":"success","is_error":false,"result": message,"session_id":"s-1"}),
        ],
        record: Some(world.record()),
        ..Script::default()
    });
    let (lines, _, result) = run_to_end(world.engine().start(world.request("hi")).unwrap());
    assert_eq!(
        lines[1],
        "the token is [redacted] and the key is [redacted]"
    );
    assert_eq!(
        result.final_message.as_deref(),
        Some("the token is [redacted] and the key is [redacted]")
    );
    assert!(
        !result.result_text.contains("deploy-secret-998877")
            && !result.result_text.contains(API_KEY)
    );
    // The log it leaves holds none either.
    let log = std::fs::read_to_string(&result.log_path).unwrap();
    assert!(log.contains("the token is [redacted] and the key is [redacted]"));
    assert!(!log.contains("deploy-secret-998877") && !log.contains(API_KEY));
    // The harness itself does get the configured secret.
    let record = Record::read_from(&world.record()).unwrap();
    assert_eq!(
        record.env.get("DEPLOY_TOKEN").map(String::as_str),
        Some("deploy-secret-998877")
    );
}

#[test]
fn a_log_without_secrets_is_left_as_the_cli_wrote_it() {
    use std::os::unix::fs::MetadataExt as _;
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        ..Script::default()
    });
    let turn = world.engine().start(world.request("hi")).unwrap();
    let written = std::fs::metadata(turn.log_path()).unwrap();
    let (_, _, result) = run_to_end(turn);
    assert_eq!(result.status, Status::Completed, "{}", result.result_text);
    let kept = std::fs::metadata(&result.log_path).unwrap();
    assert_eq!(
        (kept.dev(), kept.ino()),
        (written.dev(), written.ino()),
        "the log was copied over though it held no secret"
    );
    let log = std::fs::read_to_string(&result.log_path).unwrap();
    let replayed = std::fs::read_to_string(recorded("claude/s2.jsonl")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        replayed.lines().collect::<Vec<_>>()
    );
}

#[test]
fn the_managed_configuration_is_removed_before_the_start() {
    let world = World::new();
    let local = world.repo().join(".claude/settings.local.json");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, "{}").unwrap();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        ..Script::default()
    });
    let (_, _, result) = run_to_end(world.engine().start(world.request("hi")).unwrap());
    assert_eq!(result.status, Status::Completed);
    assert!(!local.exists());
}

/// `cinch` as a person runs it, in this world.
fn cinch(world: &World) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cinch"));
    command
        .env_clear()
        .envs(world.env())
        .env("CINCH_HOME", world.path("cinch-home"));
    command
}

fn turns_json(world: &World) -> Vec<serde_json::Value> {
    let output = cinch(world).args(["turns", "--json"]).output().unwrap();
    assert!(output.status.success());
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn killing_cinch_run_leaves_the_turn_running_and_attach_finishes_it() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        line_delay_ms: 1500,
        ..Script::default()
    });
    let mut run = cinch(&world)
        .args(["run", "--harness", "claude", "--repo"])
        .arg(world.repo())
        .arg("Create out.txt")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Listed from the moment its folder exists, `starting` until its
    // supervisor runs: killing `cinch run` before then would leave no turn
    // running.
    let deadline = Instant::now() + Duration::from_secs(30);
    let turn = loop {
        assert!(Instant::now() < deadline, "the turn never started running");
        if let Some(turn) = turns_json(&world).into_iter().next()
            && turn["status"] == "running"
        {
            break turn;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    run.kill().unwrap();
    run.wait().unwrap();
    let id = turn["turn"].as_str().unwrap().to_owned();
    assert_eq!(turns_json(&world)[0]["status"], "running");

    let attached = cinch(&world)
        .args(["attach", &id, "--json"])
        .output()
        .unwrap();
    assert!(
        attached.status.success(),
        "{}",
        String::from_utf8_lossy(&attached.stderr)
    );
    let result: serde_json::Value = serde_json::from_slice(&attached.stdout).unwrap();
    assert_eq!(result["status"], "completed");
    assert_eq!(
        result["final_message"],
        "I ran the command; out.txt now contains hello."
    );
    for key in [
        "status",
        "harness",
        "repository",
        "session_id",
        "duration_ms",
        "exit_code",
        "files_changed",
        "insertions",
        "deletions",
        "detail",
        "final_message",
        "start_checkpoint",
        "end_checkpoint",
        "log_path",
        "result_text",
    ] {
        assert!(result.get(key).is_some(), "no {key} in {result}");
    }
    assert_eq!(turns_json(&world)[0]["status"], "completed");
}

/// Starts `cinch run --json` on a harness that never ends, the brief on stdin.
fn spawn_hanging_run(world: &World) -> std::process::Child {
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        hang_ms: -1,
        record: Some(world.record()),
        ..Script::default()
    });
    let mut run = cinch(world)
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.repo())
        .arg("-")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    use std::io::Write as _;
    let mut stdin = run.stdin.take().unwrap();
    stdin.write_all(b"Wait forever.").unwrap();
    run
}

/// The id of the world's first turn, once the harness has started.
fn started_turn(world: &World) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !world.record().exists() {
        assert!(Instant::now() < deadline, "the harness never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    turns_json(world)[0]["turn"].as_str().unwrap().to_owned()
}

#[test]
fn cinch_stop_cancels_a_running_turn() {
    let world = World::new();
    let run = spawn_hanging_run(&world);
    let id = started_turn(&world);
    let stopped = cinch(&world).args(["stop", &id]).output().unwrap();
    assert!(stopped.status.success());
    let output = run.wait_with_output().unwrap();
    assert!(!output.status.success());
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "cancelled");
    assert!(
        result["result_text"]
            .as_str()
            .unwrap()
            .starts_with("cancelled · Claude Code · ")
    );
}

#[test]
fn cinch_check_reports_cli_version_and_credential() {
    let world = World::new();
    world.script(Script::default());
    let output = cinch(&world).args(["check", "claude"]).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("claude: ")
            && text.contains(" 1.2.3; credential: secret (ANTHROPIC_API_KEY)"),
        "{text}"
    );

    let output = cinch(&world).args(["check", "codex"]).output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stdout).contains("codex: not installed"));
}

#[test]
fn a_version_command_printing_more_than_a_pipe_holds_is_read_whole() {
    let world = World::new();
    world.script(Script::default());
    // Notices on stderr before the version, far more than a pipe holds.
    write_script(
        &world.path("bin/claude"),
        "#!/bin/sh\ni=0\nwhile [ $i -lt 2000 ]; do\n  echo 'a notice this CLI prints on every start, at some length' >&2\n  i=$((i + 1))\ndone\necho 'claude 4.5.6'\n",
    );
    let output = cinch(&world).args(["check", "claude"]).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    assert!(
        text.contains(" 4.5.6; credential: secret (ANTHROPIC_API_KEY)"),
        "{text}"
    );
}

/// The CLI's version is asked for beside the turn, not before it: a start
/// no longer waits for a slow version command (gemini's takes a second).
/// Here the version command answers only once the turn's CLI has written a
/// file, which a start that waited for the version would never let it do.
#[test]
fn the_cli_version_is_asked_for_while_the_turn_runs() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        write_files: [("turn-started".to_owned(), String::new())].into(),
        ..Script::default()
    });
    install_claude_answering_version(
        &world,
        &format!(
            "i=0
  while [ ! -e '{}' ]; do
    i=$((i + 1)); [ $i -gt 250 ] && exit 1
    sleep 0.02
  done
  echo 'claude 4.5.6'",
            world.repo().join("turn-started").display()
        ),
    );

    let turn = world.engine().start(world.request("go")).unwrap();
    let launch_file = world
        .path("cinch-home/turns")
        .join(turn.id())
        .join("launch.json");
    let result = turn.wait();
    assert_eq!(result.status, Status::Completed, "{result:?}");
    assert_eq!(result.cli_version.as_deref(), Some("4.5.6"), "{result:?}");
    // Recorded for whoever reads the turn later (an attach after a restart).
    let launch: serde_json::Value =
        serde_json::from_slice(&std::fs::read(launch_file).unwrap()).unwrap();
    assert_eq!(launch["cli_version"], "4.5.6", "{launch:#}");
}

/// Installs `bin/claude`: the fake CLI, except that its version command
/// runs the shell commands `version_command` instead. Each call installs it
/// anew, as an upgrade does.
fn install_claude_answering_version(world: &World, version_command: &str) {
    let fake = world.path("bin/claude-cli");
    if !fake.exists() {
        std::fs::copy(cinch_fake_cli::binary_path(), &fake).unwrap();
    }
    write_script(
        &world.path("bin/claude"),
        &format!(
            "#!/bin/sh
case \" $* \" in *' --version '*)
  {version_command}
  exit 0;;
esac
exec '{}' \"$@\"\n",
            fake.display()
        ),
    );
}

/// A claude CLI whose version command says `claude <version>` after
/// `delay` (shell `sleep` seconds) and counts the times it was asked;
/// otherwise the fake CLI, replaying a recorded turn.
struct CountedCli<'w> {
    world: &'w World,
}

impl<'w> CountedCli<'w> {
    fn install(world: &'w World, version: &str, delay: &str) -> Self {
        world.script(Script {
            replay: Some(recorded("claude/s2.jsonl")),
            ..Script::default()
        });
        let cli = Self { world };
        cli.upgrade(version, delay);
        cli
    }

    /// Installs the CLI anew, as an upgrade does: a new file.
    fn upgrade(&self, version: &str, delay: &str) {
        install_claude_answering_version(
            self.world,
            &format!(
                "echo asked >> '{}'
  sleep {delay}
  echo 'claude {version}'",
                self.asked().display()
            ),
        );
    }

    fn asked(&self) -> PathBuf {
        self.world.path("versions-asked")
    }

    fn times_asked(&self) -> usize {
        std::fs::read_to_string(self.asked())
            .unwrap_or_default()
            .lines()
            .count()
    }
}

/// An engine asks a CLI for its version once, not at every turn (gemini's
/// version command costs a second of CPU), and asks again once the CLI's
/// file has changed: a reinstalled CLI is a new file.
#[test]
fn an_engine_asks_each_cli_file_for_its_version_once() {
    let world = World::new();
    let cli = CountedCli::install(&world, "4.5.6", "0");
    let engine = world.engine();
    let version_of_a_turn = |engine: &Engine| {
        let result = engine.start(world.request("go")).unwrap().wait();
        assert_eq!(result.status, Status::Completed, "{result:?}");
        result.cli_version.unwrap_or_default()
    };

    assert_eq!(version_of_a_turn(&engine), "4.5.6");
    assert_eq!(cli.times_asked(), 1);
    assert_eq!(version_of_a_turn(&engine), "4.5.6");
    assert_eq!(cli.times_asked(), 1, "the same CLI was asked again");

    cli.upgrade("4.10.0", "0");
    assert_eq!(version_of_a_turn(&engine), "4.10.0");
    assert_eq!(cli.times_asked(), 2);
    assert_eq!(version_of_a_turn(&engine), "4.10.0");
    assert_eq!(cli.times_asked(), 2);
}

/// Turns starting while their CLI's version command runs wait for its
/// answer rather than each running it: a burst of turns (a server taking up
/// its queued tasks) asks once.
#[test]
fn turns_starting_together_ask_their_cli_for_its_version_once() {
    let world = World::new();
    let cli = CountedCli::install(&world, "4.5.6", "0.5");
    let engine = world.engine();

    let turns: Vec<Turn> = (0..3)
        .map(|n| {
            let mut request = world.request("go");
            request.repo = world.path(&format!("repo-{n}"));
            std::fs::create_dir_all(&request.repo).unwrap();
            init_repo(&request.repo);
            engine.start(request).unwrap()
        })
        .collect();

    for turn in turns {
        let result = turn.wait();
        assert_eq!(result.status, Status::Completed, "{result:?}");
        assert_eq!(result.cli_version.as_deref(), Some("4.5.6"), "{result:?}");
    }
    assert_eq!(cli.times_asked(), 1);
}

#[test]
fn ctrl_c_in_cinch_run_cancels_the_turn_cleanly() {
    let world = World::new();
    let run = spawn_hanging_run(&world);
    started_turn(&world);
    let cli = cli_pid(&world);
    assert!(is_alive(cli));
    let status = Command::new("kill")
        .args(["-INT", &run.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = run.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(1));
    let result: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "cancelled");
    assert_eq!(result["session_id"], "526e215c-c3e8-478e-8c4a-102cd4152018");
    assert!(!is_alive(cli), "the harness survived the cancel");
}

/// `cinch run` as a user other than root: the turn's processes still read their own /proc
/// entries (droid's command watcher needs `ps -o ppid= -p`), through a PID namespace made
/// inside a user namespace of the turn's own.
#[test]
fn a_turn_run_by_another_user_reads_its_own_processes() {
    const NOBODY: u32 = 65534;
    // SAFETY: plain syscall.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("SKIPPED: running cinch as another user needs root (CI runs as root)");
        return;
    }
    let world = World::new();
    let own_entry = Probe::Run {
        program: "sh".to_owned(),
        args: ["-c", "ps -o ppid= -p $$"].map(str::to_owned).to_vec(),
    };
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        probes: vec![own_entry.clone()],
        ..Script::default()
    });
    let chown = Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(world.dir.path())
        .status()
        .unwrap();
    assert!(chown.success());
    let output = cinch(&world)
        .args(["run", "--harness", "claude", "--json", "--repo"])
        .arg(world.repo())
        .arg("probe")
        .uid(NOBODY)
        .gid(NOBODY)
        .output()
        .unwrap();
    let result: serde_json::Value =
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("{output:?}"));
    assert_eq!(result["status"], "completed", "{result:#}");
    let log = std::fs::read_to_string(result["log_path"].as_str().unwrap()).unwrap();
    let outcome = log
        .lines()
        .find_map(|line| serde_json::from_str::<ProbeOutcome>(line).ok())
        .unwrap_or_else(|| panic!("no probe in the log:\n{log}"));
    assert_eq!(outcome.probe, own_entry);
    assert!(outcome.allowed, "{outcome:?}");
}

/// Pruning old runs (each agent's 20 most recent are kept) never takes the
/// folder of a turn still starting: here a supervisor held at a gate while
/// 21 other turns start, end and prune; let through, its turn runs whole.
#[test]
fn runs_pruned_while_a_turn_starts_leave_its_folder_alone() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        ..Script::default()
    });
    // A supervisor that waits for the gate before it runs (and opens its log).
    let gate = world.path("gate");
    let waiting = world.path("waiting");
    let gated = world.path("gated-supervisor");
    write_script(
        &gated,
        &format!(
            "#!/bin/sh\ntouch '{}'\nwhile [ ! -e '{}' ]; do sleep 0.02; done\nexec '{}' \"$@\"\n",
            waiting.display(),
            gate.display(),
            env!("CARGO_BIN_EXE_cinch")
        ),
    );
    let slow = Engine::new(
        Home::open(world.path("cinch-home")).unwrap(),
        &Runtime::new(Some(compiled_drivers()), Limits::default()).unwrap(),
        gated,
        world.env(),
    )
    .unwrap();
    let request = world.request("Create out.txt containing hello.");
    let starting = std::thread::spawn(move || slow.start(request).map(run_to_end));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !waiting.exists() {
        assert!(
            Instant::now() < deadline,
            "the supervisor was never spawned"
        );
        std::thread::sleep(Duration::from_millis(20));
    }

    // Meanwhile, in another working tree, more turns than runs are kept.
    let other = world.path("other");
    std::fs::create_dir_all(&other).unwrap();
    init_repo(&other);
    let engine = world.engine();
    for _ in 0..21 {
        let mut request = world.request("Say hello.");
        request.repo = other.clone();
        let (_, _, result) = run_to_end(engine.start(request).unwrap());
        assert_eq!(result.status, Status::Completed, "{}", result.result_text);
    }
    // Turns ending this fast have their prunes done together a moment
    // after (`turn_dir::retention`).
    eventually("20 runs kept besides the one starting", || {
        let runs = std::fs::read_dir(world.path("cinch-home/runs"))
            .unwrap()
            .count();
        (runs == 21).then_some(())
    });

    std::fs::write(&gate, "").unwrap();
    let (lines, _, result) = starting.join().unwrap().unwrap();
    assert_eq!(result.status, Status::Completed, "{}", result.result_text);
    assert_eq!(lines.len(), 3, "{lines:?}");
    let log = std::fs::read_to_string(&result.log_path).unwrap();
    let replayed = std::fs::read_to_string(recorded("claude/s2.jsonl")).unwrap();
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        replayed.lines().collect::<Vec<_>>()
    );
}

/// A git repository at `repo` (an existing folder) with one commit.
fn init_repo(repo: &Path) {
    git(repo, &["init", "-q"]);
    std::fs::write(repo.join("readme.txt"), "hello\n").unwrap();
    git(repo, &["add", "."]);
    git(
        repo,
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
}

/// One cache of compiled drivers for every test's engine: each loads the
/// same built-in drivers, and compiling them takes about a second of CPU.
/// Entries are named by the component's hash and the engine's settings.
fn compiled_drivers() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-drivers")
}

#[test]
fn cinch_run_from_a_subdirectory_runs_the_only_harness_at_the_repositorys_top() {
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s1.jsonl")),
        write_files: [("made.txt".to_owned(), "made\n".to_owned())].into(),
        ..Script::default()
    });
    let sub = world.repo().join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    let run = cinch(&world)
        .current_dir(&sub)
        .args(["run", "Make a file"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{run:?}");
    assert!(
        stderr.contains("harness: claude (the only one installed)"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(world.repo().join("made.txt")).unwrap(),
        "made\n",
        "the harness ran at the repository's top"
    );
    assert!(!sub.join("made.txt").exists());

    // With two installed, it asks which.
    cinch_fake_cli::install(&world.path("bin"), "codex");
    let run = cinch(&world)
        .current_dir(&sub)
        .args(["run", "Make a file"])
        .output()
        .unwrap();
    assert!(!run.status.success(), "{run:?}");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr
            .contains("several harnesses are installed (claude, codex): choose one with --harness"),
        "{stderr}"
    );
}

#[test]
fn listings_end_quietly_when_their_reader_stops_reading() {
    use std::os::unix::process::ExitStatusExt as _;
    let world = World::new();
    world.script(Script {
        replay: Some(recorded("claude/s2.jsonl")),
        ..Script::default()
    });
    let run = cinch(&world)
        .args(["run", "--harness", "claude", "--repo"])
        .arg(world.repo())
        .arg("Go")
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    let turn = turns_json(&world)[0]["turn"].as_str().unwrap().to_owned();
    for args in [
        vec!["turns"],
        vec!["log", &turn],
        vec!["drivers"],
        vec!["check"],
    ] {
        // `cinch turns | head -0`: the reader is gone before the first line.
        let mut child = cinch(&world)
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert_eq!(
            output.status.signal(),
            Some(13),
            "{args:?} ends by SIGPIPE, as `ls` does: {:?} {stderr}",
            output.status
        );
    }
}

#[test]
fn a_harness_that_reports_no_version_is_not_a_problem() {
    let world = World::new();
    // An ACP agent whose version command prints nothing.
    cinch_fake_cli::install(&world.path("bin"), "my-acp");
    let config = world.path("cinch-home/config.toml");
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str("\n[harness.my-acp]\ndriver = \"acp\"\nprogram = \"my-acp\"\n");
    std::fs::write(&config, text).unwrap();
    world.script(Script {
        version: String::new(),
        ..Script::default()
    });
    let output = cinch(&world).args(["check", "my-acp"]).output().unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{text}");
    let line = text
        .lines()
        .find(|line| line.starts_with("my-acp: "))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("(no version reported)"), "{line}");
    assert!(
        !text.contains("cannot run") && !text.contains("unknown"),
        "{text}"
    );
    let drivers = cinch(&world).arg("drivers").output().unwrap();
    let drivers = String::from_utf8_lossy(&drivers.stdout);
    let row = drivers
        .lines()
        .find(|line| line.starts_with("my-acp "))
        .unwrap_or_else(|| panic!("{drivers}"));
    assert!(
        row.contains("(no version reported)") && !row.contains("printed no version"),
        "{row}"
    );
}
