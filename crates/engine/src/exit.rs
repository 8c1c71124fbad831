//! Waiting for a child process to exit without looking at it over and over:
//! a pidfd, which becomes readable when the process exits (Linux 5.3 on).

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd, RawFd};
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

/// How often [`wait_for`] looks where the kernel has no pidfds.
const FALLBACK_LOOK: Duration = Duration::from_millis(10);

/// A descriptor that becomes readable when the process `pid` exits; `None`
/// where the kernel has no pidfds. For a child, open it before anything may
/// reap the child, so that it names that process and no later one.
pub(crate) fn pidfd(pid: u32) -> Option<OwnedFd> {
    // SAFETY: the pidfd_open syscall with a pid and no flags.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a descriptor the kernel just gave us.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Waits for `child` to exit, for at most `timeout`: its exit status, or
/// `None` when it still runs.
pub fn wait_for(child: &mut Child, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
    let deadline = Instant::now() + timeout;
    let exit = pidfd(child.id());
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        match &exit {
            Some(exit) => {
                let mut fds = [libc::pollfd {
                    fd: exit.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                }];
                // Rounded up, so that the deadline has passed when it ends.
                let millis = i32::try_from(left.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
                // SAFETY: poll on one descriptor this process owns.
                unsafe { libc::poll(fds.as_mut_ptr(), 1, millis) };
            }
            None => std::thread::sleep(left.min(FALLBACK_LOOK)),
        }
    }
}
