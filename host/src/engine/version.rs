//! The CLI's version, asked for beside a turn's start rather than before it:
//! a version command takes from a tenth of a second (codex) to a second
//! (gemini), which a turn need not wait for. The version is recorded in the
//! turn's launch record once it is known, and its result carries it.
//!
//! An engine asks each CLI once in a while, not every turn: the answer is
//! kept for the CLI's file as it was (its path, inode, size and times) for
//! [`VERSION_KEPT`]. A CLI reinstalled or upgraded in place is a changed
//! file, and asked again; one upgraded behind a launcher that did not change
//! (a wrapper script that runs another file) is asked again once the time is
//! up.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cinch_driver_sdk::Info;

use crate::runtime::Driver;
use crate::sync::lock;
use crate::turn_dir::{Launch, TurnDir, write_json};

/// How long a CLI's version is taken as known once it has answered: on a
/// busy server most turns still find it known, and a CLI upgraded behind a
/// launcher that did not change shows its new version within a minute.
const VERSION_KEPT: Duration = Duration::from_secs(60);

/// The versions an engine's CLIs have answered, by the CLI's file.
#[derive(Clone, Default)]
pub(super) struct KnownVersions {
    by_cli: Arc<Mutex<HashMap<CliFile, Answer>>>,
}

struct Answer {
    version: String,
    at: Instant,
}

impl KnownVersions {
    fn get(&self, cli: &CliFile) -> Option<String> {
        lock(&self.by_cli)
            .get(cli)
            .filter(|answer| answer.at.elapsed() < VERSION_KEPT)
            .map(|answer| answer.version.clone())
    }

    fn keep(&self, cli: CliFile, version: String) {
        let mut by_cli = lock(&self.by_cli);
        by_cli.retain(|_, answer| answer.at.elapsed() < VERSION_KEPT);
        by_cli.insert(
            cli,
            Answer {
                version,
                at: Instant::now(),
            },
        );
    }
}

/// A CLI's file as it is now, and how its version is asked for: a version
/// is known only for this very file and command.
#[derive(Clone, PartialEq, Eq, Hash)]
struct CliFile {
    harness: String,
    version_args: Vec<String>,
    /// The file the CLI's path leads to, through its links.
    path: PathBuf,
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
    changed: (i64, i64),
}

impl CliFile {
    /// The file at `program` (none when it cannot be looked at: then the
    /// version is asked for every time).
    fn of(info: &Info, program: &Path) -> Option<Self> {
        let path = std::fs::canonicalize(program).ok()?;
        let meta = std::fs::metadata(&path).ok()?;
        Some(Self {
            harness: info.name.clone(),
            version_args: info.version_args.clone(),
            path,
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified: (meta.mtime(), meta.mtime_nsec()),
            changed: (meta.ctime(), meta.ctime_nsec()),
        })
    }
}

/// The CLI's version for a turn: known already, or being asked for.
pub(super) enum VersionProbe {
    Known(String),
    /// A version command running on a thread of its own.
    Asking {
        thread: JoinHandle<Option<String>>,
        launched: mpsc::SyncSender<(TurnDir, Launch)>,
    },
}

impl VersionProbe {
    /// The version of the harness `info` describes (its CLI at `program`):
    /// as `known` has it, else asked for now, on a thread of its own, with
    /// `driver` reading the answer, which `known` then keeps.
    pub(super) fn start(
        driver: Driver,
        info: &Info,
        program: PathBuf,
        known: &KnownVersions,
    ) -> anyhow::Result<Self> {
        let cli = CliFile::of(info, &program);
        if let Some(version) = cli.as_ref().and_then(|cli| known.get(cli)) {
            return Ok(Self::Known(version));
        }
        let (launched, launch_written) = mpsc::sync_channel(1);
        let harness = info.name.clone();
        let version_args = info.version_args.clone();
        let known = known.clone();
        let thread = std::thread::Builder::new()
            .name("cli-version".into())
            .spawn(move || {
                let version = crate::probe::read_version(&driver, &program, &version_args)
                    .inspect_err(|problem| {
                        tracing::info!(%harness, "the CLI's version is unknown: {problem}")
                    })
                    .ok();
                if let (Some(version), Some(cli)) = (&version, cli) {
                    known.keep(cli, version.clone());
                }
                // A start that failed before its launch record was written
                // has nothing to record the version in.
                if let (Some(version), Ok((turn, launch))) = (&version, launch_written.recv()) {
                    record(&turn, launch, version);
                }
                version
            })?;
        Ok(Self::Asking { thread, launched })
    }

    /// The version, when it was known at the start.
    pub(super) fn known(&self) -> Option<&str> {
        match self {
            Self::Known(version) => Some(version),
            Self::Asking { .. } => None,
        }
    }

    /// Records the version in `turn`'s launch record (`launch`, already
    /// written) when it comes; a version known at the start is in it already.
    pub(super) fn record_in(&self, turn: TurnDir, launch: Launch) {
        if let Self::Asking { launched, .. } = self {
            // The thread takes one launch and is the only receiver: a send
            // fails only when it has already ended, having panicked.
            let _ = launched.send((turn, launch));
        }
    }

    /// The version, once the command has answered or given up.
    pub(super) fn version(self) -> Option<String> {
        let (thread, launched) = match self {
            Self::Known(version) => return Some(version),
            Self::Asking { thread, launched } => (thread, launched),
        };
        // Unblocks a thread still waiting for a launch record that never came.
        drop(launched);
        thread.join().unwrap_or_else(|_| {
            tracing::error!("the thread asking for the CLI's version panicked");
            None
        })
    }
}

fn record(turn: &TurnDir, launch: Launch, version: &str) {
    let launch = Launch {
        cli_version: Some(version.to_owned()),
        ..launch
    };
    if let Err(error) = write_json(&turn.launch(), &launch) {
        tracing::warn!(turn = %launch.turn, "could not record the CLI's version: {error:#}");
    }
}
