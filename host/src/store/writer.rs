//! Writes of a SQLite store made in one step on the calling thread: one
//! read-write connection of rusqlite's, its statements prepared once.
//!
//! For the busiest writer, the one storing runs' live events: through sqlx a
//! batch took four thread hops (command, rows, completion, wake-up) and a
//! connection whose page cache the pool's other connections had made stale,
//! which cost more than the insert. The caller must be free to block: a
//! write waits while another connection holds the file's write lock.

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

use super::Result;

/// How long a write waits for the file's write lock, as sqlx's connections do.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// The read-write connection to one SQLite file, opened when first needed.
pub(super) struct Writer {
    path: PathBuf,
    connection: Mutex<Option<Connection>>,
}

impl Writer {
    /// A writer of the SQLite file at `path` (in WAL mode already: the
    /// store opened it so).
    pub(super) fn of(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            connection: Mutex::new(None),
        }
    }

    /// Runs `write` in one transaction that takes the write lock at once.
    pub(super) fn write<T>(
        &self,
        write: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut connection = crate::sync::lock(&self.connection);
        if connection.is_none() {
            *connection = Some(self.open()?);
        }
        let connection = connection.as_mut().expect("opened above");
        let transaction =
            connection.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let written = write(&transaction)?;
        transaction.commit()?;
        Ok(written)
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let connection = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        connection.busy_timeout(BUSY_TIMEOUT)?;
        // What the store's own connections are opened with (WAL is the
        // file's, kept by it; these two are each connection's).
        connection.pragma_update(None, "synchronous", "NORMAL")?;
        connection.pragma_update(None, "foreign_keys", true)?;
        Ok(connection)
    }
}
