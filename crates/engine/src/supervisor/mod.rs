//! The supervisor: a detached process (`cinch supervise TURN_DIR`) that owns
//! one turn's CLI.
//!
//! It detaches into a session of its own, so neither a Ctrl-C in the
//! terminal nor the death of the `cinch` that started it reaches the turn.
//! It starts the CLI in a process group of its own, with its stdout appended
//! to the raw log and its stderr kept, enforces the turn's timeout, its
//! watchdog (the raw log has not grown for the turn's idle limit) and stop
//! requests (SIGTERM to the group, SIGKILL ten seconds later), and records
//! how the CLI ended. It is a child subreaper, so descendants that escape the
//! group (a `setsid` grandchild) are still its own to find and kill: when it
//! writes the exit record, no process of the turn is left.
//!
//! A conversation turn (an ACP agent) gets a pipe for stdin: the supervisor
//! forwards every line the host appends to the turn's `stdin.jsonl`, in
//! order, as the file grows, and closes the pipe [`CLOSE_SETTLE`] after the
//! host writes `close-stdin` (the CLI then has [`CLOSE_GRACE`] before its
//! group is ended). The pipe is the supervisor's, so a host that dies and comes back
//! finds the conversation where it left it. A one-way turn's `close-stdin`
//! (its driver saw that the CLI cannot succeed) ends its group at once.
//!
//! It sleeps until something happens: the CLI's exit (a pidfd), a poke on
//! the turn's `wake` FIFO (whoever writes a stop request, a line to forward
//! or `close-stdin` pokes it), room in the pipe, or the next instant a clock
//! needs looking at (the timeout, the watchdog, a grace period). There is no
//! polling tick.
//!
//! When the turn has a sandbox policy, the CLI's child applies it between
//! fork and exec (this process has no threads, so the child may allocate),
//! and joins the turn's cgroup; the supervisor itself, its exit record and
//! the raw log stay outside the domain. Where it can, the supervisor also
//! gives the turn a PID namespace with a /proc of its own (see
//! [`crate::sandbox::namespace`]): its child is then the namespace's init,
//! which forks the CLI and records how the CLI ended.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::os::unix::process::{CommandExt as _, ExitStatusExt as _};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;

use crate::sandbox::{Cgroup, ProcView, namespace};
use crate::turn_dir::{
    ExitRecord, FileLock, Launch, StopReason, TurnDir, now_ms, record_json, record_private,
};

/// How long the CLI has between SIGTERM and SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(10);

/// How long a conversation's CLI keeps its stdin after the host has its
/// answer: an agent records its session after answering (qwen-code writes
/// the model's reply to its session file then), and some exit at once on EOF.
pub(crate) const CLOSE_SETTLE: Duration = Duration::from_secs(1);

/// How long a conversation's CLI has after its stdin is closed before its
/// group is ended (ACP agents such as claude-agent-acp never exit on EOF).
pub(crate) const CLOSE_GRACE: Duration = Duration::from_secs(2);

mod channel;
mod wake;

use channel::StdinChannel;
use wake::Waker;

/// Runs the supervisor for the turn in `turn_dir`. Called by `cinch
/// supervise` before anything else starts a thread: it forks.
pub fn run(turn_dir: &Path) -> anyhow::Result<()> {
    let (turn, launch) = TurnDir::open(turn_dir)?;
    // Held until this process ends: the host's way to tell it is alive. It is
    // taken before the fork, so it is held by the time the spawner returns.
    let _alive = FileLock::try_take(&turn.supervisor_lock())?
        .context("another supervisor already holds this turn")?;
    detach()?;
    record_private(
        &turn.supervisor_pid(),
        std::process::id().to_string().as_bytes(),
    )?;
    // SAFETY: prctl with integer arguments only.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };

    let cgroup = launch
        .sandbox
        .as_ref()
        .map(|policy| Cgroup::create(&format!("cinch-{}", launch.turn), &policy.limits));
    let record = match spawn(&launch, &turn, cgroup.as_ref()) {
        Ok(spawned) => supervise(spawned, &launch, &turn),
        Err(error) => ExitRecord {
            code: None,
            signal: None,
            spawn_error: Some(format!("{error:#}")),
            ended_at_ms: now_ms(),
            survivors: Vec::new(),
        },
    };
    let _ = std::fs::remove_file(&launch.prompt);
    if let Some(cgroup) = cgroup {
        cgroup.remove();
    }
    if let Some(tmpdir) = &launch.tmpdir {
        let _ = std::fs::remove_dir_all(tmpdir);
    }
    // Told to the engine, as the turn's other records are (see
    // `record_private`): a power cut ends the turn with it. Waiting for
    // the disk was one of a turn end's three `fsync`s, each a commit of the
    // file system's journal that other writers wait behind.
    record_json(&turn.exit(), &record)
}

/// Forks so that the parent (the `cinch` that spawned us and waits) can
/// return at once, and moves the child into a new session.
fn detach() -> anyhow::Result<()> {
    // SAFETY: no other thread exists yet in this process (see `run`), so the
    // child of fork is in a consistent state.
    match unsafe { libc::fork() } {
        -1 => Err(std::io::Error::last_os_error()).context("fork"),
        0 => {
            // SAFETY: plain syscall in the child.
            if unsafe { libc::setsid() } == -1 {
                return Err(std::io::Error::last_os_error()).context("setsid");
            }
            lower_session_priority();
            Ok(())
        }
        _ => std::process::exit(0),
    }
}

/// How much a turn's session yields the CPU to the rest of the machine (an
/// autogroup's nice value, see sched(7)).
const SESSION_NICENESS: &str = "10";

/// Lowers the priority of this new session as a whole. Where the kernel
/// groups processes by session (its autogroups, on by default), a session
/// shares the CPU as one, whatever its processes' nice values: every turn's
/// CLI, in a session of its own, would weigh as much as the whole server
/// that moves every turn's lines, and two CLIs running builds left the
/// server a third of the CPU. Raising one's own group's nice value needs no
/// privilege; without autogroups there is no such group, and nothing to do.
fn lower_session_priority() {
    let _ = std::fs::write("/proc/self/autogroup", SESSION_NICENESS);
}

/// The turn's first process: the CLI, or the init of its PID namespace.
struct Spawned {
    child: std::process::Child,
    /// Where that init records how the CLI ended, when there is one.
    cli_status: Option<std::path::PathBuf>,
}

fn spawn(launch: &Launch, turn: &TurnDir, cgroup: Option<&Cgroup>) -> anyhow::Result<Spawned> {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&launch.log)
        .with_context(|| format!("opening the log {}", launch.log.display()))?;
    let stderr = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(turn.stderr())
        .context("creating the stderr file")?;
    let stdin = match &launch.stdin {
        _ if launch.conversation.is_some() => Stdio::piped(),
        Some(path) => {
            Stdio::from(File::open(path).with_context(|| format!("opening {}", path.display()))?)
        }
        None => Stdio::null(),
    };
    let mut command = Command::new(&launch.program);
    command
        .args(&launch.args)
        .current_dir(&launch.workdir)
        .stdin(stdin)
        .stdout(log)
        .stderr(stderr)
        .process_group(0);
    let policy = launch.sandbox.clone().map(|mut policy| {
        policy.cgroups = cgroup.map(Cgroup::procs_files).unwrap_or_default();
        policy
    });
    let pid_file = turn.pid();
    let cli_status =
        (policy.is_some() && namespace::enter_for_children()).then(|| turn.cli_status());
    let status_file = cli_status.clone();
    // SAFETY: this process is single-threaded (see `run`), so the forked
    // child may allocate; the closure touches only its own copies.
    unsafe {
        command.pre_exec(move || {
            use std::io::Write as _;
            // The child records its process group itself, before the CLI
            // runs: were this supervisor killed right after the fork, the
            // engine still finds the group to kill.
            // Not synced: a process group outlives no machine restart.
            let group = match &status_file {
                Some(_) => namespace::host_pid()?,
                None => std::process::id().to_string(),
            };
            private_file(&pid_file)?.write_all(group.as_bytes())?;
            let Some(policy) = &policy else {
                return Ok(());
            };
            let proc_view = match &status_file {
                Some(path) => {
                    let status = private_file(path)?;
                    // Where the mount is refused (a container that hides
                    // parts of its /proc), the host's /proc stays, and with
                    // it the CLI's own entry only, as `cinch check` says.
                    let view = match namespace::mount_own_proc() {
                        Ok(()) => ProcView::Namespace,
                        Err(_) => ProcView::OwnEntry,
                    };
                    // The closure runs single-threaded (see the SAFETY above).
                    namespace::fork_cli(status).map_err(|error| refuse(&error))?;
                    view
                }
                None => ProcView::OwnEntry,
            };
            policy
                .enforce(proc_view)
                .map(drop)
                .map_err(|error| refuse(&error))
        });
    }
    let child = command.spawn().with_context(|| {
        if launch.sandbox.is_some() {
            format!(
                "starting {} in the sandbox (its stderr says why it could not)",
                launch.program.display()
            )
        } else {
            format!("starting {}", launch.program.display())
        }
    })?;
    Ok(Spawned { child, cli_status })
}

/// A file of the turn only its owner reads, emptied.
fn private_file(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
}

/// The error the CLI's child returns when its sandbox cannot be set up.
/// Only an errno crosses back to the parent: the reason goes to the CLI's
/// stderr, which the result shows.
fn refuse(error: &dyn std::fmt::Display) -> std::io::Error {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr(), "cinch sandbox: {error}");
    std::io::Error::from_raw_os_error(libc::EPERM)
}

fn supervise(spawned: Spawned, launch: &Launch, turn: &TurnDir) -> ExitRecord {
    let Spawned {
        mut child,
        cli_status,
    } = spawned;
    let group = child.id() as i32;
    let deadline_ms = launch.started_at_ms.saturating_add(launch.timeout_ms);
    let idle_limit = launch.idle_limit_ms.map(Duration::from_millis);
    let output = OutputClock::new(&launch.log, turn);
    let mut channel = child
        .stdin
        .take()
        .map(|pipe| StdinChannel::new(pipe, turn.stdin_lines()));
    let mut waker = Waker::new(child.id(), &turn.wake_fifo());
    let mut terminated_at: Option<Instant> = None;
    let mut close_asked_at: Option<Instant> = None;
    let mut killed = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        // The host has the turn's answer: a conversation's, or a one-way
        // turn's driver that saw the CLI cannot succeed (a refused key).
        if close_asked_at.is_none() && turn.close_stdin().exists() {
            close_asked_at = Some(Instant::now());
        }
        if let Some(channel) = channel.as_mut() {
            channel.forward();
            if close_asked_at.is_some_and(|at| at.elapsed() >= CLOSE_SETTLE) {
                channel.close_when_flushed();
            }
        }
        // When to look at the clocks again, if nothing else happens first.
        let mut next: Option<Duration> = None;
        let mut soonest = |after: Duration| next = Some(next.map_or(after, |n| n.min(after)));
        if terminated_at.is_none() {
            let reason = turn.stop_reason();
            let now = now_ms();
            let reason = reason
                .or_else(|| (now >= deadline_ms).then_some(StopReason::TimedOut))
                .or_else(|| {
                    let limit = idle_limit?;
                    let quiet = output.quiet_for();
                    if quiet >= limit {
                        return Some(StopReason::NoOutput);
                    }
                    soonest(limit - quiet);
                    None
                });
            // A one-way turn has no stdin to flush: its CLI goes at once.
            let close_ends = if channel.is_some() {
                CLOSE_SETTLE + CLOSE_GRACE
            } else {
                Duration::ZERO
            };
            let closed_long_enough = close_asked_at.is_some_and(|at| at.elapsed() >= close_ends);
            if let Some(reason) = reason {
                let _ = turn.request_stop(reason);
                signal_group(group, libc::SIGTERM);
                terminated_at = Some(Instant::now());
            } else if closed_long_enough {
                // The conversation is over: the host has its answer; the CLI
                // only has to go. No stop reason: the turn was not stopped.
                signal_group(group, libc::SIGTERM);
                terminated_at = Some(Instant::now());
            } else {
                soonest(Duration::from_millis(deadline_ms.saturating_sub(now)));
                if let Some(at) = close_asked_at {
                    let elapsed = at.elapsed();
                    if elapsed < CLOSE_SETTLE {
                        soonest(CLOSE_SETTLE - elapsed);
                    }
                    soonest(close_ends.saturating_sub(elapsed));
                }
            }
        }
        if let Some(at) = terminated_at
            && !killed
        {
            if at.elapsed() >= KILL_GRACE {
                signal_group(group, libc::SIGKILL);
                killed = true;
            } else {
                soonest(KILL_GRACE - at.elapsed());
            }
        }
        let writable = channel.as_ref().and_then(StdinChannel::waiting_to_write);
        waker.wait(next, writable);
    };
    let survivors = sweep(group);
    // The CLI's own end, when an init stood between it and this process.
    let status = cli_status
        .as_deref()
        .and_then(namespace::recorded_status)
        .or(status);
    ExitRecord {
        code: status.and_then(|status| status.code()),
        signal: status.and_then(|status| status.signal()),
        spawn_error: None,
        ended_at_ms: now_ms(),
        survivors,
    }
}

/// How long the raw log has not grown: the watchdog's measure of a harness
/// that writes nothing. The log's modification time says when it last grew,
/// so the supervisor need only look when the limit would be reached. A turn
/// waiting on an approval is not silent (the approval's deadline decides),
/// and its quiet starts again when the answer is written to its stdin.
struct OutputClock<'a> {
    log: &'a Path,
    turn: &'a TurnDir,
    started: SystemTime,
}

impl<'a> OutputClock<'a> {
    fn new(log: &'a Path, turn: &'a TurnDir) -> Self {
        Self {
            log,
            turn,
            started: SystemTime::now(),
        }
    }

    fn quiet_for(&self) -> Duration {
        if self.turn.awaiting_approval().exists() {
            return Duration::ZERO;
        }
        let modified = |path: &Path| std::fs::metadata(path).and_then(|meta| meta.modified());
        let written = [modified(self.log), modified(&self.turn.stdin_lines())]
            .into_iter()
            .flatten()
            .fold(self.started, SystemTime::max);
        written.elapsed().unwrap_or_default()
    }
}

fn signal_group(group: i32, signal: i32) {
    // SAFETY: kill with a negative pid signals the process group.
    unsafe { libc::kill(-group, signal) };
}

/// Kills what is left of the turn: the CLI's process group, then every
/// descendant that was reparented to us, and reaps them. Returns the pids
/// still alive after a bounded effort.
fn sweep(group: i32) -> Vec<i32> {
    let started = Instant::now();
    let me = std::process::id() as i32;
    loop {
        signal_group(group, libc::SIGKILL);
        let children = children_of(me);
        for pid in &children {
            // SAFETY: signalling a process that is our own child.
            unsafe { libc::kill(*pid, libc::SIGKILL) };
        }
        reap();
        let left = children_of(me);
        if left.is_empty() || started.elapsed() > Duration::from_secs(5) {
            return left;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn reap() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on any child, without blocking.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// The processes whose parent is `parent` (this single-threaded process):
/// the kernel's own list when it keeps one, else a scan of /proc. The list
/// matters when many turns end at once: a scan reads every process's stat.
fn children_of(parent: i32) -> Vec<i32> {
    if let Ok(list) = std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")) {
        return list
            .split_whitespace()
            .filter_map(|pid| pid.parse().ok())
            .collect();
    }
    let Ok(listing) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    listing
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: fields start after the last ')'.
    let fields = &stat[stat.rfind(')')? + 1..];
    fields.split_whitespace().nth(1)?.parse().ok()
}
