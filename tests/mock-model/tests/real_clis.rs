//! The real claude, codex and gemini CLIs, offline, against the mock model server: a plain
//! answer (s1), a shell tool call (s2), a 401 and a 500 (s3, s3_500), resuming s1's session
//! (s4), and a model call cut short by a timeout (slow).
//!
//! The CLIs come from `$CINCH_CLI_BIN`, or are installed by `tests/install-clis.sh` (which
//! needs the npm registry the first time). Run with `--nocapture` to see each run's timing.

use std::fs;
use std::path::Path;
use std::process::Command;
use std::thread;
use std::time::{Duration, Instant};

use cinch_mock_model::{
    Api, Cli, MockServer, RunOutput, S2_ANSWER, S4_RESUMED, cli_args, cli_env, new_repo,
    run_with_timeout, session_id, write_cli_config,
};
use serde_json::Value;
use tempfile::TempDir;

/// Each run takes a few seconds; a CLI that retries or hangs is cut off well before CI's limit.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);

const PROMPT: &str = "Reply with the word done";
const SHELL_PROMPT: &str = "Create a file out.txt containing hello, using the shell";
const RESUME_PROMPT: &str = "What did you answer last time?";

/// One test's CLI, server and HOME.
struct Bench {
    cli: Cli,
    server: MockServer,
    home: TempDir,
    timings: Vec<(String, Duration)>,
}

impl Bench {
    fn new(cli: Cli) -> Self {
        Bench {
            cli,
            server: MockServer::start(Vec::new()),
            home: tempfile::tempdir().expect("creating a temporary HOME"),
            timings: Vec::new(),
        }
    }

    fn run(
        &mut self,
        scenario: &str,
        repo: &Path,
        prompt: &str,
        resume: Option<&str>,
        timeout: Duration,
    ) -> RunOutput {
        let home = self.home.path();
        write_cli_config(self.cli, &self.server, scenario, home).expect("writing the CLI config");
        let out = run_with_timeout(
            Command::new(self.cli.program())
                .args(cli_args(self.cli, prompt, resume))
                .env_clear()
                .envs(cli_env(self.cli, &self.server, scenario, home))
                .current_dir(repo),
            timeout,
        )
        .unwrap_or_else(|e| panic!("starting {}: {e}", self.cli));
        println!(
            "{} {scenario}: exit {:?} in {:.2} s",
            self.cli,
            out.code(),
            out.elapsed.as_secs_f64()
        );
        self.timings.push((scenario.to_string(), out.elapsed));
        out
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

fn events(out: &RunOutput) -> Vec<Value> {
    out.stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The final answer as each CLI reports it.
fn final_text(cli: Cli, out: &RunOutput) -> String {
    let evs = events(out);
    match cli {
        Cli::Claude => evs
            .iter()
            .rfind(|e| e["type"] == "result")
            .and_then(|e| e["result"].as_str())
            .unwrap_or("")
            .to_string(),
        Cli::Codex => evs
            .iter()
            .rfind(|e| e["type"] == "item.completed" && e["item"]["type"] == "agent_message")
            .and_then(|e| e["item"]["text"].as_str())
            .unwrap_or("")
            .to_string(),
        // Gemini streams the answer as deltas, and its result line has no text.
        Cli::Gemini => evs
            .iter()
            .filter(|e| e["type"] == "message" && e["role"] == "assistant")
            .filter_map(|e| e["content"].as_str())
            .collect(),
    }
}

/// The error as each CLI reports it at the end of a failed turn.
fn error_text(cli: Cli, out: &RunOutput) -> String {
    let evs = events(out);
    let found = match cli {
        Cli::Claude => evs
            .iter()
            .rfind(|e| e["type"] == "result" && e["is_error"] == true)
            .and_then(|e| e["result"].as_str()),
        Cli::Codex => evs
            .iter()
            .rfind(|e| e["type"] == "turn.failed")
            .and_then(|e| e["error"]["message"].as_str()),
        Cli::Gemini => evs
            .iter()
            .rfind(|e| e["type"] == "result" && e["status"] == "error")
            .and_then(|e| e["error"]["message"].as_str()),
    };
    found.unwrap_or("").to_string()
}

fn api_of(cli: Cli) -> Api {
    match cli {
        Cli::Claude => Api::Anthropic,
        Cli::Codex => Api::OpenAiResponses,
        Cli::Gemini => Api::Gemini,
    }
}

/// s1, s2, s3, s3_500 and s4 for one CLI.
fn scenarios(cli: Cli) {
    let mut bench = Bench::new(cli);
    let repos = tempfile::tempdir().expect("creating a temporary directory");
    let api = Some(api_of(cli));

    let repo1 = new_repo(repos.path(), "s1");
    let out = bench.run("s1", &repo1, PROMPT, None, RUN_TIMEOUT);
    assert!(out.success(), "s1: {}", out.describe());
    assert_eq!(final_text(cli, &out), "done", "s1: {}", out.describe());
    let sid = session_id(cli, &out.stdout)
        .unwrap_or_else(|| panic!("s1: no session id: {}", out.describe()));
    assert_eq!(bench.calls("s1"), [(api, Some(0))]);

    let repo2 = new_repo(repos.path(), "s2");
    let out = bench.run("s2", &repo2, SHELL_PROMPT, None, RUN_TIMEOUT);
    assert!(out.success(), "s2: {}", out.describe());
    assert_eq!(
        fs::read_to_string(repo2.join("out.txt")).ok().as_deref(),
        Some("hello\n"),
        "s2: out.txt: {}",
        out.describe()
    );
    assert_eq!(final_text(cli, &out), S2_ANSWER, "s2: {}", out.describe());
    assert_eq!(bench.calls("s2"), [(api, Some(0)), (api, Some(1))]);

    let repo3 = new_repo(repos.path(), "s3");
    let out = bench.run("s3", &repo3, PROMPT, None, RUN_TIMEOUT);
    assert!(!out.success() && !out.timed_out, "s3: {}", out.describe());
    let error = error_text(cli, &out);
    let expected = match cli {
        Cli::Claude => "Invalid API key",
        Cli::Codex => "401 Unauthorized: Incorrect API key provided",
        Cli::Gemini => "API key not valid",
    };
    assert!(
        error.contains(expected),
        "s3: {error:?}: {}",
        out.describe()
    );
    // Gemini exits with the HTTP status mod 256.
    let code = if cli == Cli::Gemini { 145 } else { 1 };
    assert_eq!(out.code(), Some(code), "s3: {}", out.describe());
    assert_eq!(bench.calls("s3"), [(api, Some(0))], "s3 was retried");

    let out = bench.run("s3_500", &repo3, PROMPT, None, RUN_TIMEOUT);
    assert!(
        !out.success() && !out.timed_out,
        "s3_500: {}",
        out.describe()
    );
    let error = error_text(cli, &out);
    let expected = match cli {
        Cli::Claude => "API Error: 500",
        // Codex shows its own text for a 5xx, not the body.
        Cli::Codex => "",
        Cli::Gemini => "An internal error has occurred",
    };
    assert!(
        !error.is_empty() && error.contains(expected),
        "s3_500: {error:?}: {}",
        out.describe()
    );
    let code = if cli == Cli::Gemini { 244 } else { 1 };
    assert_eq!(out.code(), Some(code), "s3_500: {}", out.describe());
    assert_eq!(
        bench.calls("s3_500"),
        [(api, Some(0))],
        "s3_500 was retried"
    );

    // Claude and Gemini find sessions by project, so the resume runs where s1 ran.
    let out = bench.run("s4", &repo1, RESUME_PROMPT, Some(&sid), RUN_TIMEOUT);
    assert!(out.success(), "s4: {}", out.describe());
    assert_eq!(
        session_id(cli, &out.stdout).as_deref(),
        Some(sid.as_str()),
        "s4: {}",
        out.describe()
    );
    let text = final_text(cli, &out);
    assert!(
        text.starts_with(S4_RESUMED),
        "s4: {text:?}: {}",
        out.describe()
    );
    assert_eq!(bench.calls("s4"), [(api, Some(1))]);

    let summary: Vec<String> = bench
        .timings
        .iter()
        .map(|(s, d)| format!("{s} {:.1}s", d.as_secs_f64()))
        .collect();
    println!("{cli}: {}", summary.join(", "));
}

#[test]
fn claude_against_the_mock() {
    scenarios(Cli::Claude);
}

#[test]
fn codex_against_the_mock() {
    scenarios(Cli::Codex);
}

#[test]
fn gemini_against_the_mock() {
    scenarios(Cli::Gemini);
}

/// A turn whose model call never answers is ended by the caller's timeout, and the server
/// stops waiting on the model call as soon as the killed CLI's connection closes.
#[test]
fn a_slow_model_call_is_cut_short() {
    let mut bench = Bench::new(Cli::Codex);
    let repos = tempfile::tempdir().expect("creating a temporary directory");
    let repo = new_repo(repos.path(), "slow");
    let out = bench.run("slow", &repo, PROMPT, None, Duration::from_secs(5));
    assert!(out.timed_out, "slow: {}", out.describe());
    assert_eq!(bench.calls("slow"), [(Some(Api::OpenAiResponses), Some(0))]);
    let deadline = Instant::now() + Duration::from_secs(2);
    while bench.server.in_flight() > 0 {
        assert!(Instant::now() < deadline, "the model call outlived the CLI");
        thread::sleep(Duration::from_millis(10));
    }
}
