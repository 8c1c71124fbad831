//! Persistence: accounts, members, agents, tokens, environments, tasks,
//! sessions, messages, attachments, code-task calls (with their usage,
//! rolled up), the event types drivers did not know, runs' events and idempotency keys, in a SQLite file in cinch's home.
//!
//! The schema (`host/migrations/`) and every query are plain SQL with TEXT ids,
//! TEXT timestamps and `$n` parameters, so that a Postgres pool can follow
//! with the same statements.

mod accounts;
mod attachments;
mod calls;
mod environments;
mod events;
mod idempotency;
mod messages;
mod page_cache;
mod sessions;
mod tasks;
mod tokens;
mod unknown_events;
mod usage;
mod vault;
mod webhooks;

use std::path::Path;
use std::str::FromStr as _;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

pub use accounts::{Account, Agent, AgentSettings, Member};
pub use attachments::{Attachment, NewAttachment};
pub use calls::Call;
pub use environments::{Environment, EnvironmentPatch, NewEnvironment};
pub use events::{NewEvent, StoredEvent};
pub use idempotency::KeyState;
pub use messages::{Direction, Message, MessageKind};
pub use sessions::{CloseReason, IdleSession, NewSession, Session, SessionStatus};
pub use tasks::{NewTask, Task, TaskStatus};
pub use tokens::{Principal, TokenFor, TokenOwner};
pub use unknown_events::SeenUnknown;
pub use usage::{UsageGroup, UsageRow, UsageTotals};
pub use webhooks::{Attempt, Delivery, DeliveryState, DueDelivery, Webhook};

/// The database file's name in cinch's home.
pub const DATABASE_FILE: &str = "cinch.db";

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed or refused a statement.
    #[error("database: {0}")]
    Database(#[from] sqlx::Error),
    /// The schema could not be brought up to date.
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A name that must be unique in its account is taken.
    #[error("{0}")]
    Taken(String),
    /// What a command named does not exist.
    #[error("{0}")]
    Missing(String),
    /// The secrets' folder could not be read or written.
    #[error("secrets: {0}")]
    Vault(String),
    /// A stored JSON column could not be read back.
    #[error("a stored value is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The result of a store operation.
pub type Result<T> = std::result::Result<T, StoreError>;

/// The database: a pool of connections, migrated.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
    vault: vault::Vault,
    tokens: std::sync::Arc<tokens::TokenCache>,
    pages: std::sync::Arc<page_cache::PageCache>,
}

impl Store {
    /// Opens (creating when missing) the SQLite file at `path` in WAL mode
    /// and applies the migrations; environments' secrets are kept in the
    /// private folder `secrets` beside it, never in the database.
    pub async fn open(path: &Path) -> Result<Self> {
        let options = SqliteConnectOptions::from_str("sqlite:")?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // In WAL mode NORMAL loses nothing when the process is killed (only
            // on power loss), which is what an acknowledged write must survive.
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await?;
        sqlx::migrate!("./migrations").run(&pool).await?;
        let vault = vault::Vault::open(vault::beside(path))?;
        Ok(Self {
            pool,
            vault,
            tokens: Default::default(),
            pages: Default::default(),
        })
    }
}

impl Store {
    /// Whether the database answers and takes writes: takes its write lock
    /// and lets go of it, changing nothing.
    pub async fn ping(&self) -> Result<()> {
        let probe = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        probe.rollback().await?;
        Ok(())
    }
}

/// Now, as stored: RFC 3339 in UTC with milliseconds, so text order is time order.
pub fn now() -> String {
    format_time(time::OffsetDateTime::now_utc())
}

/// `at` as stored.
pub fn format_time(at: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}

pub use crate::hex::random as random_hex;

/// A new id: `prefix_`, then a stamp that grows with every id this process
/// makes (the time in milliseconds, shifted, plus a count within the
/// millisecond: ids sort by creation, which cursor pagination relies on),
/// then randomness so that other processes' ids do not collide.
pub fn new_id(prefix: &str) -> Result<String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static LAST: AtomicU64 = AtomicU64::new(0);
    let millis = (time::OffsetDateTime::now_utc().unix_timestamp_nanos() / 1_000_000) as u64;
    let mut last = LAST.load(Ordering::Relaxed);
    let stamp = loop {
        let next = (millis << 12).max(last + 1);
        match LAST.compare_exchange_weak(last, next, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => break next,
            Err(seen) => last = seen,
        }
    };
    let random = random_hex(6).map_err(|error| StoreError::Database(error.into()))?;
    Ok(format!("{prefix}_{stamp:015x}{random}"))
}

/// Whether `text` has the shape of an id [`new_id`] makes.
pub fn is_id(text: &str) -> bool {
    text.split_once('_').is_some_and(|(prefix, rest)| {
        !prefix.is_empty()
            && prefix.bytes().all(|b| b.is_ascii_lowercase())
            && rest.len() == 27
            && rest
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// One page of a listing, oldest first, and where the next one starts.
#[derive(Debug, Clone)]
pub struct Page<T> {
    /// The items.
    pub items: Vec<T>,
    /// The id to pass as the next page's cursor, when there are more.
    pub next_cursor: Option<String>,
}

impl<T> Page<T> {
    /// A page of `limit` items out of `rows` (fetched with one extra row to
    /// tell whether there are more), its cursor the last item's id.
    fn from_rows(mut rows: Vec<T>, limit: u32, id: impl Fn(&T) -> &str) -> Self {
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_cursor = more
            .then(|| rows.last().map(|row| id(row).to_owned()))
            .flatten();
        Self {
            items: rows,
            next_cursor,
        }
    }
}

/// Whether `error` is a unique constraint refusing a row.
fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn opens_in_wal_mode_and_migrates_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DATABASE_FILE);
        let store = Store::open(&path).await.unwrap();
        let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
            .fetch_one(&store.pool)
            .await
            .unwrap();
        assert_eq!(mode, "wal");
        drop(store);
        Store::open(&path).await.unwrap();
    }

    #[test]
    fn ids_sort_by_creation_and_times_by_text() {
        let first = new_id("env").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = new_id("env").unwrap();
        assert!(first < second && first.starts_with("env_"));
        assert!(is_id(&first) && !is_id("env_zz") && !is_id(&first.replace("env_", "_")));
        let burst: Vec<String> = (0..1000).map(|_| new_id("msg").unwrap()).collect();
        assert!(
            burst.windows(2).all(|pair| pair[0] < pair[1]),
            "ids in one millisecond sort too"
        );
        assert_eq!(now().len(), "2026-01-01T00:00:00.000Z".len());
    }
}
