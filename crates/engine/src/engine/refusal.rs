//! Why the engine did not start a turn: a refusal with its code, a workspace
//! it could not snapshot, or another failure.

/// What keeps the engine from starting a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    /// cinch's config turns the harness off.
    HarnessOff,
    /// The session id to resume is not one.
    SessionInvalid,
    /// The timeout is out of range.
    TimeoutInvalid,
    /// The watchdog's idle limit is out of range.
    WatchdogInvalid,
    /// The repository is missing or not the top of a git work tree.
    RepoInvalid,
    /// The harness's CLI is not installed.
    CliMissing,
    /// The harness's pinned CLI is not installed and could not be.
    CliInstallFailed,
    /// The harness has nothing to log in with.
    NoCredential,
    /// Another turn is running in the same working tree.
    WorktreeBusy,
    /// Turns must run sandboxed and this kernel cannot sandbox them.
    SandboxUnavailable,
    /// The turn has MCP servers and its harness cannot receive them.
    McpUnsupported,
}

impl RefusalCode {
    /// The code as problems and messages write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::HarnessOff => "harness.off",
            Self::SessionInvalid => "session.invalid",
            Self::TimeoutInvalid => "timeout.invalid",
            Self::WatchdogInvalid => "watchdog.invalid",
            Self::RepoInvalid => "repo.invalid",
            Self::CliMissing => "harness.cli_missing",
            Self::CliInstallFailed => "harness.cli_install_failed",
            Self::NoCredential => "harness.no_credential",
            Self::WorktreeBusy => "worktree.busy",
            Self::SandboxUnavailable => "sandbox.unavailable",
            Self::McpUnsupported => "mcp.unsupported",
        }
    }
}

/// The engine refused to start a turn, and why.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{}: {detail}", code.as_str())]
pub struct Refusal {
    /// What kept it from starting.
    pub code: RefusalCode,
    /// What to do about it.
    pub detail: String,
}

impl Refusal {
    pub(super) fn new(code: RefusalCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
        }
    }
}

/// Why [`super::Engine::start`] started no turn.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The engine refused the request: the caller can do something about it.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The workspace could not be snapshotted before the turn, so the turn
    /// did not start: a session closes (`snapshot_failure`) rather than
    /// retrying.
    #[error("taking the start checkpoint: {0:#}")]
    CheckpointFailed(anyhow::Error),
    /// Anything else: the harness is unknown, or cinch could not set the
    /// turn up.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}
