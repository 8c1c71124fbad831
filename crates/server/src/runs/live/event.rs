//! What a run's event is: its name as streams and the database carry it,
//! its number and data, and who numbers a run's events. Shared by the run's
//! events in memory and their writer.

use std::sync::Arc;

use cinch_store::Store;

/// What an event of a run says, by its SSE event name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventName {
    /// A message was added to a session.
    MessageCreated,
    /// A session's message changed (a turn's status or result).
    MessageUpdated,
    /// A session changed.
    SessionUpdated,
    /// Progress lines of a turn.
    ToolProgress,
    /// A turn ended.
    ToolEnded,
    /// An agent asks permission and waits for a decision.
    ApprovalRequested,
    /// A permission request was decided (or cancelled).
    ApprovalResolved,
}

impl EventName {
    const ALL: [Self; 7] = [
        Self::MessageCreated,
        Self::MessageUpdated,
        Self::SessionUpdated,
        Self::ToolProgress,
        Self::ToolEnded,
        Self::ApprovalRequested,
        Self::ApprovalResolved,
    ];

    /// The name as streams and the database carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MessageCreated => "message.created",
            Self::MessageUpdated => "message.updated",
            Self::SessionUpdated => "session.updated",
            Self::ToolProgress => "tool.progress",
            Self::ToolEnded => "tool.ended",
            Self::ApprovalRequested => "approval.requested",
            Self::ApprovalResolved => "approval.resolved",
        }
    }

    /// The event named `name` in the database; none for a name this
    /// version does not know.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|known| known.as_str() == name)
    }
}

/// One event of a run.
#[derive(Debug, Clone)]
pub struct RunEvent {
    /// Its number in the run, from 1.
    pub seq: u64,
    /// What it says.
    pub name: EventName,
    /// Its data: JSON text, written once for the database and every stream.
    pub data: Arc<str>,
}

/// Who numbers a run's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Numbering {
    /// This node, as they are published: it is the database's only writer.
    Here,
    /// The database, as they are stored: other nodes write the same runs.
    Database,
}

impl Numbering {
    pub(super) fn of(store: &Store) -> Self {
        if store.is_shared() {
            Self::Database
        } else {
            Self::Here
        }
    }
}
