//! A turn's own process namespace, whose /proc shows the turn's processes
//! and nothing else.
//!
//! Landlock binds a rule to a file, and a process's /proc entry is made with
//! the process: the sandbox can grant the CLI its own /proc/self, but not
//! the entries of the processes it starts. Tools read those. droid runs
//! every command under a watcher that asks `ps -o ppid= -p` for its shell's
//! parent every two seconds and kills the command's process group when
//! `ps` fails; without those entries it fails at once, so every command
//! that outlived the watcher's first `ps` (a few milliseconds) died by
//! SIGKILL, and `echo hello > out.txt` left an empty file one run in
//! fifteen. Granting all of /proc is no way out: under Landlock the
//! environments of processes outside the domain stay readable there
//! (measured), and a root CLI could read the kernel's memory.
//!
//! Where the supervisor may make namespaces (as root, or as another user
//! where the kernel allows user namespaces), the CLI runs in a PID
//! namespace of its own, in a mount namespace where /proc is a fresh
//! procfs mounted with `subset=pid`: the turn's processes, `self`, and
//! none of the host-wide files (no `kcore`, `net`, `sys`, `cpuinfo`). The
//! sandbox then grants all of that /proc. Elsewhere (no namespace can be
//! made, or the mount is refused, as in a container that hides parts of its
//! /proc) the sandbox stays as it was: the CLI reads its own /proc/self,
//! its children nothing of /proc. `cinch check` says which ([`available`]).
//!
//! The namespace's first process is its init, and the CLI is not it: an
//! init gets no signal from outside that it has no handler for (SIGKILL
//! aside), so the supervisor's SIGTERM would not reach a CLI that never
//! asked for one, and every orphan of the turn would be its to reap. The
//! init is the loop in [`become_init`]: it reaps, and when the CLI ends it
//! records how and leaves, which ends whatever the CLI left behind.

use std::fs::File;
use std::io::{Error, Write as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::ExitStatus;

/// Makes this process's next child the first process of a new PID
/// namespace: as root a plain one; otherwise inside a new user namespace
/// that maps only this process's own ids, where the kernel allows them (the
/// children gain nothing: capabilities there are dropped when they exec).
/// False where neither can be made: the children then share this process's
/// namespace, as before. The process must have a single thread.
pub(crate) fn enter_for_children() -> bool {
    // SAFETY: plain syscalls.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    // SAFETY: unshare takes flags only.
    if uid == 0 && unsafe { libc::unshare(libc::CLONE_NEWPID) } == 0 {
        return true;
    }
    // SAFETY: as above; the caller is single-threaded, as a user namespace needs.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) } == -1 {
        return false;
    }
    // Unmapped, the ids would read as nobody's inside; the kernel still
    // checks the real ones, so a failure here changes nothing outside.
    let _ = map_own_ids(uid, gid);
    true
}

/// Maps, in the user namespace the calling process has just entered, its
/// own user and group ids to themselves, and nothing else.
pub(crate) fn map_own_ids(uid: libc::uid_t, gid: libc::gid_t) -> std::io::Result<()> {
    std::fs::write("/proc/self/setgroups", "deny")?;
    std::fs::write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    std::fs::write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// The id of the calling process as the host sees it (its own namespace
/// numbers it 1): the host's /proc, before [`mount_own_proc`], names it.
pub(crate) fn host_pid() -> std::io::Result<String> {
    let link = std::fs::read_link("/proc/self")?;
    Ok(link.to_string_lossy().into_owned())
}

/// In the namespace's first process: a mount namespace of its own, where
/// /proc is a procfs of this PID namespace's processes only. System calls
/// only, so that a probe may make them after a fork in a process with
/// threads; on failure, the step that failed (errno tells why).
pub(crate) fn mount_own_proc() -> Result<(), &'static str> {
    let null = std::ptr::null();
    // SAFETY: unshare takes flags; mount takes NUL-terminated strings that
    // live through the call, or null where the kernel allows it.
    unsafe {
        if libc::unshare(libc::CLONE_NEWNS) == -1 {
            return Err("making a mount namespace");
        }
        // Private first, so the new /proc does not reach the host's mounts.
        let private = libc::MS_REC | libc::MS_PRIVATE;
        if libc::mount(null, c"/".as_ptr(), null, private, null.cast()) == -1 {
            return Err("making the mounts private");
        }
        let flags = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        let options = c"subset=pid";
        if libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            flags,
            options.as_ptr().cast(),
        ) == -1
        {
            return Err("mounting a /proc of the turn's own");
        }
    }
    Ok(())
}

/// Whether this process may give a turn a PID namespace and /proc of its
/// own: tried in a child, which enters one, and its child, which mounts the
/// /proc (system calls only after the forks, so a process with threads may
/// ask). The ids stay unmapped here; the mounts do not need them.
pub fn available() -> bool {
    let leave = |made: bool| -> ! {
        // SAFETY: the forked child leaves without running the parent's exit handlers.
        unsafe { libc::_exit(if made { 0 } else { 1 }) }
    };
    // SAFETY: the child makes only system calls, then _exits.
    match unsafe { libc::fork() } {
        -1 => false,
        0 => {
            // SAFETY: plain system calls in the forked child.
            let entered = unsafe {
                (libc::geteuid() == 0 && libc::unshare(libc::CLONE_NEWPID) == 0)
                    || libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWPID) == 0
            };
            if !entered {
                leave(false);
            }
            // SAFETY: as above: the grandchild makes only system calls.
            match unsafe { libc::fork() } {
                -1 => leave(false),
                0 => leave(mount_own_proc().is_ok()),
                init => leave(exited_cleanly(init)),
            }
        }
        child => exited_cleanly(child),
    }
}

/// Waits for the child `pid` of this process: whether it exited with 0.
pub(crate) fn exited_cleanly(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: waits for a child of this process.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    waited == pid && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

fn context(what: &str) -> Error {
    let error = Error::last_os_error();
    Error::new(error.kind(), format!("{what}: {error}"))
}

/// Forks the CLI's process. Returns in the child, which goes on to exec the
/// CLI; the parent becomes the namespace's init and never returns. `status`
/// receives the CLI's wait status when it ends.
///
/// # Safety
/// The caller must be single-threaded (a child between fork and exec).
pub(crate) unsafe fn fork_cli(status: File) -> std::io::Result<()> {
    // SAFETY: the caller is single-threaded, as this function requires.
    match unsafe { libc::fork() } {
        -1 => Err(context("starting the CLI's process")),
        0 => Ok(()),
        cli => become_init(cli, status),
    }
}

/// Reaps every process of the namespace until the CLI ends, writes its wait
/// status to `status`, and exits (the kernel then ends the namespace's
/// other processes).
fn become_init(cli: libc::pid_t, mut status: File) -> ! {
    // Nothing of the CLI's stays open here: not its stdin (whose end must
    // reach it alone) nor the pipe through which the supervisor learns
    // that the exec happened, which it reads until every copy is closed.
    let kept = status.as_raw_fd() as libc::c_uint;
    // SAFETY: closes descriptors of this process only.
    unsafe {
        if kept > 0 {
            libc::close_range(0, kept - 1, 0);
        }
        libc::close_range(kept + 1, libc::c_uint::MAX, 0);
    }
    let mut raw = 0;
    loop {
        // SAFETY: waits for any child of this process.
        let reaped = unsafe { libc::waitpid(-1, &mut raw, 0) };
        if reaped == cli {
            break;
        }
        if reaped == -1 && Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            break;
        }
    }
    let _ = status.write_all(raw.to_string().as_bytes());
    let ended = ExitStatus::from_raw(raw);
    let code = ended
        .code()
        .or_else(|| ended.signal().map(|signal| 128 + signal))
        .unwrap_or(1);
    // SAFETY: leaves without running the forked parent's exit handlers.
    unsafe { libc::_exit(code) }
}

/// The CLI's wait status, as its namespace's init recorded it; `None` when
/// the init did not (it was killed first).
pub(crate) fn recorded_status(path: &Path) -> Option<ExitStatus> {
    let raw = std::fs::read_to_string(path).ok()?.trim().parse().ok()?;
    Some(ExitStatus::from_raw(raw))
}
