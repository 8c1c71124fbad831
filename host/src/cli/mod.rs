//! The `cinch` command line.

mod driver_test;
mod drivers;
mod scaffold;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::drivers::Registry;
use crate::home::Home;
use crate::runtime::{Limits, Runtime};

/// Runs coding-agent CLIs one turn at a time, through sandboxed drivers.
#[derive(Debug, Parser)]
#[command(name = "cinch", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Lists the drivers: built-in and plugins, with their CLI on this machine.
    Drivers,
    /// Tests, scaffolds and installs drivers.
    Driver {
        #[command(subcommand)]
        command: DriverCommand,
    },
}

#[derive(Debug, Subcommand)]
enum DriverCommand {
    /// Runs recorded logs through a driver and shows what it made of them.
    Test(driver_test::Args),
    /// Scaffolds a new driver crate on the SDK.
    New(scaffold::Args),
    /// Checks a driver component and installs it as a plugin.
    Add {
        /// The component, built for wasm32-wasip2.
        file: PathBuf,
    },
}

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CINCH_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("cinch: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Drivers => drivers::list(&Context::open()?),
        Command::Driver { command } => match command {
            DriverCommand::Test(args) => driver_test::run(&Context::open()?, args),
            DriverCommand::New(args) => scaffold::run(args),
            DriverCommand::Add { file } => drivers::add(&Context::open()?, &file),
        },
    }
}

/// What most commands need: the home, the runtime and the drivers.
struct Context {
    home: Home,
    runtime: Runtime,
    registry: Registry,
}

impl Context {
    fn open() -> anyhow::Result<Self> {
        let home = Home::discover()?;
        let runtime = Runtime::new(Some(home.component_cache_dir()), Limits::default())?;
        let registry = Registry::load(&runtime, Some(&home.plugins_dir()))?;
        Ok(Self {
            home,
            runtime,
            registry,
        })
    }
}
