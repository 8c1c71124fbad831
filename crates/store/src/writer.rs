//! Writes of a SQLite store made in one step on the calling thread: one
//! read-write connection of rusqlite's, its statements prepared once, and a
//! thread of its own that checkpoints the write-ahead log.
//!
//! For the busiest writer, the one storing runs' live events: through sqlx a
//! batch took four thread hops (command, rows, completion, wake-up) and a
//! connection whose page cache the pool's other connections had made stale,
//! which cost more than the insert. The caller must be free to block: a
//! write waits while another connection holds the file's write lock.
//!
//! SQLite checkpoints the log on the connection that commits, once the log
//! has grown past a thousand pages, and the commit waits for it: with events
//! stored every millisecond or so, one line in a hundred waited so (p99
//! 10 ms). Here the checkpointer's thread copies the log while the writer
//! writes on; but the log starts over from its beginning (rather than
//! growing for ever) only when a writer begins with all of it copied, which
//! a checkpoint racing the writer never leaves. So every few seconds, once
//! the checkpointer has copied the bulk, the writer copies the little that
//! came meanwhile itself, between two writes ([`Writer::checkpoint_if_due`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::types::Value;
use rusqlite::{Connection, OpenFlags};

use super::lock_wait::{self, OnCommit};
use super::readers::numbered;
use super::{Result, StoreError};

/// How often at most the checkpointer is asked to copy the log.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// How often at most the writer copies the rest of the log itself, so that
/// the log starts over. Each time it holds up every event for two flushes
/// of the disk, 5–26 ms each measured at 1,000 sessions × 10 lines a
/// second, whatever is left to copy: once a second, that stall was the
/// p99 of a whole run (every second a quarter second with a p99 of
/// 20–35 ms against 5 ms in the others, `sse.py --timeline 0.25`). Between
/// two, the checkpointer keeps the database up to date and the log grows
/// (about 60 MB a second at that load).
const RESTART_EVERY: Duration = Duration::from_secs(5);

/// The most log pages (4 KiB each) the checkpointer leaves for the writer
/// to copy when it starts the log over: before a restart it copies again
/// while more came during its last copy. Each copy of the rest is shorter
/// than the one before, so a few suffice.
const LEFT_FOR_THE_WRITER: i64 = 256;

/// The most copies the checkpointer makes in a row, should the log grow as
/// fast as it is copied.
const MOST_COPIES: usize = 8;

/// The most memory, in KiB, of the writer's own cache of database pages
/// (SQLite's default is 2,000). Each run's events go to a page of their
/// own in the runs' index, so with 1,000 runs writing at once the pages a
/// second of events touches (about 1,700) outgrew the default cache, and
/// batches began by reading their pages back from the log: up to a
/// thousand reads in one batch. The cache grows only as far as it is used.
/// It holds a second of those pages (7 MB), not more: SQLite empties it
/// whenever another connection (a request's, a lease's) has written since
/// the writer's last transaction, so 32 MiB held more pages, and `cinch
/// serve` 19 MiB more at 1,000 sessions, for no fewer reads (the indexer's
/// CPU and its page reads alike, side by side in profiles).
const WRITER_CACHE_KIB: i64 = 8 * 1024;

/// What the writer's commits do: wake who waits for the lock, no more.
static ON_COMMIT: OnCommit = OnCommit {
    releases: &lock_wait::RELEASES,
    checkpoint_at: None,
};

/// The read-write connection to one SQLite file, opened when first needed.
pub(super) struct Writer {
    path: PathBuf,
    open: Mutex<Option<Open>>,
}

/// What the checkpointer is asked to copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Copying {
    /// What the log holds now, once.
    Once,
    /// All but [`LEFT_FOR_THE_WRITER`] pages: the writer copies the rest and
    /// starts the log over.
    BeforeRestart,
}

/// The writer's connection and its line to the checkpointer.
struct Open {
    connection: Connection,
    checkpointer: SyncSender<Copying>,
    /// Set by the checkpointer when it has copied the bulk of the log.
    copied: Arc<AtomicBool>,
    asked: Instant,
    /// Whether the writer copies the rest once the checkpointer has copied
    /// what it was last asked to.
    restart_asked: bool,
    restarted: Instant,
}

impl Writer {
    /// A writer of the SQLite file at `path` (in WAL mode already: the
    /// store opened it so).
    pub(super) fn of(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            open: Mutex::new(None),
        }
    }

    /// Runs `write` in one transaction that takes the write lock at once.
    pub(super) fn write<T>(
        &self,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut open = cinch_base::sync::lock(&self.open);
        let open = self.opened(&mut open)?;
        let transaction = open
            .connection
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let written = write(&transaction)?;
        transaction.commit()?;
        Ok(written)
    }

    /// Runs `write` as [`Writer::write`] does, on a thread free to block
    /// (the lock may be held by another writer), for an async caller.
    pub(super) async fn write_off_task<T: Send + 'static>(
        self: &Arc<Self>,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T> {
        let writer = self.clone();
        tokio::task::spawn_blocking(move || writer.write(write))
            .await
            // Only cancelled while the runtime shuts down.
            .map_err(|error| StoreError::Unavailable(Box::new(error)))?
    }

    /// Runs one statement, its parameters `$1`, `$2`… being `params` in
    /// order, as [`Writer::write_off_task`] does: how many rows it changed.
    pub(super) async fn execute(
        self: &Arc<Self>,
        sql: &'static str,
        params: Vec<Value>,
    ) -> Result<usize> {
        self.write_off_task(move |transaction| {
            transaction
                .prepare_cached(sql)?
                .execute(&*numbered(&as_params(&params)))
        })
        .await
    }

    /// The row, if any, that one statement ending in `RETURNING` gives back,
    /// read by `read`, as [`Writer::execute`] runs it.
    pub(super) async fn returning<T: Send + 'static>(
        self: &Arc<Self>,
        sql: impl AsRef<str> + Send + 'static,
        params: Vec<Value>,
        read: fn(&rusqlite::Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Option<T>> {
        self.write_off_task(move |transaction| {
            transaction
                .prepare_cached(sql.as_ref())?
                .query_map(&*numbered(&as_params(&params)), read)?
                .next()
                .transpose()
        })
        .await
    }

    /// Asks the checkpointer to copy the log, at most every
    /// [`CHECKPOINT_EVERY`]; when the log is due to start over (every
    /// [`RESTART_EVERY`]) and the checkpointer has copied its bulk, copies
    /// the rest itself.
    pub(super) fn checkpoint_if_due(&self) -> Result<()> {
        let mut open = cinch_base::sync::lock(&self.open);
        let open = self.opened(&mut open)?;
        if open.copied.swap(false, Ordering::AcqRel) && open.restart_asked {
            checkpoint(&open.connection)?;
            open.restart_asked = false;
            open.restarted = Instant::now();
        } else if open.asked.elapsed() >= CHECKPOINT_EVERY {
            let copying = if open.restarted.elapsed() >= RESTART_EVERY {
                Copying::BeforeRestart
            } else {
                Copying::Once
            };
            // A copy asked already and not begun is as good as another; the
            // restart then waits for the next ask.
            let asked = open.checkpointer.try_send(copying).is_ok();
            open.restart_asked = asked && copying == Copying::BeforeRestart;
            open.asked = Instant::now();
        }
        Ok(())
    }

    fn opened<'a>(&self, open: &'a mut Option<Open>) -> Result<&'a mut Open> {
        if open.is_none() {
            let connection = self.connect()?;
            connection.pragma_update(None, "cache_size", -WRITER_CACHE_KIB)?;
            let checkpointing = self.connect()?;
            let (checkpointer, asked) = sync_channel(1);
            let copied = Arc::new(AtomicBool::new(false));
            let done = copied.clone();
            std::thread::Builder::new()
                .name("sqlite-checkpoint".to_owned())
                .spawn(move || checkpoint_when_asked(&checkpointing, &asked, &done))
                .map_err(StoreError::Spawn)?;
            *open = Some(Open {
                connection,
                checkpointer,
                copied,
                asked: Instant::now(),
                restart_asked: false,
                restarted: Instant::now(),
            });
        }
        Ok(open.as_mut().expect("opened above"))
    }

    fn connect(&self) -> rusqlite::Result<Connection> {
        let connection = super::readers::connect(&self.path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
        // What the store's own connections are opened with (WAL is the
        // file's, kept by it; these two are each connection's).
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", true)?;
        // The checkpointer copies the log, not a commit; and each commit
        // wakes whoever waits for the write lock.
        connection.pragma_update(None, "wal_autocheckpoint", 0)?;
        lock_wait::on_commit(lock_wait::handle(&connection), &ON_COMMIT);
        Ok(connection)
    }
}

/// `values` as a statement's parameters.
fn as_params(values: &[Value]) -> Vec<&dyn rusqlite::ToSql> {
    values.iter().map(|value| value as _).collect()
}

/// Copies the log each time it is asked, until the writer is gone, and
/// says so through `copied`.
fn checkpoint_when_asked(connection: &Connection, asked: &Receiver<Copying>, copied: &AtomicBool) {
    while let Ok(copying) = asked.recv() {
        let copy = match copying {
            Copying::Once => checkpoint(connection).map(drop),
            Copying::BeforeRestart => copy_most(connection),
        };
        match copy {
            Ok(()) => copied.store(true, Ordering::Release),
            Err(error) => tracing::warn!("checkpointing the database's log: {error}"),
        }
    }
}

/// Checkpoints until at most [`LEFT_FOR_THE_WRITER`] pages of the log are
/// left to copy, or [`MOST_COPIES`] were made.
fn copy_most(connection: &Connection) -> rusqlite::Result<()> {
    for _ in 0..MOST_COPIES {
        let copy = checkpoint(connection)?;
        if copy.log_pages - copy.copied_pages <= LEFT_FOR_THE_WRITER {
            break;
        }
    }
    Ok(())
}

/// What a checkpoint found in the log and had copied of it, in pages.
struct Copy {
    log_pages: i64,
    copied_pages: i64,
}

/// A passive checkpoint: copies what no reader still needs, waiting for no
/// one.
fn checkpoint(connection: &Connection) -> rusqlite::Result<Copy> {
    connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| {
        Ok(Copy {
            log_pages: row.get(1)?,
            copied_pages: row.get(2)?,
        })
    })
}
