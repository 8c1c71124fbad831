//! The turns under the home, by id: listing them, following one from
//! another process, reading its kept log, stopping it.

use std::time::Duration;

use anyhow::bail;
use serde::Serialize;

use super::result::{Status, TurnResult};
use super::{Engine, Turn, conversation, harness, log, result};
use crate::redact::Redactor;
use crate::turn_dir::{self, FileLock, StopReason, TurnDir, read_json, write_private};

/// Why a turn's kept log cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No turn has that id under the home.
    #[error("no turn `{0}` (see `cinch turns`)")]
    NoSuchTurn(String),
    /// The log was pruned with its run.
    #[error(
        "that turn's harness log is gone: cinch keeps the raw logs of each agent's {} most recent runs",
        turn_dir::RUNS_KEPT
    )]
    Pruned,
    /// The log is there but could not be read.
    #[error("reading the harness log: {0}")]
    Unreadable(#[source] std::io::Error),
}

/// A turn as `cinch turns` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct TurnSummary {
    /// The turn's id.
    pub turn: String,
    /// The driver.
    pub harness: String,
    /// The repository.
    pub repository: String,
    /// When it started, milliseconds since the epoch.
    pub started_at_ms: u64,
    /// Where it is: how it ended, or how far it has come.
    pub status: ListedStatus,
    /// Its session, when known.
    pub session_id: Option<String>,
    /// Its tokens and cost, once it has ended, when its harness reported usage.
    pub usage: Option<result::TurnUsage>,
    /// Events of types its driver does not know, by type, once it has ended.
    pub unknown_events: crate::reading::reader::UnknownEvents,
}

/// Where a listed turn is: ended, or how far it has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListedStatus {
    /// It has ended, with this status.
    Ended(Status),
    /// The process starting it is at it: its supervisor is not running yet.
    Starting,
    /// Its supervisor runs its CLI.
    Running,
    /// Its CLI has exited and nobody has written its result yet.
    Exited,
    /// Its supervisor is gone and its CLI's exit was not recorded.
    Interrupted,
}

impl ListedStatus {
    /// The status as `cinch turns` shows it, with what to do when the turn
    /// waits for someone to finish it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ended(status) => status.as_str(),
            Self::Starting => "starting",
            Self::Running => "running",
            Self::Exited => "exited (no result yet: attach to finish it)",
            Self::Interrupted => "interrupted (attach to finish it)",
        }
    }
}

impl std::fmt::Display for ListedStatus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.pad(self.as_str())
    }
}

impl Serialize for ListedStatus {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl Engine {
    /// Follows a turn that is running (or has ended) from another process,
    /// masking `secrets` besides those kept for it and the configured ones.
    pub fn attach(&self, turn_id: &str, secrets: &[String]) -> anyhow::Result<Turn> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)?;
        let registry = self.registry();
        let harness = registry.harness(&launch.harness)?;
        let redactor = self.redactor_of(&harness.info, turn_id, secrets);
        // A turn followed again has no span: its own ended with its first follower.
        self.follow(
            turn,
            launch,
            &harness,
            redactor,
            None,
            tracing::Span::none(),
        )
    }

    /// The turn's kept log, read through its driver and redacted.
    pub fn log(&self, turn_id: &str) -> Result<log::LogView, LogError> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)
            .map_err(|_| LogError::NoSuchTurn(turn_id.to_owned()))?;
        let registry = self.registry();
        let harness = registry
            .harness(&launch.harness)
            .map_err(|error| LogError::Unreadable(std::io::Error::other(format!("{error:#}"))))?;
        let redactor = self.redactor_of(&harness.info, turn_id, &[]);
        let parser = harness
            .driver
            .session()
            .map_err(|error| LogError::Unreadable(std::io::Error::other(format!("{error:#}"))))?;
        let mut view = log::read(turn.log(), parser, &harness.info.display_name, &redactor)
            .map_err(|error| match error.kind() {
                std::io::ErrorKind::NotFound => LogError::Pruned,
                _ => LogError::Unreadable(error),
            })?;
        view.driver = launch.driver.clone();
        let refusals = launch
            .sandbox
            .as_ref()
            .and_then(|policy| policy.egress.as_ref()?.refusals.as_deref());
        if let Some(path) = refusals {
            let refused = crate::sandbox::egress::RefusalFeed::new(path).next_refusals();
            log::add_refusals(&mut view, &refused, &redactor);
        }
        Ok(view)
    }

    /// Asks a running turn to stop; it ends `cancelled`.
    pub fn stop(&self, turn_id: &str) -> anyhow::Result<()> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)?;
        if turn.result().exists() {
            bail!("turn {turn_id} has already ended");
        }
        if launch.conversation.is_some() {
            // The turn's follower sends the driver's stop lines and stops the
            // CLI if it does not end. With no follower to do it, this does.
            write_private(&turn.cancel_request(), b"")?;
            let asked = std::time::Instant::now();
            while asked.elapsed() < conversation::STOP_WAIT {
                if turn.stop_lines_sent().exists() || turn.exit().exists() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        turn.request_stop(StopReason::Cancelled)
    }

    /// Leaves the host's decision on a permission request of the running
    /// turn `turn_id`; the turn's follower answers the agent with it once.
    pub fn answer(&self, turn_id: &str, answer: &conversation::Answer) -> anyhow::Result<()> {
        let (turn, _) = TurnDir::find(&self.home, turn_id)?;
        if turn.result().exists() {
            bail!("turn {turn_id} has already ended");
        }
        conversation::answer(&turn, answer)
    }

    /// Every turn under the home, newest first.
    pub fn list(&self) -> anyhow::Result<Vec<TurnSummary>> {
        let Ok(listing) = std::fs::read_dir(turn_dir::turns_dir(&self.home)) else {
            return Ok(Vec::new());
        };
        let mut turns: Vec<TurnSummary> = listing
            .filter_map(Result::ok)
            .filter_map(|entry| TurnDir::open(&entry.path()).ok())
            .map(|(turn, launch)| {
                let result: Option<TurnResult> = read_json(&turn.result()).ok();
                let status = match &result {
                    Some(result) => ListedStatus::Ended(result.status),
                    None if FileLock::is_held(&turn.supervisor_lock()) => ListedStatus::Running,
                    None if turn.is_starting() => ListedStatus::Starting,
                    None if turn.exit().exists() => ListedStatus::Exited,
                    None => ListedStatus::Interrupted,
                };
                TurnSummary {
                    usage: result.as_ref().and_then(|result| result.usage),
                    unknown_events: result
                        .as_ref()
                        .map(|result| result.unknown_events.clone())
                        .unwrap_or_default(),
                    turn: launch.turn,
                    harness: launch.harness,
                    repository: launch.repository,
                    started_at_ms: launch.started_at_ms,
                    status,
                    session_id: result
                        .and_then(|result| result.session_id)
                        .or_else(|| std::fs::read_to_string(turn.session()).ok()),
                }
            })
            .collect();
        turns.sort_by_key(|turn| std::cmp::Reverse(turn.started_at_ms));
        Ok(turns)
    }

    /// What a turn shows is masked with: the values kept at its start, the
    /// configured secrets and credentials in cinch's environment, and `more`.
    fn redactor_of(&self, info: &cinch_driver_sdk::Info, turn: &str, more: &[String]) -> Redactor {
        harness::redactor(info, &self.config, &self.base_env())
            .with(&turn_dir::kept_secrets(
                &self.home,
                self.secrets_seal.as_ref(),
                turn,
            ))
            .with(more)
    }
}
