//! A turn's files under cinch's home.
//!
//! `turns/<turn>/` holds what the engine and the supervisor share: the
//! launch record, the CLI's process group, its stderr, its exit record, the
//! stop request, the events and, once the turn has ended, its result. The raw
//! output goes to `runs/<run>/<turn>.harness.jsonl`, kept like a shell log;
//! a run's folder names the agent whose run it is (`.agent`), and the
//! folders of each agent's [`RUNS_KEPT`] most recent runs are kept. While a
//! turn runs, the values to mask in what it shows wait in the secrets folder
//! (`secrets/turns/<turn>.json`, beside the environments' secrets); once it has
//! ended its log and stderr are masked in place and that file goes.

use std::fs::File;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::home::{Home, create_private_dir};

/// How many runs' logs are kept for each agent; older run folders are deleted.
pub const RUNS_KEPT: usize = 20;

/// The file in a run's folder naming the agent whose run it is.
const OWNER_FILE: &str = ".agent";

/// The runs of no agent (`cinch run` in a terminal) are kept together.
const NO_AGENT: &str = "";

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
                .join(format!("{turn}.harness.jsonl")),
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
        let run = self.log.parent().expect("a log has a folder");
        create_private_dir(run)?;
        if let Some(agent) = agent {
            write_private(&run.join(OWNER_FILE), agent.as_bytes())?;
        }
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
    pub fn is_unfinished(&self) -> bool {
        !self.result().exists()
            && (self.exit().exists()
                || FileLock::is_held(&self.supervisor_lock())
                || self.is_starting())
    }

    /// Whether the process starting the turn is still at it (its
    /// supervisor is not running yet).
    pub fn is_starting(&self) -> bool {
        FileLock::is_held(&self.starting_lock())
    }

    /// The turn's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The raw harness log.
    pub fn log(&self) -> &Path {
        &self.log
    }

    /// What was started: written by the engine, read by the supervisor.
    pub fn launch(&self) -> PathBuf {
        self.dir.join("launch.json")
    }

    /// The prompt file (mode 0600), removed once the CLI has exited.
    pub fn prompt(&self) -> PathBuf {
        self.dir.join("prompt.md")
    }

    /// The CLI's process id, which is also its process group.
    pub fn pid(&self) -> PathBuf {
        self.dir.join("pid")
    }

    /// The turn's temporary folder, the harness's `TMPDIR`.
    pub fn tmp(&self) -> PathBuf {
        self.dir.join("tmp")
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
    pub fn supervisor_pid(&self) -> PathBuf {
        self.dir.join("supervisor.pid")
    }

    /// Held (flock) by the process starting the turn until its supervisor
    /// runs.
    pub fn starting_lock(&self) -> PathBuf {
        self.dir.join("starting.lock")
    }

    /// Held (flock) by the supervisor for as long as it lives.
    pub fn supervisor_lock(&self) -> PathBuf {
        self.dir.join("supervisor.lock")
    }

    /// Held by whoever writes the turn's result, so only one does.
    pub fn finish_lock(&self) -> PathBuf {
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
    pub fn stdin_lines(&self) -> PathBuf {
        self.dir.join("stdin.jsonl")
    }

    /// Written by the host once a conversation's answer has arrived: the
    /// supervisor closes the CLI's stdin and, after a short grace, ends it.
    pub fn close_stdin(&self) -> PathBuf {
        self.dir.join("close-stdin")
    }

    /// How many stop lines the host appended to [`TurnDir::stdin_lines`]
    /// (written before them), so that a restarted host counts its replies.
    pub fn stop_lines_sent(&self) -> PathBuf {
        self.dir.join("stop-lines")
    }

    /// Written by whoever cancels a conversation turn: its follower sends the
    /// driver's graceful lines first, then the stop request follows.
    pub fn cancel_request(&self) -> PathBuf {
        self.dir.join("cancel")
    }
}

/// Where every turn's folder is.
pub fn turns_dir(home: &Home) -> PathBuf {
    home.root().join("turns")
}

/// What the supervisor starts. Holds no secret: the environment reaches the
/// supervisor as its own environment, never on disk.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Launch {
    /// The turn's id.
    pub turn: String,
    /// The run it belongs to.
    pub run: String,
    /// The driver's name.
    pub harness: String,
    /// The repository as the user named it.
    pub repository: String,
    /// Where the CLI runs.
    pub workdir: PathBuf,
    /// The CLI's executable.
    pub program: PathBuf,
    /// Its arguments (never the brief).
    pub args: Vec<String>,
    /// A file to pipe to its stdin; none gives it an empty stdin.
    pub stdin: Option<PathBuf>,
    /// The raw log its stdout is appended to.
    pub log: PathBuf,
    /// The prompt file, removed once the CLI has exited.
    pub prompt: PathBuf,
    /// Seconds since the epoch when the turn started.
    pub started_at_ms: u64,
    /// When the supervisor stops the CLI on its own.
    pub timeout_ms: u64,
    /// The watchdog: the supervisor stops the CLI once its raw log has not
    /// grown for this long. None (a turn started before there was one): never.
    #[serde(default)]
    pub idle_limit_ms: Option<u64>,
    /// The session resumed, if any.
    pub resumed_session: Option<String>,
    /// The start checkpoint's commit.
    pub start_checkpoint: Option<String>,
    /// The CLI's version, when it said.
    pub cli_version: Option<String>,
    /// What the CLI may reach; `None` runs it with cinch's own access.
    #[serde(default)]
    pub sandbox: Option<crate::sandbox::Policy>,
    /// The turn's private temporary folder (its `TMPDIR`), removed at the end.
    #[serde(default)]
    pub tmpdir: Option<PathBuf>,
    /// The agent whose run it is, when an agent's.
    #[serde(default)]
    pub agent: Option<String>,
    /// The model asked for, else the harness's default (none when the
    /// harness runs on a provider of its own configuration).
    #[serde(default)]
    pub model: Option<String>,
    /// Set when the CLI converses on its stdin (the brief reaches it only
    /// through [`TurnDir::stdin_lines`]): what a fresh driver session needs
    /// to read the turn again after a restart.
    #[serde(default)]
    pub conversation: Option<ConversationLaunch>,
}

/// What a conversation turn's driver session is made from, besides the
/// launch's own fields: kept so that a host restarted mid-turn gives its
/// driver the same turn and gets the same replies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConversationLaunch {
    /// The model the driver was given (none: the harness's default).
    pub model: Option<String>,
    /// The effort asked for, when any.
    pub effort: Option<String>,
    /// Tools the turn's permission policy denies (see
    /// `cinch_driver_sdk::PermissionPolicy`); every other tool is allowed.
    pub deny_tools: Vec<String>,
}

/// How the CLI ended, as the supervisor saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitRecord {
    /// Its exit code, when it exited by itself.
    pub code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Why it could not be started, when it could not.
    pub spawn_error: Option<String>,
    /// Milliseconds since the epoch.
    pub ended_at_ms: u64,
    /// Processes of the turn still alive after the final sweep.
    pub survivors: Vec<i32>,
}

/// Why a turn was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Someone cancelled it.
    Cancelled,
    /// It ran past its timeout.
    TimedOut,
    /// Its harness wrote nothing for as long as the watchdog allows.
    NoOutput,
}

impl StopReason {
    /// The word written to the stop file.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Cancelled => "cancelled",
            Self::TimedOut => "timed_out",
            Self::NoOutput => "no_output",
        }
    }

    /// The reason in a stop file's text.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "cancelled" => Some(Self::Cancelled),
            "timed_out" => Some(Self::TimedOut),
            "no_output" => Some(Self::NoOutput),
            _ => None,
        }
    }
}

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

/// Reads a JSON file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_slice(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Writes a JSON file atomically (a reader never sees half of it), mode 0600.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    write_private(path, &serde_json::to_vec_pretty(value)?)
}

/// Writes `bytes` to `path` atomically, mode 0600. Each write has its own
/// temporary file, so concurrent writers of one path (two turns recording
/// the same harness session, say) never rename each other's.
pub fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_string_lossy();
    let partial = path.with_file_name(format!(
        ".{name}.{}.{}.partial",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .with_context(|| format!("creating {}", partial.display()))?;
    file.write_all(bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("renaming into {}", path.display()))
}

/// An exclusive advisory lock on a file, released when dropped.
pub struct FileLock {
    _file: File,
}

impl FileLock {
    /// Takes the lock without waiting; `None` when someone else holds it.
    pub fn try_take(path: &Path) -> anyhow::Result<Option<Self>> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        use std::os::fd::AsRawFd as _;
        // SAFETY: flock on a descriptor we own; no memory is involved.
        let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        Ok(taken.then_some(Self { _file: file }))
    }

    /// Whether someone holds the lock at `path` right now.
    pub fn is_held(path: &Path) -> bool {
        path.exists() && matches!(Self::try_take(path), Ok(None))
    }
}

/// Deletes the folders of all but each agent's `RUNS_KEPT` most recently
/// changed runs, never the run `keep` nor one with a turn not finished yet.
/// A folder already gone (another turn pruning at the same moment) is fine.
pub fn prune_runs(home: &Home, keep: &str) -> anyhow::Result<()> {
    let runs = home.root().join("runs");
    let Ok(listing) = std::fs::read_dir(&runs) else {
        return Ok(());
    };
    let mut by_agent: std::collections::HashMap<String, Vec<(std::time::SystemTime, PathBuf)>> =
        std::collections::HashMap::new();
    for entry in listing.filter_map(Result::ok) {
        let path = entry.path();
        let Some(modified) = entry.metadata().ok().and_then(|meta| meta.modified().ok()) else {
            continue;
        };
        let agent =
            std::fs::read_to_string(path.join(OWNER_FILE)).unwrap_or_else(|_| NO_AGENT.to_owned());
        let slot = by_agent.entry(agent).or_default();
        // The run being finished is one of its agent's most recent: it takes
        // a place in the count but is never a candidate.
        if entry.file_name() == keep {
            slot.push((std::time::SystemTime::now(), PathBuf::new()));
        } else if !has_unfinished_turn(home, &path) {
            slot.push((modified, path));
        }
    }
    for mut folders in by_agent.into_values() {
        folders.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, folder) in folders.into_iter().skip(RUNS_KEPT) {
            if folder.as_os_str().is_empty() {
                continue;
            }
            match std::fs::remove_dir_all(&folder) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("removing {}", folder.display()));
                }
            }
        }
    }
    // A finished turn whose run's log is gone goes too; a running one stays.
    let Ok(turns) = std::fs::read_dir(turns_dir(home)) else {
        return Ok(());
    };
    for entry in turns.filter_map(Result::ok) {
        if let Ok((turn, _)) = TurnDir::open(&entry.path())
            && turn.result().exists()
            && !turn.log().parent().is_some_and(Path::exists)
        {
            match std::fs::remove_dir_all(turn.dir()) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error)
                        .with_context(|| format!("removing {}", turn.dir().display()));
                }
            }
        }
    }
    Ok(())
}

/// Whether a turn whose log is in the run folder `run` is not finished yet:
/// its supervisor still runs, or its CLI has exited and its result is not
/// written yet. (A folder's time changes when a log is created in it, not
/// when the log grows, so a long turn's run can look like an old one.)
fn has_unfinished_turn(home: &Home, run: &Path) -> bool {
    let Ok(logs) = std::fs::read_dir(run) else {
        return false;
    };
    logs.filter_map(Result::ok).any(|entry| {
        let name = entry.file_name();
        let Some(turn) = name
            .to_str()
            .and_then(|name| name.strip_suffix(".harness.jsonl"))
            .filter(|turn| is_valid_id(turn))
        else {
            return false;
        };
        TurnDir {
            dir: turns_dir(home).join(turn),
            log: entry.path(),
        }
        .is_unfinished()
    })
}

/// Where the values to mask in what turn `turn` shows wait while it runs.
fn secrets_file(home: &Home, turn: &str) -> PathBuf {
    home.root()
        .join("secrets")
        .join("turns")
        .join(format!("{turn}.json"))
}

/// Keeps the values to mask in what `turn` shows until it has ended, so that
/// every process reading it (a restarted server, `cinch log`) masks them.
fn keep_secrets(home: &Home, turn: &str, secrets: &[String]) -> anyhow::Result<()> {
    let path = secrets_file(home, turn);
    create_private_dir(path.parent().expect("the file has a folder"))?;
    write_json(&path, &secrets)
}

/// The values to mask in what a turn being started shows, kept (see
/// [`keep_secrets`]); forgotten when dropped, unless the turn started.
pub struct KeptSecrets<'a> {
    home: &'a Home,
    turn: &'a str,
    started: bool,
}

impl<'a> KeptSecrets<'a> {
    /// Keeps `secrets` for `turn`.
    pub fn keep(home: &'a Home, turn: &'a str, secrets: &[String]) -> anyhow::Result<Self> {
        keep_secrets(home, turn, secrets)?;
        Ok(Self {
            home,
            turn,
            started: false,
        })
    }

    /// The turn has started: its secrets wait for its end.
    pub fn until_the_turn_ends(mut self) {
        self.started = true;
    }
}

impl Drop for KeptSecrets<'_> {
    fn drop(&mut self) {
        // A turn that never started shows nothing: its secrets need not wait.
        if !self.started {
            forget_secrets(self.home, self.turn);
        }
    }
}

/// The values kept for `turn`; none once it has ended.
pub fn kept_secrets(home: &Home, turn: &str) -> Vec<String> {
    read_json(&secrets_file(home, turn)).unwrap_or_default()
}

/// Forgets the values kept for `turn`.
pub fn forget_secrets(home: &Home, turn: &str) {
    let path = secrets_file(home, turn);
    if let Err(error) = std::fs::remove_file(&path)
        && error.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!("could not remove {}: {error}", path.display());
    }
}

/// Masks `redactor`'s secrets in the file at `path`, line by line, in place
/// (a new file renamed over it, so a reader never sees half of it).
pub fn redact_file(path: &Path, redactor: &crate::redact::Redactor) -> anyhow::Result<()> {
    use std::io::{BufRead as _, BufReader, BufWriter};
    let file = match File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error).with_context(|| format!("opening {}", path.display())),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_string_lossy();
    let partial = path.with_file_name(format!(".{name}.{}.redacting", std::process::id()));
    let output = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .with_context(|| format!("creating {}", partial.display()))?;
    let mut reader = BufReader::new(file);
    let mut writer = BufWriter::new(output);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = reader
            .read_until(b'\n', &mut line)
            .with_context(|| format!("reading {}", path.display()))?;
        if read == 0 {
            break;
        }
        // Text that is not UTF-8 is kept byte for byte unless it holds a secret.
        let masked = match std::str::from_utf8(&line) {
            Ok(text) => redactor.redact(text).into_bytes(),
            Err(_) => {
                let text = String::from_utf8_lossy(&line);
                let redacted = redactor.redact(&text);
                if redacted == text {
                    line.clone()
                } else {
                    redacted.into_bytes()
                }
            }
        };
        writer
            .write_all(&masked)
            .with_context(|| format!("writing {}", partial.display()))?;
    }
    writer
        .into_inner()
        .map_err(|error| error.into_error())
        .and_then(|file| file.sync_all())
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("renaming into {}", path.display()))
}

/// Serialises turns in one working tree: held while a turn is started there,
/// so that two starts never both find it free.
pub struct WorktreeLock {
    _lock: FileLock,
}

impl WorktreeLock {
    /// Waits for the lock of the working tree `workdir` (a canonical path).
    pub fn take(home: &Home, workdir: &Path) -> anyhow::Result<Self> {
        let dir = home.root().join("locks");
        create_private_dir(&dir)?;
        let key = crate::runtime::sha256_hex(workdir.as_os_str().as_encoded_bytes());
        let path = dir.join(format!("{}.lock", &key[..32]));
        loop {
            if let Some(lock) = FileLock::try_take(&path)? {
                return Ok(Self { _lock: lock });
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// The turns whose CLI works in `workdir` and which are not finished yet.
pub fn unfinished_in(home: &Home, workdir: &Path) -> Vec<(TurnDir, Launch)> {
    let Ok(listing) = std::fs::read_dir(turns_dir(home)) else {
        return Vec::new();
    };
    listing
        .filter_map(Result::ok)
        .filter_map(|entry| TurnDir::open(&entry.path()).ok())
        .filter(|(turn, launch)| launch.workdir == workdir && turn.is_unfinished())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_writers_of_one_path_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s-1.x");
        std::thread::scope(|scope| {
            for n in 0..16 {
                let path = &path;
                scope.spawn(move || write_private(path, format!("{n}").as_bytes()).unwrap());
            }
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .parse::<u32>()
                .unwrap()
                < 16
        );
    }

    fn launch(turn: &TurnDir, run: &str) -> Launch {
        Launch {
            turn: turn
                .dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            run: run.to_owned(),
            harness: "claude".into(),
            repository: "repo".into(),
            workdir: "/nonexistent".into(),
            program: "/bin/true".into(),
            args: Vec::new(),
            stdin: None,
            log: turn.log().to_path_buf(),
            prompt: turn.prompt(),
            started_at_ms: 0,
            timeout_ms: 60_000,
            idle_limit_ms: None,
            resumed_session: None,
            start_checkpoint: None,
            cli_version: None,
            sandbox: None,
            tmpdir: None,
            agent: None,
            model: None,
            conversation: None,
        }
    }

    #[test]
    fn keeps_each_agents_twenty_most_recent_runs_and_their_turns() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        for n in 0..25 {
            let run = format!("run-{n:02}");
            let turn = TurnDir::new(&home, &run, &format!("turn-{n:02}")).unwrap();
            // One old run is another agent's: it is that agent's most recent.
            turn.create((n == 2).then_some("agent-b")).unwrap();
            std::fs::write(turn.log(), "{}\n").unwrap();
            write_json(&turn.launch(), &launch(&turn, &run)).unwrap();
            std::fs::write(turn.result(), "{}").unwrap();
            // Distinct modification times, oldest first.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + n);
            let folder = std::fs::File::open(turn.log().parent().unwrap()).unwrap();
            folder.set_modified(when).unwrap();
        }
        // The oldest run has a turn still running, the next one a turn whose
        // CLI has exited but whose result is not written yet: both stay,
        // whatever their age.
        let running = TurnDir::new(&home, "run-00", "turn-00").unwrap();
        assert!(!running.is_unfinished());
        std::fs::remove_file(running.result()).unwrap();
        let _supervisor = FileLock::try_take(&running.supervisor_lock())
            .unwrap()
            .unwrap();
        let exited = TurnDir::new(&home, "run-01", "turn-01").unwrap();
        std::fs::remove_file(exited.result()).unwrap();
        std::fs::write(exited.exit(), "{}").unwrap();
        prune_runs(&home, "run-24").unwrap();
        let mut runs: Vec<String> = std::fs::read_dir(home.root().join("runs"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        assert_eq!(runs.len(), RUNS_KEPT + 3);
        assert_eq!(runs[..4], ["run-00", "run-01", "run-02", "run-05"]);
        assert!(turns_dir(&home).join("turn-00").exists());
        assert!(turns_dir(&home).join("turn-01").exists());
        assert!(turns_dir(&home).join("turn-02").exists());
        assert!(!turns_dir(&home).join("turn-03").exists());
        assert!(!turns_dir(&home).join("turn-04").exists());
        assert!(turns_dir(&home).join("turn-05").exists());
    }
}
