//! What the supervisor sleeps on: the CLI's exit (a pidfd), changes in the
//! turn's folder (inotify), room in the conversation's pipe, and a timeout
//! for the next clock to look at.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::path::Path;
use std::time::Duration;

/// How long to sleep at most when the kernel offers neither a pidfd nor
/// inotify (then the supervisor falls back to looking now and then).
const FALLBACK_WAKE: Duration = Duration::from_millis(25);

/// The supervisor's sources of wake-ups.
pub(super) struct Waker {
    exit: Option<OwnedFd>,
    folder: Option<OwnedFd>,
}

impl Waker {
    /// Wakes on the exit of the process `pid` and on changes in `dir`.
    pub(super) fn new(pid: u32, dir: &Path) -> Self {
        Self {
            exit: pidfd(pid),
            folder: inotify(dir),
        }
    }

    /// Sleeps until the CLI exits, the folder changes, `writable` takes
    /// bytes, or `timeout` (none: no clock to look at) has passed.
    pub(super) fn wait(&mut self, timeout: Option<Duration>, writable: Option<RawFd>) {
        let mut fds = Vec::with_capacity(3);
        for fd in [&self.exit, &self.folder].into_iter().flatten() {
            fds.push(libc::pollfd {
                fd: fd.as_raw_fd(),
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
        let timeout = if self.exit.is_none() || self.folder.is_none() {
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
        if let Some(folder) = &self.folder {
            drain(folder.as_raw_fd());
        }
    }
}

fn pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: the pidfd_open syscall with a pid and no flags.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a descriptor the kernel just gave us.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

fn inotify(dir: &Path) -> Option<OwnedFd> {
    use std::os::unix::ffi::OsStrExt as _;
    // SAFETY: a plain syscall.
    let fd = unsafe { libc::inotify_init1(libc::IN_NONBLOCK | libc::IN_CLOEXEC) };
    if fd < 0 {
        return None;
    }
    // SAFETY: a descriptor the kernel just gave us.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mask = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_MODIFY | libc::IN_CLOSE_WRITE;
    // SAFETY: a valid descriptor and a NUL-terminated path.
    let watch = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), path.as_ptr(), mask) };
    (watch >= 0).then_some(fd)
}

/// Empties the inotify queue: which file changed does not matter, the
/// supervisor looks at every one it cares about when it wakes.
fn drain(fd: RawFd) {
    let mut buffer = [0u8; 4096];
    loop {
        // SAFETY: reading into a buffer of the size given.
        let read = unsafe { libc::read(fd, buffer.as_mut_ptr().cast(), buffer.len()) };
        if read <= 0 {
            return;
        }
    }
}
