//! The services the HTTP API calls: each holds the rules of one kind of
//! work and reaches the engine and the store for it; none knows HTTP.
//! Tasks and sessions are [`sessions`]' (its conductor). Turns start and
//! run through [`crate::runs`], below them all, and every service refuses
//! with one [`ServiceError`].

pub(crate) mod accounts;
pub(crate) mod agents;
pub(crate) mod code_tasks;
pub(crate) mod drivers;
pub(crate) mod environments;
pub(crate) mod health;
pub(crate) mod keys;
pub(crate) mod sessions;
pub(crate) mod usage;
pub(crate) mod webhooks;

use serde::Serialize;

use cinch_engine::engine::{LogError, Refusal};
use cinch_store::StoreError;

/// One field's complaint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// The field, as the request named it (`repo`, `notes[1].name`, ...).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FieldError {
    /// A complaint about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a request to a service was not carried out: one family for every
/// service (sessions and code tasks included), mapped to one kind of
/// problem answer each.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Fields of the request break rules.
    #[error("{}", describe(.0))]
    Invalid(Vec<FieldError>),
    /// Nothing of the caller's account by that name.
    #[error("{0}")]
    NotFound(String),
    /// The request does not fit the state of what it is about.
    #[error("{0}")]
    Conflict(String),
    /// A session's work tree is on the node that holds its lease: the
    /// request is for that node.
    #[error("the session's work tree is on node {}", .0.node_id)]
    OnAnotherNode(OtherNode),
    /// No agent to run a code task as.
    #[error(
        "the account has no connected agent to run the task as: connect one, or call with an agent's token"
    )]
    NoAgent,
    /// As many turns as the server runs at once are running.
    #[error(
        "{max_turns} turns are running, the most cinch runs at once (`cinch serve --max-turns`): try again when one ends"
    )]
    CapacityFull {
        /// The cap.
        max_turns: usize,
    },
    /// As many turns as the account may run at once on all nodes are running.
    #[error(
        "the account runs {max_turns_per_account} turns, the most it may run at once (`cinch serve --max-turns-per-account`): try again when one ends"
    )]
    AccountCapacityFull {
        /// The account's cap.
        max_turns_per_account: usize,
    },
    /// The engine refused to start the turn.
    #[error(transparent)]
    Refused(Refusal),
    /// A code task's harness log went with its run.
    #[error(transparent)]
    LogPruned(LogError),
    /// A code task ran on another node sharing the database, whose home
    /// keeps its harness log.
    #[error(
        "that task ran on another cinch node, whose home keeps its harness log, and that node could not be asked for it: read it there, or give each node an --advertise-url the others reach"
    )]
    LogOnAnotherNode,
    /// The store failed, or refused (a name taken).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something else failed; the server's log says what.
    #[error("{0:#}")]
    Internal(#[from] anyhow::Error),
}

/// The node that runs a session, as another node can reach it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherNode {
    /// Its id.
    pub node_id: String,
    /// The URL it advertises to the other nodes, if it gave one.
    pub url: Option<String>,
}

impl ServiceError {
    /// A complaint about one field.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(vec![FieldError::new(field, message)])
    }

    /// A failure on the server's side.
    pub fn internal(error: impl Into<anyhow::Error>) -> Self {
        Self::Internal(error.into())
    }
}

/// The complaints as one line: `field: message; ...`.
fn describe(errors: &[FieldError]) -> String {
    errors
        .iter()
        .map(|error| format!("{}: {}", error.field, error.message))
        .collect::<Vec<_>>()
        .join("; ")
}
