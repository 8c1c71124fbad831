//! A turn's files under cinch's home, shared by the engine and the
//! supervisor.
//!
//! `turns/<turn>/` holds what the engine and the supervisor share: the
//! launch record, the CLI's process group, its stderr, its exit record, the
//! stop request, the FIFO that wakes the supervisor, the events and, once
//! the turn has ended, its result. The raw output goes to
//! `runs/<run>/<turn>.harness.jsonl`, kept like a shell log; a run's folder
//! names the agent whose run it is (`.agent`, and an index of runs by agent,
//! `runs-by-agent/`), and the folders of each agent's [`RUNS_KEPT`] most
//! recent runs are kept. While a turn runs, the values to mask in what it
//! shows wait in the secrets folder (`secrets/turns/<turn>.json`, sealed
//! under the node's secrets key when the engine has one); once it has ended
//! its log and stderr are masked in place and that file goes.

mod files;
mod lock;
mod records;
mod retention;
mod secrets;
pub mod worktrees;

pub use crate::clock::now_ms;
pub use files::{
    read_json, read_json_if_present, record_json, record_private, write_json, write_private,
};
pub use lock::{FileLock, WorktreeLock};
pub use records::{ConversationLaunch, DriverUsed, ExitRecord, Launch, StopReason};
pub use retention::{FollowedRun, RUNS_KEPT, prune_runs_unless_pruning};
pub use secrets::{KeptSecrets, SecretsSeal, forget_secrets, kept_secrets, redact_file};

use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::home::{Home, create_private_dir};
use retention::OWNER_FILE;

/// How a turn's raw log is named in its run's folder: the turn's id, then
/// this (pruning finds a run's turns by their logs).
const LOG_SUFFIX: &str = ".harness.jsonl";

/// Turn and run ids: letters, digits, `_ . -`, so they are safe as file names.
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 100
        && !id.starts_with('.')
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The places of one turn.
#[derive(Debug, Clone)]
pub struct TurnDir {
    dir: PathBuf,
    log: PathBuf,
}

impl TurnDir {
    /// The turn `turn` of run `run`; both must be valid ids.
    pub fn new(home: &Home, run: &str, turn: &str) -> anyhow::Result<Self> {
        anyhow::ensure!(is_valid_id(run), "`{run}` is not a valid run id");
        anyhow::ensure!(is_valid_id(turn), "`{turn}` is not a valid turn id");
        Ok(Self {
            dir: turns_dir(home).join(turn),
            log: home
                .root()
                .join("runs")
                .join(run)
                .join(format!("{turn}{LOG_SUFFIX}")),
        })
    }

    /// An existing turn, found by its id, with its launch record.
    pub fn find(home: &Home, turn: &str) -> anyhow::Result<(Self, Launch)> {
        anyhow::ensure!(is_valid_id(turn), "`{turn}` is not a valid turn id");
        Self::open(&turns_dir(home).join(turn))
            .with_context(|| format!("no turn `{turn}` (see `cinch turns`)"))
    }

    /// The turn whose folder is `dir`, with its launch record.
    pub fn open(dir: &Path) -> anyhow::Result<(Self, Launch)> {
        let launch: Launch = read_json(&dir.join("launch.json"))?;
        let turn = Self {
            dir: dir.to_path_buf(),
            log: launch.log.clone(),
        };
        Ok((turn, launch))
    }

    /// Creates the turn's folder, its run's folder, which it marks as
    /// `agent`'s run (none: a run of no agent), and its empty log. The lock
    /// returned says the turn is starting: hold it until the supervisor holds
    /// its own, so that no one prunes the run in between.
    pub fn create(&self, agent: Option<&str>) -> anyhow::Result<FileLock> {
        create_private_dir(&self.dir)?;
        let starting = FileLock::try_take(&self.starting_lock())?
            .context("another process is starting this turn")?;
        let run = self.run_dir();
        create_private_dir(run)?;
        if let Some(agent) = agent {
            record_private(&run.join(OWNER_FILE), agent.as_bytes())?;
        }
        retention::index_run(run, agent)?;
        // Pruning finds a run's turns by their logs.
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.log)
            .with_context(|| format!("creating the log {}", self.log.display()))?;
        Ok(starting)
    }

    /// Whether the turn is still someone's to finish: it is starting, its
    /// supervisor lives, or its CLI has exited and its result is not written
    /// yet.
    ///
    /// Each hand-over is looked at before what it hands over to: the
    /// starting process lets go of its lock only once the supervisor holds
    /// its own, and the supervisor lets go of its lock only once the exit is
    /// recorded. Looked at the other way round, a turn passing from one to
    /// the next in between would look finished (its run pruned while it
    /// still ran).
    pub(crate) fn is_unfinished(&self) -> bool {
        !self.result().exists()
            && (self.is_starting()
                || FileLock::is_held(&self.supervisor_lock())
                || self.exit().exists())
    }

    /// Whether the process starting the turn is still at it (its
    /// supervisor is not running yet).
    pub(crate) fn is_starting(&self) -> bool {
        FileLock::is_held(&self.starting_lock())
    }

    /// Asks the turn's supervisor to stop the CLI, for `reason`; the first
    /// reason asked for stays.
    pub(crate) fn request_stop(&self, reason: StopReason) -> anyhow::Result<()> {
        if self.stop().exists() {
            return Ok(());
        }
        write_private(&self.stop(), reason.as_str().as_bytes())?;
        self.wake_supervisor();
        Ok(())
    }

    /// Wakes the turn's supervisor to look at the files it acts on (the
    /// stop request, the stdin lines, the close request): called after
    /// writing one. Nothing happens when no supervisor runs: one that
    /// starts later looks at them before it first sleeps.
    pub fn wake_supervisor(&self) {
        use std::io::Write as _;
        let poke = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(self.wake_fifo());
        // A full FIFO holds a poke already; no reader: no supervisor.
        if let Ok(mut fifo) = poke {
            let _ = fifo.write(b"!");
        }
    }

    /// Why the turn is being stopped, once someone asked.
    pub fn stop_reason(&self) -> Option<StopReason> {
        std::fs::read_to_string(self.stop())
            .ok()
            .and_then(|text| StopReason::parse(&text))
    }

    /// The turn's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The raw harness log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// The folder of the turn's run, which holds its log.
    pub(crate) fn run_dir(&self) -> &Path {
        self.log.parent().expect("a log has a folder")
    }

    /// What was started: written by the engine, read by the supervisor.
    pub fn launch(&self) -> PathBuf {
        self.dir.join("launch.json")
    }

    /// The prompt file (mode 0600), removed once the CLI has exited.
    pub fn prompt(&self) -> PathBuf {
        self.dir.join("prompt.md")
    }

    /// The process group of the turn's processes: the CLI's id, or, when
    /// the CLI runs in a PID namespace of its own, its init's.
    pub fn pid(&self) -> PathBuf {
        self.dir.join("pid")
    }

    /// How the CLI ended (its wait status), as the init of its own PID
    /// namespace saw it.
    pub(crate) fn cli_status(&self) -> PathBuf {
        self.dir.join("cli-status")
    }

    /// The turn's temporary folder, the harness's `TMPDIR`.
    pub fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
    }

    /// What the egress proxy refused, one JSON line each, when the turn's
    /// network is limited to its environment's `allowed_hosts`.
    pub(crate) fn egress_refusals(&self) -> PathBuf {
        self.dir.join("egress-refusals.jsonl")
    }

    /// The CLI's standard error.
    pub fn stderr(&self) -> PathBuf {
        self.dir.join("stderr")
    }

    /// How the CLI ended, written by the supervisor.
    pub fn exit(&self) -> PathBuf {
        self.dir.join("exit.json")
    }

    /// Why the turn is being stopped, written by whoever stops it.
    pub fn stop(&self) -> PathBuf {
        self.dir.join("stop")
    }

    /// The supervisor's process id.
    pub(crate) fn supervisor_pid(&self) -> PathBuf {
        self.dir.join("supervisor.pid")
    }

    /// Held (flock) by the process starting the turn until its supervisor
    /// runs.
    pub(crate) fn starting_lock(&self) -> PathBuf {
        self.dir.join("starting.lock")
    }

    /// Held (flock) by the supervisor for as long as it lives.
    pub fn supervisor_lock(&self) -> PathBuf {
        self.dir.join("supervisor.lock")
    }

    /// Held by whoever writes the turn's result, so only one does.
    pub(crate) fn finish_lock(&self) -> PathBuf {
        self.dir.join("finish.lock")
    }

    /// The session id, as soon as the driver reports it.
    pub fn session(&self) -> PathBuf {
        self.dir.join("session")
    }

    /// The turn's result, once it has ended.
    pub fn result(&self) -> PathBuf {
        self.dir.join("result.json")
    }

    /// A conversation's lines for the CLI's stdin, one JSON message a line:
    /// the opening written before the start, then each reply appended whole.
    /// The supervisor forwards it to the CLI as it grows.
    pub(crate) fn stdin_lines(&self) -> PathBuf {
        self.dir.join("stdin.jsonl")
    }

    /// Written by the host once a turn's answer has arrived: the supervisor
    /// closes the CLI's stdin (a conversation's) and, after a short grace,
    /// ends it.
    pub fn close_stdin(&self) -> PathBuf {
        self.dir.join("close-stdin")
    }

    /// How many stop lines the host appended to [`TurnDir::stdin_lines`]
    /// (written before them), so that a restarted host counts its replies.
    pub(crate) fn stop_lines_sent(&self) -> PathBuf {
        self.dir.join("stop-lines")
    }

    /// The host's decision on the agent's permission request `key`, left
    /// by whoever took it for the turn's follower to answer (see
    /// `engine::conversation`).
    pub fn answer(&self, key: &str) -> PathBuf {
        let digest = cinch_runtime::sha256_hex(key.as_bytes());
        self.dir
            .join(format!("{ANSWER_PREFIX}{}.json", &digest[..32]))
    }

    /// The answers written to the agent, one JSON line each, recorded
    /// before their lines: a restarted host gives them to its driver again
    /// without writing them twice.
    pub fn answered(&self) -> PathBuf {
        self.dir.join("answered.jsonl")
    }

    /// Present while a permission request of the agent waits for a
    /// decision: the supervisor's watchdog does not count that wait as
    /// silence (the approval's deadline decides it).
    pub(crate) fn awaiting_approval(&self) -> PathBuf {
        self.dir.join("awaiting-approval")
    }

    /// The FIFO the supervisor sleeps on: see [`TurnDir::wake_supervisor`].
    pub(crate) fn wake_fifo(&self) -> PathBuf {
        self.dir.join("wake")
    }

    /// Written by whoever cancels a conversation turn: its follower sends the
    /// driver's graceful lines first, then the stop request follows.
    pub(crate) fn cancel_request(&self) -> PathBuf {
        self.dir.join("cancel")
    }
}

/// How the files of [`TurnDir::answer`] begin: their arrival wakes the turn.
pub const ANSWER_PREFIX: &str = "answer-";

/// Where every turn's folder is.
pub fn turns_dir(home: &Home) -> PathBuf {
    home.root().join("turns")
}
