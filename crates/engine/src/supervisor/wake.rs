//! What the supervisor sleeps on: the CLI's exit (a pidfd), a poke on the
//! turn's wake FIFO (written by whoever leaves it a file to act on), room in
//! the conversation's pipe, and a timeout for the next clock to look at.
//!
//! A FIFO, not inotify: inotify instances are few per user (128 by
//! default), so past that many turns supervisors would have fallen back to
//! looking every few milliseconds.

use std::fs::File;
use std::io::Read as _;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::Duration;

/// How long to sleep at most when there is no pidfd or no wake FIFO (then
/// the supervisor falls back to looking now and then).
const FALLBACK_WAKE: Duration = Duration::from_millis(25);

/// The supervisor's sources of wake-ups.
pub(super) struct Waker {
    exit: Option<OwnedFd>,
    pokes: Option<File>,
}

impl Waker {
    /// Wakes on the exit of the process `pid` and on pokes of the FIFO at
    /// `fifo` (made here).
    pub(super) fn new(pid: u32, fifo: &Path) -> Self {
        Self {
            exit: crate::exit::pidfd(pid),
            pokes: open_fifo(fifo)
                .inspect_err(|error| {
                    tracing::warn!("no wake FIFO at {}: {error}", fifo.display());
                })
                .ok(),
        }
    }

    /// Sleeps until the CLI exits, the FIFO is poked, `writable` takes
    /// bytes, or `timeout` (none: no clock to look at) has passed.
    pub(super) fn wait(&mut self, timeout: Option<Duration>, writable: Option<RawFd>) {
        let mut fds = Vec::with_capacity(3);
        let exit = self.exit.as_ref().map(AsRawFd::as_raw_fd);
        let pokes = self.pokes.as_ref().map(AsRawFd::as_raw_fd);
        for fd in [exit, pokes].into_iter().flatten() {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            });
        }
        if let Some(fd) = writable {
            fds.push(libc::pollfd {
                fd,
                events: libc::POLLOUT,
                revents: 0,
            });
        }
        let timeout = if self.exit.is_none() || self.pokes.is_none() {
            Some(timeout.map_or(FALLBACK_WAKE, |timeout| timeout.min(FALLBACK_WAKE)))
        } else {
            timeout
        };
        // Rounded up, so a clock is never looked at just before its time.
        let millis = timeout.map_or(-1, |timeout| {
            i32::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(i32::MAX)
        });
        // SAFETY: poll on descriptors this process owns, with their count.
        unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, millis) };
        if let Some(pokes) = &mut self.pokes {
            drain(pokes);
        }
    }
}

/// Makes the FIFO at `path` (unless there is one) and opens it for reading
/// without blocking. Opened for writing too, so that it never reads as
/// closed between writers, and a writer always finds a reader while the
/// supervisor runs.
fn open_fifo(path: &Path) -> std::io::Result<File> {
    use std::os::unix::ffi::OsStrExt as _;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: a NUL-terminated path and a mode.
    if unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) } != 0 {
        let error = std::io::Error::last_os_error();
        if error.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(error);
        }
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
}

/// Empties the FIFO: how many pokes came does not matter, the supervisor
/// looks at every file it cares about when it wakes.
fn drain(pokes: &mut File) {
    let mut buffer = [0u8; 512];
    while matches!(pokes.read(&mut buffer), Ok(read) if read > 0) {}
}
