//! A run's events: numbered, kept in memory for its streams and stored by
//! the writer (see [`super::writer`]); on PostgreSQL read back from the
//! database, which numbers them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use super::writer::{Job, Pending};
use crate::store::{RunKey, Store, StoredEvent};
use cinch_base::sync::lock;

/// A run nobody follows or streams, quiet this long, is dormant. Long past
/// the moment the writer stores its last event, so that reading it back
/// later finds every event.
const DORMANT_AFTER: Duration = Duration::from_secs(60);

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

/// A run's events, with the newest stored number watched by its streams.
pub struct RunEvents {
    run: RunKey,
    numbering: Numbering,
    events: Mutex<Vec<RunEvent>>,
    stored: watch::Sender<u64>,
    writer: mpsc::UnboundedSender<Job>,
    /// When it was loaded or last published to.
    last_active: Mutex<Instant>,
    /// Read-backs asked for, counted; those asked while one reads are
    /// served by the next one.
    reads_asked: AtomicU64,
    /// The count of read-backs asked for when the last one began.
    reads_done: tokio::sync::Mutex<u64>,
}

impl RunEvents {
    pub(super) fn new(
        run: RunKey,
        numbering: Numbering,
        stored: Vec<StoredEvent>,
        writer: mpsc::UnboundedSender<Job>,
    ) -> Self {
        let events: Vec<RunEvent> = stored.into_iter().filter_map(RunEvent::read).collect();
        let latest = events.last().map_or(0, |event| event.seq);
        Self {
            run,
            numbering,
            events: Mutex::new(events),
            stored: watch::Sender::new(latest),
            writer,
            last_active: Mutex::new(Instant::now()),
            reads_asked: AtomicU64::new(0),
            reads_done: tokio::sync::Mutex::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<RunEvent>> {
        lock(&self.events)
    }

    /// Adds an event and stores it; streams see it once stored. Numbered
    /// next here, or by the database when other nodes write the run too.
    pub fn publish(&self, name: EventName, data: Value) {
        let data: Arc<str> = data.to_string().into();
        let mut events = self.lock();
        let numbered = (self.numbering == Numbering::Here).then(|| {
            let seq = events.last().map_or(0, |event| event.seq) + 1;
            events.push(RunEvent {
                seq,
                name,
                data: data.clone(),
            });
            (seq, self.stored.clone())
        });
        // Sent under the lock so the writer stores events in their order.
        let _ = self.writer.send(Job::Store(Pending {
            run: self.run.clone(),
            name,
            data,
            numbered,
        }));
        drop(events);
        *lock(&self.last_active) = Instant::now();
    }

    /// Reads back what the database holds of the run past the newest event
    /// in memory, whichever node stored it.
    pub(super) async fn read_back(&self, store: &Store) {
        let ticket = self.reads_asked.fetch_add(1, Ordering::SeqCst) + 1;
        let mut done = self.reads_done.lock().await;
        if *done >= ticket {
            return;
        }
        let asked = self.reads_asked.load(Ordering::SeqCst);
        let newest = self.lock().last().map_or(0, |event| event.seq);
        let read = store
            .events_after(&self.run.account_id, &self.run.run_id, newest as i64)
            .await;
        let stored = match read {
            Ok(stored) => stored,
            Err(error) => {
                // Not counted as done: the next notice or poll reads again.
                tracing::warn!(run = %self.run.run_id, "reading the run's events back: {error}");
                return;
            }
        };
        *done = asked;
        if stored.is_empty() {
            return;
        }
        let mut events = self.lock();
        let held = events.last().map_or(0, |event| event.seq);
        let fresh = stored.into_iter().filter_map(RunEvent::read);
        events.extend(fresh.filter(|event| event.seq > held));
        let newest = events.last().map_or(0, |event| event.seq);
        drop(events);
        self.stored.send_replace(newest);
        *lock(&self.last_active) = Instant::now();
    }

    /// Whether a stream or a followed turn holds it, besides the runs' map.
    pub(super) fn is_held(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1
    }

    /// Whether nothing holds it but the map and nothing was published to it
    /// for a while: it can be dropped and read back from the database later.
    pub(super) fn is_dormant(self: &Arc<Self>) -> bool {
        let quiet = lock(&self.last_active).elapsed() > DORMANT_AFTER;
        Arc::strong_count(self) == 1 && quiet
    }

    /// The stored events after number `seq`, at most `limit` of them: a
    /// stream takes its next batch as its client drains the last, so that
    /// what it holds stays small however long the run's history.
    pub fn after(&self, seq: u64, limit: usize) -> Vec<RunEvent> {
        let stored = *self.stored.borrow();
        let events = self.lock();
        let start = events.partition_point(|event| event.seq <= seq);
        let end = events.partition_point(|event| event.seq <= stored);
        let end = end.max(start).min(start.saturating_add(limit));
        events[start..end].to_vec()
    }

    /// The newest stored event's number, watched.
    pub fn latest(&self) -> watch::Receiver<u64> {
        self.stored.subscribe()
    }

    /// Waits until every event published so far is stored.
    pub(super) async fn flushed(&self) {
        let (done, stored) = oneshot::channel();
        if self.writer.send(Job::Flush(done)).is_ok() {
            let _ = stored.await;
        }
    }

    /// What the run already holds of call `call_id`: how many progress lines,
    /// and whether its end.
    pub(super) fn published_of(&self, call_id: &str) -> (usize, bool) {
        let events = self.lock();
        let of_call = events.iter().filter_map(|event| {
            let data: Value = serde_json::from_str(&event.data).ok()?;
            (data["tool_call_id"].as_str() == Some(call_id)).then_some((event, data))
        });
        let mut lines = 0;
        let mut ended = false;
        for (event, data) in of_call {
            match event.name {
                EventName::ToolProgress => lines += data["lines"].as_array().map_or(0, Vec::len),
                EventName::ToolEnded => ended = true,
                _ => {}
            }
        }
        (lines, ended)
    }
}

impl RunEvent {
    /// An event as stored; none for a name this version does not know (a
    /// newer node's), which streams skip.
    fn read(event: StoredEvent) -> Option<Self> {
        let Some(name) = EventName::parse(&event.name) else {
            tracing::warn!(name = %event.name, seq = event.seq, "skipping a run event of an unknown name");
            return None;
        };
        Some(Self {
            seq: event.seq as u64,
            name,
            data: if serde_json::from_str::<serde::de::IgnoredAny>(&event.data).is_ok() {
                event.data.into()
            } else {
                "null".into()
            },
        })
    }
}
