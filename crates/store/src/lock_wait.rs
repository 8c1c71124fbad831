//! Waiting for a SQLite file's write lock, which one connection holds at a
//! time: a connection that finds it taken sleeps until one of this
//! process's connections commits (each says so from SQLite's WAL hook,
//! once its lock is let go), not in steps of a fixed length.
//!
//! SQLite's own wait sleeps 1, 2, 5, 10 ms… and then 100 ms between tries,
//! while the events writer takes the lock for a batch every millisecond or
//! so: a request's write transaction waited out whole 100 ms sleeps, more
//! than 2 s in 10 s at 200 sessions. Trying again every 100 µs instead
//! cost a wake-up of the waiting thread a try: at 1,000 sessions starting,
//! sqlx's threads slept 2,300 times a second, about 36 times a session's
//! start, 41% of them woken from the other CPU (`perf record -e
//! sched:sched_wakeup`), and a wake-up across CPUs costs 22 µs of CPU on
//! the machines the benchmarks ran on (`tests/bench/floor.py`).

use std::cell::Cell;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::ffi;

/// How long a statement waits for the file (a WAL index being rebuilt, or
/// another connection's write lock) before it fails, as sqlx's connections
/// do.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// The longest one wait of the process's lasts before the lock is tried
/// again anyway: its holder may not say when it lets go (another process,
/// or a transaction that was rolled back or wrote nothing).
const LONGEST_WAIT: Duration = Duration::from_millis(2);

/// The commits of a process's connections to its SQLite files, and who
/// waits for the next.
pub(super) struct Releases {
    longest_wait: Duration,
    commits: AtomicU64,
    waiting: AtomicUsize,
    lock: Mutex<()>,
    released: Condvar,
}

/// The process's: every connection of the store's says and waits here.
pub(super) static RELEASES: Releases = Releases::new(LONGEST_WAIT);

impl Releases {
    /// Releases whose waiters try the lock again after `longest_wait` if
    /// no release came.
    pub(super) const fn new(longest_wait: Duration) -> Self {
        Self {
            longest_wait,
            commits: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            lock: Mutex::new(()),
            released: Condvar::new(),
        }
    }

    fn commits(&self) -> u64 {
        self.commits.load(Ordering::SeqCst)
    }

    /// Says that a connection committed and let go of its write lock.
    fn released(&self) {
        self.commits.fetch_add(1, Ordering::SeqCst);
        // A waiter counts itself before it reads `commits`, and this reads
        // the count after adding: either it sees the waiter, or the waiter
        // sees this commit.
        if self.waiting.load(Ordering::SeqCst) > 0 {
            let _held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
            self.released.notify_all();
        }
    }

    /// Waits until a commit after the `seen`th, or its longest wait.
    fn wait_after(&self, seen: u64) {
        let held = self.lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.waiting.fetch_add(1, Ordering::SeqCst);
        drop(
            self.released
                .wait_timeout_while(held, self.longest_wait, |_| self.commits() == seen)
                .unwrap_or_else(PoisonError::into_inner),
        );
        self.waiting.fetch_sub(1, Ordering::SeqCst);
    }
}

thread_local! {
    /// The statement waiting on this thread: since when, and how many
    /// commits there had been when it last tried the lock.
    static WAITING: Cell<(Instant, u64)> = Cell::new((Instant::now(), 0));
}

/// The SQLite handle of rusqlite's `connection`, for the calls below.
pub(super) fn handle(connection: &rusqlite::Connection) -> NonNull<ffi::sqlite3> {
    // SAFETY: the handle is only passed to SQLite's own calls, while
    // `connection` is open.
    NonNull::new(unsafe { connection.handle() }).expect("an open connection has a handle")
}

/// Makes `connection` wait for a locked file on `releases`, for at most
/// [`BUSY_TIMEOUT`].
pub(super) fn wait_when_busy(connection: NonNull<ffi::sqlite3>, releases: &'static Releases) {
    // SAFETY: the connection is open; the argument is the 'static
    // `releases`, which the handler only reads through.
    unsafe {
        ffi::sqlite3_busy_handler(
            connection.as_ptr(),
            Some(busy_handler),
            std::ptr::from_ref(releases).cast_mut().cast(),
        );
    }
}

extern "C" fn busy_handler(releases: *mut c_void, tries: c_int) -> c_int {
    // SAFETY: set by `wait_when_busy` from a `&'static Releases`.
    let releases = unsafe { &*releases.cast_const().cast::<Releases>() };
    c_int::from(wait_for_release(releases, tries))
}

/// Waits for the next release on `releases`; whether to try the lock again
/// (or give up, once [`BUSY_TIMEOUT`] has passed since the first try).
///
/// The first call only notes how many commits there have been and asks
/// for another try at once: the lock may have been let go since this
/// thread found it taken, and that release's wake-up came before anyone
/// waited. From the second on, a commit since the last try ends the wait
/// at once.
fn wait_for_release(releases: &Releases, tries: c_int) -> bool {
    let now = Instant::now();
    if tries == 0 {
        WAITING.set((now, releases.commits()));
        return true;
    }
    let (since, seen) = WAITING.get();
    if now.duration_since(since) >= BUSY_TIMEOUT {
        return false;
    }
    releases.wait_after(seen);
    WAITING.set((since, releases.commits()));
    true
}

/// What a connection does when it commits: says so on `releases`, and, when
/// `checkpoint_at` pages of log are reached, copies the log into the
/// database as SQLite's own hook does at its `wal_autocheckpoint` (which
/// this hook takes the place of).
pub(super) struct OnCommit {
    pub(super) releases: &'static Releases,
    pub(super) checkpoint_at: Option<u32>,
}

/// Has `connection` do `on_commit` after each of its commits. Set after
/// any `PRAGMA wal_autocheckpoint`, which replaces the hook.
pub(super) fn on_commit(connection: NonNull<ffi::sqlite3>, on_commit: &'static OnCommit) {
    // SAFETY: the connection is open; the argument is the 'static
    // `on_commit`, which the hook only reads.
    unsafe {
        ffi::sqlite3_wal_hook(
            connection.as_ptr(),
            Some(wal_hook),
            std::ptr::from_ref(on_commit).cast_mut().cast(),
        );
    }
}

extern "C" fn wal_hook(
    on_commit: *mut c_void,
    connection: *mut ffi::sqlite3,
    database: *const c_char,
    log_pages: c_int,
) -> c_int {
    // SAFETY: set by `on_commit` from a `&'static OnCommit`.
    let on_commit = unsafe { &*on_commit.cast_const().cast::<OnCommit>() };
    on_commit.releases.released();
    if on_commit
        .checkpoint_at
        .is_some_and(|at| u32::try_from(log_pages).is_ok_and(|pages| pages >= at))
    {
        // SAFETY: SQLite calls the hook with its open connection and the
        // name of the database committed to. A checkpoint that cannot
        // copy all now leaves the rest for a later one, as SQLite's does.
        unsafe {
            ffi::sqlite3_wal_checkpoint(connection, database);
        }
    }
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, OpenFlags, TransactionBehavior};

    /// This test's own, so that other tests' commits do not wake its waiter,
    /// and whose waits last until a release.
    static RELEASES_HERE: Releases = Releases::new(Duration::from_secs(60));
    static ON_COMMIT_HERE: OnCommit = OnCommit {
        releases: &RELEASES_HERE,
        checkpoint_at: None,
    };
    static TRIES: AtomicUsize = AtomicUsize::new(0);

    extern "C" fn counting_handler(releases: *mut c_void, tries: c_int) -> c_int {
        TRIES.fetch_add(1, Ordering::SeqCst);
        busy_handler(releases, tries)
    }

    fn connect(path: &std::path::Path) -> Connection {
        let connection = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
        )
        .unwrap();
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .unwrap();
        let handle = handle(&connection);
        // SAFETY: as in `wait_when_busy`, with a handler that counts.
        unsafe {
            ffi::sqlite3_busy_handler(
                handle.as_ptr(),
                Some(counting_handler),
                std::ptr::from_ref(&RELEASES_HERE).cast_mut().cast(),
            );
        }
        on_commit(handle, &ON_COMMIT_HERE);
        connection
    }

    #[test]
    fn a_writer_waiting_for_the_lock_is_woken_by_its_release() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("lock.db");
        let mut holder = connect(&path);
        holder.execute("CREATE TABLE t (n INTEGER)", []).unwrap();
        let held = holder
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .unwrap();
        held.execute("INSERT INTO t VALUES (1)", []).unwrap();

        let (done, finished) = std::sync::mpsc::channel();
        let waiter_path = path.clone();
        let waiter = std::thread::spawn(move || {
            let connection = connect(&waiter_path);
            let inserted = connection.execute("INSERT INTO t VALUES (2)", []);
            done.send(inserted).unwrap();
        });
        while RELEASES_HERE.waiting.load(Ordering::SeqCst) == 0 {
            std::thread::yield_now();
        }
        held.commit().unwrap();

        // Its wait lasts a minute unless the commit wakes it.
        let inserted = finished
            .recv_timeout(Duration::from_secs(30))
            .expect("the waiter was not woken by the commit");
        assert_eq!(inserted.unwrap(), 1);
        waiter.join().unwrap();
        // One call to note the commits, one wait, and the try after it won.
        assert_eq!(TRIES.load(Ordering::SeqCst), 2);
        let rows: i64 = holder
            .query_row("SELECT COUNT(*) FROM t", [], |row| row.get(0))
            .unwrap();
        assert_eq!(rows, 2);
    }
}
