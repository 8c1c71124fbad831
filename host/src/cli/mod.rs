//! The `cinch` command line.

mod credentials_report;
mod database;
mod driver_corpus;
mod driver_name;
mod driver_test;
mod drivers;
mod fork;
mod harness;
mod revert;
mod run;
mod scaffold;
mod secrets;
mod serve;
mod turns;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use cinch_runtime::{Limits, Runtime};

use clap::{Parser, Subcommand};

use cinch_engine::drivers::Registry;
use cinch_engine::engine::Engine;
use cinch_engine::home::Home;

/// Runs coding-agent CLIs one turn at a time, through sandboxed drivers.
#[derive(Debug, Parser)]
#[command(name = "cinch", version, about)]
struct Cli {
    /// How cinch writes its own logs (on stderr; CINCH_LOG sets the level).
    #[arg(long, global = true, env = "CINCH_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// The shape of cinch's own log lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// One line of text per event.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the drivers: built-in and plugins, with their CLI on this machine.
    Drivers {
        /// Lists instead, per driver and CLI version, the event types the
        /// driver did not know, as the home's database recorded them.
        #[arg(long)]
        seen: bool,
        /// With --seen: one JSON array, as `GET /v1/drivers` shapes it.
        #[arg(long, requires = "seen")]
        json: bool,
        /// With --seen: the database, as `cinch serve --database` takes it.
        #[arg(long, env = "CINCH_DATABASE")]
        database: Option<String>,
    },
    /// Tests, scaffolds and installs drivers.
    Driver {
        #[command(subcommand)]
        command: DriverCommand,
    },
    /// Installs harnesses' CLIs under cinch's home and lists them.
    Harness {
        #[command(subcommand)]
        command: HarnessCommand,
    },
    /// Runs one turn of a harness in a repository, live.
    Run(run::Args),
    /// Whether each harness's CLI is installed, its version and its credential.
    Check {
        /// One harness (default: all).
        name: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Lists the turns, newest first.
    Turns {
        #[arg(long)]
        json: bool,
    },
    /// Follows a turn live to its end (and finishes it if nobody else does).
    Attach {
        /// The turn's id (see `cinch turns`).
        turn: String,
        #[arg(long)]
        json: bool,
    },
    /// A turn's kept harness log: its events as progress lines, then the raw JSONL (redacted).
    Log {
        /// The turn's id.
        turn: String,
        /// Prints the whole view as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Restores a turn's work tree to the turn's start (files; HEAD goes back
    /// only past commits made since). `cinch revert <revert id>` undoes a revert.
    Revert {
        /// The turn's id (see `cinch turns`), or a revert's.
        turn: String,
        /// Prints what was done as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Forks a turn's work tree at the turn's end: a new worktree on a new
    /// branch with the files as the turn left them; the original stays.
    Fork {
        /// The turn's id (see `cinch turns`).
        turn: String,
        /// Where the worktree goes (default: `<work tree>-fork-<turn>` beside it).
        #[arg(long)]
        into: Option<PathBuf>,
        /// Its branch (default: `cinch/fork-<turn>`).
        #[arg(long)]
        branch: Option<String>,
        /// Prints what was made as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Stops a running turn: SIGTERM, then SIGKILL ten seconds later.
    Stop {
        /// The turn's id.
        turn: String,
    },
    /// Serves the HTTP API and the app: accounts, environments, tasks, jobs, live events.
    Serve(serve::ServeArgs),
    /// Makes bearer tokens for the API.
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Manages the API's accounts.
    Account {
        #[command(subcommand)]
        command: AccountCommand,
    },
    /// Manages the key environments' and webhooks' secrets are sealed with.
    Secrets {
        #[command(subcommand)]
        command: SecretsCommand,
    },
}

#[derive(Debug, Subcommand)]
enum SecretsCommand {
    /// Seals every stored secret again under a new key, in one transaction;
    /// then restart every node with the new key.
    RotateKey(secrets::RotateArgs),
}

#[derive(Debug, Subcommand)]
enum DriverCommand {
    /// Runs recorded logs through a driver and shows what it made of them.
    Test(driver_test::Args),
    /// Scaffolds a new driver crate on the SDK.
    New(scaffold::Args),
    /// Checks a driver component (a file or an OCI reference) and installs
    /// it as a plugin, pinned by digest in the home's drivers.lock.
    Add(drivers::AddArgs),
    /// Pushes a driver component to an OCI registry; prints its digest.
    Publish(drivers::PublishArgs),
    /// Signs a driver component with an OpenSSH key (writes FILE.sig).
    Sign(drivers::SignArgs),
    /// Removes a plugin.
    Remove {
        /// The driver's name.
        name: String,
    },
    /// Pins a plugin back to the component it had before.
    Rollback {
        /// The driver's name.
        name: String,
    },
}

#[derive(Debug, Subcommand)]
enum HarnessCommand {
    /// Installs a harness's CLI from its package registry into
    /// `<home>/tools/NAME/VERSION` (default: the version its driver was
    /// tested with, else the latest).
    Install {
        /// `NAME` or `NAME@VERSION`.
        spec: String,
        /// Prints what was installed as one JSON object.
        #[arg(long)]
        json: bool,
    },
    /// Lists each harness's package, tested versions, installed and pinned
    /// versions, and the CLI on PATH.
    List {
        /// One JSON array.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Subcommand)]
enum TokenCommand {
    /// Prints a new token for a member or an agent of an account.
    Create(serve::TokenArgs),
}

#[derive(Debug, Subcommand)]
enum AccountCommand {
    /// Creates an account with its connected agent and an admin member; prints its id and the admin's token.
    Create(serve::AccountArgs),
}

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    // Before anything else: a supervisor forks, so no thread may exist yet.
    if let Some(job) = cinch_engine::helper::job(std::env::args_os().skip(1)) {
        return cinch_engine::helper::run(job);
    }
    let cli = Cli::parse();
    let traces = match &cli.command {
        Command::Serve(args) => args.traces(),
        _ => cinch_server::Traces::default(),
    };
    // Sends the buffered spans when dropped, after the command.
    let _exporter = match init_logs(cli.log_format, &traces) {
        Ok(exporter) => exporter,
        Err(error) => {
            eprintln!("cinch: {error:#}");
            return ExitCode::FAILURE;
        }
    };
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("cinch: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Installs cinch's logs on stderr in `format`, and the trace exporter
/// when `traces` names a collector.
fn init_logs(
    format: LogFormat,
    traces: &cinch_server::Traces,
) -> anyhow::Result<Option<cinch_server::Exporter>> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let mut level = tracing_subscriber::EnvFilter::try_from_env("CINCH_LOG")
        .unwrap_or_else(|_| "warn".into())
        // The spans for the exporter are not log lines, whatever the level.
        .add_directive(
            format!("{}=off", cinch_engine::telemetry::TARGET)
                .parse()
                .expect("a valid directive"),
        );
    // The MCP SDK notes every /mcp request's start and end at info: warnings
    // only, unless CINCH_LOG names it.
    if !std::env::var("CINCH_LOG")
        .unwrap_or_default()
        .contains("rmcp")
    {
        level = level.add_directive("rmcp=warn".parse().expect("a valid directive"));
    }
    let logs = match format {
        LogFormat::Text => tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .boxed(),
        LogFormat::Json => tracing_subscriber::fmt::layer()
            .json()
            .with_writer(std::io::stderr)
            .boxed(),
    };
    let logs = logs.with_filter(level);
    let (exporter, traces) = cinch_server::exporter(traces)?.unzip();
    tracing_subscriber::registry()
        .with(logs)
        .with(traces)
        .init();
    Ok(exporter)
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if cli.command.prints_a_listing() {
        end_quietly_when_the_reader_leaves();
    }
    match cli.command {
        Command::Drivers { seen: false, .. } => drivers::list(&Context::open()?),
        Command::Drivers {
            seen: true,
            json,
            database,
        } => drivers::seen(&Home::discover()?, database, json),
        Command::Driver { command } => match command {
            DriverCommand::Test(args) => driver_test::run(&Context::open()?, args),
            DriverCommand::New(args) => scaffold::run(args),
            DriverCommand::Add(args) => drivers::add(&Context::open()?, args),
            DriverCommand::Publish(args) => drivers::publish(&Context::open()?, args),
            DriverCommand::Sign(args) => drivers::sign(args),
            DriverCommand::Remove { name } => drivers::remove(&Context::open()?, &name),
            DriverCommand::Rollback { name } => drivers::rollback(&Context::open()?, &name),
        },
        Command::Harness { command } => match command {
            HarnessCommand::Install { spec, json } => harness::install(&engine()?, &spec, json),
            HarnessCommand::List { json } => harness::list(&engine()?, json),
        },
        Command::Run(args) => {
            let mode = args.sandbox_mode();
            run::run(&engine()?.with_sandbox(mode), args)
        }
        Command::Check { name, json } => turns::check(&engine()?, name.as_deref(), json),
        Command::Turns { json } => turns::list(&engine()?, json),
        Command::Attach { turn, json } => run::attach(&engine()?, &turn, json),
        Command::Stop { turn } => turns::stop(&engine()?, &turn),
        Command::Revert { turn, json } => revert::revert(&Home::discover()?, &turn, json),
        Command::Fork {
            turn,
            into,
            branch,
            json,
        } => fork::fork(&Home::discover()?, &turn, into, branch, json),
        Command::Log { turn, json } => turns::log(&engine()?, &turn, json),
        Command::Serve(args) => serve::serve(args),
        Command::Token {
            command: TokenCommand::Create(args),
        } => serve::token_create(args),
        Command::Account {
            command: AccountCommand::Create(args),
        } => serve::account_create(args),
        Command::Secrets {
            command: SecretsCommand::RotateKey(args),
        } => secrets::rotate_key(args),
    }
}

impl Command {
    /// Whether the command only prints what it read, at length: one whose
    /// reader may stop reading early (`cinch turns | head`).
    fn prints_a_listing(&self) -> bool {
        matches!(
            self,
            Self::Drivers { .. }
                | Self::Driver {
                    command: DriverCommand::Test(_)
                }
                | Self::Check { .. }
                | Self::Turns { .. }
                | Self::Log { .. }
        )
    }
}

/// Lets a closed standard output end the process as it ends `ls` or `git
/// log`, quietly, instead of a panic in `println!`: Rust ignores SIGPIPE,
/// so a write to a pipe whose reader left fails, and `println!` panics on a
/// failed write.
fn end_quietly_when_the_reader_leaves() {
    // SAFETY: restoring a signal's default action, before any thread of
    // this command writes to stdout.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// The engine of cinch's home, supervising turns with this very binary.
fn engine() -> anyhow::Result<Engine> {
    engine_in(Home::discover()?, std::env::vars().collect())
}

/// The engine of `home`, supervising turns with the helper beside this
/// binary (or this very binary); harnesses run with `env` (and the
/// configured secrets).
fn engine_in(home: Home, env: BTreeMap<String, String>) -> anyhow::Result<Engine> {
    let runtime = Runtime::new(Some(home.component_cache_dir()), Limits::default())?;
    let program = cinch_engine::helper::program(&std::env::current_exe()?);
    Engine::new(home, &runtime, program, env)
}

/// What most commands need: the home, its config, the runtime and the drivers.
struct Context {
    home: Home,
    config: cinch_engine::config::Config,
    runtime: Runtime,
    registry: Registry,
}

impl Context {
    fn open() -> anyhow::Result<Self> {
        let home = Home::discover()?;
        let runtime = Runtime::new(Some(home.component_cache_dir()), Limits::default())?;
        let config = cinch_engine::tools::load_config(&home.root().join("config.toml"))?;
        let registry = Registry::load_with(
            &runtime,
            Some(&home.plugins_dir()),
            &cinch_engine::plugins::SignaturePolicy::from_config(&config.drivers)?,
        )?
        .with_configured(&config.harness)?;
        Ok(Self {
            home,
            config,
            runtime,
            registry,
        })
    }
}
