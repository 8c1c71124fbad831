//! Where a command finds cinch's home and its store: the home directory,
//! the database it names (a SQLite file or a PostgreSQL URL), and the async
//! runtime that opens it. Shared by `serve`, `token`, `account`, `secrets`
//! and `drivers`.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

use cinch_engine::home::Home;
use cinch_store::{DATABASE_FILE, Store};

pub(super) fn home(dir: Option<PathBuf>) -> anyhow::Result<Home> {
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

/// The store of `home`: the database `--database` names, else the one
/// `[serve] database` in its config.toml names, else its SQLite file.
pub(super) async fn open_store(home: &Home, database: Option<String>) -> anyhow::Result<Store> {
    open(&configured(home, database)?).await
}

/// The store [`open_store`] opens, or `None` when it is a SQLite file that
/// does not exist (yet).
pub(super) async fn open_existing_store(
    home: &Home,
    database: Option<String>,
) -> anyhow::Result<Option<Store>> {
    match configured(home, database)? {
        Database::Sqlite(path) if !path.exists() => Ok(None),
        database => open(&database).await.map(Some),
    }
}

/// The database `--database` names, else `[serve] database` in the home's
/// config.toml, else the home's SQLite file.
fn configured(home: &Home, database: Option<String>) -> anyhow::Result<Database> {
    let config = cinch_engine::tools::load_config(&home.root().join("config.toml"))?;
    Database::choose(home, database.or(config.serve.database))
}

async fn open_database(path: &Path) -> anyhow::Result<Store> {
    Store::open(path)
        .await
        .with_context(|| format!("opening {}", path.display()))
}

/// Where the store is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Database {
    /// A SQLite file.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by its URL (which may hold a password).
    Postgres(String),
}

impl Database {
    /// Where versions before secrets were kept in the database kept a
    /// node's secret files: beside a SQLite file, in the home otherwise.
    pub(super) fn old_vault(&self, home: &Home) -> PathBuf {
        match self {
            Self::Sqlite(path) => path.parent().unwrap_or(Path::new(".")).join("secrets"),
            Self::Postgres(_) => home.root().join("secrets"),
        }
    }
}

impl Database {
    /// The database a `--database` value names; the home's SQLite file
    /// without one.
    pub(super) fn choose(home: &Home, value: Option<String>) -> anyhow::Result<Self> {
        let Some(value) = value else {
            return Ok(Self::Sqlite(home.root().join(DATABASE_FILE)));
        };
        if value.starts_with("postgres://") || value.starts_with("postgresql://") {
            return Ok(Self::Postgres(value));
        }
        let path = value
            .strip_prefix("sqlite://")
            .or_else(|| value.strip_prefix("sqlite:"))
            .unwrap_or(&value);
        anyhow::ensure!(
            !path.is_empty(),
            "database: give a SQLite file's path, or a postgres://user:password@host/db URL"
        );
        Ok(Self::Sqlite(PathBuf::from(path)))
    }
}

/// Opens the store in `database`.
pub(super) async fn open(database: &Database) -> anyhow::Result<Store> {
    match database {
        Database::Sqlite(path) => open_database(path).await,
        Database::Postgres(url) => Store::open_postgres(url)
            .await
            .with_context(|| format!("opening {}", without_password(url))),
    }
}

/// `url` with its password, if any, left out: for messages and logs.
fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let Some((user_info, host)) = rest.rsplit_once('@') else {
        return url.to_owned();
    };
    match user_info.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_values_name_a_sqlite_file_or_a_postgres_url() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().to_owned()).unwrap();
        let choose = |value: Option<&str>| Database::choose(&home, value.map(str::to_owned));
        assert_eq!(
            choose(None).unwrap(),
            Database::Sqlite(dir.path().join(DATABASE_FILE))
        );
        assert_eq!(
            choose(Some("sqlite:/srv/cinch.db")).unwrap(),
            Database::Sqlite("/srv/cinch.db".into())
        );
        let url = "postgres://cinch:pw@db.internal/cinch";
        assert_eq!(
            choose(Some(url)).unwrap(),
            Database::Postgres(url.to_owned())
        );
        let refused = choose(Some("sqlite:")).unwrap_err().to_string();
        assert!(refused.contains("postgres://"), "{refused}");
    }

    #[test]
    fn a_postgres_url_is_shown_without_its_password() {
        assert_eq!(
            without_password("postgres://cinch:s3cret@db:5432/cinch?sslmode=require"),
            "postgres://cinch:***@db:5432/cinch?sslmode=require"
        );
        assert_eq!(
            without_password("postgres://cinch@db/cinch"),
            "postgres://cinch@db/cinch"
        );
    }
}
