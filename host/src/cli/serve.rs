//! `cinch serve` and `cinch token create`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use crate::api::{AppState, DEFAULT_BODY_LIMIT};
use crate::config::Config;
use crate::engine::harness::passed_env;
use crate::home::Home;
use crate::sandbox::{Mode, Support};
use crate::sessions::live::Runs;
use crate::sessions::{Conductor, Settings};
use crate::store::{DATABASE_FILE, Store, TokenFor};
use crate::webhooks::Webhooks;

/// Where the first start writes the admin's token, in the home.
const ADMIN_TOKEN_FILE: &str = "admin-token";

/// `cinch serve`'s options: each from its flag, else its `CINCH_*`
/// variable, else `[serve]` in the home's config.toml, else the default.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on [default: 127.0.0.1:7700].
    #[arg(long, env = "CINCH_LISTEN")]
    listen: Option<SocketAddr>,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
    /// The database: a SQLite file's path or `sqlite:` URL [default: cinch.db in the home].
    #[arg(long, env = "CINCH_DATABASE")]
    database: Option<String>,
    /// The largest request body, in bytes [default: 1 MiB].
    #[arg(long, env = "CINCH_BODY_LIMIT")]
    body_limit: Option<usize>,
    /// Turns running at once, at most; past it sessions wait [default: 4].
    #[arg(long, env = "CINCH_MAX_TURNS")]
    max_turns: Option<usize>,
    /// Seconds between a waiting session's attempts to get a slot [default: 5].
    #[arg(long, env = "CINCH_RETRY_SECONDS")]
    retry_seconds: Option<u64>,
    /// Minutes a session waits for a slot before it is closed [default: 65].
    #[arg(long, env = "CINCH_WAIT_LIMIT_MINUTES")]
    wait_limit_minutes: Option<u64>,
    /// Minutes one turn may run, 1 to 60 [default: 30].
    #[arg(long, env = "CINCH_TURN_TIMEOUT_MINUTES")]
    turn_timeout_minutes: Option<u64>,
    /// Minutes a harness may write nothing before its turn is stopped, 1 to
    /// 60, unless its environment sets its own [default: 10].
    #[arg(long, env = "CINCH_WATCHDOG_MINUTES", value_parser = clap::value_parser!(u64).range(1..=60))]
    watchdog_minutes: Option<u64>,
    /// A folder under which environments' local repositories may lie
    /// (repeatable; adds to `[serve] repository_roots`). Without any, only
    /// the first account may name local repositories.
    #[arg(long = "repository-root")]
    repository_roots: Vec<PathBuf>,
    /// Lets webhooks reach loopback and private addresses (the server's own
    /// network), which tenants are otherwise refused.
    #[arg(long)]
    webhook_allow_private: bool,
    /// Queues and logs webhook deliveries without sending any (a server
    /// that must not reach out).
    #[arg(long)]
    no_webhook_delivery: bool,
    /// The bearer token `GET /metrics` requires; without one the metrics
    /// are open to anyone who reaches the server.
    #[arg(long, env = "CINCH_METRICS_TOKEN")]
    metrics_token: Option<String>,
    /// Runs turns and setup commands with cinch's own access, unsandboxed:
    /// every tenant can then read everything cinch can.
    #[arg(long)]
    no_sandbox: bool,
}

#[derive(Debug, clap::Args)]
pub struct TokenArgs {
    /// A member's token (the member is added when the account has none of that name).
    #[arg(long, conflicts_with = "agent", required_unless_present = "agent")]
    member: Option<String>,
    /// An agent's token (the agent is added when the account has none of that name).
    #[arg(long)]
    agent: Option<String>,
    /// The account, by id or name (default: the only one).
    #[arg(long)]
    account: Option<String>,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
pub struct AccountArgs {
    /// The new account's name.
    name: String,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
}

fn home(dir: Option<PathBuf>) -> anyhow::Result<Home> {
    match dir {
        Some(dir) => Home::open(dir),
        None => Home::discover(),
    }
}

pub(super) fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

async fn open_store(home: &Home) -> anyhow::Result<Store> {
    open_database(&home.root().join(DATABASE_FILE)).await
}

pub(super) async fn open_database(path: &Path) -> anyhow::Result<Store> {
    Store::open(path)
        .await
        .with_context(|| format!("opening {}", path.display()))
}

/// The SQLite file a `--database` value names.
fn database_path(value: &str) -> anyhow::Result<PathBuf> {
    if value.starts_with("postgres://") || value.starts_with("postgresql://") {
        anyhow::bail!(
            "database: Postgres is not supported yet; use a SQLite file (a path or sqlite:PATH)"
        );
    }
    let path = value
        .strip_prefix("sqlite://")
        .or_else(|| value.strip_prefix("sqlite:"))
        .unwrap_or(value);
    anyhow::ensure!(!path.is_empty(), "database: give a SQLite file's path");
    Ok(PathBuf::from(path))
}

/// Writes the admin's token where only its owner can read it.
fn write_admin_token(path: &Path, token: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("writing {}", path.display()))?;
    writeln!(file, "{token}").with_context(|| format!("writing {}", path.display()))
}

/// Serves the API until Ctrl-C or SIGTERM.
pub fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let home = home(args.home)?;
    let config = Config::load(&home.root().join("config.toml"))?;
    let file = config.serve;
    let listen = match (args.listen, &file.listen) {
        (Some(listen), _) => listen,
        (None, Some(text)) => text.parse().with_context(|| {
            format!("[serve] listen = {text:?} in config.toml is not an address")
        })?,
        (None, None) => SocketAddr::from(([127, 0, 0, 1], 7700)),
    };
    let database = match args.database.or(file.database) {
        Some(value) => database_path(&value)?,
        None => home.root().join(DATABASE_FILE),
    };
    let body_limit = args
        .body_limit
        .or(file.body_limit)
        .unwrap_or(DEFAULT_BODY_LIMIT);
    let defaults = Settings::default();
    let turn_timeout_minutes = args.turn_timeout_minutes.or(file.turn_timeout_minutes);
    if let Some(minutes) = turn_timeout_minutes {
        anyhow::ensure!(
            (1..=60).contains(&minutes),
            "turn timeout: 1 to 60 minutes, not {minutes}"
        );
    }
    let settings = Settings {
        max_turns: args
            .max_turns
            .or(file.max_turns)
            .unwrap_or(defaults.max_turns)
            .max(1),
        retry_interval: args
            .retry_seconds
            .or(file.retry_seconds)
            .map_or(defaults.retry_interval, |seconds| {
                Duration::from_secs(seconds.max(1))
            }),
        wait_limit: args
            .wait_limit_minutes
            .or(file.wait_limit_minutes)
            .map_or(defaults.wait_limit, |minutes| {
                Duration::from_secs(minutes * 60)
            }),
        turn_timeout: turn_timeout_minutes.map_or(defaults.turn_timeout, |minutes| {
            Duration::from_secs(minutes * 60)
        }),
        ..defaults
    };
    let sandbox = sandbox_mode(args.no_sandbox)?;
    let repository_roots: Vec<PathBuf> = file
        .repository_roots
        .iter()
        .chain(&args.repository_roots)
        .cloned()
        .collect();
    let settings = Settings {
        repository_roots,
        ..settings
    };
    // Built, not inherited: the server's own credentials reach no harness.
    let tenant_env = passed_env(std::env::vars(), &file.pass_env);
    let mut engine = super::engine_in(home.clone(), tenant_env.clone())?.with_sandbox(sandbox);
    if let Some(minutes) = args.watchdog_minutes {
        engine = engine.with_watchdog(Duration::from_secs(minutes * 60));
    }
    let engine = Arc::new(engine);
    crate::metrics::install()?;
    runtime()?.block_on(async {
        let store = open_database(&database).await?;
        if let Some(token) = store.bootstrap().await? {
            let path = home.root().join(ADMIN_TOKEN_FILE);
            write_admin_token(&path, &token)?;
            // Printed this once; afterwards it is only in the file.
            println!("{token}");
            eprintln!(
                "cinch: created the first account; its admin's token is above and in {}",
                path.display()
            );
        }
        let webhooks = Webhooks::new(
            store.clone(),
            args.webhook_allow_private,
            !args.no_webhook_delivery,
        );
        tokio::spawn(webhooks.clone().run());
        let runs = Arc::new(Runs::new(store.clone(), webhooks));
        let conductor = Conductor::new(
            store.clone(),
            engine.clone(),
            runs.clone(),
            home.clone(),
            settings,
            tenant_env,
        );
        conductor
            .recover()
            .await
            .context("picking up the sessions that were running")?;
        tokio::spawn(conductor.clone().run_background());
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        eprintln!("cinch: serving on http://{}", listener.local_addr()?);
        let mut state = AppState::new(store, engine, runs, conductor, body_limit);
        if let Some(token) = args.metrics_token.as_deref() {
            anyhow::ensure!(
                !token.trim().is_empty(),
                "--metrics-token: give a token, or leave the option out to keep the metrics open"
            );
            state = state.with_metrics_token(token.trim());
        }
        crate::api::serve(listener, state).await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// The sandbox turns run in: enforced unless the operator said
/// `--no-sandbox`; a kernel that cannot hold a harness in is refused.
fn sandbox_mode(no_sandbox: bool) -> anyhow::Result<Mode> {
    let support = Support::detect();
    if no_sandbox {
        tracing::error!(
            "running WITHOUT the sandbox (--no-sandbox): harnesses and setup commands run with cinch's own access and can read every account's secrets, workspaces and the database"
        );
        eprintln!(
            "cinch: WARNING: --no-sandbox: turns and setup commands run unsandboxed, with all of cinch's access"
        );
        return Ok(Mode::Disabled);
    }
    anyhow::ensure!(
        support.is_sufficient(),
        "this kernel cannot sandbox turns (Landlock ABI {}, {} or later is needed: Linux 6.12); see `cinch check`, or start with --no-sandbox to run them with cinch's own access",
        support.landlock_abi,
        crate::sandbox::MINIMUM_ABI
    );
    for line in support.lines() {
        tracing::info!(sandbox = %line, "sandbox");
    }
    Ok(Mode::Enforced)
}

/// Prints a new token for a member or an agent.
pub fn token_create(args: TokenArgs) -> anyhow::Result<ExitCode> {
    let home = home(args.home)?;
    runtime()?.block_on(async {
        let store = open_store(&home).await?;
        let account = store.find_account(args.account.as_deref()).await?;
        let who = match (&args.member, &args.agent) {
            (Some(member), _) => TokenFor::Member(member),
            (None, Some(agent)) => TokenFor::Agent(agent),
            (None, None) => unreachable!("clap requires one"),
        };
        println!("{}", store.create_token(&account.id, who).await?);
        Ok(ExitCode::SUCCESS)
    })
}

/// Creates an account (with its connected agent and an admin member) and
/// prints its id and its admin's token.
pub fn account_create(args: AccountArgs) -> anyhow::Result<ExitCode> {
    let home = home(args.home)?;
    runtime()?.block_on(async {
        let store = open_store(&home).await?;
        let (account, token) = store.create_account(&args.name).await?;
        println!("{}\n{token}", account.id);
        Ok(ExitCode::SUCCESS)
    })
}
