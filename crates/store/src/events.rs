//! Runs' live events, kept so that a stream resumes across restarts.

use cinch_base::timestamp::Timestamp;
use sqlx::Row as _;

use super::{AccountId, PerBackend, Readers, Result, Store, StoreError, on_pool};

super::rows::row_struct! {
    /// One stored event of a run.
    #[derive(Debug, Clone)]
    pub struct StoredEvent {
        /// Its number in the run, from 1.
        pub seq: i64,
        /// Its SSE event name.
        pub name: String,
        /// Its data, JSON.
        pub data: String,
    }
}

/// The account's (`$1`) run's (`$2`) newest `$3` events, newest first.
const NEWEST: PerBackend<&str> = PerBackend::same(
    "SELECT seq, name, data FROM run_events \
     WHERE account_id = $1 AND run_id = $2 ORDER BY seq DESC LIMIT $3",
);

/// An event to store.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    /// Its run's account.
    pub account_id: &'a AccountId,
    /// Its run.
    pub run_id: &'a str,
    /// Its number in the run.
    pub seq: i64,
    /// Its SSE event name.
    pub name: &'a str,
    /// Its data, JSON.
    pub data: &'a str,
}

impl Store {
    /// Appends `events`, all or none: in one statement, so one trip to the
    /// database however many there are. On SQLite it writes on the calling
    /// thread, through the store's own connection.
    pub async fn append_events(&self, events: &[NewEvent<'_>]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let created_at = Timestamp::now();
        if let Some(writer) = &self.writer {
            let created_at = created_at.to_string();
            let rows = events.iter().map(|event| (event, created_at.as_str()));
            return writer.write(|transaction| insert_on(transaction, Duplicates::Refused, rows));
        }
        let statement = insert_events(events.len());
        on_pool!(self, |pool| {
            let mut insert = sqlx::query(&statement);
            for event in events {
                insert = insert
                    .bind(event.account_id)
                    .bind(event.run_id)
                    .bind(event.seq)
                    .bind(event.name)
                    .bind(event.data)
                    .bind(created_at);
            }
            insert.execute(pool).await?;
            Ok(())
        })
    }

    /// A SQLite store's log of the newest run events (see
    /// [`super::event_log`]), whose calls block the calling thread: its
    /// writer should be a thread of its own. None on PostgreSQL, where
    /// every node writes `run_events` itself.
    pub fn event_log(&self) -> Option<&super::EventLog> {
        self.event_log.as_ref()
    }

    /// Every stored event of the account's run, in order.
    pub async fn events(&self, account_id: &AccountId, run_id: &str) -> Result<Vec<StoredEvent>> {
        self.events_after(account_id, run_id, 0).await
    }
}

/// What an insert does with an event stored already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Duplicates {
    /// Fails.
    Refused,
    /// Leaves it as it is.
    Ignored,
}

/// Inserts `rows` (an event and when it was made) in one transaction of a
/// SQLite store's own connection.
pub(super) fn insert_on<'a>(
    transaction: &rusqlite::Transaction<'_>,
    duplicates: Duplicates,
    rows: impl IntoIterator<Item = (&'a NewEvent<'a>, &'a str)>,
) -> rusqlite::Result<()> {
    let statement = match duplicates {
        Duplicates::Refused => insert_events(1),
        Duplicates::Ignored => insert_events(1).replacen("INSERT", "INSERT OR IGNORE", 1),
    };
    let mut insert = transaction.prepare_cached(&statement)?;
    for (event, created_at) in rows {
        insert.execute(rusqlite::params![
            event.account_id,
            event.run_id,
            event.seq,
            event.name,
            event.data,
            created_at,
        ])?;
    }
    Ok(())
}

/// The statement inserting `rows` events, six parameters each (account,
/// run, number, name, data, creation time).
fn insert_events(rows: usize) -> String {
    use std::fmt::Write as _;
    let mut statement = String::from(
        "INSERT INTO run_events (account_id, run_id, seq, name, data, created_at) VALUES ",
    );
    for row in 0..rows {
        let n = row * 6;
        let separator = if row > 0 { ", " } else { "" };
        let _ = write!(
            statement,
            "{separator}(${}, ${}, ${}, ${}, ${}, ${})",
            n + 1,
            n + 2,
            n + 3,
            n + 4,
            n + 5,
            n + 6
        );
    }
    statement
}

/// The PostgreSQL channel on which a node tells the others that a run has
/// new events: the payload is a [`RunKey`] as JSON.
pub(crate) const RUN_EVENTS_CHANNEL: &str = "cinch_run_events";

/// Which run a notice is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct RunKey {
    /// The run's account.
    pub account_id: AccountId,
    /// The run (a session's run is the session's id).
    pub run_id: String,
}

/// Serialises the writers of one run on PostgreSQL: the first key of a
/// two-key advisory lock (the second is a hash of the run), a space apart
/// from the one-key locks the migrations take.
const RUN_EVENTS_LOCK: i32 = 0x6576_7473;

impl Store {
    /// Appends `events` (name, JSON data) to the run, numbered after its last
    /// stored event, all or none, and returns the last number given. For a
    /// database several nodes write: on PostgreSQL one writer of a run at a
    /// time holds a lock until it commits, so numbers are committed in their
    /// order (a reader that sees one sees every one before it), and the other
    /// nodes are told on [`RUN_EVENTS_CHANNEL`] when it commits.
    pub async fn append_numbered_events(
        &self,
        run: &RunKey,
        events: &[(&str, &str)],
    ) -> Result<i64> {
        let created_at = Timestamp::now();
        let notice = serde_json::to_string(run)?;
        let dialect = self.dialect();
        let postgres = self.backend() == super::Backend::Postgres;
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_with(dialect.begin_write).await?;
            if postgres {
                sqlx::query("SELECT pg_advisory_xact_lock($1, hashtext($2 || '/' || $3))")
                    .bind(RUN_EVENTS_LOCK)
                    .bind(&run.account_id)
                    .bind(&run.run_id)
                    .execute(&mut *transaction)
                    .await?;
            }
            let (last,): (i64,) = sqlx::query_as(
                "SELECT COALESCE(MAX(seq), 0) FROM run_events \
                 WHERE account_id = $1 AND run_id = $2",
            )
            .bind(&run.account_id)
            .bind(&run.run_id)
            .fetch_one(&mut *transaction)
            .await?;
            let statement = insert_events(events.len());
            let mut insert = sqlx::query(&statement);
            let mut seq = last;
            for (name, data) in events {
                seq += 1;
                insert = insert
                    .bind(&run.account_id)
                    .bind(&run.run_id)
                    .bind(seq)
                    .bind(*name)
                    .bind(data)
                    .bind(created_at);
            }
            if !events.is_empty() {
                insert.execute(&mut *transaction).await?;
            }
            if postgres {
                // Delivered when the transaction commits, not before.
                sqlx::query("SELECT pg_notify($1, $2)")
                    .bind(RUN_EVENTS_CHANNEL)
                    .bind(&notice)
                    .execute(&mut *transaction)
                    .await?;
            }
            transaction.commit().await?;
            Ok(seq)
        })
    }

    /// The stored events of the account's run numbered after `after` and
    /// up to `through`, in order: a page of its history for the streams
    /// that come late. Read on the store's own connections (on SQLite on a
    /// thread of its own), never on the pool that requests and the health
    /// probe use, so that many streams reading history starve neither.
    pub async fn history(
        &self,
        account_id: &AccountId,
        run_id: &str,
        after: i64,
        through: i64,
    ) -> Result<Vec<StoredEvent>> {
        const PAGE: &str = "SELECT seq, name, data FROM run_events \
             WHERE account_id = $1 AND run_id = $2 AND seq > $3 AND seq <= $4 ORDER BY seq";
        match &self.readers {
            Readers::Sqlite(readers) => {
                let readers = readers.clone();
                let (account_id, run_id) = (account_id.as_str().to_owned(), run_id.to_owned());
                let read = tokio::task::spawn_blocking(move || {
                    readers.read(|connection| {
                        let mut statement = connection.prepare_cached(PAGE)?;
                        let rows = statement.query_map(
                            rusqlite::params![account_id, run_id, after, through],
                            |row| {
                                Ok(StoredEvent {
                                    seq: row.get(0)?,
                                    name: row.get(1)?,
                                    data: row.get(2)?,
                                })
                            },
                        )?;
                        rows.collect::<rusqlite::Result<Vec<_>>>()
                    })
                });
                // Only cancelled while the runtime shuts down.
                read.await
                    .map_err(|error| StoreError::Unavailable(Box::new(error)))?
            }
            Readers::Postgres(readers) => {
                let rows = readers
                    .fetch_all(|| {
                        sqlx::query(PAGE)
                            .bind(account_id)
                            .bind(run_id)
                            .bind(after)
                            .bind(through)
                    })
                    .await?;
                rows.iter()
                    .map(|row| {
                        Ok(StoredEvent {
                            seq: row.try_get(0)?,
                            name: row.try_get(1)?,
                            data: row.try_get(2)?,
                        })
                    })
                    .collect()
            }
        }
    }

    /// The newest `limit` stored events of the account's run, in order.
    pub async fn newest_events(
        &self,
        account_id: &AccountId,
        run_id: &str,
        limit: usize,
    ) -> Result<Vec<StoredEvent>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Read as each stream of a run opens.
        let mut newest: Vec<StoredEvent> = self
            .read_rows(
                &NEWEST,
                &[account_id.as_str().into(), run_id.into(), limit.into()],
            )
            .await?;
        newest.reverse();
        Ok(newest)
    }

    /// The stored events of the account's run after number `after`, in order.
    pub async fn events_after(
        &self,
        account_id: &AccountId,
        run_id: &str,
        after: i64,
    ) -> Result<Vec<StoredEvent>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT seq, name, data FROM run_events \
             WHERE account_id = $1 AND run_id = $2 AND seq > $3 ORDER BY seq",
        )
        .bind(account_id)
        .bind(run_id)
        .bind(after)
        .fetch_all(pool)
        .await)?)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;

    #[tokio::test]
    async fn a_write_waiting_for_the_lock_takes_it_soon_after_it_is_let_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::DATABASE_FILE);
        let store = Store::open(&path).await.unwrap();
        // SQLite's own wait would try again 178 ms after it began, and
        // next at 228 ms.
        const HELD: Duration = Duration::from_millis(200);
        let hold = |path: &std::path::Path| {
            let holder = rusqlite::Connection::open(path).unwrap();
            holder.execute_batch("BEGIN IMMEDIATE").unwrap();
            std::thread::spawn(move || {
                std::thread::sleep(HELD);
                holder.execute_batch("COMMIT").unwrap();
            })
        };
        // A write of the requests' pool, then one of the store's own connections.
        let started = Instant::now();
        let held = hold(&path);
        store.create_account("waits").await.unwrap();
        let pool_waited = started.elapsed();
        held.join().unwrap();
        let own =
            super::super::readers::connect(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE)
                .unwrap();
        let started = Instant::now();
        let held = hold(&path);
        own.execute_batch("BEGIN IMMEDIATE; COMMIT").unwrap();
        let own_waited = started.elapsed();
        held.join().unwrap();
        for waited in [pool_waited, own_waited] {
            assert!(
                waited >= HELD && waited < Duration::from_millis(220),
                "waited {pool_waited:?} (pool) and {own_waited:?} (own) for a lock held {HELD:?}"
            );
        }
    }

    #[tokio::test]
    async fn storing_events_for_long_keeps_the_log_checkpointed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::DATABASE_FILE);
        let log = || std::fs::metadata(path.with_extension("db-wal")).map_or(0, |meta| meta.len());
        let store = Store::open(&path).await.unwrap();
        let (account, _) = store.create_account("events").await.unwrap();
        let account_id = account.id.clone();
        // An event a millisecond, stored as the run events writer does, for
        // more than twice as long as the log is due to start over after.
        let started = Instant::now();
        let (mut commits, mut early) = (0u64, None);
        while started.elapsed() < Duration::from_secs(12) {
            commits += 1;
            let event = NewEvent {
                account_id: &account_id,
                run_id: "run",
                seq: commits as i64,
                name: "tool.progress",
                data: r#"{"lines":["a line"]}"#,
            };
            store.append_events(&[event]).await.unwrap();
            store.event_log().unwrap().checkpoint_if_due();
            if early.is_none() && started.elapsed() > Duration::from_millis(400) {
                // What a commit adds to the log, before any checkpoint.
                early = Some(log() as f64 / commits as f64);
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(
            store.events(&account_id, "run").await.unwrap().len() as u64,
            commits
        );
        let unchecked = early.unwrap() * commits as f64;
        assert!(
            (log() as f64) < unchecked * 0.6,
            "the log holds {} bytes after {commits} commits, as if never checkpointed ({unchecked:.0})",
            log()
        );
    }

    #[tokio::test]
    async fn a_request_write_leaves_a_busy_log_to_the_events_checkpointer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(super::super::DATABASE_FILE);
        let database = || std::fs::metadata(&path).unwrap().len();
        let log = || std::fs::metadata(path.with_extension("db-wal")).map_or(0, |meta| meta.len());
        let store = Store::open(&path).await.unwrap();
        let (account, _) = store.create_account("events").await.unwrap();
        let account_id = account.id;
        // About 8 MiB of events, past SQLite's default of 1,000 pages of log
        // before a commit checkpoints, with no checkpoint asked for.
        let data = format!(r#"{{"lines":["{}"]}}"#, "x".repeat(2_000));
        for batch in 0..40 {
            let events: Vec<NewEvent> = (0..100)
                .map(|n| NewEvent {
                    account_id: &account_id,
                    run_id: "run",
                    seq: batch * 100 + n + 1,
                    name: "tool.progress",
                    data: &data,
                })
                .collect();
            store.append_events(&events).await.unwrap();
        }
        let before = (database(), log());
        assert!(
            before.1 > 1_000 * 4_096,
            "the log holds {} bytes only",
            before.1
        );
        // A request's write, on the pool.
        store.create_account("request").await.unwrap();
        let after = database();
        assert!(
            after < before.0 + 1_024 * 1_024,
            "a request's write copied the log into the database: {} bytes before, {after} after (log {} bytes)",
            before.0,
            before.1
        );
    }
}
