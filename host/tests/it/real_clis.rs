//! `cinch run` on the real claude, codex and gemini CLIs, offline against the mock model server
//! (`tests/mock-model`): a plain answer (s1), a shell tool call that writes a file (s2), a 401
//! (s3) and a resume of s1's session (s4), each through the whole of cinch: driver, supervisor,
//! checkpoints, live progress and result.
//!
//! The CLIs come from `$CINCH_CLI_BIN`, or are installed by `tests/install-clis.sh` (which
//! needs the npm registry the first time). Run with `--nocapture` to see each turn's timing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cinch_fake_cli::mcp;
use cinch_mock_model::{
    Api, Cli, MockServer, RunOutput, S2_ANSWER, S4_RESUMED, SHELL_COMMAND, Scenario, Turn, cli_env,
    git, new_repo, run_with_timeout, write_cli_config,
};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::real;
use crate::support;
use crate::support::gate::{self, Load};

use real::fork::{HISTORY_ANSWER, ended_turn, exchange, first_turn_after, request_with};
use real::{assert_s1, assert_s2, assert_s4};

use support::{Server, assistant};

/// cinch's own timeout for every turn, in minutes: a turn of a few seconds that hangs is
/// stopped by cinch long before CI gives up.
const TURN_TIMEOUT_MINUTES: &str = "1";

/// Past cinch's timeout and the supervisor's 10 s kill grace: only a cinch that does not end
/// its own turn is killed here.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);

const PROMPT: &str = "Reply with the word done";

/// Where the mock model listens, as its URLs name it.
const MOCK_ADDRESS: &str = "127.0.0.1";
const SHELL_PROMPT: &str = "Create a file out.txt containing hello, using the shell";
const RESUME_PROMPT: &str = "What did you answer last time?";

/// One test's CLI, mock server, and folders: cinch's home, the CLI's HOME, the repositories.
struct Bench {
    cli: Cli,
    server: MockServer,
    dir: TempDir,
    timings: Vec<(String, Duration)>,
    /// The gate's share for this bench's CLI, held while the bench lives.
    _agent: gate::Permit<'static>,
    /// How the CLI names the mock model's host (its address unless a test says otherwise).
    model_host: &'static str,
    /// Variables of [`cli_env`] the CLI does not get (a setting a test wants at its default).
    unset: Vec<&'static str>,
}

impl Bench {
    fn new(cli: Cli) -> Self {
        Self::with(cli, tempfile::tempdir(), Vec::new())
    }

    /// A bench in cargo's own temporary folder instead of /tmp: Gemini CLI ignores a
    /// settings file below a folder that others may write to, such as /tmp.
    fn in_target(cli: Cli, scenarios: Vec<Scenario>) -> Self {
        Self::with(
            cli,
            tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")),
            scenarios,
        )
    }

    fn with(cli: Cli, dir: std::io::Result<TempDir>, scenarios: Vec<Scenario>) -> Self {
        let dir = dir.expect("creating a temporary directory");
        for sub in ["cinch-home", "home", "repos"] {
            fs::create_dir_all(dir.path().join(sub)).expect("creating the test's folders");
        }
        Bench {
            cli,
            server: MockServer::start(scenarios),
            dir,
            timings: Vec::new(),
            _agent: gate::hold(Load::Agent),
            model_host: MOCK_ADDRESS,
            unset: Vec::new(),
        }
    }

    fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    /// A fresh git repository with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        new_repo(&self.dir.path().join("repos"), name)
    }

    /// The model flag the CLI needs; codex takes its model from the config the mock writes.
    fn model(&self) -> Option<&'static str> {
        match self.cli {
            Cli::Claude => Some("claude-sonnet-4-5"),
            Cli::Codex => None,
            Cli::Gemini => Some("gemini-2.5-flash"),
        }
    }

    /// `cinch run` of `brief` in `repo` against `scenario`, with `extra` flags.
    fn cinch_run(&mut self, scenario: &str, repo: &Path, brief: &str, extra: &[&str]) -> RunOutput {
        let home = self.home();
        write_cli_config(self.cli, &self.server, scenario, &home).expect("writing the CLI config");
        let codex_config = home.join(".codex/config.toml");
        if let Ok(config) = fs::read_to_string(&codex_config) {
            fs::write(&codex_config, config.replace(MOCK_ADDRESS, self.model_host))
                .expect("naming the model's host in codex's config");
        }
        let repo_arg = repo.display().to_string();
        let mut args = vec![
            "run",
            "--harness",
            self.cli.name(),
            "--repo",
            &repo_arg,
            "--timeout-minutes",
            TURN_TIMEOUT_MINUTES,
        ];
        if let Some(model) = self.model() {
            args.extend(["--model", model]);
        }
        args.extend(extra);
        args.push(brief);
        // cinch runs the harness with its own environment, so the CLI's goes to cinch.
        let mut env = cli_env(self.cli, &self.server, scenario, &home);
        env.retain(|(name, _)| !self.unset.contains(&name.as_str()));
        for (_, value) in &mut env {
            *value = value.replace(MOCK_ADDRESS, self.model_host);
        }
        env.push((
            "CINCH_HOME".into(),
            self.dir.path().join("cinch-home").display().to_string(),
        ));
        if self.cli == Cli::Codex {
            // cinch wants codex's own credential variable set; the mock provider reads the
            // variable its config names.
            env.push(("OPENAI_API_KEY".into(), "sk-mock".into()));
        }
        let out = run_with_timeout(
            Command::new(env!("CARGO_BIN_EXE_cinch"))
                .args(&args)
                .env_clear()
                .envs(env),
            RUN_TIMEOUT,
        )
        .expect("starting cinch");
        let label = if extra.contains(&"--json") {
            scenario.to_owned()
        } else {
            format!("{scenario} (human)")
        };
        println!(
            "{} {label}: exit {:?} in {:.2} s",
            self.cli,
            out.code(),
            out.elapsed.as_secs_f64()
        );
        self.timings.push((label, out.elapsed));
        assert!(!out.timed_out, "cinch did not end: {}", out.describe());
        out
    }

    /// `cinch run --json`, and the result it printed.
    fn turn(
        &mut self,
        scenario: &str,
        repo: &Path,
        brief: &str,
        session: Option<&str>,
    ) -> (RunOutput, Value) {
        let mut extra = vec![];
        if let Some(session) = session {
            extra.extend(["--session", session]);
        }
        self.json_turn(scenario, repo, brief, &extra)
    }

    /// `cinch run --json` of [`PROMPT`] with `extra` flags, and the result it printed.
    fn turn_with(&mut self, scenario: &str, repo: &Path, extra: &[&str]) -> (RunOutput, Value) {
        self.json_turn(scenario, repo, PROMPT, extra)
    }

    fn json_turn(
        &mut self,
        scenario: &str,
        repo: &Path,
        brief: &str,
        extra: &[&str],
    ) -> (RunOutput, Value) {
        let extra = [&["--json"], extra].concat();
        let out = self.cinch_run(scenario, repo, brief, &extra);
        let result = serde_json::from_str(out.stdout.trim())
            .unwrap_or_else(|e| panic!("{scenario}: no JSON result ({e}): {}", out.describe()));
        (out, result)
    }

    /// The model calls a scenario received, as (API, turn) pairs.
    fn calls(&self, scenario: &str) -> Vec<(Option<Api>, Option<usize>)> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.scenario == scenario && r.turn.is_some())
            .map(|r| (r.api, r.turn))
            .collect()
    }
}

/// HEAD, the commit it names, and the index, as bytes.
fn git_state(repo: &Path) -> (Vec<u8>, String, Vec<u8>) {
    (
        fs::read(repo.join(".git/HEAD")).expect("reading .git/HEAD"),
        git(repo, &["rev-parse", "HEAD"]),
        fs::read(repo.join(".git/index")).expect("reading .git/index"),
    )
}

/// The progress lines cinch printed on stderr, without their elapsed-time stamps.
fn progress_lines(out: &RunOutput) -> Vec<&str> {
    out.stderr
        .lines()
        .filter_map(|line| {
            line.strip_prefix('[')?
                .split_once("] ")
                .map(|(_, rest)| rest)
        })
        .collect()
}

/// s1, s2 (JSON and human), s3 and s4 for one CLI.
fn scenarios(cli: Cli) {
    let mut bench = Bench::new(cli);
    let api = Some(match cli {
        Cli::Claude => Api::Anthropic,
        Cli::Codex => Api::OpenAiResponses,
        Cli::Gemini => Api::Gemini,
    });

    // s1: a plain answer.
    let repo1 = bench.repo("s1");
    let (out, result) = bench.turn("s1", &repo1, PROMPT, None);
    let sid = assert_s1(&out, &result, cli.name());
    assert_eq!(result["exit_code"], 0, "s1: {result:#}");
    // Asked for while the turn ran: the version the CLI itself prints.
    let version = std::process::Command::new(cli.program())
        .arg("--version")
        .output()
        .unwrap();
    let version = String::from_utf8_lossy(&version.stdout);
    let recorded = result["cli_version"].as_str().unwrap_or_default();
    assert!(
        !recorded.is_empty() && version.contains(recorded),
        "s1: the result says version {recorded:?}; {} --version says {version:?}",
        cli.name()
    );
    assert_eq!(bench.calls("s1"), [(api, Some(0))]);

    // s2: the CLI's shell tool writes a file; the diff shows it, git's own state is untouched.
    let repo2 = bench.repo("s2");
    let before = git_state(&repo2);
    let (out, result) = bench.turn("s2", &repo2, SHELL_PROMPT, None);
    assert_s2(&repo2, &out, &result);
    assert_eq!(result["total_files"], 1, "s2: {result:#}");
    assert_eq!(
        fs::read_to_string(repo2.join("out.txt")).ok().as_deref(),
        Some("hello\n")
    );
    assert!(git_state(&repo2) == before, "s2: HEAD or the index changed");
    assert_eq!(git(&repo2, &["status", "--porcelain"]), "?? out.txt\n");
    assert_eq!(bench.calls("s2"), [(api, Some(0)), (api, Some(1))]);

    // The same turn as a person sees it: live progress on stderr, the result text on stdout.
    let repo2h = bench.repo("s2-human");
    let out = bench.cinch_run("s2", &repo2h, SHELL_PROMPT, &[]);
    assert!(out.success(), "s2 (human): {}", out.describe());
    let lines = progress_lines(&out);
    let (started, tool) = match cli {
        Cli::Claude => ("Claude Code started (claude-sonnet-4-5)", "Bash: "),
        // codex's JSON names no model.
        Cli::Codex => ("Codex started", "shell: "),
        Cli::Gemini => (
            "Gemini CLI started (gemini-2.5-flash)",
            "run_shell_command: ",
        ),
    };
    assert_eq!(
        lines.first(),
        Some(&started),
        "s2 (human): {}",
        out.describe()
    );
    assert!(
        lines
            .iter()
            .any(|line| line.starts_with(tool) && line.contains(SHELL_COMMAND)),
        "s2 (human): no {tool}{SHELL_COMMAND} line: {}",
        out.describe()
    );
    assert!(
        lines.contains(&S2_ANSWER),
        "s2 (human): no final message line: {}",
        out.describe()
    );
    assert!(
        out.stdout.starts_with("completed · ")
            && out.stdout.contains("out.txt (+1 −0)")
            && out.stdout.contains(S2_ANSWER),
        "s2 (human): {}",
        out.describe()
    );

    // s3: a 401 fails the turn with the CLI's own words for it.
    let repo3 = bench.repo("s3");
    let (out, result) = bench.turn("s3", &repo3, PROMPT, None);
    assert!(!out.success(), "s3: {}", out.describe());
    assert_eq!(result["status"], "failed", "s3: {result:#}");
    let (words, code) = match cli {
        Cli::Claude => ("Invalid API key", 1),
        Cli::Codex => ("401 Unauthorized: Incorrect API key provided", 1),
        // Gemini exits with the HTTP status mod 256.
        Cli::Gemini => ("API key not valid", 145),
    };
    let detail = result["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(words), "s3: {result:#}");
    assert_eq!(result["exit_code"], code, "s3: {result:#}");
    assert_eq!(bench.calls("s3"), [(api, Some(0))], "s3 was retried");

    // s4: resuming s1's session sends its history again and keeps its id.
    let (out, result) = bench.turn("s4", &repo1, RESUME_PROMPT, Some(&sid));
    assert_s4(&out, &result, &sid);
    assert_eq!(bench.calls("s4"), [(api, Some(1))]);

    let summary: Vec<String> = bench
        .timings
        .iter()
        .map(|(label, elapsed)| format!("{label} {:.1}s", elapsed.as_secs_f64()))
        .collect();
    println!("{cli}: {}", summary.join(", "));
}

/// A refused API key ends a claude turn at the first refusal: with its default retries
/// Claude Code asks again ten times, for about three minutes, before it gives up. The turn
/// fails within seconds of what a CLI that gives up at once costs (measured first, with
/// retries off: on a loaded machine starting cinch and claude alone takes a while), with the
/// CLI's own word for the error, and the model was not asked ten more times.
#[test]
fn a_refused_key_ends_a_claude_turn_at_once() {
    let mut bench = Bench::new(Cli::Claude);
    let repo = bench.repo("s3");
    let (at_once, result) = bench.turn("s3", &repo, PROMPT, None);
    assert_eq!(result["status"], "failed", "{result:#}");
    bench.unset = vec!["CLAUDE_CODE_MAX_RETRIES"];
    let asked_before = bench.calls("s3").len();
    let (out, result) = bench.turn("s3", &repo, PROMPT, None);
    assert_eq!(result["status"], "failed", "{result:#}");
    let detail = result["detail"].as_str().unwrap_or_default();
    assert!(
        detail.contains("API error: authentication_failed, HTTP 401"),
        "{result:#}"
    );
    let extra = out.elapsed.saturating_sub(at_once.elapsed);
    assert!(
        extra < Duration::from_secs(20),
        "a refused key took {:.1} s, {:.1} s more than a CLI that gives up at once",
        out.elapsed.as_secs_f64(),
        extra.as_secs_f64()
    );
    let calls = bench.calls("s3").len() - asked_before;
    assert!(calls < 4, "the model was asked {calls} times");
}

#[test]
fn claude_turns_through_cinch() {
    scenarios(Cli::Claude);
}

#[test]
fn codex_turns_through_cinch() {
    scenarios(Cli::Codex);
}

#[test]
fn gemini_turns_through_cinch() {
    scenarios(Cli::Gemini);
}

/// The real claude CLI through `cinch serve`: a task's session answers, then
/// resumes its harness session for a follow-up, in the agent's own HOME.
#[test]
fn claude_session_over_http() {
    let bench = Bench::new(Cli::Claude);
    let repo = bench.repo("http");
    let cinch_home = bench.dir.path().join("cinch-home");
    let home = bench.home();
    let (server, token) = serve_claude(&bench, "s1");
    let api = support::Api::new(&server, &token);
    let environment =
        api.environment(json!({"name": "http", "repository": repo.display().to_string()}));

    let task = api.post(
        "/tasks",
        json!({"prompt": PROMPT, "environment_id": environment, "harness": "claude", "model": "claude-sonnet-4-5"}),
    );
    assert_eq!(task.status, 201, "{task:?}");
    let task_id = task.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task_id);
    let session_id = session["id"].as_str().unwrap().to_owned();
    assert_eq!(session["harness_model"], "claude-sonnet-4-5");
    let idle = api.wait(&task_id, &session_id, "idle after s1", |s| {
        s["status"] == "idle"
    });
    let first = assistant(&api.messages(&task_id, &session_id, "").data());
    assert_eq!(
        first["turn"]["status"],
        "completed",
        "{first:#}\n{}",
        server.log()
    );
    assert_eq!(first["content"], "done");
    let harness_session = idle["harness_session_id"]
        .as_str()
        .expect("a harness session")
        .to_owned();
    // The harness kept its session state in the agent's home, not the server's HOME.
    let agent_id = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        cinch_home
            .join("agents")
            .join(&agent_id)
            .join(".claude")
            .is_dir()
    );
    assert!(!home.join(".claude").exists());

    // The follow-up talks to scenario s4, which checks the history came along.
    let patched = server.request(
        "PATCH",
        &api.path(&format!("/environments/{environment}")),
        Some(&api.token),
        Some(&json!({"env": {"ANTHROPIC_BASE_URL": bench.server.scenario_url("s4")}}).to_string()),
    );
    assert_eq!(patched.status, 200, "{patched:?}");
    let sent = api.post(
        &format!("/tasks/{task_id}/sessions/{session_id}/messages"),
        json!({"message": RESUME_PROMPT}),
    );
    assert_eq!(sent.status, 201, "{sent:?}");
    // The messages are read before the session: the session runs before its
    // turn's message exists and goes idle after the message has its result,
    // so idle read after the new message was seen means that turn ended.
    let deadline = Instant::now() + Duration::from_secs(60);
    let resumed = loop {
        let latest = assistant(&api.messages(&task_id, &session_id, "").data());
        let session = api.session(&task_id, &session_id);
        if latest["id"] != first["id"] && session["status"] == "idle" {
            break session;
        }
        assert!(
            Instant::now() < deadline,
            "the session never ran s4: {session:#}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    let second = assistant(&api.messages(&task_id, &session_id, "").data());
    assert_eq!(second["turn"]["status"], "completed", "{second:#}");
    assert!(
        second["content"].as_str().unwrap().starts_with(S4_RESUMED),
        "{second:#}"
    );
    assert_eq!(resumed["harness_session_id"], harness_session.as_str());
    assert_eq!(bench.calls("s4"), [(Some(Api::Anthropic), Some(1))]);
}

/// `cinch serve` with the real claude CLI against `scenario` of the bench's mock model: the
/// server and the admin's token.
fn serve_claude(bench: &Bench, scenario: &str) -> (Server, String) {
    let cinch_home = bench.dir.path().join("cinch-home");
    let home = bench.home();
    write_cli_config(Cli::Claude, &bench.server, scenario, &home).expect("writing the CLI config");
    let env = cli_env(Cli::Claude, &bench.server, scenario, &home);
    // The operator passes the mock model's address and key on to harnesses;
    // the server's other variables stay with it.
    let passed: Vec<&str> = env
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !["PATH", "HOME", "TMPDIR"].contains(name))
        .collect();
    fs::create_dir_all(&cinch_home).expect("cinch's home");
    fs::write(
        cinch_home.join("config.toml"),
        format!("[serve]\npass_env = {passed:?}\n"),
    )
    .expect("writing cinch's config");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cinch"));
    serve
        .env_clear()
        .envs(env)
        .env("CINCH_HOME", &cinch_home)
        .args(["serve", "--turn-timeout-minutes", TURN_TIMEOUT_MINUTES]);
    let server = Server::start(serve, bench.dir.path());
    let token = fs::read_to_string(cinch_home.join("admin-token")).expect("the admin's token");
    (server, token.trim().to_owned())
}

/// Claude's folder for a working directory under `home`: its path with every character but
/// letters and digits made a dash.
fn claude_project(home: &Path, workdir: &str) -> PathBuf {
    let workdir = fs::canonicalize(workdir).expect("the work tree");
    let name: String = workdir
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects").join(name)
}

/// A fork of a real claude session at its first of two turns resumes the harness session as
/// a fork (`--resume ID --fork-session`): the model sees turn 1's history and not turn 2's,
/// and the source's own session goes on as it was. Without the session file the fork retells
/// the conversation in its brief instead, and says why. Prints the time from the fork request
/// to its first turn starting, native and brief.
#[test]
fn claude_forks_its_session_natively_at_a_middle_turn() {
    let bench = Bench::with(
        Cli::Claude,
        tempfile::tempdir(),
        vec![Scenario::new("fk", vec![Turn::text(HISTORY_ANSWER)])],
    );
    let repo = bench.repo("fork");
    let cinch_home = bench.dir.path().join("cinch-home");
    let (server, token) = serve_claude(&bench, "fk");
    let api = support::Api::new(&server, &token);
    let environment =
        api.environment(json!({"name": "fork", "repository": repo.display().to_string()}));
    let task = api.post(
        "/tasks",
        json!({"prompt": "First ask", "environment_id": environment, "harness": "claude", "model": "claude-sonnet-4-5"}),
    );
    assert_eq!(task.status, 201, "{task:?}");
    let task = task.data()["id"].as_str().unwrap().to_owned();
    let source = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let first = ended_turn(&api, &task, &source, None);
    assert_eq!(
        first["content"],
        "history of 0 model turn(s)",
        "{}",
        server.log()
    );
    let second = exchange(&api, &task, &source, "Second ask");
    assert_eq!(second["content"], "history of 1 model turn(s)");
    let source_before = api.session(&task, &source);
    let harness_session = source_before["harness_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let turn_one = first["turn"]["turn_id"].as_str().unwrap().to_owned();
    let agent = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let agent_home = cinch_home.join("agents").join(&agent);
    let source_file = claude_project(&agent_home, source_before["workspace"].as_str().unwrap())
        .join(format!("{harness_session}.jsonl"));
    let source_text = fs::read_to_string(&source_file).expect("the source's session file");

    // The fork at turn 1 resumes the harness session up to turn 1, as a new harness session.
    let fork_path = format!("/tasks/{task}/sessions/{source}/fork");
    let asked = Instant::now();
    let forked = api.post(
        &fork_path,
        json!({"turn_id": turn_one, "message": "Fork ask"}),
    );
    assert_eq!(forked.status, 201, "{forked:?}");
    assert_eq!(forked.data()["fork_mode"], "native", "{forked:?}");
    let fork = forked.data()["id"].as_str().unwrap().to_owned();
    let native_start = first_turn_after(&api, &task, &fork, asked);
    let fork_turn = ended_turn(&api, &task, &fork, None);
    assert_eq!(
        fork_turn["content"],
        "history of 1 model turn(s)",
        "{}",
        server.log()
    );
    let (body, turns) = request_with(&bench.server, "Fork ask");
    assert_eq!(turns, Some(1));
    assert!(body.contains("First ask"), "{body}");
    assert!(
        !body.contains("Second ask"),
        "turn 2 reached the fork: {body}"
    );
    let fork_now = api.session(&task, &fork);
    assert_eq!(fork_now["fork_mode"], "native");
    let fork_session = fork_now["harness_session_id"].as_str().unwrap();
    assert_ne!(fork_session, harness_session);
    // The source's session file is as it was.
    assert_eq!(fs::read_to_string(&source_file).unwrap(), source_text);

    // The source goes on with its own two turns, nothing of the fork's.
    let third = exchange(&api, &task, &source, "Third ask");
    assert_eq!(third["content"], "history of 2 model turn(s)");
    let (body, _) = request_with(&bench.server, "Third ask");
    assert!(
        body.contains("Second ask") && !body.contains("Fork ask"),
        "{body}"
    );
    assert_eq!(
        api.session(&task, &source)["harness_session_id"],
        harness_session.as_str()
    );

    // A native fork whose session file is gone by its first turn falls back to a brief,
    // which says why.
    let waiting = api.post(&fork_path, json!({"turn_id": turn_one}));
    assert_eq!(waiting.status, 201, "{waiting:?}");
    assert_eq!(waiting.data()["fork_mode"], "native");
    let waiting = waiting.data()["id"].as_str().unwrap().to_owned();
    api.wait_status(&task, &waiting, "idle");
    fs::remove_file(&source_file).expect("removing the source's session file");
    let fallback = exchange(&api, &task, &waiting, "Fallback ask");
    assert_eq!(fallback["content"], "history of 0 model turn(s)");
    let brief = fallback["turn"]["brief"].as_str().unwrap();
    assert!(brief.contains("no session file on this node"), "{brief}");
    assert!(
        brief.contains("First ask") && !brief.contains("Second ask"),
        "{brief}"
    );
    assert_eq!(api.session(&task, &waiting)["fork_mode"], "brief");

    // A fork asked for with the file gone is a brief one from the start.
    let asked = Instant::now();
    let briefed = api.post(
        &fork_path,
        json!({"turn_id": turn_one, "message": "Brief ask"}),
    );
    assert_eq!(briefed.status, 201, "{briefed:?}");
    assert_eq!(briefed.data()["fork_mode"], "brief");
    let briefed = briefed.data()["id"].as_str().unwrap().to_owned();
    let brief_start = first_turn_after(&api, &task, &briefed, asked);
    let brief_turn = ended_turn(&api, &task, &briefed, None);
    assert_eq!(brief_turn["content"], "history of 0 model turn(s)");
    eprintln!(
        "fork request to first turn started: native {} ms, brief {} ms",
        native_start.as_millis(),
        brief_start.as_millis()
    );
}

/// What the mock model asks the MCP tool to echo.
const MCP_TEXT: &str = "from the mock model";

/// The mock model's answer once the MCP tool has answered.
const MCP_ANSWER: &str = "echoed";

/// A turn with an environment-style MCP server (`cinch run --mcp-servers`): the tiny stdio
/// server `cinch-mcp-echo` reaches the real CLI through cinch's rendering for it, runs inside
/// the turn's sandbox as the CLI's child, and its tool is offered to the model. Claude Code and
/// Gemini CLI call it and send its answer back to the model. Codex 0.171 defers MCP tools
/// behind its `tool_search` tool, which the mock model does not drive: for Codex the test
/// proves it started the server, listed its tools and told the model of the server's tools.
fn mcp_turn(cli: Cli) {
    let mut bench = Bench::in_target(
        cli,
        vec![
            Scenario::new(
                "mcp",
                vec![
                    Turn::tool(mcp::TOOL, json!({"text": MCP_TEXT})),
                    Turn::text(MCP_ANSWER),
                ],
            ),
            Scenario::new("mcp_list", vec![Turn::text("done")]),
        ],
    );
    let home = bench.home();
    // The sandbox lets the turn run programs from the system, the CLI's install and its
    // own folders, not from cargo's target folder: the server is copied into HOME.
    let server = home.join("bin/cinch-mcp-echo");
    fs::create_dir_all(home.join("bin")).expect("creating HOME/bin");
    fs::copy(mcp::server_path(), &server).expect("copying cinch-mcp-echo into HOME");
    let marker = home.join("mcp-marker.txt");
    let servers = bench.dir.path().join("mcp-servers.json");
    fs::write(
        &servers,
        json!([{
            "name": "cinch",
            "type": "stdio",
            "command": server.display().to_string(),
            "args": [],
            "env": {(mcp::MARKER_ENV): marker.display().to_string()},
        }])
        .to_string(),
    )
    .expect("writing the MCP servers file");
    let servers_arg = servers.display().to_string();
    let repo = bench.repo("mcp");
    let calls_tool = cli != Cli::Codex;
    let scenario = if calls_tool { "mcp" } else { "mcp_list" };
    let out = bench.cinch_run(
        scenario,
        &repo,
        "Echo something with the cinch MCP server",
        &["--json", "--mcp-servers", &servers_arg],
    );
    assert!(out.success(), "{}", out.describe());
    let result: Value = serde_json::from_str(out.stdout.trim())
        .unwrap_or_else(|e| panic!("no JSON result ({e}): {}", out.describe()));
    assert_eq!(result["status"], "completed", "{result:#}");
    // The configuration went to the turn's own folder, not into the repository.
    assert_eq!(git(&repo, &["status", "--porcelain"]), "", "{result:#}");

    let requests: Vec<Value> = bench
        .server
        .requests()
        .into_iter()
        .filter(|r| r.scenario == scenario && r.turn.is_some() && !r.side)
        .filter_map(|r| r.body)
        .collect();
    let first = requests.first().expect("a model request").to_string();
    let marker_text = fs::read_to_string(&marker).unwrap_or_default();
    assert!(
        marker_text.lines().any(|line| line == "tools/list"),
        "the server was not asked for its tools: {marker_text:?}\n{}",
        out.describe()
    );
    if calls_tool {
        // The tool is in the request's tools list under the CLI's own name for it.
        let offered = match cli {
            Cli::Claude => "\"name\":\"mcp__cinch__cinch_echo\"",
            _ => "\"name\":\"mcp_cinch_cinch_echo\"",
        };
        assert!(first.contains(offered), "{offered} not offered");
        assert_eq!(result["final_message"], MCP_ANSWER, "{result:#}");
        assert!(
            marker_text
                .lines()
                .any(|line| line == format!("tools/call {MCP_TEXT}")),
            "the tool was not called: {marker_text:?}"
        );
        let answered = format!("{}{MCP_TEXT}", mcp::ANSWER_PREFIX);
        assert!(
            requests
                .iter()
                .skip(1)
                .any(|body| body.to_string().contains(&answered)),
            "the tool's answer did not reach the model"
        );
    } else {
        // Codex names the server's deferred tool namespace to the model.
        assert!(
            first.contains("mcp__cinch"),
            "codex did not name the MCP server's tools"
        );
        assert_eq!(result["final_message"], "done", "{result:#}");
    }
}

#[test]
fn claude_calls_an_mcp_server() {
    mcp_turn(Cli::Claude);
}

#[test]
fn codex_lists_an_mcp_server() {
    mcp_turn(Cli::Codex);
}

#[test]
fn gemini_calls_an_mcp_server() {
    mcp_turn(Cli::Gemini);
}

/// s1 with the turn's network limited to the mock model's host, named `localhost`
/// (`cinch run --allowed-host localhost`): in the turn's own network 127.0.0.1 is its own
/// loopback, where nothing else listens, so the model's answer can only come through cinch's
/// egress proxy. The same turn allowed another host only is refused at the proxy and says so.
fn turn_through_the_egress_proxy(cli: Cli) {
    let mut bench = Bench::in_target(cli, Vec::new());
    bench.model_host = "localhost";
    let repo = bench.repo("egress");
    let (out, result) = bench.turn_with("s1", &repo, &["--allowed-host", "localhost"]);
    assert_s1(&out, &result, cli.name());
    assert_eq!(bench.calls("s1").len(), 1, "{}", out.describe());

    let repo = bench.repo("egress-refused");
    let out = bench.cinch_run(
        "s1",
        &repo,
        PROMPT,
        &["--allowed-host", "api.anthropic.com"],
    );
    assert!(!out.success(), "{}", out.describe());
    assert_eq!(
        bench.calls("s1").len(),
        1,
        "the model was reached: {}",
        out.describe()
    );
    let port = bench
        .server
        .base_url()
        .rsplit(':')
        .next()
        .unwrap()
        .to_owned();
    let refused = format!("warning: egress to localhost:{port} refused");
    assert!(
        progress_lines(&out)
            .iter()
            .any(|line| line.starts_with(&refused)),
        "no refusal among the progress lines: {}",
        out.describe()
    );
}

#[test]
fn claude_reaches_the_model_through_the_egress_proxy() {
    turn_through_the_egress_proxy(Cli::Claude);
}

#[test]
fn codex_reaches_the_model_through_the_egress_proxy() {
    turn_through_the_egress_proxy(Cli::Codex);
}

#[test]
fn gemini_reaches_the_model_through_the_egress_proxy() {
    turn_through_the_egress_proxy(Cli::Gemini);
}
