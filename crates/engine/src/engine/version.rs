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
//! up. Turns that start while the command runs wait for its answer rather
//! than each running it.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cinch_base::sync::lock;
use cinch_driver_sdk::Info;
use cinch_runtime::Driver;

use crate::turn_dir::{Launch, TurnDir, write_json};

/// How long a CLI's version is taken as known once it has answered: on a
/// busy server most turns still find it known, and a CLI upgraded behind a
/// launcher that did not change shows its new version within a minute.
const VERSION_KEPT: Duration = Duration::from_secs(60);

/// The versions an engine's CLIs have answered, by the CLI's file, and the
/// questions under way: turns starting together wait for one answer rather
/// than each running the command.
#[derive(Clone, Default)]
pub(super) struct KnownVersions {
    by_cli: Arc<Mutex<HashMap<CliFile, Slot>>>,
}

enum Slot {
    Known {
        version: String,
        at: Instant,
    },
    /// The version command runs; the turns starting meanwhile wait for it.
    Asking(Arc<Question>),
}

/// A version command's answer, for the turns waiting for it.
#[derive(Default)]
struct Question {
    /// `None` until answered; then the version, if there was one.
    answer: Mutex<Option<Option<String>>>,
    answered: Condvar,
}

impl Question {
    fn wait(&self) -> Option<String> {
        let answer = self
            .answered
            .wait_while(lock(&self.answer), |answer| answer.is_none())
            .unwrap_or_else(PoisonError::into_inner);
        answer.clone().flatten()
    }

    fn answer(&self, version: Option<String>) {
        *lock(&self.answer) = Some(version);
        self.answered.notify_all();
    }
}

/// What a starting turn does for its CLI's version.
enum Lookup {
    Known(String),
    /// Runs the version command, and answers the question with what it says.
    Ask(Arc<Question>),
    /// Waits for another turn's question.
    WaitFor(Arc<Question>),
}

impl KnownVersions {
    fn look_up(&self, cli: &CliFile) -> Lookup {
        let mut by_cli = lock(&self.by_cli);
        match by_cli.get(cli) {
            Some(Slot::Known { version, at }) if at.elapsed() < VERSION_KEPT => {
                return Lookup::Known(version.clone());
            }
            Some(Slot::Asking(question)) => return Lookup::WaitFor(question.clone()),
            _ => {}
        }
        by_cli.retain(|_, slot| match slot {
            Slot::Known { at, .. } => at.elapsed() < VERSION_KEPT,
            Slot::Asking(_) => true,
        });
        let question = Arc::new(Question::default());
        by_cli.insert(cli.clone(), Slot::Asking(question.clone()));
        Lookup::Ask(question)
    }

    /// Keeps the answer about `cli`; with no version, the next turn asks
    /// again.
    fn settle(&self, cli: CliFile, version: Option<String>) {
        let mut by_cli = lock(&self.by_cli);
        match version {
            Some(version) => {
                by_cli.insert(
                    cli,
                    Slot::Known {
                        version,
                        at: Instant::now(),
                    },
                );
            }
            None => {
                by_cli.remove(&cli);
            }
        }
    }
}

/// Settles and answers a question when dropped, with what its asker found:
/// nothing, if the asker panicked, so that no turn waits for ever.
struct Answering {
    known: KnownVersions,
    cli: Option<CliFile>,
    question: Arc<Question>,
    version: Option<String>,
}

impl Drop for Answering {
    fn drop(&mut self) {
        if let Some(cli) = self.cli.take() {
            self.known.settle(cli, self.version.clone());
        }
        self.question.answer(self.version.take());
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
    /// Being asked for (or waited for) on a thread of its own.
    Asking {
        thread: JoinHandle<Option<String>>,
        launched: mpsc::SyncSender<(TurnDir, Launch)>,
    },
}

impl VersionProbe {
    /// The version of the harness `info` describes (its CLI at `program`):
    /// as `known` has it, else asked for now, on a thread of its own, with
    /// `driver` reading the answer, which `known` then keeps (or, while
    /// another turn asks, that turn's answer).
    pub(super) fn start(
        driver: Driver,
        info: &Info,
        program: PathBuf,
        known: &KnownVersions,
    ) -> anyhow::Result<Self> {
        let cli = CliFile::of(info, &program);
        let lookup = match &cli {
            Some(cli) => known.look_up(cli),
            None => Lookup::Ask(Arc::default()),
        };
        match lookup {
            Lookup::Known(version) => Ok(Self::Known(version)),
            Lookup::WaitFor(question) => Self::on_a_thread(move || question.wait()),
            Lookup::Ask(question) => {
                let mut answering = Answering {
                    known: known.clone(),
                    cli,
                    question,
                    version: None,
                };
                let harness = info.name.clone();
                let version_args = info.version_args.clone();
                Self::on_a_thread(move || {
                    answering.version =
                        crate::probe::read_version(&driver, &program, &version_args)
                            .inspect_err(|problem| {
                                tracing::info!(%harness, "the CLI's version is unknown: {problem}")
                            })
                            .ok()
                            .flatten();
                    answering.version.clone()
                })
            }
        }
    }

    /// Has the version from `version` on a thread of its own, which records
    /// it in the turn's launch record once that is written.
    fn on_a_thread(
        version: impl FnOnce() -> Option<String> + Send + 'static,
    ) -> anyhow::Result<Self> {
        let (launched, launch_written) = mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("cli-version".into())
            .spawn(move || {
                let version = version();
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
