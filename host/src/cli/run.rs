//! `cinch run` and `cinch attach`: a turn in the terminal, live.

use std::io::{IsTerminal as _, Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context as _;

use cinch_engine::engine::brief::Note;
use cinch_engine::engine::events::{Next, TurnEventKind};
use cinch_engine::engine::result::Status;
use cinch_engine::engine::{Engine, Turn, TurnRequest};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// The harness: a driver's name (see `cinch drivers`) [default: the
    /// only one whose CLI is installed].
    #[arg(long)]
    harness: Option<String>,
    /// The repository to work in (default: the one the current directory
    /// is in; from a subdirectory, its top).
    #[arg(long)]
    repo: Option<PathBuf>,
    /// The model, when not the harness's default.
    #[arg(long)]
    model: Option<String>,
    /// The effort, when not the harness's default.
    #[arg(long)]
    effort: Option<String>,
    /// A harness session to resume; the brief is its next turn.
    #[arg(long)]
    session: Option<String>,
    /// A file appended to the brief under its own name (repeatable).
    #[arg(long = "note")]
    notes: Vec<PathBuf>,
    /// Minutes before the turn is stopped (1 to 60).
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=60))]
    timeout_minutes: u64,
    /// Minutes the harness may write nothing before the turn is stopped
    /// (1 to 60) [default: `[serve] watchdog_minutes` in config.toml, else 10].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=60))]
    watchdog_minutes: Option<u64>,
    /// A JSON file listing MCP servers for the harness, as an environment's
    /// `mcp_servers`: `[{"name", "type": "stdio", "command", "args", "env"}`
    /// or `{"name", "type": "http", "url", "headers"}]`; a header's
    /// `{"secret": NAME}` takes the variable NAME from your environment.
    #[arg(long = "mcp-servers", value_name = "FILE")]
    mcp_servers: Option<PathBuf>,
    /// Limits the harness's network to cinch's HTTP proxy, which lets through
    /// only the hosts given (repeatable; a name, `*.domain` or an IP
    /// address), as an environment's `allowed_hosts`. Needs the sandbox.
    #[arg(long = "allowed-host", value_name = "HOST", value_parser = allowed_host)]
    allowed_hosts: Vec<String>,
    /// Prints one JSON object with the result at the end, nothing else.
    #[arg(long)]
    json: bool,
    /// Runs the harness with your own access instead of in the sandbox
    /// (read-write: the repository, HOME and a private TMPDIR).
    #[arg(long)]
    no_sandbox: bool,
    /// The task; `-` reads it from standard input.
    brief: String,
}

impl Args {
    /// The sandbox the turn runs in.
    pub fn sandbox_mode(&self) -> cinch_engine::sandbox::Mode {
        if self.no_sandbox {
            cinch_engine::sandbox::Mode::Disabled
        } else {
            cinch_engine::sandbox::Mode::Enforced
        }
    }
}

pub fn run(engine: &Engine, args: Args) -> anyhow::Result<ExitCode> {
    let brief = if args.brief == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading the brief from stdin")?;
        text
    } else {
        args.brief
    };
    anyhow::ensure!(!brief.trim().is_empty(), "the brief is empty");
    let notes = args
        .notes
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("reading the note {}", path.display()))?;
            Ok(Note {
                name: path.display().to_string(),
                text,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let repo = top_of_repository(match args.repo {
        Some(repo) => repo,
        None => std::env::current_dir()?,
    });
    let harness = match args.harness {
        Some(harness) => harness,
        None => {
            let only = only_installed_harness(engine)?;
            if !args.json {
                eprintln!("harness: {only} (the only one installed)");
            }
            only
        }
    };
    let mcp_servers = match &args.mcp_servers {
        Some(path) => read_mcp_servers(path)?,
        None => Vec::new(),
    };
    // A secret a header names is masked in what the turn shows, as an environment's would be.
    let secrets = mcp_servers
        .iter()
        .flat_map(|server| match &server.transport {
            cinch_engine::mcp::Transport::Http { headers, .. } => headers.values().collect(),
            cinch_engine::mcp::Transport::Stdio { .. } => Vec::new(),
        })
        .filter_map(|value| match value {
            cinch_engine::mcp::HeaderValue::Secret { secret } => std::env::var(secret).ok(),
            cinch_engine::mcp::HeaderValue::Text(_) => None,
        })
        .collect();
    anyhow::ensure!(
        args.allowed_hosts.is_empty() || !args.no_sandbox,
        "--allowed-host needs the sandbox: leave out --no-sandbox"
    );
    let turn = engine.start(TurnRequest {
        harness,
        repo,
        brief,
        notes,
        model: args.model,
        effort: args.effort,
        session_id: args.session,
        timeout: Duration::from_secs(args.timeout_minutes * 60),
        idle_limit: args
            .watchdog_minutes
            .map(|minutes| Duration::from_secs(minutes * 60)),
        run: None,
        env: Default::default(),
        secrets,
        tcp_ports: None,
        allowed_hosts: (!args.allowed_hosts.is_empty()).then_some(args.allowed_hosts),
        agent: None,
        mcp_servers,
        ask: false,
        trace_parent: None,
        fork: false,
    })?;
    watch(turn, args.json)
}

/// The top of the git work tree `dir` is in, so that a turn started from a
/// subdirectory works on the whole repository; `dir` itself when it is in
/// none (the turn is then refused with `repo.invalid`).
fn top_of_repository(dir: PathBuf) -> PathBuf {
    git2::Repository::discover(&dir)
        .ok()
        .and_then(|repository| repository.workdir().map(std::path::Path::to_path_buf))
        .map(|top| top.canonicalize().unwrap_or(top))
        .unwrap_or(dir)
}

/// The harness to run when none was named: the only one whose CLI is
/// installed here.
fn only_installed_harness(engine: &Engine) -> anyhow::Result<String> {
    let mut installed = Vec::new();
    for name in engine.registry().names() {
        if engine.check(name)?.path.is_some() {
            installed.push(name.to_owned());
        }
    }
    match installed.as_slice() {
        [only] => Ok(only.clone()),
        [] => anyhow::bail!(
            "no harness's CLI is installed (see `cinch check`): install one, or name it with --harness"
        ),
        several => anyhow::bail!(
            "several harnesses are installed ({}): choose one with --harness",
            several.join(", ")
        ),
    }
}

/// An `--allowed-host`, checked and normalized.
fn allowed_host(entry: &str) -> Result<String, String> {
    cinch_engine::sandbox::egress::hosts::check(entry)?;
    Ok(cinch_engine::sandbox::egress::hosts::normalize(entry))
}

/// The MCP servers in the JSON file at `path`, checked; a header's secret
/// must name a variable of this process's environment.
fn read_mcp_servers(path: &std::path::Path) -> anyhow::Result<Vec<cinch_engine::mcp::McpServer>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the MCP servers file {}", path.display()))?;
    let servers: Vec<cinch_engine::mcp::McpServer> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a JSON list of MCP servers ({{\"name\", \"type\": \"stdio\"|\"http\", ...}})",
            path.display()
        )
    })?;
    let variables: Vec<String> = std::env::vars_os()
        .filter_map(|(name, _)| name.into_string().ok())
        .collect();
    let names = variables.iter().map(String::as_str).collect();
    let complaints = cinch_engine::mcp::check(&servers, &names);
    if !complaints.is_empty() {
        let lines: Vec<String> = complaints
            .into_iter()
            .map(|(field, message)| format!("servers{field}: {message}"))
            .collect();
        anyhow::bail!("{}: {}", path.display(), lines.join("; "));
    }
    Ok(servers)
}

/// Follows turn `id` to its end.
pub fn attach(engine: &Engine, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    watch(engine.attach(id, &[])?, json)
}

/// Shows the turn's progress live, then its result; Ctrl-C cancels it.
fn watch(turn: Turn, json: bool) -> anyhow::Result<ExitCode> {
    let interrupted = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGINT, interrupted.clone())?;
    signal_hook::flag::register(signal_hook::consts::SIGTERM, interrupted.clone())?;
    let started = Instant::now();
    let mut stderr = std::io::stderr();
    let show = !json;
    if show {
        let _ = writeln!(
            stderr,
            "turn {} · log {}",
            turn.id(),
            turn.log_path().display()
        );
    }
    let mut subscription = turn.subscribe();
    let mut cancelled = false;
    loop {
        if interrupted.load(Ordering::SeqCst) && !cancelled {
            cancelled = true;
            turn.cancel();
            if show {
                let _ = writeln!(stderr, "cancelling: stopping the harness…");
            }
        }
        match subscription.next(Duration::from_millis(100)) {
            Next::Events(events) => {
                for event in events {
                    if let (true, TurnEventKind::Progress { line }) = (show, &event.kind) {
                        let elapsed = started.elapsed().as_secs();
                        let _ =
                            writeln!(stderr, "[{:02}:{:02}] {line}", elapsed / 60, elapsed % 60);
                    }
                }
            }
            Next::Idle => {}
            Next::Closed => break,
        }
    }
    let result = turn.wait();
    let mut stdout = std::io::stdout();
    if json {
        writeln!(stdout, "{}", serde_json::to_string(&result)?)?;
    } else {
        if std::io::stderr().is_terminal() {
            let _ = writeln!(stderr);
        }
        writeln!(stdout, "{}", result.result_text)?;
    }
    Ok(if result.status == Status::Completed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
