//! What a run's event is: its name as streams and the database carry it,
//! its number and data, and who numbers a run's events. Shared by the run's
//! events in memory and their writer.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cinch_store::Store;
use tokio::sync::watch;

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

/// How far a run's events have got. Streams show an event once it is
/// stored; memory lets go of it once it is indexed, in `run_events` where
/// late streams read history: on SQLite about a second after it is stored
/// (see `cinch_store::EventLog`), on PostgreSQL as it is stored.
#[derive(Debug)]
pub(super) struct Reached {
    stored: watch::Sender<u64>,
    indexed: AtomicU64,
}

impl Reached {
    /// A run whose events are stored and indexed through number `newest`.
    pub(super) fn through(newest: u64) -> Self {
        Self {
            stored: watch::Sender::new(newest),
            indexed: AtomicU64::new(newest),
        }
    }

    /// The newest stored event's number.
    pub(super) fn stored(&self) -> u64 {
        *self.stored.borrow()
    }

    /// The newest stored event's number, watched.
    pub(super) fn watch_stored(&self) -> watch::Receiver<u64> {
        self.stored.subscribe()
    }

    /// Every event numbered up to `seq` is stored.
    pub(super) fn stored_through(&self, seq: u64) {
        self.stored.send_if_modified(|stored| {
            let newer = seq > *stored;
            if newer {
                *stored = seq;
            }
            newer
        });
    }

    /// The number through which every event is in `run_events`.
    pub(super) fn indexed(&self) -> u64 {
        self.indexed.load(Ordering::Acquire)
    }

    /// Every event numbered up to `seq` is in `run_events`.
    pub(super) fn indexed_through(&self, seq: u64) {
        self.indexed.fetch_max(seq, Ordering::AcqRel);
    }
}
