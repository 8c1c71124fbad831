//! The CLI's version, asked for beside a turn's start rather than before it:
//! a version command takes from a tenth of a second (codex) to a second
//! (gemini), which a turn need not wait for. The version is recorded in the
//! turn's launch record once it is known, and its result carries it.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread::JoinHandle;

use cinch_driver_sdk::Info;

use crate::runtime::Driver;
use crate::turn_dir::{Launch, TurnDir, write_json};

/// A version command running on a thread of its own.
pub(super) struct VersionProbe {
    thread: JoinHandle<Option<String>>,
    launched: mpsc::SyncSender<(TurnDir, Launch)>,
}

impl VersionProbe {
    /// Runs the version command of the harness `info` describes (its CLI
    /// at `program`) now; `driver` reads its answer.
    pub(super) fn start(driver: Driver, info: &Info, program: PathBuf) -> anyhow::Result<Self> {
        let (launched, launch_written) = mpsc::sync_channel(1);
        let harness = info.name.clone();
        let version_args = info.version_args.clone();
        let thread = std::thread::Builder::new()
            .name("cli-version".into())
            .spawn(move || {
                let version = crate::probe::read_version(&driver, &program, &version_args)
                    .inspect_err(|problem| {
                        tracing::info!(%harness, "the CLI's version is unknown: {problem}")
                    })
                    .ok();
                // A start that failed before its launch record was written
                // has nothing to record the version in.
                if let (Some(version), Ok((turn, launch))) = (&version, launch_written.recv()) {
                    record(&turn, launch, version);
                }
                version
            })?;
        Ok(Self { thread, launched })
    }

    /// Records the version in `turn`'s launch record (`launch`, already
    /// written) when it comes.
    pub(super) fn record_in(&self, turn: TurnDir, launch: Launch) {
        // The thread takes one launch and is the only receiver: a send fails
        // only when it has already ended, having panicked.
        let _ = self.launched.send((turn, launch));
    }

    /// The version, once the command has answered or given up.
    pub(super) fn version(self) -> Option<String> {
        let Self { thread, launched } = self;
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
