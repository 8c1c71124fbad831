//! Running a child with a deadline, without leaving any of its processes behind.

use std::io::{self, Read};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

/// How long to wait for the output pipes to close after the child is gone: a grandchild that
/// left its process group could hold them open for ever.
const DRAIN: Duration = Duration::from_secs(5);

/// What a child did.
#[derive(Debug)]
pub struct RunOutput {
    /// How it ended; after a timeout, the SIGKILL that ended it.
    pub status: ExitStatus,
    /// Whether the deadline passed and it was killed.
    pub timed_out: bool,
    /// Its standard output (lossily UTF-8).
    pub stdout: String,
    /// Its standard error (lossily UTF-8).
    pub stderr: String,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl RunOutput {
    /// The exit code, or `None` when a signal ended it.
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Whether it exited with 0.
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// The signal that ended it, if one did.
    pub fn signal(&self) -> Option<i32> {
        self.status.signal()
    }

    /// How it ended and everything it printed, for a failed assertion.
    pub fn describe(&self) -> String {
        format!(
            "exit {:?} (timed out: {})\n--- stdout\n{}\n--- stderr\n{}",
            self.code(),
            self.timed_out,
            self.stdout,
            self.stderr
        )
    }
}

/// Runs `cmd` with standard input from /dev/null and its output captured, in a process group
/// of its own. When `timeout` passes, the group is sent SIGKILL; when the child exits, any
/// process it left in its group is killed too, so nothing the test started outlives the call.
pub fn run_with_timeout(cmd: &mut Command, timeout: Duration) -> io::Result<RunOutput> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let pgid = child.id() as libc::pid_t;
    let (done_tx, done_rx) = mpsc::channel();
    let stdout = child.stdout.take().map(|p| collect(p, done_tx.clone()));
    let stderr = child.stderr.take().map(|p| collect(p, done_tx));
    let readers = usize::from(stdout.is_some()) + usize::from(stderr.is_some());
    let deadline = start + timeout;
    let mut timed_out = false;
    // The child is reaped only after its group is killed: until then its pid, and so the group
    // id, cannot be reused by a process that is not ours.
    loop {
        if exited(pgid)? {
            break;
        }
        if Instant::now() >= deadline {
            timed_out = true;
            break;
        }
        thread::sleep(Duration::from_millis(20));
    }
    kill_group(pgid);
    let status = child.wait()?;
    let elapsed = start.elapsed();
    let drain_deadline = Instant::now() + DRAIN;
    for _ in 0..readers {
        let left = drain_deadline.saturating_duration_since(Instant::now());
        if done_rx.recv_timeout(left).is_err() {
            break;
        }
    }
    let text = |buf: Option<Sink>| {
        buf.map(|b| {
            String::from_utf8_lossy(&b.lock().unwrap_or_else(PoisonError::into_inner)).into_owned()
        })
        .unwrap_or_default()
    };
    Ok(RunOutput {
        status,
        timed_out,
        stdout: text(stdout),
        stderr: text(stderr),
        elapsed,
    })
}

/// Where a reader thread puts what it read: shared, so that what arrived before a stuck pipe
/// is still there when the caller gives up on it.
type Sink = Arc<Mutex<Vec<u8>>>;

/// Reads `pipe` to its end on a thread of its own, then says so on `done`.
fn collect(mut pipe: impl Read + Send + 'static, done: mpsc::Sender<()>) -> Sink {
    let sink = Sink::default();
    let filled = Arc::clone(&sink);
    thread::spawn(move || {
        let mut chunk = [0u8; 8192];
        while let Ok(n) = pipe.read(&mut chunk) {
            if n == 0 {
                break;
            }
            filled
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .extend_from_slice(&chunk[..n]);
        }
        let _ = done.send(());
    });
    sink
}

/// Whether the child has exited, leaving it unreaped.
fn exited(pid: libc::pid_t) -> io::Result<bool> {
    // SAFETY: siginfo_t is plain data, and waitid only writes into it.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: WNOWAIT leaves the child to be reaped by `Child::wait`.
    let r = unsafe {
        libc::waitid(
            libc::P_PID,
            pid as libc::id_t,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: with WNOHANG, si_pid is 0 when no child has changed state.
    Ok(unsafe { info.si_pid() } != 0)
}

/// SIGKILL to the process group the child leads; its id is the child's pid. ESRCH (the group
/// is already empty) is the usual outcome after a clean exit.
fn kill_group(pgid: libc::pid_t) {
    // SAFETY: kill(2) takes plain integers; a negative pid addresses the group we created.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}
