//! The records of a turn's folder: what was started, how the CLI ended and
//! why it was stopped.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

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
    /// The CLI versions its driver was tested with, when it says.
    #[serde(default)]
    pub cli_tested: Option<String>,
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
    /// The driver the turn started on (none in a turn of an older cinch).
    #[serde(default)]
    pub driver: Option<DriverUsed>,
}

/// Which driver component a turn ran on: what tells which parser made a
/// result, across plugin updates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DriverUsed {
    /// The driver's name.
    pub name: String,
    /// Its version, when its pin tells one (a built-in's is cinch's).
    pub version: Option<String>,
    /// The component's digest, `sha256:HEX`.
    pub digest: String,
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
    /// The host decides the agent's permission requests (approvals): the
    /// driver reports each and answers it with the host's decision.
    #[serde(default)]
    pub ask: bool,
    /// The turn forks the session it names: a conversation driver forks it
    /// in its conversation (ACP's `session/fork`).
    #[serde(default)]
    pub fork: bool,
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
