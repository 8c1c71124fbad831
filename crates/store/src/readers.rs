//! Reads of a SQLite store that answer in one step: a few read-only
//! connections of rusqlite's, each statement prepared once per connection.
//!
//! sqlx runs every SQLite connection on a thread of its own and hands each
//! command, row and completion across (and pings the connection before each
//! use): four thread hops for a one-row read, which cost more than the read.
//! A reader runs the statement on the calling task's thread instead: a read
//! in WAL mode waits for no writer, and the reads sent here are bounded (a
//! page of at most the listing's limit).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

use super::rows::SqliteRow;
use super::{Result, lock_wait};

/// The most idle connections kept; a burst beyond it opens more and lets
/// them go afterwards.
const KEPT: usize = 8;

/// The read-only connections to one SQLite file.
pub(super) struct SqliteReaders {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteReaders {
    /// Readers of the SQLite file at `path`, opened as they are first needed.
    pub(super) fn of(path: &Path) -> Self {
        Self {
            path: path.to_owned(),
            idle: Mutex::new(Vec::new()),
        }
    }

    /// Runs `read` on an idle connection (a new one when none is idle).
    pub(super) fn read<T>(
        &self,
        read: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let taken = cinch_base::sync::lock(&self.idle).pop();
        let connection = match taken {
            Some(connection) => connection,
            None => self.open()?,
        };
        let answer = read(&connection);
        let mut idle = cinch_base::sync::lock(&self.idle);
        if idle.len() < KEPT {
            idle.push(connection);
        }
        Ok(answer?)
    }

    /// The rows `sql` reads, its parameters `$1`, `$2`… being `params` in
    /// order.
    pub(super) fn rows<T: SqliteRow>(
        &self,
        sql: &str,
        params: &[impl rusqlite::ToSql],
    ) -> Result<Vec<T>> {
        let params: Vec<&dyn rusqlite::ToSql> = params
            .iter()
            .map(|param| param as &dyn rusqlite::ToSql)
            .collect();
        self.read(|connection| {
            connection
                .prepare_cached(sql)?
                .query_map(&*numbered(&params), T::from_sqlite_row)?
                .collect()
        })
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }
}

/// `params` named as the store's SQL numbers them: `$1`, `$2`… in order
/// (SQLite numbers `$n` parameters by where each first appears in the text).
pub(super) fn numbered<'a>(
    params: &[&'a dyn rusqlite::ToSql],
) -> Vec<(&'static str, &'a dyn rusqlite::ToSql)> {
    const NAMES: [&str; 20] = [
        "$1", "$2", "$3", "$4", "$5", "$6", "$7", "$8", "$9", "$10", "$11", "$12", "$13", "$14",
        "$15", "$16", "$17", "$18", "$19", "$20",
    ];
    assert!(params.len() <= NAMES.len(), "at most twenty parameters");
    NAMES.iter().copied().zip(params.iter().copied()).collect()
}

/// A connection of the store's own to the SQLite file at `path`, opened
/// with `access` (read-only or read-write). NO_MUTEX: each is used by one
/// thread at a time (a reader is taken out of the pool for its read; the
/// writer's is behind its lock). It waits for a locked file as
/// [`lock_wait`](super::lock_wait) tells.
pub(super) fn connect(path: &Path, access: OpenFlags) -> rusqlite::Result<Connection> {
    let connection = Connection::open_with_flags(path, access | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    lock_wait::wait_when_busy(lock_wait::handle(&connection), &lock_wait::RELEASES);
    Ok(connection)
}
