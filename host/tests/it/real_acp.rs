//! `cinch run` on the real ACP agents, offline against the mock model server
//! (`tests/mock-model`), through the acp driver's harnesses: `gemini-acp`,
//! `qwen`, `opencode`, `claude-acp`, `codex-acp`, `copilot`, `kilo`, `cline`
//! and `droid`, each with a plain answer
//! (s1), a shell tool that writes a file (s2: diff and checkpoints), a 401 (s3)
//! and a resume of s1's session (s4); a 500 (s3_500), all agents at once;
//! and the cancel of a running ACP turn. Each agent's setup is the one
//! ../shared/fixtures/acp/README.md measured: its key and base URL, settings
//! that keep it from retrying or calling home. The agents come from `tests/install-clis.sh` (or
//! `$CINCH_CLI_BIN`). Run with `--nocapture` to see each turn's timing.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};

use cinch_mock_model::{
    Cli, MockServer, RunOutput, S2_ANSWER, Scenario, Turn, cli_bin_dir, new_repo, run_with_timeout,
    write_cli_config,
};
use serde_json::{Value, json};
use tempfile::TempDir;

use crate::real;
use crate::support;
use crate::support::gate::{self, Load};

use real::fork::{HISTORY_ANSWER, ended_turn, exchange, first_turn_after, request_with};
use real::{assert_s1, assert_s2, assert_s4};

/// cinch's own timeout for every turn, in minutes: qwen and opencode retry a 500 for about 80 s
/// whatever their settings say, kilo for about 115 s and droid for about 200 s; on a busy
/// machine (2 cores, load 10) opencode took 170 s, and with all nine agents' 500s at once under
/// load 20 opencode, kilo and droid were still retrying after 5 minutes.
const TURN_TIMEOUT_MINUTES: &str = "8";

/// Past cinch's timeout and the supervisor's kill grace.
const RUN_TIMEOUT: Duration = Duration::from_secs(510);

const PROMPT: &str = "Reply with the word done";
const SHELL_PROMPT: &str = "Create a file out.txt containing hello, using the shell";
const RESUME_PROMPT: &str = "What did you answer last time?";

/// The mock model's script that asks the user a question (Claude's
/// AskUserQuestion tool), then ends.
const QUESTION_SCENARIO: &str = "sq";

/// The mock model's script whose shell command takes seconds: longer than droid's command
/// watcher waits between two looks at /proc.
const SLOW_SHELL_SCENARIO: &str = "s6";

/// The mock model's script of the fork tests: every turn answers with how much history it
/// was sent.
const FORK_SCENARIO: &str = "fk";

/// How many files the fork tests' repository holds: issue 41 asks how long a fork takes to
/// start in a repository of this size.
const FORK_REPO_FILES: usize = 20_000;

/// The five ACP agents, by their harness names on the acp driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Gemini,
    Qwen,
    OpenCode,
    ClaudeAcp,
    CodexAcp,
    Copilot,
    Kilo,
    Cline,
    Droid,
    /// Claude Code itself (stream-json), which asks through its control
    /// protocol: in the approvals test only.
    Claude,
}

impl Agent {
    fn harness(self) -> &'static str {
        match self {
            Agent::Gemini => "gemini-acp",
            Agent::Qwen => "qwen",
            Agent::OpenCode => "opencode",
            Agent::ClaudeAcp => "claude-acp",
            Agent::CodexAcp => "codex-acp",
            Agent::Copilot => "copilot",
            Agent::Kilo => "kilo",
            Agent::Cline => "cline",
            Agent::Droid => "droid",
            Agent::Claude => "claude",
        }
    }

    /// The model to name: Gemini CLI without one routes each prompt through a side request to
    /// another model first, which it retries for a minute when the model server fails.
    fn model(self) -> Option<&'static str> {
        (self == Agent::Gemini).then_some("gemini-2.5-flash")
    }

    /// The agent's own words for a 401, as its JSON-RPC error carries them.
    fn unauthorized(self) -> &'static str {
        match self {
            Agent::Gemini => "API key not valid",
            Agent::Qwen => "401",
            Agent::OpenCode | Agent::Kilo => "invalid x-api-key",
            Agent::ClaudeAcp | Agent::Claude => "Invalid API key",
            Agent::CodexAcp => "401",
            Agent::Copilot => "Authentication failed with provider",
            Agent::Cline | Agent::Droid => "Incorrect API key",
        }
    }
}

/// One agent's mock server and folders.
struct Bench {
    agent: Agent,
    server: MockServer,
    dir: TempDir,
    /// The agent keeps its own retry settings (the tests' settings turn retries off).
    own_retries: bool,
}

impl Bench {
    fn new(agent: Agent) -> Self {
        // Gemini CLI ignores a settings file below a folder others may write to, such as /tmp.
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a temporary folder");
        for sub in ["cinch-home", "repos"] {
            fs::create_dir_all(dir.path().join(sub)).expect("creating the test's folders");
        }
        let server = MockServer::start(vec![
            Scenario::new("s5", vec![Turn::shell("sleep 30"), Turn::text("slept")]),
            Scenario::new(
                SLOW_SHELL_SCENARIO,
                vec![
                    Turn::shell("sleep 3 && echo hello > out.txt"),
                    Turn::text(S2_ANSWER),
                ],
            ),
            Scenario::new(FORK_SCENARIO, vec![Turn::text(HISTORY_ANSWER)]),
            Scenario::new(
                QUESTION_SCENARIO,
                vec![
                    Turn::tool(
                        "AskUserQuestion",
                        json!({"questions": [{
                        "question": "Which greeting should out.txt hold?", "header": "Greeting",
                        "options": [{"label": "hello", "description": "the usual"},
                                    {"label": "howdy", "description": "the friendly one"}],
                        "multiSelect": false}]}),
                    ),
                    Turn::text("Noted."),
                ],
            ),
        ]);
        Bench {
            agent,
            server,
            dir,
            own_retries: false,
        }
    }

    /// The agent's HOME for `scenario`: each scenario its own, so that one's settings never
    /// point another at the wrong URL (a resume shares s1's: the session lives there).
    fn home(&self, scenario: &str) -> PathBuf {
        let name = if scenario == "s4" { "s1" } else { scenario };
        self.dir.path().join("homes").join(name)
    }

    /// A fresh git repository with one commit.
    fn repo(&self, name: &str) -> PathBuf {
        new_repo(&self.dir.path().join("repos"), name)
    }

    /// Writes the agent's settings for `scenario` into its HOME and returns its environment.
    fn setup(&self, scenario: &str) -> Vec<(String, String)> {
        let home = self.home(scenario);
        fs::create_dir_all(home.join("tmp")).expect("creating HOME/tmp");
        let url = self.server.scenario_url(scenario);
        let mut env: Vec<(String, String)> = vec![
            ("PATH".into(), search_path()),
            ("HOME".into(), home.display().to_string()),
            ("TERM".into(), "dumb".into()),
            ("LANG".into(), "C.UTF-8".into()),
        ];
        let mut set = |name: &str, value: &str| env.push((name.to_owned(), value.to_owned()));
        match self.agent {
            Agent::Gemini => {
                write_cli_config(Cli::Gemini, &self.server, scenario, &home)
                    .expect("writing gemini's settings");
                set("GEMINI_API_KEY", "mock-key");
                set("GOOGLE_GEMINI_BASE_URL", &url);
                set("GEMINI_CLI_TRUST_WORKSPACE", "true");
            }
            Agent::Qwen => {
                let mut settings = json!({
                    "security": {"auth": {"selectedType": "openai"}},
                    "general": {"enableAutoUpdate": false},
                    "privacy": {"usageStatisticsEnabled": false},
                    "telemetry": {"enabled": false},
                });
                if !self.own_retries {
                    settings["model"] = json!({"generationConfig": {"maxRetries": 0}});
                }
                write_json(&home.join(".qwen/settings.json"), &settings);
                set("OPENAI_API_KEY", "sk-mock");
                set("OPENAI_BASE_URL", &format!("{url}/v1"));
                set("OPENAI_MODEL", "mock-model");
            }
            Agent::OpenCode => {
                write_json(
                    &home.join(".config/opencode/opencode.json"),
                    &json!({
                        "model": "anthropic/claude-sonnet-4-5",
                        "small_model": "anthropic/claude-sonnet-4-5",
                        "autoupdate": false,
                        "share": "disabled",
                        "provider": {"anthropic": {"options": {
                            "baseURL": format!("{url}/v1"),
                            "apiKey": "sk-ant-mock",
                        }}},
                    }),
                );
                set("ANTHROPIC_API_KEY", "sk-ant-mock");
                for switch in [
                    "OPENCODE_DISABLE_AUTOUPDATE",
                    "OPENCODE_DISABLE_MODELS_FETCH",
                    "OPENCODE_DISABLE_SHARE",
                    "OPENCODE_DISABLE_DEFAULT_PLUGINS",
                ] {
                    set(switch, "1");
                }
            }
            Agent::ClaudeAcp | Agent::Claude => {
                set("ANTHROPIC_BASE_URL", &url);
                set("ANTHROPIC_API_KEY", "sk-ant-mock");
                set("IS_SANDBOX", "1");
                set("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
                set("DISABLE_TELEMETRY", "1");
                set("DISABLE_AUTOUPDATER", "1");
                set("DISABLE_ERROR_REPORTING", "1");
                set("CLAUDE_CODE_MAX_RETRIES", "0");
            }
            Agent::CodexAcp => {
                write_cli_config(Cli::Codex, &self.server, scenario, &home)
                    .expect("writing codex's config");
                set("MOCK_API_KEY", "sk-mock");
                // cinch looks for codex's own credential variable.
                set("OPENAI_API_KEY", "sk-mock");
            }
            Agent::Copilot => {
                // Offline: no GitHub login, telemetry or update check.
                set("COPILOT_OFFLINE", "true");
                set("COPILOT_PROVIDER_BASE_URL", &format!("{url}/v1"));
                set("COPILOT_PROVIDER_API_KEY", "sk-mock");
                set("COPILOT_MODEL", "mock-model");
            }
            Agent::Kilo => {
                write_json(
                    &home.join(".config/kilo/kilo.json"),
                    &json!({
                        "model": "anthropic/claude-sonnet-4-5",
                        "small_model": "anthropic/claude-sonnet-4-5",
                        "autoupdate": false,
                        "share": "disabled",
                        "provider": {"anthropic": {"options": {
                            "baseURL": format!("{url}/v1"),
                            "apiKey": "sk-ant-mock",
                        }}},
                    }),
                );
                set("ANTHROPIC_API_KEY", "sk-ant-mock");
            }
            Agent::Cline => {
                // What `cline auth -p openai -b URL -k KEY -m MODEL` writes.
                write_json(
                    &home.join(".cline/data/settings/providers.json"),
                    &json!({
                        "version": 1,
                        "lastUsedProvider": "openai-compatible",
                        "modes": {},
                        "providers": {"openai-compatible": {
                            "settings": {
                                "provider": "openai-compatible",
                                "apiKey": "sk-mock",
                                "model": "mock-model",
                                "baseUrl": format!("{url}/v1"),
                            },
                            "updatedAt": "2026-01-01T00:00:00.000Z",
                            "tokenSource": "manual",
                        }},
                    }),
                );
                set("CLINE_API_KEY", "sk-mock");
                set("CLINE_PROVIDER", "openai-compatible");
                set("CLINE_MODEL", "mock-model");
            }
            Agent::Droid => {
                write_json(
                    &home.join(".factory/config.json"),
                    &json!({"custom_models": [{
                        "model_display_name": "mock",
                        "model": "mock-model",
                        "base_url": format!("{url}/v1"),
                        "api_key": "sk-mock",
                        "provider": "generic-chat-completion-api",
                        "max_tokens": 4096,
                    }]}),
                );
                write_json(
                    &home.join(".factory/settings.json"),
                    &json!({"model": "custom:mock-model"}),
                );
                // Custom models only, no Factory account.
                set("FACTORY_AIRGAP_ENABLED", "true");
            }
        }
        env.push((
            "CINCH_HOME".into(),
            self.dir.path().join("cinch-home").display().to_string(),
        ));
        env
    }

    /// `cinch run --json` of `brief` in `repo` against `scenario`; its output and result.
    fn turn(
        &self,
        scenario: &str,
        repo: &Path,
        brief: &str,
        session: Option<&str>,
    ) -> (RunOutput, Value) {
        let out = self.run(scenario, repo, brief, session, RUN_TIMEOUT);
        println!(
            "{} {scenario}: exit {:?} in {:.2} s",
            self.agent.harness(),
            out.code(),
            out.elapsed.as_secs_f64()
        );
        assert!(!out.timed_out, "cinch did not end: {}", out.describe());
        let result = serde_json::from_str(out.stdout.trim())
            .unwrap_or_else(|e| panic!("{scenario}: no JSON result ({e}): {}", out.describe()));
        (out, result)
    }

    fn command(&self, scenario: &str, repo: &Path, brief: &str, session: Option<&str>) -> Command {
        let env = self.setup(scenario);
        let mut command = Command::new(env!("CARGO_BIN_EXE_cinch"));
        command
            .env_clear()
            .envs(env)
            .args(["run", "--harness", self.agent.harness(), "--repo"])
            .arg(repo)
            .args(["--timeout-minutes", TURN_TIMEOUT_MINUTES, "--json"]);
        if let Some(model) = self.agent.model() {
            command.args(["--model", model]);
        }
        if let Some(session) = session {
            command.args(["--session", session]);
        }
        command.arg(brief);
        command
    }

    fn run(
        &self,
        scenario: &str,
        repo: &Path,
        brief: &str,
        session: Option<&str>,
        timeout: Duration,
    ) -> RunOutput {
        run_with_timeout(&mut self.command(scenario, repo, brief, session), timeout)
            .expect("starting cinch")
    }

    /// How many model calls `scenario` received (side requests, such as a title, apart).
    fn model_calls(&self, scenario: &str) -> usize {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.scenario == scenario && r.turn.is_some() && !r.side)
            .count()
    }
}

/// Sleeps until the wall clock is in a later minute than at `since`.
fn wait_for_the_next_minute(since: SystemTime) {
    let minute = |at: SystemTime| {
        at.duration_since(SystemTime::UNIX_EPOCH)
            .expect("a time after 1970")
            .as_secs()
            / 60
    };
    while minute(SystemTime::now()) == minute(since) {
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn write_json(path: &Path, value: &Value) {
    fs::create_dir_all(path.parent().unwrap()).expect("creating the settings folder");
    fs::write(path, format!("{value:#}\n")).expect("writing settings");
}

/// The agents' install, node's folder, the system.
fn search_path() -> String {
    let node = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|dir| dir.join("node").is_file());
    let mut dirs = vec![cli_bin_dir()];
    dirs.extend(node);
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    std::env::join_paths(dirs)
        .expect("a PATH")
        .to_string_lossy()
        .into_owned()
}

/// s1 to s4 of one agent, one after another.
fn scenarios(agent: Agent) {
    let bench = Bench::new(agent);
    let started = Instant::now();
    // s1: a plain answer.
    let repo1 = bench.repo("s1");
    let (out, result) = bench.turn("s1", &repo1, PROMPT, None);
    // The agent's session started somewhere within the turn: by its end at the latest.
    let s1_ended = SystemTime::now();
    let sid = assert_s1(&out, &result, agent.harness());

    // s2: the agent's shell tool writes a file; the diff and the checkpoints show it.
    let repo2 = bench.repo("s2");
    let (out, result) = bench.turn("s2", &repo2, SHELL_PROMPT, None);
    assert_s2(&repo2, &out, &result);
    assert!(
        bench.model_calls("s2") >= 2,
        "s2: the tool's result went back"
    );

    // s3: a 401 fails the turn with the agent's own words for it.
    let repo3 = bench.repo("s3");
    let (out, result) = bench.turn("s3", &repo3, PROMPT, None);
    assert!(!out.success(), "s3: {}", out.describe());
    assert_eq!(result["status"], "failed", "s3: {result:#}");
    let detail = result["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(agent.unauthorized()), "s3: {result:#}");

    // s4: loading s1's session sends its history again. Gemini CLI 0.61 names a session's
    // recording by the minute it started and the session's id: a load in the same minute
    // as the session's start records over it and then finds no session to load. The session
    // starts after the turn does (by seconds on a busy machine), so the minute to leave is
    // the one the turn ended in.
    if agent == Agent::Gemini {
        wait_for_the_next_minute(s1_ended);
    }
    let (out, result) = bench.turn("s4", &repo1, RESUME_PROMPT, Some(&sid));
    assert_s4(&out, &result, &sid);
    println!(
        "{}: s1 to s4 in {:.1} s",
        agent.harness(),
        started.elapsed().as_secs_f64()
    );
}

/// s3_500: a model server that answers 500 fails the turn, in the end. The agents retry it for
/// 80 to 200 s whatever their settings say, so every agent's 500 runs at once in this one
/// test, named to sort (and so start) first while the other tests run beside it.
#[test]
fn a_500_fails_the_turn_of_every_agent() {
    let _machine = gate::hold(Load::Machine);
    let agents = [
        Agent::Gemini,
        Agent::Qwen,
        Agent::OpenCode,
        Agent::ClaudeAcp,
        Agent::CodexAcp,
        Agent::Copilot,
        Agent::Kilo,
        Agent::Cline,
        Agent::Droid,
    ];
    std::thread::scope(|scope| {
        let failing: Vec<_> = agents
            .map(|agent| {
                scope.spawn(move || {
                    let bench = Bench::new(agent);
                    let repo = bench.repo("s3_500");
                    let (out, result) = bench.turn("s3_500", &repo, PROMPT, None);
                    let harness = agent.harness();
                    assert!(!out.success(), "{harness} s3_500: {}", out.describe());
                    assert_eq!(result["status"], "failed", "{harness} s3_500: {result:#}");
                    assert!(
                        result["detail"].as_str().is_some_and(|d| !d.is_empty()),
                        "{harness} s3_500: {result:#}"
                    );
                    println!("{harness}: s3_500 in {:.1} s", out.elapsed.as_secs_f64());
                })
            })
            .into();
        for thread in failing {
            thread.join().expect("an s3_500 thread");
        }
    });
}

/// A refused key, with qwen's own retry settings: the turn fails within seconds of what a
/// plain answer costs (on a loaded machine starting cinch and the agent alone takes a while),
/// with the agent's words for it, and the model was asked once. (claude-acp cannot do as
/// much: claude-agent-acp keeps Claude Code's ten retries of a 401 to itself.)
#[test]
fn a_refused_key_ends_a_qwen_turn_at_once() {
    let _agent = gate::hold(Load::Agent);
    let mut bench = Bench::new(Agent::Qwen);
    bench.own_retries = true;
    let (answered, _) = bench.turn("s1", &bench.repo("s1"), PROMPT, None);
    let (out, result) = bench.turn("s3", &bench.repo("s3"), PROMPT, None);
    assert_eq!(result["status"], "failed", "{result:#}");
    let detail = result["detail"].as_str().unwrap_or_default();
    assert!(detail.contains(Agent::Qwen.unauthorized()), "{result:#}");
    let extra = out.elapsed.saturating_sub(answered.elapsed);
    assert!(
        extra < Duration::from_secs(20),
        "a refused key took {:.1} s, {:.1} s more than a plain answer",
        out.elapsed.as_secs_f64(),
        extra.as_secs_f64()
    );
    assert_eq!(bench.model_calls("s3"), 1, "the model was asked again");
}

#[test]
fn gemini_over_acp_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Gemini);
}

#[test]
fn qwen_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Qwen);
}

#[test]
fn opencode_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::OpenCode);
}

#[test]
fn claude_acp_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::ClaudeAcp);
}

#[test]
fn codex_acp_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::CodexAcp);
}

#[test]
fn copilot_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Copilot);
}

#[test]
fn kilo_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Kilo);
}

#[test]
fn cline_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Cline);
}

#[test]
fn droid_through_cinch() {
    let _agent = gate::hold(Load::Agent);
    scenarios(Agent::Droid);
}

/// A shell command of droid's that takes seconds runs to its end. droid runs each command under
/// a watcher that asks `ps` for the shell's parent and kills the command's group when `ps`
/// fails; the sandbox gives a turn's processes a /proc of their own (a PID namespace). Before,
/// the watcher's first look killed any command that had not ended.
#[test]
fn droid_runs_a_command_that_takes_seconds() {
    let _agent = gate::hold(Load::Agent);
    let bench = Bench::new(Agent::Droid);
    let repo = bench.repo(SLOW_SHELL_SCENARIO);
    let (out, result) = bench.turn(SLOW_SHELL_SCENARIO, &repo, SHELL_PROMPT, None);
    assert!(out.success(), "{}", out.describe());
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(
        result["files_changed"],
        json!([{ "path": "out.txt", "insertions": 1, "deletions": 0, "binary": false }]),
        "{result:#}"
    );
    assert_eq!(
        fs::read_to_string(repo.join("out.txt")).expect("out.txt"),
        "hello\n"
    );
}

/// A running ACP turn (a shell `sleep 30`) cancelled with `cinch stop`: the agent gets
/// `session/cancel`, the turn ends `cancelled` long before the sleep would have.
#[test]
fn a_running_acp_turn_is_cancelled() {
    let _agent = gate::hold(Load::Agent);
    let bench = Bench::new(Agent::ClaudeAcp);
    let repo = bench.repo("s5");
    let mut command = bench.command("s5", &repo, "Sleep for 30 seconds using the shell", None);
    let cinch_home = bench.dir.path().join("cinch-home");
    let started = Instant::now();
    let run = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting cinch");
    // Once the model has asked for the tool, the agent is running it.
    while bench.model_calls("s5") == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(240),
            "the agent never called the model"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(2));
    let turns = Command::new(env!("CARGO_BIN_EXE_cinch"))
        .env("CINCH_HOME", &cinch_home)
        .args(["turns", "--json"])
        .output()
        .expect("cinch turns");
    let turns: Value = serde_json::from_slice(&turns.stdout).expect("the turns");
    let turn = turns[0]["turn"].as_str().expect("a turn").to_owned();
    let stopped = Command::new(env!("CARGO_BIN_EXE_cinch"))
        .env("CINCH_HOME", &cinch_home)
        .args(["stop", &turn])
        .output()
        .expect("cinch stop");
    assert!(stopped.status.success(), "{stopped:?}");
    let output = run.wait_with_output().expect("cinch run");
    let result: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no JSON result: {output:?}"));
    assert_eq!(result["status"], "cancelled", "{result:#}");
    println!(
        "claude-acp s5_cancel: {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let log = fs::read_to_string(result["log_path"].as_str().unwrap()).unwrap_or_default();
    assert!(log.contains("\"stopReason\":\"cancelled\""), "{log}");
    // The agent never went on to the model's next turn after the sleep.
    assert_eq!(bench.model_calls("s5"), 1);
}

/// One approval case of [`approvals_over_http`]: its name, its policy, and
/// the decision a person gives (none: a deadline or a rule decides).
struct Case {
    name: &'static str,
    policy: Value,
    decision: Option<&'static str>,
}

/// A started task of one case.
struct Started {
    case: Case,
    task: String,
    session: String,
}

/// The raw harness log of the session's turn, once it exists.
fn turn_log(cinch_home: &Path, session: &str) -> Option<PathBuf> {
    fs::read_dir(cinch_home.join("runs").join(session))
        .ok()?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .find(|path| path.to_string_lossy().ends_with(".harness.jsonl"))
}

/// The first event named `name` on the SSE stream at `url`, and when it
/// came. The agents may take minutes to ask on a busy machine: the stream is
/// read for up to ten.
fn first_event(url: &str, token: &str, name: &str) -> (Value, Instant) {
    use std::io::BufRead as _;
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(600)))
        .build()
        .into();
    let response = agent
        .get(url)
        .header("Authorization", format!("Bearer {token}"))
        .call()
        .expect("opening the event stream");
    assert_eq!(response.status(), 200);
    let reader = std::io::BufReader::new(response.into_body().into_reader());
    let mut event = String::new();
    for line in reader.lines() {
        let line = line.expect("reading the event stream");
        if let Some(value) = line.strip_prefix("event:") {
            event = value.trim().to_owned();
        } else if let Some(data) = line.strip_prefix("data:")
            && event == name
        {
            return (serde_json::from_str(data.trim()).unwrap(), Instant::now());
        }
    }
    panic!("the stream ended before {name}");
}

/// Copies the files under `from` into `to`, folders and all.
fn copy_tree(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("creating a folder");
    for entry in fs::read_dir(from)
        .expect("listing a folder")
        .filter_map(Result::ok)
    {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).expect("copying a settings file");
        }
    }
}

fn log_len(path: &Path) -> u64 {
    fs::metadata(path).map(|meta| meta.len()).unwrap_or(0)
}

/// Polls every millisecond until `check` holds, for at most `limit`.
fn poll<T>(what: &str, limit: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let started = Instant::now();
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(started.elapsed() < limit, "waited too long for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The agent's shell tool (s2: `echo hello > out.txt`) through `cinch serve`
/// under four policies at once: asked and denied (no file, the turn
/// completes), asked and allowed (the file), asked until its deadline
/// denies it, and refused by a deny rule without asking. Prints, for each
/// person's decision, the time from the agent's request (its line in the raw
/// log) to the approval on the session's SSE stream, and from the decision
/// to the agent's next output.
/// `cinch serve` on the bench, its harnesses pointed at `scenario`: the
/// server and the admin's token.
fn serve_bench(bench: &Bench, scenario: &str) -> (support::Server, String) {
    let env = bench.setup(scenario);
    let cinch_home = bench.dir.path().join("cinch-home");
    let passed: Vec<&str> = env
        .iter()
        .map(|(name, _)| name.as_str())
        .filter(|name| !["PATH", "HOME", "TMPDIR", "CINCH_HOME", "TERM", "LANG"].contains(name))
        .collect();
    fs::write(
        cinch_home.join("config.toml"),
        format!("[serve]\npass_env = {passed:?}\n"),
    )
    .expect("writing cinch's config");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_cinch"));
    serve
        .env_clear()
        .envs(env)
        .args(["serve", "--turn-timeout-minutes", TURN_TIMEOUT_MINUTES]);
    let server = support::Server::start(serve, bench.dir.path());
    let token = fs::read_to_string(cinch_home.join("admin-token")).expect("the admin's token");
    let token = token.trim().to_owned();
    let api = support::Api::new(&server, &token);
    // Under the server the agent's HOME is its own: its settings go there.
    let agent_id = api.get("/agents").data()[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    copy_tree(
        &bench.home(scenario),
        &cinch_home.join("agents").join(agent_id),
    );
    (server, token)
}

fn approvals_over_http(agent: Agent) {
    let bench = Bench::new(agent);
    let cinch_home = bench.dir.path().join("cinch-home");
    let (server, token) = serve_bench(&bench, "s2");
    let token = token.as_str();
    let api = support::Api::new(&server, token);
    let harness = agent.harness();
    let cases = [
        Case {
            name: "deny",
            policy: json!({"mode": "ask"}),
            decision: Some("deny"),
        },
        Case {
            name: "allow",
            policy: json!({"mode": "ask"}),
            decision: Some("allow"),
        },
        Case {
            name: "timeout",
            policy: json!({"mode": "ask", "timeout_seconds": 5}),
            decision: None,
        },
        Case {
            name: "rule",
            policy: json!({"mode": "ask", "deny": ["shell(echo *)"]}),
            decision: None,
        },
    ];
    // opencode keeps its sessions in one SQLite database under the agent's home: four of them
    // starting at once on a loaded machine met its "database is locked" (a failed turn in a
    // clean-clone run), so its cases run one after another.
    let batches: Vec<Vec<Case>> = if agent == Agent::OpenCode {
        cases.into_iter().map(|case| vec![case]).collect()
    } else {
        vec![cases.into_iter().collect()]
    };
    for cases in batches {
        let started: Vec<Started> = cases
            .into_iter()
            .map(|case| {
                let repo = bench.repo(case.name);
                let environment = api.environment(
                    json!({"name": case.name, "repository": repo.display().to_string()}),
                );
                let mut body = json!({"prompt": SHELL_PROMPT, "environment_id": environment,
                                  "harness": harness, "approvals": case.policy});
                if let Some(model) = agent.model() {
                    body["model"] = json!(model);
                }
                let created = api.post("/tasks", body);
                assert_eq!(created.status, 201, "{}: {created:?}", case.name);
                let task = created.data()["id"].as_str().unwrap().to_owned();
                let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
                Started {
                    case,
                    task,
                    session,
                }
            })
            .collect();
        let limit = Duration::from_secs(240);
        // What the agent's request looks like in its raw log.
        let asking = if agent == Agent::Claude {
            "\"can_use_tool\""
        } else {
            "session/request_permission"
        };
        for started in started
            .iter()
            .filter(|started| started.case.decision.is_some())
        {
            let (name, session) = (started.case.name, started.session.as_str());
            let events = api.path(&format!(
                "/tasks/{}/sessions/{session}/events",
                started.task
            ));
            let seen = std::thread::scope(|scope| {
                let stream =
                    scope.spawn(|| first_event(&server.url(&events), token, "approval.requested"));
                let asked_at = poll("the agent's permission request", limit, || {
                    let log = turn_log(&cinch_home, session)?;
                    fs::read_to_string(log)
                        .ok()?
                        .contains(asking)
                        .then(Instant::now)
                });
                let (approval, shown_at) = stream.join().unwrap();
                (asked_at, approval, shown_at)
            });
            let (asked_at, approval, shown_at) = seen;
            assert_eq!(approval["status"], "pending", "{name}: {approval:#}");
            assert_eq!(approval["kind"], "shell", "{name}: {approval:#}");
            let log = turn_log(&cinch_home, session).unwrap();
            let before = log_len(&log);
            let stdin = cinch_home
                .join("turns")
                .join(approval["turn_id"].as_str().unwrap())
                .join("stdin.jsonl");
            let written = log_len(&stdin);
            let decided_at = Instant::now();
            let id = approval["id"].as_str().unwrap();
            let decided = api.post(
                &format!("/approvals/{id}/decision"),
                json!({"decision": started.case.decision.unwrap()}),
            );
            assert_eq!(decided.status, 200, "{name}: {decided:?}");
            let mut answered_at = None;
            let resumed_at = poll("the agent to go on", limit, || {
                if answered_at.is_none() && log_len(&stdin) > written {
                    answered_at = Some(Instant::now());
                }
                (log_len(&log) > before).then(Instant::now)
            });
            let answered_at = answered_at.unwrap_or(resumed_at);
            let millis = |from: Instant, to: Instant| {
                to.saturating_duration_since(from).as_secs_f64() * 1000.0
            };
            println!(
                "{harness} approval {name}: request to SSE {:.1} ms, decision to the agent's stdin {:.1} ms, \
             to its next output {:.1} ms",
                millis(asked_at, shown_at),
                millis(decided_at, answered_at),
                millis(decided_at, resumed_at),
            );
        }
        for started in &started {
            let (name, task, session) = (started.case.name, &started.task, &started.session);
            let deadline = Instant::now() + limit;
            while api.session(task, session)["status"] != "idle" {
                assert!(
                    Instant::now() < deadline,
                    "{name}: never idle\n{}",
                    server.log()
                );
                std::thread::sleep(Duration::from_millis(200));
            }
            let turn = support::assistant(&api.messages(task, session, "").data());
            // codex-acp offers no way to refuse a tool but `abort`, which ends its turn.
            let (status, detail) = if agent == Agent::CodexAcp && name != "allow" {
                ("failed", Some("cancelled"))
            } else {
                ("completed", None)
            };
            assert_eq!(
                turn["turn"]["status"],
                status,
                "{name}: {turn:#}\n{}",
                server.log()
            );
            if let Some(detail) = detail {
                assert_eq!(turn["turn"]["result"]["detail"], detail, "{name}: {turn:#}");
            }
            let workspace = Path::new(turn["turn"]["workspace"].as_str().unwrap());
            assert_eq!(
                workspace.join("out.txt").exists(),
                name == "allow",
                "{name}: only the allowed tool wrote out.txt"
            );
            let listed = api.get(&format!("/approvals?session_id={session}")).data();
            let approvals = listed.as_array().unwrap();
            assert_eq!(approvals.len(), 1, "{name}: {listed:#}");
            let (status, by) = match name {
                "deny" => ("denied", None),
                "allow" => ("allowed", None),
                "timeout" => ("expired", Some("timeout")),
                _ => ("denied", Some("policy")),
            };
            assert_eq!(approvals[0]["status"], status, "{name}: {listed:#}");
            if let Some(by) = by {
                assert_eq!(approvals[0]["decided_by"], by, "{name}: {listed:#}");
            }
        }
    }
}

#[test]
fn qwen_asks_for_approval_over_http() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::Qwen);
}

#[test]
fn claude_acp_asks_for_approval_over_http() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::ClaudeAcp);
}

#[test]
fn opencode_asks_for_approval_over_http() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::OpenCode);
}

#[test]
fn claude_asks_for_approval_over_http_through_its_control_protocol() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::Claude);
}

#[test]
fn codex_acp_asks_for_approval_over_http() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::CodexAcp);
}

/// Claude Code asks the user a question (its AskUserQuestion tool, a
/// `can_use_tool` control request): an approval of kind `question` with the
/// question and its options, refused as a decision and answered with
/// `{"answer": ...}`; the answer reaches the model in the tool's result.
#[test]
fn claude_asks_a_question_and_the_answer_reaches_the_model() {
    let _agent = gate::hold(Load::Agent);
    let bench = Bench::new(Agent::Claude);
    let (server, token) = serve_bench(&bench, QUESTION_SCENARIO);
    let api = support::Api::new(&server, &token);
    let repo = bench.repo("question");
    let environment =
        api.environment(json!({"name": "question", "repository": repo.display().to_string()}));
    let created = api.post(
        "/tasks",
        json!({"prompt": "Ask me which greeting to use", "environment_id": environment,
               "harness": "claude", "approvals": {"mode": "ask"}}),
    );
    assert_eq!(created.status, 201, "{created:?}");
    let task = created.data()["id"].as_str().unwrap().to_owned();
    let session = api.first_session(&task)["id"].as_str().unwrap().to_owned();
    let asked = poll("the question", Duration::from_secs(240), || {
        api.get(&format!("/approvals?status=pending&session_id={session}"))
            .data()
            .as_array()?
            .first()
            .cloned()
    });
    assert_eq!(asked["kind"], "question", "{asked:#}");
    assert_eq!(asked["tool"], "AskUserQuestion");
    assert_eq!(asked["title"], "Which greeting should out.txt hold?");
    let labels: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|option| option["name"].as_str().unwrap())
        .collect();
    assert_eq!(labels, ["hello", "howdy"]);
    let decision = api.path(&format!(
        "/approvals/{}/decision",
        asked["id"].as_str().unwrap()
    ));
    let post = |body: Value| server.post(&decision, &token, &body);
    let refused = post(json!({"decision": "allow"}));
    assert_eq!(refused.status, 422, "{refused:?}");
    assert!(
        refused.text.contains("answer it with"),
        "the 422 says to send an answer: {refused:?}"
    );
    let answered = post(json!({"answer": "howdy"}));
    assert_eq!(answered.status, 200, "{answered:?}");
    assert_eq!(answered.data()["status"], "answered");
    assert_eq!(answered.data()["answer"], "howdy");
    assert_eq!(
        post(json!({"answer": "howdy"})).status,
        200,
        "the same answer again"
    );
    assert_eq!(
        post(json!({"answer": "hello"})).status,
        409,
        "another answer"
    );
    api.wait_status(&task, &session, "idle");
    let turn = support::assistant(&api.messages(&task, &session, "").data());
    assert_eq!(
        turn["turn"]["status"],
        "completed",
        "{turn:#}\n{}",
        server.log()
    );
    assert_eq!(turn["content"], "Noted.");
    // The model's next call carries the tool's result, which holds the answer.
    let results: Vec<String> = bench
        .server
        .requests()
        .into_iter()
        .filter(|request| request.scenario == QUESTION_SCENARIO && request.turn == Some(1))
        .filter_map(|request| request.body)
        .flat_map(|body| body["messages"].as_array().cloned().unwrap_or_default())
        .flat_map(|message| message["content"].as_array().cloned().unwrap_or_default())
        .filter(|block| block["type"] == "tool_result")
        .map(|block| block["content"].to_string())
        .collect();
    assert!(
        results.iter().any(|result| result.contains("howdy")),
        "the answer reached the model: {results:#?}"
    );
    let recorded: Vec<String> = api
        .walk(&task, &session, "asc", 50)
        .into_iter()
        .filter(|message| message["type"] == "approval")
        .map(|message| message["content"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(recorded.len(), 1, "{recorded:?}");
    assert!(recorded[0].contains("answered by mem"), "{recorded:?}");
    assert!(recorded[0].ends_with("howdy"), "{recorded:?}");
}

#[test]
fn gemini_acp_asks_for_approval_over_http() {
    let _agent = gate::hold(Load::Agent);
    approvals_over_http(Agent::Gemini);
}

/// Adds `count` files to `repo` in folders of a hundred, in one commit.
fn fill_repo(repo: &Path, count: usize) {
    for index in 0..count {
        let folder = repo.join(format!("src/d{:03}", index / 100));
        if index % 100 == 0 {
            fs::create_dir_all(&folder).expect("creating a folder of the repository");
        }
        fs::write(
            folder.join(format!("f{index}.txt")),
            format!("file {index}\n"),
        )
        .expect("writing a file of the repository");
    }
    cinch_mock_model::git(repo, &["add", "."]);
    cinch_mock_model::git(
        repo,
        &[
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "many files",
        ],
    );
}

/// Forks of an ACP agent's session, through `cinch serve`, in a repository of
/// [`FORK_REPO_FILES`] files. A fork at the session's latest turn forks the agent's session
/// (`session/fork`): the model sees the source's history, the fork has a harness session of
/// its own, and neither the source's later turns reach the fork nor the fork's the source. A
/// fork at the first turn is a brief one, whose brief says why: the agent forks its session
/// only as it stands. Prints the time from each fork request to its first turn starting.
fn forks_over_acp(agent: Agent) {
    let bench = Bench::new(agent);
    let repo = bench.repo("fork");
    fill_repo(&repo, FORK_REPO_FILES);
    let (server, token) = serve_bench(&bench, FORK_SCENARIO);
    let api = support::Api::new(&server, &token);
    let environment =
        api.environment(json!({"name": "fork", "repository": repo.display().to_string()}));
    let task = api.post(
        "/tasks",
        json!({"prompt": "First ask", "environment_id": environment, "harness": agent.harness()}),
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
    let harness_session = api.session(&task, &source)["harness_session_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let turn_one = first["turn"]["turn_id"].as_str().unwrap().to_owned();
    let fork_path = format!("/tasks/{task}/sessions/{source}/fork");

    // At the latest turn (no turn named): the agent forks its session.
    let asked = Instant::now();
    let forked = api.post(&fork_path, json!({"message": "Fork ask"}));
    assert_eq!(forked.status, 201, "{forked:?}");
    assert_eq!(forked.data()["fork_mode"], "native", "{forked:?}");
    let fork = forked.data()["id"].as_str().unwrap().to_owned();
    let native_start = first_turn_after(&api, &task, &fork, asked);
    let fork_turn = ended_turn(&api, &task, &fork, None);
    assert_eq!(
        fork_turn["content"],
        "history of 2 model turn(s)",
        "{fork_turn:#}\n{}",
        server.log()
    );
    let (body, turns) = request_with(&bench.server, "Fork ask");
    assert_eq!(turns, Some(2));
    assert!(
        body.contains("First ask") && body.contains("Second ask"),
        "{body}"
    );
    let fork_now = api.session(&task, &fork);
    assert_eq!(fork_now["fork_mode"], "native");
    assert_ne!(fork_now["harness_session_id"], harness_session.as_str());

    // The source goes on in its own session, nothing of the fork's in it, and the fork in
    // its own, nothing of the source's later turn in it.
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
    let again = exchange(&api, &task, &fork, "Fork again");
    assert_eq!(again["content"], "history of 3 model turn(s)");
    let (body, _) = request_with(&bench.server, "Fork again");
    assert!(
        body.contains("Fork ask") && !body.contains("Third ask"),
        "{body}"
    );

    // At the first of the source's three turns.
    let asked = Instant::now();
    let middle = api.post(
        &fork_path,
        json!({"turn_id": turn_one, "message": "Middle ask"}),
    );
    assert_eq!(middle.status, 201, "{middle:?}");
    assert_eq!(middle.data()["fork_mode"], "brief", "{middle:?}");
    let middle = middle.data()["id"].as_str().unwrap().to_owned();
    let middle_start = first_turn_after(&api, &task, &middle, asked);
    let middle_turn = ended_turn(&api, &task, &middle, None);
    let (body, turns) = request_with(&bench.server, "Middle ask");
    assert!(
        body.contains("First ask") && !body.contains("Second ask"),
        "{body}"
    );
    // The conversation is retold in the brief, which says why.
    assert_eq!(middle_turn["content"], "history of 0 model turn(s)");
    assert_eq!(turns, Some(0));
    let brief = middle_turn["turn"]["brief"].as_str().unwrap();
    assert!(
        brief.contains("forks its session only as it stands")
            && brief.contains("ran 2 turn(s) after this one"),
        "{brief}"
    );
    eprintln!(
        "{} fork request to first turn started, {FORK_REPO_FILES} files: native {} ms, brief (first turn) {} ms",
        agent.harness(),
        native_start.as_millis(),
        middle_start.as_millis()
    );
}

#[test]
fn opencode_forks_its_session_natively_at_the_latest_turn() {
    let _agent = gate::hold(Load::Agent);
    forks_over_acp(Agent::OpenCode);
}

#[test]
fn claude_acp_forks_its_session_natively_at_the_latest_turn() {
    let _agent = gate::hold(Load::Agent);
    forks_over_acp(Agent::ClaudeAcp);
}
