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
//! a checkpoint racing the writer never leaves. So once the checkpointer has
//! copied the bulk, the writer copies the little that came meanwhile
//! itself, between two writes ([`Writer::checkpoint_if_due`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::{Result, StoreError};

/// How often at most the checkpointer is asked to copy the log. Each time,
/// the writer's own copy of the rest holds it up for two `fsync`s (about
/// 4 ms measured here), and every event stored meanwhile waits: at five
/// times a second that was one line in fifty (`sse.py`'s p99); once a
/// second, one in two hundred, and the log still starts over every second.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(1);

/// The most memory, in KiB, of the writer's own cache of database pages
/// (SQLite's default is 2,000). Each run's events go to a page of their
/// own in the runs' index, so with 1,000 runs writing at once the pages a
/// second of events touches (about 1,700) outgrew the default cache, and
/// batches began by reading their pages back from the log: up to a
/// thousand reads in one batch. The cache grows only as far as it is used.
const WRITER_CACHE_KIB: i64 = 32 * 1024;

/// The read-write connection to one SQLite file, opened when first needed.
pub(super) struct Writer {
    path: PathBuf,
    open: Mutex<Option<Open>>,
}

/// The writer's connection and its line to the checkpointer.
struct Open {
    connection: Connection,
    checkpointer: SyncSender<()>,
    /// Set by the checkpointer when it has copied the bulk of the log.
    copied: Arc<AtomicBool>,
    asked: Instant,
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

    /// Copies what came into the log since the checkpointer copied its bulk,
    /// if it has; else asks it to, at most every [`CHECKPOINT_EVERY`].
    pub(super) fn checkpoint_if_due(&self) -> Result<()> {
        let mut open = cinch_base::sync::lock(&self.open);
        let open = self.opened(&mut open)?;
        if open.copied.swap(false, Ordering::AcqRel) {
            checkpoint(&open.connection)?;
        } else if open.asked.elapsed() >= CHECKPOINT_EVERY {
            // One asked already and not begun is as good as two.
            let _ = open.checkpointer.try_send(());
            open.asked = Instant::now();
        }
        Ok(())
    }

    fn opened<'a>(&self, open: &'a mut Option<Open>) -> Result<&'a mut Open> {
        if open.is_none() {
            let connection = self.connect()?;
            connection.pragma_update(None, "wal_autocheckpoint", 0)?;
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
        Ok(connection)
    }
}

/// Copies the log each time it is asked, until the writer is gone, and
/// says so through `copied`.
fn checkpoint_when_asked(connection: &Connection, asked: &Receiver<()>, copied: &AtomicBool) {
    while asked.recv().is_ok() {
        match checkpoint(connection) {
            Ok(()) => copied.store(true, Ordering::Release),
            Err(error) => tracing::warn!("checkpointing the database's log: {error}"),
        }
    }
}

/// A passive checkpoint: copies what no reader still needs, waiting for no
/// one.
fn checkpoint(connection: &Connection) -> rusqlite::Result<()> {
    connection.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}
