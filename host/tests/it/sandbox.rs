//! The sandbox, tried from inside as a hostile tenant would: a harness (the
//! fake CLI running probes, printing the claude driver's JSONL) and setup
//! commands of another account, against a real `cinch serve`.

use crate::support;

use std::collections::BTreeMap;
use std::os::linux::net::SocketAddrExt as _;
use std::path::{Path, PathBuf};

use cinch_fake_cli::{Probe, ProbeOutcome, Script};
use serde_json::{Value, json};
use support::*;

/// A second account's API, with a token of its own.
fn second_api<'a>(world: &World, server: &'a Server) -> Api<'a> {
    let (_, token) = world.second_account();
    Api::new(server, &token)
}

/// Makes environment `name` on `repository` with the one setup `command`,
/// which must fail, and starts a session on it: the environment's id and
/// the error its closed session shows.
fn failed_setup(api: &Api, name: &str, repository: &Path, command: &str) -> (String, String) {
    let environment = api.environment(json!({
        "name": name,
        "repository": path_text(repository),
        "setup": [command],
    }));
    let (task, session) = start_task(api, json!({"prompt": "hi", "environment_id": environment}));
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "setup_failure", "{closed:#}");
    let error = closed["error_message"].as_str().unwrap().to_owned();
    (environment, error)
}

/// Starts a task of `api` and returns (task, session).
fn start_task(api: &Api, body: Value) -> (String, String) {
    let created = api.post("/tasks", body);
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    (task, session)
}

/// The session's last assistant message (its turn), once it is idle.
fn finished_turn(api: &Api, task: &str, session: &str) -> Value {
    api.wait_status(task, session, "idle");
    let messages = api.messages(task, session, "?direction=desc&limit=50");
    assert_eq!(messages.status, 200, "{messages:?}");
    assistant(&messages.data())
}

/// The probes' outcomes in a turn's raw log, read over the log route.
fn probe_outcomes(api: &Api, session: &str, turn: &Value) -> Vec<ProbeOutcome> {
    let call = turn["turn"]["call_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no call id: {turn:#}"));
    let log = api
        .server
        .get(&format!("/api/runs/{session}/tasks/{call}/log"), &api.token);
    assert_eq!(log.status, 200, "{log:?}");
    let raw = log.json()["raw"].as_str().unwrap().to_owned();
    raw.lines()
        .filter_map(|line| serde_json::from_str::<ProbeOutcome>(line).ok())
        .collect()
}

/// The nice value of process `pid` (the 19th field of its `stat`).
fn niceness(pid: u32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = stat.rsplit(')').next().unwrap();
    after_name
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap()
}

fn pid_in(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|error| panic!("{}: {error}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

/// The one entry of `dir` whose name ends with `suffix`.
fn only_entry(dir: &Path, suffix: &str) -> PathBuf {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

fn path_text(path: &Path) -> String {
    path.display().to_string()
}

#[test]
fn a_hostile_harness_of_one_account_reaches_nothing_of_cinchs_or_anothers() {
    let world = World::new();
    let roots = world.path("roots");
    std::fs::create_dir_all(roots.join("b-repo")).unwrap();
    std::fs::rename(world.path("repo"), roots.join("a-repo")).unwrap();
    git(&roots.join("b-repo"), &["init", "-q"]);
    git(
        &roots.join("b-repo"),
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "init",
        ],
    );
    // The server's own key stays with the server: the operator passes only
    // the fake CLI's script on; each account brings its harness key.
    std::fs::write(
        world.path("home/config.toml"),
        "[serve]\npass_env = [\"FAKE_CLI_SCRIPT\"]\n\n[sandbox]\nmax_processes = 64\n",
    )
    .unwrap();
    let server = world.serve_with(&["--repository-root", &path_text(&roots)]);
    let a = Api::new(&server, &world.admin_token());
    let b = second_api(&world, &server);
    let home = world.path("home");

    // Account A: an environment with a secret, and a turn that keeps running.
    world.script(Script {
        lines: claude_turn("a-1", "working"),
        write_files: [("a-private.txt".to_owned(), "A's work\n".to_owned())].into(),
        hang_ms: 8_000,
        ..Script::default()
    });
    let a_env = a.environment(json!({
        "name": "a-env",
        "repository": path_text(&roots.join("a-repo")),
        "secrets": {"DEPLOY_TOKEN": SECRET, "ANTHROPIC_API_KEY": "sk-account-a-key-000"},
    }));
    let (a_task, a_session) = start_task(&a, json!({"prompt": "work", "environment_id": a_env}));
    let a_workspace = PathBuf::from(
        a.wait(&a_task, &a_session, "a running turn", |s| {
            s["status"] == "running" && s["workspace"].is_string()
        })["workspace"]
            .as_str()
            .unwrap(),
    );
    let a_turn_dir = loop {
        if let Ok(entries) = std::fs::read_dir(home.join("turns"))
            && let Some(entry) = entries.flatten().next()
            && entry.path().join("supervisor.pid").exists()
            && a_workspace.join("a-private.txt").exists()
        {
            break entry.path();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let a_supervisor = pid_in(&a_turn_dir.join("supervisor.pid"));
    let a_group = pid_in(&a_turn_dir.join("pid"));
    // The server supervises turns with the small helper installed beside it.
    let supervisor_exe = std::fs::read_link(format!("/proc/{a_supervisor}/exe")).unwrap();
    assert_eq!(
        supervisor_exe.file_name().unwrap(),
        "cinch-helper",
        "{}",
        supervisor_exe.display()
    );
    let a_agent = only_entry(&home.join("agents"), "");
    let secrets_key = home.join("secrets.key");
    assert!(secrets_key.is_file(), "{}", secrets_key.display());
    let a_log = only_entry(&home.join("runs").join(&a_session), ".harness.jsonl");
    let server_pid = server.child.id() as i32;

    // Something of cinch's own on an abstract unix socket.
    let socket_name = format!("cinch-test-{}", std::process::id());
    let _listener = std::os::unix::net::UnixListener::bind_addr(
        &std::os::unix::net::SocketAddr::from_abstract_name(&socket_name).unwrap(),
    )
    .unwrap();

    // Account B's harness tries everything.
    let denied = vec![
        Probe::Read {
            path: path_text(&secrets_key),
        },
        Probe::List {
            path: path_text(&home.join("secrets")),
        },
        Probe::List {
            path: path_text(&home.join("secrets/turns")),
        },
        Probe::Read {
            path: path_text(&home.join("cinch.db")),
        },
        Probe::Read {
            path: path_text(&home.join("admin-token")),
        },
        Probe::List {
            path: path_text(&home.join("workspaces")),
        },
        Probe::Read {
            path: path_text(&a_workspace.join("a-private.txt")),
        },
        Probe::Read {
            path: path_text(&a_log),
        },
        Probe::Read {
            path: path_text(&a_turn_dir.join("launch.json")),
        },
        Probe::List {
            path: path_text(&a_agent),
        },
        Probe::Write {
            path: path_text(&a_agent.join("planted")),
        },
        Probe::Write {
            path: path_text(&home.join("escape")),
        },
        Probe::Write {
            path: path_text(&world.path("escape")),
        },
        Probe::Read {
            path: format!("/proc/{server_pid}/environ"),
        },
        Probe::List {
            path: format!("/proc/{a_group}"),
        },
        Probe::Signal {
            pid: server_pid,
            signal: libc::SIGSTOP,
        },
        Probe::Signal {
            pid: server_pid,
            signal: 0,
        },
        Probe::Signal {
            pid: a_supervisor,
            signal: libc::SIGKILL,
        },
        Probe::Ptrace { pid: server_pid },
        Probe::ConnectAbstract {
            name: socket_name.clone(),
        },
        Probe::Env {
            name: "CINCH_HOME".to_owned(),
        },
        Probe::Fork { count: 200 },
    ];
    // What a harness needs keeps working, down to a child reading its own /proc entry
    // (droid's command watcher asks `ps` for its shell's parent, and kills the command when
    // it cannot).
    let allowed = vec![
        Probe::Write {
            path: "b-own.txt".to_owned(),
        },
        Probe::Read {
            path: "/etc/passwd".to_owned(),
        },
        Probe::Env {
            name: "ANTHROPIC_API_KEY".to_owned(),
        },
        Probe::Fork { count: 8 },
        Probe::Run {
            program: "git".to_owned(),
            args: [
                "-c",
                "user.name=b",
                "-c",
                "user.email=b@b",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "by the harness",
            ]
            .map(str::to_owned)
            .to_vec(),
        },
        Probe::Run {
            program: "sh".to_owned(),
            args: ["-c", "ps -o ppid= -p $$"].map(str::to_owned).to_vec(),
        },
    ];
    world.script(Script {
        lines: claude_turn("b-1", "tried"),
        probes: denied.iter().chain(&allowed).cloned().collect(),
        ..Script::default()
    });
    let b_env = b.environment(json!({
        "name": "b-env",
        "repository": path_text(&roots.join("b-repo")),
        "secrets": {"ANTHROPIC_API_KEY": "sk-account-b-key-111"},
    }));
    let (b_task, b_session) = start_task(&b, json!({"prompt": "try", "environment_id": b_env}));
    let b_turn = finished_turn(&b, &b_task, &b_session);
    assert_eq!(b_turn["turn"]["status"], "completed", "{b_turn:#}");

    let outcomes = probe_outcomes(&b, &b_session, &b_turn);
    let by_probe: BTreeMap<String, &ProbeOutcome> = outcomes
        .iter()
        .map(|outcome| (format!("{:?}", outcome.probe), outcome))
        .collect();
    for probe in &denied {
        let outcome = by_probe
            .get(&format!("{probe:?}"))
            .unwrap_or_else(|| panic!("{probe:?} did not report: {outcomes:#?}"));
        assert!(!outcome.allowed, "the sandbox let through {outcome:?}");
    }
    for probe in &allowed {
        let outcome = by_probe
            .get(&format!("{probe:?}"))
            .unwrap_or_else(|| panic!("{probe:?} did not report: {outcomes:#?}"));
        assert!(outcome.allowed, "the sandbox broke {outcome:?}");
    }

    // The key B's harness runs on is B's own (20 characters), not the
    // server's (22), which stays with the server.
    let key = by_probe[&format!(
        "{:?}",
        Probe::Env {
            name: "ANTHROPIC_API_KEY".to_owned()
        }
    )];
    assert_eq!(key.detail, "20 characters");
    assert_eq!(API_KEY.len(), 22);

    // Nothing of A's changed, and A's turn ran on to its end.
    assert!(!a_agent.join("planted").exists());
    assert!(!home.join("escape").exists() && !world.path("escape").exists());
    let a_turn = finished_turn(&a, &a_task, &a_session);
    assert_eq!(a_turn["turn"]["status"], "completed", "{a_turn:#}");
    assert_eq!(server.get("/v1/server", &a.token).status, 200);
    // B's harness committed on its own branch.
    let b_session_view = b.session(&b_task, &b_session);
    let log = std::process::Command::new("git")
        .args(["log", "-1", "--format=%s"])
        .current_dir(b_session_view["workspace"].as_str().unwrap())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&log.stdout).trim(),
        "by the harness"
    );
}

#[test]
fn setup_commands_run_sandboxed_and_steal_nothing() {
    let world = World::new();
    let roots = world.path("roots");
    std::fs::create_dir_all(&roots).unwrap();
    std::fs::rename(world.path("repo"), roots.join("repo")).unwrap();
    let server = world.serve_with(&["--repository-root", &path_text(&roots)]);
    let a = Api::new(&server, &world.admin_token());
    let admin_token = a.token.clone();
    a.environment(json!({
        "name": "a-env",
        "repository": path_text(&roots.join("repo")),
        "secrets": {"DEPLOY_TOKEN": SECRET},
    }));
    let b = second_api(&world, &server);

    // The theft of the issue, word for word, from B's setup command.
    let repo = roots.join("repo");
    let steal = "echo $(cat ../../admin-token) $(cat ../../secrets/*.json) >&2; exit 3";
    let (b_env, error) = failed_setup(&b, "b-env", &repo, steal);
    assert!(error.contains("exit code 3"), "{error}");
    assert!(error.contains("Permission denied"), "{error}");
    assert!(
        !error.contains(&admin_token) && !error.contains(SECRET),
        "{error}"
    );
    assert!(!error.contains("cinch_"), "{error}");

    // A setup command reads its own /proc entry, not the server's (its
    // parent, whose environment holds the model key). It runs ten nice
    // levels below the server, so that it never holds back running turns.
    let read_proc = "read own < /proc/$$/status; echo \"own=$own nice=$(nice)\" >&2; \
                     cat /proc/$PPID/environ >&2; exit 4";
    let (_, error) = failed_setup(&b, "b-proc", &repo, read_proc);
    assert!(error.contains("exit code 4"), "{error}");
    let lowered = (niceness(server.child.id()) + 10).min(19);
    assert!(error.contains(&format!("nice={lowered}")), "{error}");
    assert!(error.contains("own=Name:"), "{error}");
    assert!(error.contains("Permission denied"), "{error}");
    assert!(!error.contains(API_KEY), "{error}");

    // B may not point an environment anywhere else on the server's disk.
    for (path, rule) in [
        (path_text(&world.path("user-home")), "repository root"),
        (path_text(&world.path("home")), "home"),
        ("/".to_owned(), "home"),
        (path_text(&roots.join("missing")), "does not exist"),
    ] {
        let before = b.get("/environments").data();
        let refused = b.post("/environments", json!({"name": "x", "repository": path}));
        assert_eq!(refused.status, 422, "{path}: {refused:?}");
        assert_eq!(refused.field_errors(), ["repository"]);
        assert!(refused.text.contains(rule), "{path}: {refused:?}");
        assert_eq!(b.get("/environments").data(), before);
    }
    // Moving an existing environment there is refused the same way.
    let moved = b.server.patch(
        &b.path(&format!("/environments/{b_env}")),
        &b.token,
        &json!({"repository": path_text(&world.path("home"))}),
    );
    assert_eq!(moved.status, 422, "{moved:?}");
    assert_eq!(
        b.get(&format!("/environments/{b_env}")).data()["repository"],
        path_text(&roots.join("repo"))
    );
}

#[test]
fn an_environment_can_limit_outbound_tcp_to_listed_ports() {
    let world = World::new();
    let listen = || std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (open, closed) = (listen(), listen());
    let port = |listener: &std::net::TcpListener| listener.local_addr().unwrap().port();
    let server = world.serve();
    let api = Api::new(&server, &world.admin_token());
    let probes = vec![
        Probe::ConnectTcp { port: port(&open) },
        Probe::ConnectTcp {
            port: port(&closed),
        },
    ];
    world.script(Script {
        lines: claude_turn("n-1", "connected"),
        probes: probes.clone(),
        ..Script::default()
    });
    let environment = api.environment(json!({
        "name": "net",
        "repository": path_text(&world.path("repo")),
        "allowed_tcp_ports": [port(&open)],
    }));
    assert_eq!(
        api.get(&format!("/environments/{environment}")).data()["allowed_tcp_ports"],
        json!([port(&open)])
    );
    let (task, session) = start_task(&api, json!({"prompt": "hi", "environment_id": environment}));
    let turn = finished_turn(&api, &task, &session);
    let outcomes = probe_outcomes(&api, &session, &turn);
    let allowed: Vec<bool> = outcomes.iter().map(|outcome| outcome.allowed).collect();
    assert_eq!(allowed, [true, false], "{outcomes:#?}");

    let bad = api.post(
        "/environments",
        json!({"name": "bad", "repository": path_text(&world.path("repo")), "allowed_tcp_ports": [0, 70000]}),
    );
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(
        bad.field_errors(),
        ["allowed_tcp_ports[0]", "allowed_tcp_ports[1]"]
    );
}

#[test]
fn the_server_reports_its_sandbox_and_runs_unsandboxed_only_when_told() {
    let world = World::new();
    let secret_file = world.path("outside.txt");
    std::fs::write(&secret_file, "outside\n").unwrap();
    world.script(Script {
        lines: claude_turn("s-1", "read"),
        probes: vec![Probe::Read {
            path: path_text(&secret_file),
        }],
        ..Script::default()
    });
    let mut allowed = Vec::new();
    for no_sandbox in [false, true] {
        let server = if no_sandbox {
            world.serve_with(&["--no-sandbox"])
        } else {
            world.serve()
        };
        let api = Api::new(&server, &world.admin_token());
        let view = server.get("/v1/server", &api.token);
        assert_eq!(view.status, 200, "{view:?}");
        assert_eq!(view.data()["sandbox"]["enforced"], !no_sandbox, "{view:?}");
        assert_eq!(server.request("GET", "/v1/server", None, None).status, 401);
        if no_sandbox {
            assert!(server.log().contains("--no-sandbox"), "{}", server.log());
        } else {
            assert!(view.data()["sandbox"]["landlock_abi"].as_i64().unwrap() >= 6);
            assert_eq!(view.data()["sandbox"]["filesystem"], true);
        }
        // Turns get a /proc of their own here, unless nothing is sandboxed.
        assert_eq!(view.data()["sandbox"]["own_proc"], !no_sandbox, "{view:?}");
        // This machine makes network namespaces (the egress tests need them).
        assert_eq!(
            view.data()["sandbox"]["allowed_hosts"],
            !no_sandbox,
            "{view:?}"
        );
        let (task, session) = start_task(&api, json!({"prompt": "hi"}));
        let turn = finished_turn(&api, &task, &session);
        allowed.push(probe_outcomes(&api, &session, &turn)[0].allowed);
    }
    assert_eq!(allowed, [false, true]);
}

#[test]
fn cinch_run_sandboxes_by_default_and_check_says_so() {
    let world = World::new();
    let outside = world.path("outside.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    world.script(Script {
        lines: claude_turn("r-1", "read"),
        probes: vec![
            Probe::Read {
                path: path_text(&outside),
            },
            Probe::Write {
                path: path_text(&world.path("user-home/ok.txt")),
            },
        ],
        ..Script::default()
    });
    // A cinch installed beside a helper of another version (which would
    // fail the turn), or beside one that never answers, supervises turns
    // itself, and says why.
    let beside = |folder: &str, helper: &str| {
        let cinch = world.path(&format!("{folder}/cinch"));
        std::fs::create_dir_all(cinch.parent().unwrap()).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_cinch"), &cinch).unwrap();
        let beside = world.path(&format!("{folder}/cinch-helper"));
        std::fs::write(&beside, helper).unwrap();
        std::fs::set_permissions(&beside, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        cinch
    };
    let stale = beside("stale", "#!/bin/sh\necho 0.0.1\n");
    let hung = beside("hung", "#!/bin/sh\nexec sleep 600\n");
    let installed = Path::new(env!("CARGO_BIN_EXE_cinch"));
    let mut outcomes = Vec::new();
    for (cinch, extra, warning) in [
        (installed, &[][..], None),
        (stale.as_path(), &[][..], Some("another version")),
        (
            hung.as_path(),
            &[][..],
            Some("did not say its version within 5 s"),
        ),
        (installed, &["--no-sandbox"][..], None),
    ] {
        let output = world
            .cinch_at(cinch)
            .args(["run", "--harness", "claude", "--repo"])
            .arg(world.path("repo"))
            .args(extra)
            .args(["--json", "hi"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        match warning {
            Some(warning) => assert!(stderr.contains(warning), "{output:?}"),
            None => assert!(!stderr.contains("cinch-helper"), "{output:?}"),
        }
        let result: Value = serde_json::from_slice(&output.stdout).unwrap();
        let turn = result["turn"].as_str().unwrap().to_owned();
        let log = world
            .cinch()
            .args(["log", &turn, "--json"])
            .output()
            .unwrap();
        let log: Value = serde_json::from_slice(&log.stdout).unwrap();
        let probes: Vec<bool> = log["raw"]
            .as_str()
            .unwrap()
            .lines()
            .filter_map(|line| serde_json::from_str::<ProbeOutcome>(line).ok())
            .map(|outcome| outcome.allowed)
            .collect();
        outcomes.push(probes);
    }
    assert_eq!(
        outcomes,
        [
            vec![false, true],
            vec![false, true],
            vec![false, true],
            vec![true, true]
        ]
    );

    let check = world.cinch().args(["check", "--json"]).output().unwrap();
    let report: Value = serde_json::from_slice(&check.stdout).unwrap();
    // Which program turns start from: the helper beside cinch, or cinch
    // itself when that helper is of another version.
    assert_eq!(
        report["helper"],
        path_text(&installed.with_file_name("cinch-helper")),
        "{report:#}"
    );
    let stale_check = world.cinch_at(&stale).arg("check").output().unwrap();
    let stale_text = String::from_utf8_lossy(&stale_check.stdout);
    assert!(
        stale_text.contains(&format!("helper: {} itself", stale.display())),
        "{stale_text}"
    );
    assert!(
        report["sandbox"]["landlock_abi"].as_i64().unwrap() >= 6,
        "{report:#}"
    );
    assert_eq!(report["sandbox"]["scoped_signals_and_sockets"], true);
    assert_eq!(report["sandbox"]["own_proc"], true, "{report:#}");
    assert!(
        report["harnesses"]
            .as_array()
            .is_some_and(|list| !list.is_empty())
    );
    let text = world.cinch().arg("check").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("landlock: ABI"), "{text}");
    assert!(text.contains("files: enforced"), "{text}");
    assert!(
        text.contains("outbound hosts (when an environment lists them): enforced"),
        "{text}"
    );
    assert!(
        text.contains("a /proc of each turn's own processes: yes"),
        "{text}"
    );
}

#[test]
fn a_turn_the_sandbox_breaks_says_so() {
    let world = World::new();
    world.script(Script {
        stderr: Some("Error: EACCES: permission denied, open '/srv/private/notes'\n".to_owned()),
        exit_code: 1,
        ..Script::default()
    });
    let output = world
        .cinch()
        .args(["run", "--harness", "claude", "--repo"])
        .arg(world.path("repo"))
        .args(["--json", "hi"])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(result["status"], "failed", "{result:#}");
    let detail = result["detail"].as_str().unwrap();
    assert!(detail.contains("EACCES"), "{detail}");
    assert!(detail.contains("cinch's sandbox"), "{detail}");
}

/// `sandboxed POLICY PROGRAM [ARGS…]`, as the server starts setup commands and
/// workspace git, works the same in the helper and in cinch itself, and a
/// helper started wrongly says what it is for.
#[test]
fn the_helper_and_cinch_both_run_a_command_inside_a_policy() {
    let world = World::new();
    let inside = world.path("inside");
    std::fs::create_dir_all(&inside).unwrap();
    std::fs::write(inside.join("mine.txt"), "mine\n").unwrap();
    std::fs::write(world.path("outside.txt"), "not yours\n").unwrap();
    let policy =
        serde_json::to_string(&cinch_engine::sandbox::Policy::with_system(
            [inside.clone()],
        ))
        .unwrap();
    let script = format!(
        "cat {}; cat {} || echo refused",
        path_text(&inside.join("mine.txt")),
        path_text(&world.path("outside.txt"))
    );
    for program in [
        env!("CARGO_BIN_EXE_cinch-helper"),
        env!("CARGO_BIN_EXE_cinch"),
    ] {
        let output = std::process::Command::new(program)
            .args(["sandboxed", &policy, "/bin/sh", "-c", &script])
            .output()
            .unwrap();
        assert!(output.status.success(), "{program}: {output:?}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "mine\nrefused\n",
            "{program}"
        );
        assert!(
            String::from_utf8_lossy(&output.stderr).contains("Permission denied"),
            "{program}: {output:?}"
        );

        let broken = std::process::Command::new(program)
            .args(["sandboxed", "{not json", "/bin/true"])
            .output()
            .unwrap();
        assert_eq!(broken.status.code(), Some(126), "{program}: {broken:?}");
        let said = String::from_utf8_lossy(&broken.stderr);
        assert!(
            said.contains("cinch sandbox: reading the sandbox policy"),
            "{program}: {said}"
        );
    }
    let lost = std::process::Command::new(env!("CARGO_BIN_EXE_cinch-helper"))
        .arg("serve")
        .output()
        .unwrap();
    assert_eq!(lost.status.code(), Some(2), "{lost:?}");
    assert!(
        String::from_utf8_lossy(&lost.stderr).contains("started by cinch itself"),
        "{lost:?}"
    );
}

/// A host for the egress test: an HTTP server answering 200 to anything,
/// counting its requests.
struct HttpTarget {
    port: u16,
    hits: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl HttpTarget {
    fn start() -> Self {
        use std::io::{Read as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hits.clone();
        std::thread::spawn(move || {
            for mut stream in listener.incoming().map_while(Result::ok) {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") && stream.read(&mut byte).unwrap_or(0) == 1 {
                    head.push(byte[0]);
                }
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nreached",
                );
            }
        });
        Self { port, hits }
    }

    fn hits(&self) -> usize {
        self.hits.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A UDP server on 127.0.0.1 answering each datagram (a DNS query with an
/// address), counting what it got.
fn udp_answerer(
    answer: fn(&[u8]) -> Vec<u8>,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let got = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = got.clone();
    std::thread::spawn(move || {
        let mut buffer = [0u8; 512];
        while let Ok((read, from)) = socket.recv_from(&mut buffer) {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let _ = socket.send_to(&answer(&buffer[..read]), from);
        }
    });
    (port, got)
}

/// A DNS answer to `query`: its question, and one A record, 192.0.2.7.
fn dns_answer(query: &[u8]) -> Vec<u8> {
    let mut answer = query.to_vec();
    answer[2] = 0x81;
    answer[3] = 0x80;
    answer[6..8].copy_from_slice(&[0, 1]);
    answer.extend_from_slice(&[0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 192, 0, 2, 7]);
    answer
}

#[test]
fn an_environment_can_limit_egress_to_listed_hosts() {
    let world = World::new();
    let target = HttpTarget::start();
    let (udp_port, udp_got) = udp_answerer(<[u8]>::to_vec);
    let (dns_port, dns_got) = udp_answerer(dns_answer);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    let server = world.serve();
    let api = Api::new(&server, &world.admin_token());
    let http = |host: &str, tunnel: bool| Probe::Http {
        host: host.to_owned(),
        port: target.port,
        tunnel,
    };
    // The one host is the target by name; by its address it is another.
    let probes = vec![
        http("localhost", false),
        http("localhost", true),
        http("127.0.0.1", false),
        http("127.0.0.1", true),
        Probe::ConnectTcp { port: closed_port },
        Probe::Udp { port: udp_port },
        Probe::Dns {
            port: dns_port,
            name: "example.com".to_owned(),
        },
    ];
    world.script(Script {
        lines: claude_turn("e-1", "tried"),
        probes,
        ..Script::default()
    });
    let environment = api.environment(json!({
        "name": "egress",
        "repository": path_text(&world.path("repo")),
        "allowed_hosts": ["LocalHost."],
    }));
    let path = format!("/environments/{environment}");
    assert_eq!(api.get(&path).data()["allowed_hosts"], json!(["localhost"]));
    let (task, session) = start_task(&api, json!({"prompt": "hi", "environment_id": environment}));
    let turn = finished_turn(&api, &task, &session);
    let outcomes = probe_outcomes(&api, &session, &turn);
    let allowed: Vec<bool> = outcomes.iter().map(|outcome| outcome.allowed).collect();
    assert_eq!(
        allowed,
        [true, true, false, false, false, false, false],
        "{outcomes:#?}"
    );
    assert!(outcomes[2].detail.contains("403"), "{outcomes:#?}");
    assert_eq!(target.hits(), 2, "only the listed host's requests arrive");
    assert_eq!(udp_got.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(dns_got.load(std::sync::atomic::Ordering::SeqCst), 0);

    // Each refusal is a warning among the turn's progress lines, and counted.
    let refused = format!(
        "warning: egress to 127.0.0.1:{} refused: the host is not in the environment's allowed_hosts",
        target.port
    );
    let events = server.events(&session, &api.token, None, |events| {
        events.iter().any(|(_, name, _)| name == "tool.ended")
    });
    let lines: Vec<String> = events
        .iter()
        .filter(|(_, name, _)| name == "tool.progress")
        .flat_map(|(_, _, data)| data["lines"].as_array().cloned().unwrap_or_default())
        .filter_map(|line| line.as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        lines.iter().filter(|line| **line == refused).count(),
        2,
        "{lines:#?}"
    );
    // The log, read back after the turn, has them too.
    let call = turn["turn"]["call_id"].as_str().unwrap();
    let log = server.get(&format!("/api/runs/{session}/tasks/{call}/log"), &api.token);
    let log_lines = log.json()["lines"].clone();
    let logged: Vec<&str> = log_lines
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|line| *line == refused)
        .collect();
    assert_eq!(logged.len(), 2, "{log_lines:#}");
    let metrics = server.request("GET", "/metrics", None, None).text;
    assert!(
        metrics.contains("cinch_egress_refused_total{harness=\"claude\"} 2"),
        "{metrics}"
    );

    // With outbound TCP limited to listed ports too, the proxy's port is one.
    world.script(Script {
        lines: claude_turn("e-2", "tried"),
        probes: vec![http("localhost", true)],
        ..Script::default()
    });
    let both = api.environment(json!({
        "name": "egress-ports",
        "repository": path_text(&world.path("repo")),
        "allowed_hosts": ["localhost"],
        "allowed_tcp_ports": [9],
    }));
    let (task, session) = start_task(&api, json!({"prompt": "hi", "environment_id": both}));
    let turn = finished_turn(&api, &task, &session);
    let outcomes = probe_outcomes(&api, &session, &turn);
    assert!(outcomes.len() == 1 && outcomes[0].allowed, "{outcomes:#?}");
    assert_eq!(target.hits(), 3);

    // A setup command is held to the same hosts: its refusal is in its error.
    let curl = |host: &str| format!("curl -sSf -o /dev/null http://{host}:{}/", target.port);
    let setup = api.environment(json!({
        "name": "egress-setup",
        "repository": path_text(&world.path("repo")),
        "allowed_hosts": ["localhost"],
        "setup": [curl("localhost"), format!("{}; exit 7", curl("127.0.0.1"))],
    }));
    let (task, session) = start_task(&api, json!({"prompt": "hi", "environment_id": setup}));
    let closed = api.wait_status(&task, &session, "closed");
    assert_eq!(closed["close_reason"], "setup_failure", "{closed:#}");
    let error = closed["error_message"].as_str().unwrap();
    assert!(error.contains("exit code 7"), "{error}");
    assert!(error.contains(&refused), "{error}");
    assert_eq!(target.hits(), 4, "only the listed host's request arrives");
    let metrics = server.request("GET", "/metrics", None, None).text;
    assert!(
        metrics.contains("cinch_egress_refused_total{harness=\"setup\"} 1"),
        "{metrics}"
    );

    // A malformed entry is refused with what is wrong; null opens the network.
    let before = api.get(&path).data();
    let bad = api.server.patch(
        &api.path(&path),
        &api.token,
        &json!({"allowed_hosts": ["localhost", "https://example.com", "example.com:443"]}),
    );
    assert_eq!(bad.status, 422, "{bad:?}");
    assert_eq!(bad.field_errors(), ["allowed_hosts[1]", "allowed_hosts[2]"]);
    assert!(bad.text.contains("no scheme"), "{bad:?}");
    assert_eq!(api.get(&path).data(), before);
    let opened = api.server.patch(
        &api.path(&path),
        &api.token,
        &json!({"allowed_hosts": null}),
    );
    assert_eq!(opened.status, 200, "{opened:?}");
    assert_eq!(api.get(&path).data()["allowed_hosts"], Value::Null);

    // The API's document says what an entry is.
    let document = server.request("GET", "/openapi.json", None, None);
    assert_eq!(document.status, 200, "{document:?}");
    let schemas = &document.json()["components"]["schemas"];
    for schema in ["EnvironmentCreate", "EnvironmentUpdate"] {
        let hosts = &schemas[schema]["properties"]["allowed_hosts"];
        assert_eq!(hosts["maxItems"], 100, "{schema}: {hosts:#}");
        assert_eq!(hosts["items"]["type"], "string", "{schema}: {hosts:#}");
    }
    assert!(
        schemas["EnvironmentView"]["properties"]["allowed_hosts"].is_object(),
        "{:#}",
        schemas["EnvironmentView"]
    );
}

/// A command started as the server starts setup commands, by a user who is
/// not root (a user namespace makes its network), reaches a listed host
/// through the proxy and nothing else, and still runs as that user.
#[test]
fn an_unprivileged_user_gets_a_network_of_its_own_too() {
    let target = HttpTarget::start();
    let policy = cinch_engine::sandbox::Policy {
        egress: Some(cinch_engine::sandbox::Egress {
            allowed_hosts: vec!["localhost".to_owned()],
            refusals: None,
        }),
        ..cinch_engine::sandbox::Policy::with_system([])
    };
    let policy = serde_json::to_string(&policy).unwrap();
    let curl = |host: &str, proxy: bool| {
        format!(
            "curl -s -o /dev/null -w '%{{http_code}} ' {} http://{host}:{}/;",
            if proxy { "" } else { "--noproxy '*'" },
            target.port
        )
    };
    let script = format!(
        "id -u; {} {} {} echo",
        curl("localhost", true),
        curl("127.0.0.1", true),
        curl("127.0.0.1", false)
    );
    // SAFETY: plain syscall.
    let root = unsafe { libc::geteuid() } == 0;
    let mut command = if root {
        let mut command = std::process::Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command.arg(env!("CARGO_BIN_EXE_cinch-helper"));
        command
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_cinch-helper"))
    };
    let (set, _) = cinch_engine::sandbox::egress::proxy_env();
    let output = command
        .args(["sandboxed", &policy, "/bin/sh", "-c", &script])
        .current_dir("/")
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .envs(set)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{output:?}");
    let mut lines = stdout.lines();
    let uid = lines.next().unwrap();
    if root {
        assert_eq!(uid, "65534", "{stdout}");
    } else {
        assert_ne!(uid, "0", "{stdout}");
    }
    let codes: Vec<&str> = lines.next().unwrap().split_whitespace().collect();
    // The last: no connection at all, straight to an address.
    assert_eq!(codes, ["200", "403", "000"], "{stdout}\n{stderr}");
    assert_eq!(target.hits(), 1);
    assert!(
        stderr.contains(&format!("egress to 127.0.0.1:{} refused", target.port)),
        "{stderr}"
    );
}

/// The proxy is the turn's, not the server's: a turn started before the
/// server is killed and started again still reaches its listed host after.
#[test]
fn a_turns_way_out_outlives_a_restarted_server() {
    let world = World::new();
    let target = HttpTarget::start();
    let mut server = world.serve();
    let token = world.admin_token();
    // The harness waits for the test's word in its HOME, then asks.
    let ask = format!(
        "while [ ! -e \"$HOME/go\" ]; do sleep 0.1; done; curl -s -o /dev/null -w '%{{http_code}}' http://localhost:{}/",
        target.port
    );
    world.script(Script {
        lines: claude_turn("e-r", "asked"),
        probes: vec![Probe::Run {
            program: "sh".to_owned(),
            args: vec!["-c".to_owned(), ask],
        }],
        ..Script::default()
    });
    let (task, session) = {
        let api = Api::new(&server, &token);
        let environment = api.environment(json!({
            "name": "egress",
            "repository": path_text(&world.path("repo")),
            "allowed_hosts": ["localhost"],
        }));
        start_task(&api, json!({"prompt": "hi", "environment_id": environment}))
    };
    let api = Api::new(&server, &token);
    api.wait_status(&task, &session, "running");
    let agent = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();

    server.child.kill().unwrap();
    server.child.wait().unwrap();
    server = world.serve();
    let api = Api::new(&server, &token);
    std::fs::write(world.path("home/agents").join(&agent).join("go"), "").unwrap();
    let turn = finished_turn(&api, &task, &session);
    let outcomes = probe_outcomes(&api, &session, &turn);
    assert!(
        outcomes.len() == 1 && outcomes[0].allowed && outcomes[0].detail.contains("200"),
        "{outcomes:#?}"
    );
    assert_eq!(target.hits(), 1);
}
