//! Reads of a SQLite store that answer in one step: a few read-only
//! connections of rusqlite's, each statement prepared once per connection.
//!
//! sqlx runs every SQLite connection on a thread of its own and hands each
//! command, row and completion across (and pings the connection before each
//! use): four thread hops for a one-row read, which cost more than the read.
//! A reader runs the statement on the calling task's thread instead: a read
//! in WAL mode waits for no writer, and the reads sent here are bounded (a
//! page of at most the listing's limit).

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

use super::Result;
use super::rows::SqliteRow;

/// The most idle connections kept; a burst beyond it opens more and lets
/// them go afterwards.
const KEPT: usize = 8;

/// How long a statement waits for the file (a WAL index being rebuilt, or
/// another connection's write lock), as sqlx's connections do.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How long a connection that finds the file locked sleeps before it tries
/// again.
const BUSY_RETRY: Duration = Duration::from_micros(100);

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
        const NAMES: [&str; 4] = ["$1", "$2", "$3", "$4"];
        assert!(params.len() <= NAMES.len(), "at most four parameters");
        let named: Vec<(&str, &dyn rusqlite::ToSql)> = NAMES
            .iter()
            .copied()
            .zip(params.iter().map(|param| param as &dyn rusqlite::ToSql))
            .collect();
        self.read(|connection| {
            connection
                .prepare_cached(sql)?
                .query_map(&*named, T::from_sqlite_row)?
                .collect()
        })
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        connect(&self.path, OpenFlags::SQLITE_OPEN_READ_ONLY)
    }
}

/// A connection of the store's own to the SQLite file at `path`, opened
/// with `access` (read-only or read-write). NO_MUTEX: each is used by one
/// thread at a time (a reader is taken out of the pool for its read; the
/// writer's is behind its lock).
pub(super) fn connect(path: &Path, access: OpenFlags) -> rusqlite::Result<Connection> {
    let connection = Connection::open_with_flags(path, access | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    connection.busy_handler(Some(|tries| retry_soon(tries) != 0))?;
    Ok(connection)
}

/// Makes the open SQLite connection `connection` (one of sqlx's) wait for a
/// locked file as the store's own connections do: trying again every
/// [`BUSY_RETRY`] for [`BUSY_TIMEOUT`]. SQLite's own wait sleeps 1, 2, 5,
/// 10 ms… and then 100 ms between tries, while the events writer takes the
/// lock for a batch every millisecond or so: a request's write transaction
/// waited out whole 100 ms sleeps, more than 2 s in 10 s at 200 sessions,
/// and the turns' starts and ends behind it.
pub(super) fn retry_soon_when_busy(connection: std::ptr::NonNull<rusqlite::ffi::sqlite3>) {
    // SAFETY: the connection is open, and the handler reads no argument.
    unsafe {
        rusqlite::ffi::sqlite3_busy_handler(
            connection.as_ptr(),
            Some(retry_soon_handler),
            std::ptr::null_mut(),
        );
    }
}

extern "C" fn retry_soon_handler(_: *mut c_void, tries: c_int) -> c_int {
    retry_soon(tries)
}

/// Sleeps [`BUSY_RETRY`] and says whether to try again (1) after `tries`
/// tries, or give up (0) once they add up to [`BUSY_TIMEOUT`].
fn retry_soon(tries: c_int) -> c_int {
    let waited = u128::try_from(tries).unwrap_or(0) * BUSY_RETRY.as_micros();
    if waited >= BUSY_TIMEOUT.as_micros() {
        return 0;
    }
    std::thread::sleep(BUSY_RETRY);
    1
}
