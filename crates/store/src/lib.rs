//! cinch-store: cinch's persistence. It must never depend on an HTTP
//! server (no axum, no hyper server) nor know of sessions' or services'
//! rules: it keeps rows, not API types; it sits on cinch-engine for a turn's
//! types (results, usage, checkpoints) and nothing above. Its types describe
//! themselves to the API's OpenAPI document only through the optional
//! `openapi` feature (utoipa's derives), which the host turns on; the
//! `testing` feature gives other crates' unit tests [`test_store`].
//!
//! Persistence: accounts, members, agents, tokens, environments, tasks,
//! sessions, messages, attachments, code-task calls (with their usage,
//! rolled up), the event types drivers did not know, runs' events,
//! idempotency keys and secrets (sealed, see [`sealing`]): in a SQLite file in cinch's home (the default, one
//! machine), or in PostgreSQL (several nodes over one database).
//!
//! The schema (`crates/store/migrations/` for SQLite, `migrations/postgres/`
//! beside it) and every query are plain SQL with TEXT ids, TEXT timestamps
//! and `$n` parameters, so that each query is written once and compiled for
//! both backends ([`on_pool!`]); the few fragments that differ are in
//! [`Dialect`].

mod accounts;
pub mod approval_policy;
mod approvals;
mod attachments;
mod calls;
mod environments;
mod event_log;
mod events;
mod idempotency;
mod ids;
mod known_webhooks;
mod leases;
mod lock_wait;
mod messages;
mod migrations;
mod nodes;
mod notify;
mod old_vault;
mod page_cache;
mod pg_readers;
mod readers;
mod rows;
mod sealing;
mod secrets;
mod sessions;
mod slots;
mod tasks;
mod tokens;
mod turn_end;
mod unavailable;
mod unknown_events;
mod usage;
mod webhooks;
mod writer;

use std::path::Path;
use std::str::FromStr as _;
use std::sync::Arc;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

pub use accounts::{Account, Agent, AgentSettings, Member};
pub use approvals::{Approval, ApprovalFilter, ApprovalStatus, Decided, NewApproval};
pub use attachments::{Attachment, AttachmentStatus, NewAttachment};
pub use calls::Call;
pub use cinch_engine::sealing::{SecretsKey, SecretsKeyError};
pub use environments::{Environment, EnvironmentPatch, NewEnvironment};
pub use event_log::{EventLog, SealedEvents};
pub use events::{NewEvent, RunKey, StoredEvent};
pub use idempotency::KeyState;
pub use ids::{
    AccountId, AgentId, ApprovalId, AttachmentId, EnvironmentId, MessageId, SessionId, TaskId,
    WebhookId,
};
pub use leases::{Claim, ClaimedWait, Expiry, Lease, SessionRef, TakenFrom};
pub use messages::{Message, MessageKind, RevertView, TurnOutcome, TurnState, TurnView};
pub use notify::{Listener, Notice, SessionWake};
pub use secrets::Imported;
pub use sessions::{
    CloseReason, ForkMode, ForkOrigin, IdleSession, NewSession, RebuiltFrom, Session, SessionStatus,
};
pub use tasks::{NewTask, Task};
pub use tokens::{Principal, TokenFor, TokenInfo, TokenOwner};
pub use turn_end::{KeptTurnEnd, TurnEnd};
pub use unknown_events::{SeenCliVersion, SeenUnknown};
pub use usage::{UsageGroup, UsageRow, UsageTotals};
pub use webhooks::{Attempt, Delivery, DeliveryState, DueDelivery, Webhook};

/// The database file's name in cinch's home.
pub const DATABASE_FILE: &str = "cinch.db";

/// What can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database failed or refused a statement.
    #[error("database: {0}")]
    Database(sqlx::Error),
    /// The database cannot answer now (see [`unavailable`]); a retry may
    /// succeed once it is back.
    #[error("the database cannot answer: {0}")]
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// The schema could not be brought up to date.
    #[error("migrating the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A name that must be unique in its account is taken.
    #[error("{0}")]
    Taken(String),
    /// What a command named does not exist.
    #[error("{0}")]
    Missing(String),
    /// The secrets key is missing or wrong, or a secret does not open.
    #[error(transparent)]
    SecretsKey(cinch_engine::sealing::SecretsKeyError),
    /// The secret files of older versions could not be imported.
    #[error("importing the old secret files: {0}")]
    OldVault(String),
    /// A statement on a SQLite store's own connections failed.
    #[error("database: {0}")]
    Direct(rusqlite::Error),
    /// The run events' log (see [`event_log`]) could not be written or read.
    #[error("the run events' log: {0}")]
    EventLog(std::io::Error),
    /// A thread of the store's own could not be started.
    #[error("starting a thread of the database's: {0}")]
    Spawn(std::io::Error),
    /// A stored JSON column could not be read back.
    #[error("a stored value is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// The longest a PostgreSQL statement waits for a connection, a new one
/// included: past it the database is taken as unable to answer (stopped,
/// unreachable, or every connection busy), and the caller is told so at
/// once rather than after sqlx's 30 seconds of retries.
const CONNECTION_WAIT: std::time::Duration = std::time::Duration::from_millis(1500);

/// What a commit of the store's pooled SQLite connections does: wakes who
/// waits for the write lock, and copies the log itself past 8,192 pages of
/// 4 KiB (32 MiB of log at most while nothing else copies it).
///
/// The events writer's checkpointer copies the log every second while
/// events are stored (`writer.rs`). At SQLite's default of 1,000 pages,
/// which a busy second of events passes, every commit of these connections
/// copied the log itself first, with an fsync, in the request that wrote:
/// 5% of the server's CPU while 1,000 sessions started.
static POOL_ON_COMMIT: lock_wait::OnCommit = lock_wait::OnCommit {
    releases: &lock_wait::RELEASES,
    checkpoint_at: Some(8_192),
};

/// How long a node starting waits for its PostgreSQL server to take
/// connections (one started beside it may still be starting).
const START_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// Connects once to the server `options` name, again and again for up to
/// [`START_WAIT`] while it cannot answer yet.
async fn wait_for_server(options: &PgConnectOptions) -> Result<()> {
    use sqlx::{ConnectOptions as _, Connection as _};
    let deadline = tokio::time::Instant::now() + START_WAIT;
    loop {
        match options.connect().await.map_err(StoreError::from) {
            Ok(connection) => return Ok(connection.close().await?),
            Err(StoreError::Unavailable(error)) if tokio::time::Instant::now() < deadline => {
                tracing::info!("waiting for PostgreSQL: {error}");
                tokio::time::sleep(std::time::Duration::from_millis(250)).await;
            }
            Err(error) => return Err(error),
        }
    }
}

/// Indexes the run events logs that processes now gone left, so that
/// `run_events` holds every event shown before.
async fn index_left_over(event_log: &EventLog) -> Result<()> {
    let event_log = event_log.clone();
    let indexing = tokio::task::spawn_blocking(move || {
        for log in event_log.left_over()? {
            let events = event_log.index(&log)?;
            tracing::info!(
                events,
                "indexed the run events a stopped server left in its log"
            );
        }
        Ok(())
    });
    indexing
        .await
        .map_err(|error| StoreError::Unavailable(Box::new(error)))?
}

/// The result of a store operation.
pub type Result<T> = std::result::Result<T, StoreError>;

/// The database: a pool of connections, migrated.
#[derive(Clone)]
pub struct Store {
    pool: Pool,
    /// The key secrets are sealed with, once given ([`Store::unlock_secrets`]).
    secrets: Option<Arc<secrets::Unlocked>>,
    tokens: std::sync::Arc<tokens::TokenCache>,
    pages: std::sync::Arc<page_cache::PageCache>,
    /// On SQLite, the accounts' webhooks as last read.
    known_webhooks: Arc<known_webhooks::KnownWebhooks>,
    /// The first account, once there is one: it stays the first (accounts
    /// are never deleted), and every session's boot asks.
    first_account: Arc<std::sync::OnceLock<AccountId>>,
    /// The connections of the store's own for the busiest reads.
    readers: Readers,
    /// A SQLite store's connection for the run events writer (see [`writer`]).
    writer: Option<std::sync::Arc<writer::Writer>>,
    /// A SQLite store's log of the newest run events (see [`event_log`]).
    event_log: Option<EventLog>,
}

/// Connections of the store's own, outside sqlx's pool, for the reads that
/// are one query: on SQLite (see [`readers`]) or on PostgreSQL (see
/// [`pg_readers`]).
#[derive(Clone)]
enum Readers {
    Sqlite(Arc<readers::SqliteReaders>),
    Postgres(Arc<pg_readers::PgReaders>),
}

/// The connections behind a store: one backend or the other, chosen when
/// it opens and invisible outside this module.
#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// Runs `$body` with `$pool` bound to the store's pool, whichever backend
/// it is: the body (a query written once) is compiled once per backend, each
/// with its own driver's types, so nothing is converted at run time.
macro_rules! on_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.pool {
            $crate::Pool::Sqlite($pool) => $body,
            $crate::Pool::Postgres($pool) => $body,
        }
    };
}
use on_pool;

/// The SQL that differs between the backends; every other statement is
/// the same text on both.
#[derive(Debug)]
struct Dialect {
    /// Opens a transaction that will write. SQLite takes its write lock at
    /// once: a read that turns into a write fails in WAL mode when another
    /// writer went in between. PostgreSQL locks rows as it goes.
    begin_write: &'static str,
    /// Ends a SELECT whose row the transaction goes on to change: other
    /// nodes' transactions wait for it on PostgreSQL; SQLite's write lock
    /// already holds every row.
    for_update: &'static str,
    /// Ends a SELECT of a row the transaction relies on without changing
    /// it: a transaction changing it waits on PostgreSQL.
    for_share: &'static str,
    /// Run in a writing transaction, fails when the database takes no
    /// writes (a PostgreSQL standby); SQLite's write lock already tells.
    check_writable: Option<&'static str>,
    /// Ends a SELECT of session leases to change, skipping rows another
    /// transaction holds: PostgreSQL's nodes claim work side by side;
    /// SQLite has one writer.
    skip_locked: &'static str,
}

const SQLITE: Dialect = Dialect {
    begin_write: "BEGIN IMMEDIATE",
    for_update: "",
    for_share: "",
    check_writable: None,
    skip_locked: "",
};

const POSTGRES: Dialect = Dialect {
    begin_write: "BEGIN",
    for_update: " FOR UPDATE",
    for_share: " FOR SHARE",
    check_writable: Some("SET TRANSACTION READ WRITE"),
    skip_locked: " FOR UPDATE OF l SKIP LOCKED",
};

/// Which backend a store runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    Postgres,
}

/// One value per backend: the SQL text of a query that differs.
struct PerBackend<T> {
    sqlite: T,
    postgres: T,
}

impl<T> PerBackend<T> {
    /// The same value on both backends.
    const fn same(value: T) -> Self
    where
        T: Copy,
    {
        Self {
            sqlite: value,
            postgres: value,
        }
    }

    fn get(&self, backend: Backend) -> &T {
        match backend {
            Backend::Sqlite => &self.sqlite,
            Backend::Postgres => &self.postgres,
        }
    }
}

impl Store {
    /// Opens (creating when missing) the SQLite file at `path` in WAL mode
    /// and applies the migrations.
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
            // A connection to a file has no other end to lose: a ping
            // before each use would only cost two hops to its thread.
            .test_before_acquire(false)
            // A COMMIT that fails with a full disk leaves sqlx counting a
            // transaction that SQLite has already rolled back, and the
            // rollback it then asks for fails: that connection's every
            // later write was refused ("begin_with at non-zero transaction
            // depth", a 500) after the disk had room again. Such a one is
            // closed; a new one takes its place.
            .before_acquire(|connection, _| {
                Box::pin(async move {
                    use sqlx::Connection as _;
                    Ok(!connection.is_in_transaction())
                })
            })
            .after_connect(|connection, _| {
                Box::pin(async move {
                    let mut handle = connection.lock_handle().await?;
                    lock_wait::wait_when_busy(handle.as_raw_handle(), &lock_wait::RELEASES);
                    lock_wait::on_commit(handle.as_raw_handle(), &POOL_ON_COMMIT);
                    Ok(())
                })
            })
            .connect_with(options)
            .await?;
        migrations::sqlite().await?.run(&pool).await?;
        let readers = Readers::Sqlite(Arc::new(readers::SqliteReaders::of(path)));
        let writer = Arc::new(writer::Writer::of(path));
        let event_log = EventLog::in_folder(EventLog::folder_of(path), writer.clone());
        index_left_over(&event_log).await?;
        Ok(Self {
            writer: Some(writer),
            event_log: Some(event_log),
            ..Self::with_pool(Pool::Sqlite(pool), readers)
        })
    }

    /// Connects to the PostgreSQL database at `url` (`postgres://user:password@host/db`)
    /// and applies the migrations, as the user the URL names: the database's
    /// owner needs no other rights. Nodes that start together take turns
    /// (the migrations hold an advisory lock).
    pub async fn open_postgres(url: &str) -> Result<Self> {
        let options = PgConnectOptions::from_str(url)?;
        wait_for_server(&options).await?;
        let pool = PgPoolOptions::new()
            .max_connections(16)
            .acquire_timeout(CONNECTION_WAIT)
            .connect_with(options.clone())
            .await?;
        migrations::postgres().await?.run(&pool).await?;
        let readers = Readers::Postgres(Arc::new(pg_readers::PgReaders::of(options)));
        Ok(Self::with_pool(Pool::Postgres(pool), readers))
    }

    fn with_pool(pool: Pool, readers: Readers) -> Self {
        Self {
            pool,
            secrets: None,
            tokens: Default::default(),
            pages: Default::default(),
            known_webhooks: Default::default(),
            first_account: Default::default(),
            readers,
            writer: None,
            event_log: None,
        }
    }

    /// The same store with a page cache of at most `max_bytes` of message
    /// pages (64 MiB unless told); 0 reads every page from the database.
    pub fn with_page_cache(self, max_bytes: usize) -> Self {
        Self {
            pages: std::sync::Arc::new(page_cache::PageCache::holding(max_bytes)),
            ..self
        }
    }

    fn backend(&self) -> Backend {
        match self.pool {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// Whether other nodes may share this store and write it too
    /// (PostgreSQL): what a node keeps in memory of it is then read again
    /// when it is told. A SQLite file has one node.
    pub fn is_shared(&self) -> bool {
        self.backend() == Backend::Postgres
    }

    fn dialect(&self) -> &'static Dialect {
        match self.backend() {
            Backend::Sqlite => &SQLITE,
            Backend::Postgres => &POSTGRES,
        }
    }

    /// The rows `query` reads, its parameters `$1`, `$2`… being `params`
    /// in order: on SQLite through the store's own connections on the
    /// calling thread, without sqlx's hops to its thread (see [`readers`]),
    /// on PostgreSQL through the pool. For reads outside a transaction that
    /// a session's start or end, or a busy listing, makes.
    async fn read_rows<T: Readable>(
        &self,
        query: &PerBackend<&'static str>,
        params: &[Param<'_>],
    ) -> Result<Vec<T>> {
        let sql = *query.get(self.backend());
        if let Readers::Sqlite(readers) = &self.readers {
            return readers.rows(sql, params);
        }
        Ok(on_pool!(self, |pool| {
            let mut query = sqlx::query_as(sql);
            for param in params {
                query = match *param {
                    Param::Text(text) => query.bind(text),
                    Param::Integer(integer) => query.bind(integer),
                };
            }
            query.fetch_all(pool).await
        })?)
    }

    /// The one row, if any, that `query` reads (see [`Store::read_rows`]).
    async fn read_row<T: Readable>(
        &self,
        query: &PerBackend<&'static str>,
        params: &[Param<'_>],
    ) -> Result<Option<T>> {
        Ok(self.read_rows(query, params).await?.pop())
    }
}

/// What a write that reads back what it wrote says when the row is not
/// there (another writer deleted it at once).
fn not_read_back(id: &str) -> StoreError {
    StoreError::Missing(format!("{id} was written but could not be read back"))
}

/// A row [`Store::read_rows`] reads, from either backend.
trait Readable:
    rows::SqliteRow
    + Send
    + Unpin
    + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
    + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
{
}

impl<T> Readable for T where
    T: rows::SqliteRow
        + Send
        + Unpin
        + for<'r> sqlx::FromRow<'r, sqlx::sqlite::SqliteRow>
        + for<'r> sqlx::FromRow<'r, sqlx::postgres::PgRow>
{
}

/// A parameter of a [`Store::read_rows`] query.
#[derive(Debug, Clone, Copy)]
enum Param<'a> {
    Text(&'a str),
    Integer(i64),
}

impl<'a> From<&'a str> for Param<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(text)
    }
}

impl From<i64> for Param<'_> {
    fn from(integer: i64) -> Self {
        Self::Integer(integer)
    }
}

impl rusqlite::ToSql for Param<'_> {
    fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
        match self {
            Self::Text(text) => text.to_sql(),
            Self::Integer(integer) => integer.to_sql(),
        }
    }
}

impl Store {
    /// Whether the database answers and takes writes: opens a writing
    /// transaction (on SQLite, its write lock) and lets go of it, changing
    /// nothing.
    pub async fn ping(&self) -> Result<()> {
        let dialect = self.dialect();
        on_pool!(self, |pool| {
            let mut probe = pool.begin_with(dialect.begin_write).await?;
            if let Some(check) = dialect.check_writable {
                sqlx::query(check).execute(&mut *probe).await?;
            }
            probe.rollback().await
        })?;
        Ok(())
    }
}

pub use cinch_base::hex::random as random_hex;

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

/// Which way a page of a listing runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Direction {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
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

use rows::text_column;

/// Creates the database `name` on the PostgreSQL server `url` names, owned
/// by the URL's user (who needs the CREATEDB right, not a superuser's),
/// and returns the URL of the new database: the test suites give each test
/// a database of its own this way.
pub async fn create_postgres_database(url: &str, name: &str) -> Result<String> {
    use sqlx::Connection as _;
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return Err(StoreError::Missing(format!(
            "{name:?} is not a database name cinch makes: lowercase letters, digits and _"
        )));
    }
    let mut server = sqlx::PgConnection::connect(url).await?;
    sqlx::query(&format!("CREATE DATABASE {name}"))
        .execute(&mut server)
        .await?;
    server.close().await?;
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let server_part = match base.split_once("://") {
        Some((_, rest)) if rest.contains('/') => &base[..base.rfind('/').expect("a slash")],
        _ => base,
    };
    Ok(format!("{server_part}/{name}{query}"))
}

/// Whether `error` is a unique constraint refusing a row.
fn is_unique_violation(error: &sqlx::Error) -> bool {
    matches!(error, sqlx::Error::Database(db) if db.is_unique_violation())
}

/// Stores for the unit tests: a SQLite file in a temporary folder, or, when
/// `CINCH_TEST_DATABASE` names a PostgreSQL server, a database of the test's
/// own there (CI runs the suite both ways).
#[cfg(any(test, feature = "testing"))]
pub async fn test_store() -> (Store, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let store = match std::env::var("CINCH_TEST_DATABASE") {
        Ok(server) if !server.is_empty() => {
            let name = format!("cinch_unit_{}", random_hex(8).unwrap());
            let url = create_postgres_database(&server, &name).await.unwrap();
            Store::open_postgres(&url).await.unwrap()
        }
        _ => Store::open(&dir.path().join(DATABASE_FILE)).await.unwrap(),
    };
    let key = SecretsKey::generate().unwrap();
    (store.unlock_secrets(&key).await.unwrap(), dir)
}

/// A new session in a new account, as its first agent's, for the unit tests.
#[cfg(test)]
async fn test_session(store: &Store) -> Session {
    let (account, _) = store.create_account("acme").await.unwrap();
    let agent = store.agents(&account.id, None, 10).await.unwrap().items[0].clone();
    let task = store
        .create_task(
            &account.id,
            NewTask {
                title: "t".into(),
                environment_id: None,
                idle_timeout_seconds: 600,
                created_by: agent.id.clone(),
                owner: None,
            },
        )
        .await
        .unwrap();
    store
        .create_session(
            &account.id,
            NewSession {
                task_id: task.id,
                agent_id: agent.id,
                title: "s".into(),
                environment_id: None,
                branch_name: None,
                base_branch: None,
                auto_commit: false,
                harness: "claude".into(),
                vendor: "anthropic".into(),
                harness_model: None,
                harness_effort: None,
                fork: None,
            },
        )
        .await
        .unwrap()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_base::timestamp::Timestamp;

    /// A moment reads the text older versions stored, on either backend,
    /// writes that same text, and binds as text that statements compare
    /// with the column.
    #[tokio::test]
    async fn moments_are_the_text_stored_before() {
        let (store, _dir) = test_store().await;
        let (account, _) = store.create_account("acme").await.unwrap();
        let (stored,): (String,) = on_pool!(store, |pool| sqlx::query_as(
            "SELECT created_at FROM accounts WHERE id = $1"
        )
        .bind(&account.id)
        .fetch_one(pool)
        .await)
        .unwrap();
        assert_eq!(stored, account.created_at.to_string());
        assert_eq!(stored.len(), "2026-01-01T00:00:00.000Z".len());

        let old = "2025-06-07T08:09:10.011Z";
        on_pool!(store, |pool| sqlx::query(
            "UPDATE accounts SET created_at = $2 WHERE id = $1"
        )
        .bind(&account.id)
        .bind(old)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))
        .unwrap();
        let read = store.account(&account.id).await.unwrap().unwrap();
        assert_eq!(read.created_at.to_string(), old);
        let earlier = |at: Timestamp| {
            let store = store.clone();
            async move {
                let (count,): (i64,) = on_pool!(store, |pool| sqlx::query_as(
                    "SELECT COUNT(*) FROM accounts WHERE created_at < $1"
                )
                .bind(at)
                .fetch_one(pool)
                .await)
                .unwrap();
                count
            }
        };
        assert_eq!(earlier(read.created_at).await, 0);
        let later = read.created_at + std::time::Duration::from_millis(1);
        assert_eq!(earlier(later).await, 1);
    }

    #[test]
    fn every_sqlite_migration_has_its_postgres_twin() {
        let names = |dir: &str| -> Vec<String> {
            let mut names: Vec<String> = std::fs::read_dir(dir)
                .unwrap()
                .map(|entry| entry.unwrap())
                .filter(|entry| entry.file_type().unwrap().is_file())
                .map(|entry| entry.file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        let sqlite = names(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"));
        let postgres = names(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations/postgres"));
        assert!(sqlite.len() >= 10, "{sqlite:?}");
        assert_eq!(
            sqlite, postgres,
            "a migration needs both backends' versions"
        );
    }

    #[test]
    fn stored_names_are_the_api_names() {
        fn check<T: serde::Serialize + Copy>(all: &[T], name: impl Fn(T) -> &'static str) {
            for variant in all {
                assert_eq!(serde_json::to_value(variant).unwrap(), name(*variant));
            }
        }
        check(&SessionStatus::ALL, SessionStatus::as_str);
        check(&CloseReason::ALL, |reason| reason.as_str());
        check(&MessageKind::ALL, |kind| kind.as_str());
        check(&RebuiltFrom::ALL, RebuiltFrom::as_str);
        check(&ForkMode::ALL, ForkMode::as_str);
        check(&DeliveryState::ALL, |state| state.as_str());
        check(&AttachmentStatus::ALL, AttachmentStatus::as_str);
    }

    #[tokio::test]
    async fn migrates_twice_on_either_backend() {
        let (store, _dir) = test_store().await;
        let again = match &store.pool {
            Pool::Sqlite(pool) => migrations::sqlite().await.unwrap().run(pool).await,
            Pool::Postgres(pool) => migrations::postgres().await.unwrap().run(pool).await,
        };
        again.unwrap();
        store.ping().await.unwrap();
    }

    #[tokio::test]
    async fn opens_in_wal_mode_and_migrates_twice() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DATABASE_FILE);
        let store = Store::open(&path).await.unwrap();
        let Pool::Sqlite(pool) = &store.pool else {
            unreachable!("a file is SQLite")
        };
        let (mode,): (String,) = sqlx::query_as("PRAGMA journal_mode")
            .fetch_one(pool)
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
    }
}
