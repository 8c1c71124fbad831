//! The key environments' and webhooks' secrets are sealed with in the
//! database: where a node finds it (`--secrets-key-file`,
//! `CINCH_SECRETS_KEY`, else the home's `secrets.key`, made on a first
//! start), checking it against the database when `cinch serve` starts, and
//! `cinch secrets rotate-key`.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use cinch_engine::home::Home;
use cinch_store::{SecretsKey, SecretsKeyError, Store, StoreError};

/// The key file a node makes in its home when it is given none.
const HOME_KEY_FILE: &str = "secrets.key";
/// The variable that holds the key itself (64 hex digits).
const KEY_ENV: &str = "CINCH_SECRETS_KEY";

/// Where the secrets key comes from.
#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    /// A file holding the key the database's secrets are sealed with: 32
    /// bytes as 64 hex digits (`openssl rand -hex 32`); every node sharing a
    /// database needs the same one. Else $CINCH_SECRETS_KEY (the 64 digits
    /// themselves), else the home's secrets.key, made on a first start.
    #[arg(long, env = "CINCH_SECRETS_KEY_FILE")]
    secrets_key_file: Option<PathBuf>,
}

/// Where a key was found, for messages.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Source {
    /// `--secrets-key-file`.
    File(PathBuf),
    /// `CINCH_SECRETS_KEY`.
    Variable,
    /// The home's key file.
    Home(PathBuf),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::File(path) | Self::Home(path) => write!(f, "{}", path.display()),
            Self::Variable => f.write_str(KEY_ENV),
        }
    }
}

/// Reads the key in the file at `path`.
fn read_key_file(path: &Path) -> anyhow::Result<SecretsKey> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading the secrets key in {}", path.display()))?;
    SecretsKey::parse(&text).with_context(|| format!("the secrets key in {}", path.display()))
}

/// The key the node was given, or the one in its home; `None` when neither.
fn given_key(home: &Home, args: &KeyArgs) -> anyhow::Result<Option<(SecretsKey, Source)>> {
    if let Some(path) = &args.secrets_key_file {
        return Ok(Some((read_key_file(path)?, Source::File(path.clone()))));
    }
    if let Some(text) = std::env::var_os(KEY_ENV).filter(|text| !text.is_empty()) {
        let key = text
            .to_str()
            .ok_or(SecretsKeyError::Malformed)
            .and_then(SecretsKey::parse)
            .with_context(|| format!("the secrets key in {KEY_ENV}"))?;
        return Ok(Some((key, Source::Variable)));
    }
    let path = home.root().join(HOME_KEY_FILE);
    match path.exists() {
        true => Ok(Some((read_key_file(&path)?, Source::Home(path)))),
        false => Ok(None),
    }
}

/// Writes `key` to a new file at `path` that only its owner can read;
/// with `replace`, over the file there.
fn write_key_file(path: &Path, key: &SecretsKey, replace: bool) -> anyhow::Result<()> {
    let partial = path.with_extension("partial");
    let target = if replace { partial.as_path() } else { path };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(!replace)
        .create(replace)
        .truncate(replace)
        .mode(0o600)
        .open(target)
        .with_context(|| format!("writing {}", target.display()))?;
    writeln!(file, "{}", key.to_hex())
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", target.display()))?;
    if replace {
        std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

/// What to do when no key is given: the same words at start and rotation.
fn how_to_give(home: &Home) -> String {
    format!(
        "give the key with --secrets-key-file PATH or {KEY_ENV} (64 hex digits): the one the other nodes use; a node that made its own keeps it in its home's {HOME_KEY_FILE} (here {})",
        home.root().join(HOME_KEY_FILE).display()
    )
}

/// `store` unlocked with the key from `source`, or why it cannot be.
async fn unlock(store: Store, key: &SecretsKey, source: &Source) -> anyhow::Result<Store> {
    match store.unlock_secrets(key).await {
        Ok(store) => Ok(store),
        Err(StoreError::SecretsKey(SecretsKeyError::Wrong)) => Err(anyhow::anyhow!(
            "the secrets key from {source} is not the one this database's secrets are sealed with: give every node the same key (the first node's home keeps the one it made in {HOME_KEY_FILE}; after `cinch secrets rotate-key`, the new one)"
        )),
        Err(error) => Err(error).context("checking the secrets key against the database"),
    }
}

/// The store `cinch serve` runs on, given its secrets key: the one the
/// node is given, else its home's, else a new one made in its home when the
/// database has none yet. A database whose secrets are sealed with a key
/// the node lacks, or with another key, is refused. The secret files of
/// older versions in `old_vault` are then imported. The key comes back with
/// the store: the engine seals with it too.
pub(super) async fn unlock_for_serve(
    store: Store,
    home: &Home,
    args: &KeyArgs,
    old_vault: &Path,
) -> anyhow::Result<(Store, SecretsKey)> {
    let (key, source) = match given_key(home, args)? {
        Some(given) => given,
        None => {
            let sealed_before = store
                .has_secrets_key()
                .await
                .context("reading the database's secrets key check")?;
            anyhow::ensure!(
                !sealed_before,
                "this database's secrets are sealed with a key this node was not given: {}",
                how_to_give(home)
            );
            let path = home.root().join(HOME_KEY_FILE);
            let key = SecretsKey::generate()?;
            write_key_file(&path, &key, false)?;
            tracing::warn!(path = %path.display(), "made a new secrets key");
            eprintln!(
                "cinch: made the secrets key {} (mode 0600): keep it with the database's backups; every other node on this database needs the same key (--secrets-key-file or {KEY_ENV})",
                path.display()
            );
            (key, Source::Home(path))
        }
    };
    let store = unlock(store, &key, &source).await?;
    let imported = store
        .import_old_vault(old_vault)
        .await
        .context("importing the secret files of an older version")?;
    if imported.files + imported.orphans > 0 {
        tracing::warn!(
            secrets = imported.secrets,
            files = imported.files,
            orphans = imported.orphans,
            folder = %old_vault.display(),
            "imported the old secret files into the database, sealed, and removed them"
        );
        eprintln!(
            "cinch: moved {} secrets from {} files in {} into the database, sealed, and removed the files ({} files of deleted environments or webhooks removed)",
            imported.secrets,
            imported.files,
            old_vault.display(),
            imported.orphans
        );
    }
    Ok((store, key))
}

/// `cinch secrets rotate-key`'s options.
#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    /// A file holding the new key: 64 hex digits (`openssl rand -hex 32 > FILE`).
    #[arg(long)]
    new_key_file: PathBuf,
    /// The current key.
    #[command(flatten)]
    key: KeyArgs,
    /// cinch's home (default: $CINCH_HOME, else ~/.cinch).
    #[arg(long)]
    home: Option<PathBuf>,
    /// The database, as `cinch serve --database` takes it.
    #[arg(long, env = "CINCH_DATABASE")]
    database: Option<String>,
}

/// Seals every secret of the database again under a new key, in one
/// transaction. A home key file that held the old key gets the new one.
pub fn rotate_key(args: RotateArgs) -> anyhow::Result<ExitCode> {
    let home = super::database::home(args.home)?;
    let new = read_key_file(&args.new_key_file)?;
    super::database::runtime()?.block_on(async {
        let store = super::database::open_store(&home, args.database).await?;
        let Some((old, source)) = given_key(&home, &args.key)? else {
            anyhow::bail!("no secrets key to rotate from: {}", how_to_give(&home));
        };
        let store = unlock(store, &old, &source).await?;
        let count = store
            .rotate_secrets_key(&new)
            .await
            .context("sealing the secrets again under the new key")?;
        println!(
            "cinch: sealed {count} secrets again under the key in {}",
            args.new_key_file.display()
        );
        if let Source::Home(path) = &source {
            write_key_file(path, &new, true)?;
            println!("cinch: {} now holds the new key", path.display());
        }
        println!(
            "cinch: restart every node on this database with the new key (--secrets-key-file or {KEY_ENV}): nodes still holding the old one can no longer open secrets"
        );
        Ok(ExitCode::SUCCESS)
    })
}
