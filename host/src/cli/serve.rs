//! `cinch serve` and `cinch token create`.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::api::{AppState, DEFAULT_BODY_LIMIT};
use crate::home::Home;
use crate::store::{DATABASE_FILE, Store, TokenFor};

/// Where the first start writes the admin's token, in the home.
const ADMIN_TOKEN_FILE: &str = "admin-token";

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:7700")]
    listen: SocketAddr,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
    /// The largest request body, in bytes.
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT)]
    body_limit: usize,
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

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

async fn open_store(home: &Home) -> anyhow::Result<Store> {
    let path = home.root().join(DATABASE_FILE);
    Store::open(&path)
        .await
        .with_context(|| format!("opening {}", path.display()))
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
    let engine = super::engine_in(home.clone())?;
    runtime()?.block_on(async {
        let store = open_store(&home).await?;
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
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("listening on {}", args.listen))?;
        eprintln!("cinch: serving on http://{}", listener.local_addr()?);
        crate::api::serve(listener, AppState::new(store, engine), args.body_limit).await?;
        Ok(ExitCode::SUCCESS)
    })
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
