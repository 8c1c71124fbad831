//! `cinch serve` and `cinch token create`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use cinch_engine::engine::harness::passed_env;
use cinch_engine::home::Home;
use cinch_engine::sandbox::{Mode, Support};
use cinch_server::ConnectionLimits as Limits;
use cinch_server::Runner;
use cinch_server::Runs;
use cinch_server::{AppState, DEFAULT_BODY_LIMIT};
use cinch_server::{Conductor, Settings};
use cinch_store::TokenFor;

use super::database::{Database, home, open, open_store, runtime};
use cinch_engine::turn_dir::SecretsSeal;
use cinch_server::Webhooks;

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
    /// The database: a SQLite file's path or `sqlite:` URL [default: cinch.db
    /// in the home], or PostgreSQL's `postgres://user:password@host/db`
    /// (several nodes may share one).
    #[arg(long, env = "CINCH_DATABASE")]
    database: Option<String>,
    /// The largest request body, in bytes [default: 1 MiB].
    #[arg(long, env = "CINCH_BODY_LIMIT")]
    body_limit: Option<usize>,
    /// Turns running at once on this node, at most; past it sessions wait [default: 4].
    #[arg(long, env = "CINCH_MAX_TURNS")]
    max_turns: Option<usize>,
    /// Turns one account runs at once on all nodes together, at most; past
    /// it the account's sessions wait [default: no cap but --max-turns].
    #[arg(long, env = "CINCH_MAX_TURNS_PER_ACCOUNT", value_parser = clap::value_parser!(u64).range(1..))]
    max_turns_per_account: Option<u64>,
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
    /// The bearer token `POST`/`DELETE /v1/drivers` require (plugins are
    /// the server's, not an account's); without one they are refused.
    #[arg(long, env = "CINCH_OPERATOR_TOKEN", hide_env_values = true)]
    operator_token: Option<String>,
    /// This node's id, unique among the nodes sharing the database
    /// [default: the id kept in the home's `node-id`, made on first start].
    #[arg(long, env = "CINCH_NODE_ID")]
    node_id: Option<String>,
    /// Seconds a session's lease lasts unless its node renews it; another
    /// node takes the session over once it ran out [default: 30].
    #[arg(long, env = "CINCH_LEASE_TTL", value_parser = clap::value_parser!(u64).range(1..=3600))]
    lease_ttl: Option<u64>,
    /// Seconds running turns get to finish on SIGTERM before what remains
    /// is handed to other nodes, on a shared database [default: 30].
    #[arg(long, env = "CINCH_DRAIN_GRACE")]
    drain_grace: Option<u64>,
    /// Where the other nodes reach this one, for what only it holds (the
    /// harness logs of the jobs it ran) [default: http://<listen>, unless
    /// it listens on every address].
    #[arg(long, env = "CINCH_ADVERTISE_URL")]
    advertise_url: Option<String>,
    /// Where checkpoints are pushed after each turn, for every node to reach
    /// when it takes a session over: a bare git repository's path or a git URL.
    #[arg(long, env = "CINCH_CHECKPOINT_REMOTE")]
    checkpoint_remote: Option<String>,
    /// Runs turns and setup commands with cinch's own access, unsandboxed:
    /// every tenant can then read everything cinch can.
    #[arg(long)]
    no_sandbox: bool,
    /// The key secrets are sealed with in the database.
    #[command(flatten)]
    secrets_key: super::secrets::KeyArgs,
    /// Exports traces over OTLP/HTTP (protobuf) to the collector at this
    /// address, `http://host:4318`: a span per request, per turn and per
    /// step of a turn. Off without it.
    #[arg(long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    otlp_endpoint: Option<String>,
    /// Lets spans carry the brief and the final message (masked of
    /// secrets); without it no span holds a prompt's or an answer's text.
    #[arg(long)]
    otlp_include_content: bool,
}

impl ServeArgs {
    /// What the options ask of traces.
    pub(super) fn traces(&self) -> cinch_server::Traces {
        cinch_server::Traces {
            endpoint: self.otlp_endpoint.clone(),
            include_content: self.otlp_include_content,
        }
    }
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
    /// What the token is for ("CI", "laptop"), shown in the token list.
    #[arg(long)]
    name: Option<String>,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
    /// The database, as `cinch serve --database` takes it.
    #[arg(long, env = "CINCH_DATABASE")]
    database: Option<String>,
}

#[derive(Debug, clap::Args)]
pub struct AccountArgs {
    /// The new account's name.
    name: String,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
    /// The database, as `cinch serve --database` takes it.
    #[arg(long, env = "CINCH_DATABASE")]
    database: Option<String>,
}

/// How long running turns get to finish on SIGTERM, by default.
const DEFAULT_DRAIN_GRACE_SECONDS: u64 = 30;

/// Where a node keeps its id in its home.
const NODE_ID_FILE: &str = "node-id";

/// This node's id: `given`, else the one kept in the home, else a new one,
/// kept there so that the node is the same one after a restart.
fn node_id(home: &Home, given: Option<String>) -> anyhow::Result<String> {
    let valid = |id: &str| {
        !id.is_empty()
            && id.len() <= 64
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    };
    if let Some(id) = given {
        anyhow::ensure!(
            valid(&id),
            "--node-id {id:?}: use 1 to 64 letters, digits, '-', '_' or '.'"
        );
        return Ok(id);
    }
    let path = home.root().join(NODE_ID_FILE);
    match std::fs::read_to_string(&path) {
        Ok(kept) => {
            let kept = kept.trim().to_owned();
            anyhow::ensure!(
                valid(&kept),
                "{} holds {kept:?}, which is not a node id: fix it, or remove it for a new one",
                path.display()
            );
            Ok(kept)
        }
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            let id = format!("node-{}", cinch_base::hex::random(4)?);
            std::fs::write(&path, format!("{id}\n"))
                .with_context(|| format!("writing {}", path.display()))?;
            Ok(id)
        }
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
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
    let config = cinch_engine::tools::load_config(&home.root().join("config.toml"))?;
    let file = config.serve;
    let limits = connection_limits(&file)?;
    let listen = match (args.listen, &file.listen) {
        (Some(listen), _) => listen,
        (None, Some(text)) => text.parse().with_context(|| {
            format!("[serve] listen = {text:?} in config.toml is not an address")
        })?,
        (None, None) => SocketAddr::from(([127, 0, 0, 1], 7700)),
    };
    let database = Database::choose(&home, args.database.or(file.database))?;
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
        wait_limit: file
            .wait_limit_seconds
            .or(args
                .wait_limit_minutes
                .or(file.wait_limit_minutes)
                .map(|minutes| minutes * 60))
            .map_or(defaults.wait_limit, Duration::from_secs),
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
    let node_id = node_id(&home, args.node_id.or(file.node_id.clone()))?;
    let lease_ttl = args.lease_ttl.or(file.lease_ttl);
    if let Some(seconds) = lease_ttl {
        anyhow::ensure!(
            (1..=3600).contains(&seconds),
            "lease_ttl: 1 to 3600 seconds, not {seconds}"
        );
    }
    let max_turns_per_account = args
        .max_turns_per_account
        .map(|cap| cap as usize)
        .or(file.max_turns_per_account);
    anyhow::ensure!(
        max_turns_per_account != Some(0),
        "max_turns_per_account: at least 1 (leave it out for no cap of its own)"
    );
    let settings = Settings {
        repository_roots,
        node_id: node_id.clone(),
        lease_ttl: lease_ttl.map_or(cinch_server::DEFAULT_LEASE_TTL, Duration::from_secs),
        checkpoint_remote: args.checkpoint_remote.or(file.checkpoint_remote.clone()),
        max_turns_per_account,
        ..settings
    };
    let advertise_url = args.advertise_url.or(file.advertise_url.clone());
    let drain_grace = Duration::from_secs(
        args.drain_grace
            .or(file.drain_grace)
            .unwrap_or(DEFAULT_DRAIN_GRACE_SECONDS),
    );
    // Built, not inherited: the server's own credentials reach no harness.
    let tenant_env = passed_env(std::env::vars(), &file.pass_env);
    let mut engine = super::engine_in(home.clone(), tenant_env.clone())?.with_sandbox(sandbox);
    tracing::info!(helper = %cinch_engine::helper::describe(engine.helper()), "helper");
    super::credentials_report::report(&engine, &std::env::vars().collect());
    if let Some(minutes) = args.watchdog_minutes {
        engine = engine.with_watchdog(Duration::from_secs(minutes * 60));
    }
    cinch_server::install_metrics()?;
    runtime()?.block_on(async {
        let store = open(&database).await?;
        let (mut store, secrets_key) = super::secrets::unlock_for_serve(
            store,
            &home,
            &args.secrets_key,
            &database.old_vault(&home),
        )
        .await?;
        // A running turn's values to mask wait on disk sealed like the database's secrets.
        let engine = Arc::new(engine.with_secrets_seal(SecretsSeal::new(&secrets_key)));
        // `cinch driver add|remove|rollback` on this home takes effect for new turns.
        engine
            .watch_drivers()
            .context("starting the plugins' watch")?;
        if let Some(mib) = file.page_cache_mib {
            store = store.with_page_cache(mib << 20);
        }
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
        let runs = Arc::new(
            Runs::new(store.clone(), webhooks).context("starting the run events writer")?,
        );
        let runner = Runner::new(
            store.clone(),
            engine.clone(),
            runs.clone(),
            home.clone(),
            settings.runs(),
        );
        let conductor = Conductor::new(
            store.clone(),
            engine.clone(),
            runner.clone(),
            home.clone(),
            settings,
            tenant_env,
        );
        conductor
            .recover()
            .await
            .context("picking up the sessions that were running")?;
        tokio::spawn(conductor.clone().run_background());
        cinch_server::hear_other_nodes(&store, runs.clone(), conductor.clone());
        let listener = tokio::net::TcpListener::bind(listen)
            .await
            .with_context(|| format!("listening on {listen}"))?;
        if store.is_shared() {
            let bound = listener.local_addr()?;
            match advertise_url.or_else(|| {
                (!bound.ip().is_unspecified()).then(|| format!("http://{bound}"))
            }) {
                Some(url) => store
                    .announce_node(&node_id, &url)
                    .await
                    .context("recording where this node answers")?,
                None => tracing::warn!(
                    "this node listens on every address and has no --advertise-url: other nodes cannot fetch the harness logs of the jobs it runs"
                ),
            }
        }
        eprintln!(
            "cinch: node {node_id} serving on http://{}",
            listener.local_addr()?
        );
        let shared = store.is_shared();
        let mut state = AppState::new(store, engine, runner, conductor.clone(), body_limit)
            .with_disk_low_below(
                file.min_free_disk_mib
                    .map_or(cinch_engine::disk::DEFAULT_LOW_BELOW_BYTES, |mib| mib << 20),
            );
        if let Some(token) = args.metrics_token.as_deref() {
            anyhow::ensure!(
                !token.trim().is_empty(),
                "--metrics-token: give a token, or leave the option out to keep the metrics open"
            );
            state = state.with_metrics_token(token.trim());
        }
        if let Some(token) = args.operator_token.as_deref() {
            anyhow::ensure!(
                token.trim().len() >= 16,
                "--operator-token: give a token of 16 characters or more, or leave the option out to refuse plugin changes over HTTP"
            );
            state = state.with_operator_token(token.trim());
        }
        cinch_server::serve(listener, state, limits).await;
        if shared {
            // Other nodes go on: what runs here finishes or moves to them.
            eprintln!(
                "cinch: draining: running turns get {} s to finish, then other nodes take the sessions over",
                drain_grace.as_secs()
            );
            conductor.drain(drain_grace).await;
        }
        Ok(ExitCode::SUCCESS)
    })
}

/// The limits on clients' connections: `[serve]`'s, defaults where unset.
/// Raises the open-file limit first, which the default cap follows.
fn connection_limits(file: &cinch_engine::config::ServeConfig) -> anyhow::Result<Limits> {
    let defaults = Limits::for_open_files(cinch_server::raise_open_file_limit());
    let seconds = |value: Option<u64>, name: &str, default: Duration| match value {
        None => Ok(default),
        Some(seconds @ 1..=3600) => Ok(Duration::from_secs(seconds)),
        Some(seconds) => Err(anyhow::anyhow!(
            "[serve] {name} in config.toml: 1 to 3600 seconds, not {seconds}"
        )),
    };
    let limits = Limits {
        header_timeout: seconds(
            file.header_timeout_seconds,
            "header_timeout_seconds",
            defaults.header_timeout,
        )?,
        idle_timeout: seconds(
            file.idle_timeout_seconds,
            "idle_timeout_seconds",
            defaults.idle_timeout,
        )?,
        max_connections: file.max_connections.unwrap_or(defaults.max_connections),
    };
    anyhow::ensure!(
        limits.max_connections > 0,
        "[serve] max_connections in config.toml: at least 1"
    );
    tracing::info!(
        header_timeout_s = limits.header_timeout.as_secs(),
        idle_timeout_s = limits.idle_timeout.as_secs(),
        max_connections = limits.max_connections,
        "connection limits"
    );
    Ok(limits)
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
        cinch_engine::sandbox::MINIMUM_ABI
    );
    for line in support.lines() {
        tracing::info!(sandbox = %line, "sandbox");
    }
    Ok(Mode::Enforced)
}

/// Prints a new token for a member or an agent.
pub fn token_create(args: TokenArgs) -> anyhow::Result<ExitCode> {
    let name = args
        .name
        .as_deref()
        .map(cinch_server::token_name)
        .transpose()
        .map_err(|problem| anyhow::anyhow!("--name: {problem}"))?;
    let home = home(args.home)?;
    runtime()?.block_on(async {
        let store = open_store(&home, args.database).await?;
        let account = store.find_account(args.account.as_deref()).await?;
        let who = match (&args.member, &args.agent) {
            (Some(member), _) => TokenFor::Member(member),
            (None, Some(agent)) => TokenFor::Agent(agent),
            (None, None) => unreachable!("clap requires one"),
        };
        println!("{}", store.create_token(&account.id, who, name).await?);
        Ok(ExitCode::SUCCESS)
    })
}

/// Creates an account (with its connected agent and an admin member) and
/// prints its id and its admin's token.
pub fn account_create(args: AccountArgs) -> anyhow::Result<ExitCode> {
    let home = home(args.home)?;
    runtime()?.block_on(async {
        let store = open_store(&home, args.database).await?;
        let (account, token) = store.create_account(&args.name).await?;
        println!("{}\n{token}", account.id);
        Ok(ExitCode::SUCCESS)
    })
}
