//! A run's events: numbered, the newest kept in memory for its streams and
//! all stored by the writer (see [`super::writer`]); on PostgreSQL read back
//! from the database, which numbers them. Streams read what is no longer in
//! memory from the store's `run_events`; an event leaves memory only once
//! it is there ([`Reached`]).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;
use tokio::sync::{mpsc, oneshot, watch};

use super::event::{EventName, Numbering, Reached, RunEvent};
use super::history::{self, History};
use super::writer::{Job, Pending};
use cinch_base::sync::lock;
use cinch_store::{RunKey, Store, StoredEvent};

/// A run nobody follows or streams, quiet this long, is dormant. Long past
/// the moment the writer stores its last event, so that reading it back
/// later finds every event.
const DORMANT_AFTER: Duration = Duration::from_secs(60);

/// Stored events kept in memory for a run's live streams, at most this many
/// and at most [`KEPT_BYTES`] of data: older ones are read from the store
/// by the streams that come late, so a run's memory does not grow with its
/// history.
pub(super) const KEPT_EVENTS: usize = 128;

/// The most data (JSON text) of stored events kept in memory for a run.
const KEPT_BYTES: usize = 64 * 1024;

/// A run's newest events, with how far they have got (the newest stored
/// number is watched by its streams).
pub struct RunEvents {
    run: RunKey,
    numbering: Numbering,
    history: Arc<History>,
    window: Mutex<Window>,
    reached: Arc<Reached>,
    writer: mpsc::UnboundedSender<Job>,
    /// When it was loaded or last published to.
    last_active: Mutex<Instant>,
    /// Read-backs asked for, counted; those asked while one reads are
    /// served by the next one.
    reads_asked: AtomicU64,
    /// The count of read-backs asked for when the last one began.
    reads_done: tokio::sync::Mutex<u64>,
}

/// The events of a run in memory: those not indexed yet and the newest
/// indexed ones; every one numbered up to `dropped_through` is only in the
/// store.
struct Window {
    events: VecDeque<RunEvent>,
    /// The data bytes of `events`.
    bytes: usize,
    /// The newest number of an event let go (or never loaded).
    dropped_through: u64,
    /// The newest event's number, whether kept or not.
    newest: u64,
}

impl Window {
    fn push(&mut self, event: RunEvent) {
        self.newest = self.newest.max(event.seq);
        self.bytes += event.data.len();
        self.events.push_back(event);
    }

    /// Lets go of the oldest indexed events past the caps.
    fn trim(&mut self, indexed: u64) {
        while self.events.len() > KEPT_EVENTS || self.bytes > KEPT_BYTES {
            match self.events.front() {
                Some(oldest) if oldest.seq <= indexed => {
                    self.bytes -= oldest.data.len();
                    self.dropped_through = oldest.seq;
                    self.events.pop_front();
                }
                _ => break,
            }
        }
    }
}

impl RunEvents {
    /// A run's events in memory from its `newest` stored ones (the store's
    /// newest, at most [`KEPT_EVENTS`] of them).
    pub(super) fn new(
        run: RunKey,
        numbering: Numbering,
        history: Arc<History>,
        newest: Vec<StoredEvent>,
        writer: mpsc::UnboundedSender<Job>,
    ) -> Self {
        let dropped_through = newest.first().map_or(0, |event| event.seq as u64 - 1);
        let latest = newest.last().map_or(0, |event| event.seq as u64);
        let mut window = Window {
            events: VecDeque::new(),
            bytes: 0,
            dropped_through,
            newest: latest,
        };
        for event in newest.into_iter().filter_map(RunEvent::read) {
            window.push(event);
        }
        window.trim(latest);
        Self {
            run,
            numbering,
            history,
            window: Mutex::new(window),
            reached: Arc::new(Reached::through(latest)),
            writer,
            last_active: Mutex::new(Instant::now()),
            reads_asked: AtomicU64::new(0),
            reads_done: tokio::sync::Mutex::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Window> {
        lock(&self.window)
    }

    /// Adds an event, its data written as JSON, and stores it; streams see
    /// it once stored. Numbered next here, or by the database when other
    /// nodes write the run too.
    pub fn publish(&self, name: EventName, data: &impl Serialize) {
        let data: Arc<str> = match serde_json::to_string(data) {
            Ok(text) => text.into(),
            // Only a map whose keys are not text fails, which no event's is.
            Err(error) => {
                tracing::error!(run = %self.run.run_id, "writing a {} event: {error}", name.as_str());
                return;
            }
        };
        let mut window = self.lock();
        let numbered = (self.numbering == Numbering::Here).then(|| {
            let seq = window.newest + 1;
            window.push(RunEvent {
                seq,
                name,
                data: data.clone(),
            });
            window.trim(self.reached.indexed());
            (seq, self.reached.clone())
        });
        // Sent under the lock so the writer stores events in their order.
        let _ = self.writer.send(Job::Store(Pending {
            run: self.run.clone(),
            name,
            data,
            numbered,
        }));
        drop(window);
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
        let newest = self.lock().newest;
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
        let mut window = self.lock();
        let held = window.newest;
        let fresh = stored.into_iter().filter_map(RunEvent::read);
        for event in fresh.filter(|event| event.seq > held) {
            window.push(event);
        }
        let newest = window.newest;
        // Indexed before memory lets go, so that a stream reading history
        // meanwhile never finds memory short of what the store holds.
        self.reached.indexed_through(newest);
        window.trim(newest);
        drop(window);
        self.reached.stored_through(newest);
        *lock(&self.last_active) = Instant::now();
    }

    /// Whether a stream or a followed turn holds it, besides the runs' map.
    pub(super) fn is_held(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1
    }

    /// Whether nothing holds it but the map, nothing was published to it
    /// for a while and all of it is indexed: it can be dropped and read back
    /// from the database later.
    pub(super) fn is_dormant(self: &Arc<Self>) -> bool {
        let quiet = lock(&self.last_active).elapsed() > DORMANT_AFTER;
        let indexed = self.reached.indexed() >= self.lock().newest;
        Arc::strong_count(self) == 1 && quiet && indexed
    }

    /// The stored events after number `seq`: at most `limit` of them from
    /// memory, or the rest of their page of history (see [`History`]) when
    /// they are no longer in memory. A stream takes its next batch as its
    /// client drains the last, so that what it holds stays small however
    /// long the run's history.
    pub async fn after(&self, mut seq: u64, limit: usize) -> anyhow::Result<Vec<RunEvent>> {
        loop {
            let stored = self.reached.stored();
            {
                let window = self.lock();
                if seq >= window.dropped_through {
                    let start = window.events.partition_point(|event| event.seq <= seq);
                    let end = window.events.partition_point(|event| event.seq <= stored);
                    let end = end.max(start).min(start.saturating_add(limit));
                    return Ok(window.events.range(start..end).cloned().collect());
                }
            }
            // Read once memory has let go of `seq`, so every event from it
            // to what memory still holds is in the store.
            let indexed = self.reached.indexed();
            let page = seq / history::PAGE;
            let events = self.history.page(&self.run, page, indexed).await?;
            let start = events.partition_point(|event| event.seq <= seq);
            if start < events.len() {
                return Ok(events[start..].to_vec());
            }
            // Nothing indexed after `seq` in its page (a number skipped, or
            // an event of a name this version does not know): on from the
            // next page, or from what memory holds.
            seq = ((page + 1) * history::PAGE).min(indexed);
        }
    }

    /// The newest stored event's number, watched.
    pub fn latest(&self) -> watch::Receiver<u64> {
        self.reached.watch_stored()
    }

    /// Waits until every event published so far is stored.
    pub(super) async fn flushed(&self) {
        let (done, stored) = oneshot::channel();
        if self.writer.send(Job::Flush(done)).is_ok() {
            let _ = stored.await;
        }
    }

    /// What the run already holds of call `call_id`: how many progress lines,
    /// and whether its end. What is no longer in memory is read from the
    /// store a page at a time.
    pub(super) async fn published_of(&self, call_id: &str) -> anyhow::Result<(usize, bool)> {
        let mut of_call = OfCall::new(call_id);
        let (dropped_through, in_memory) = {
            let window = self.lock();
            let in_memory: Vec<RunEvent> = window.events.iter().cloned().collect();
            (window.dropped_through, in_memory)
        };
        let indexed = self.reached.indexed();
        for page in 0..dropped_through.div_ceil(history::PAGE) {
            let events = self.history.page(&self.run, page, indexed).await?;
            let older = events.iter().filter(|event| event.seq <= dropped_through);
            for event in older {
                of_call.count(event);
            }
        }
        for event in &in_memory {
            of_call.count(event);
        }
        Ok((of_call.lines, of_call.ended))
    }
}

/// What a run holds of one call, counted event by event.
struct OfCall<'a> {
    call_id: &'a str,
    lines: usize,
    ended: bool,
}

impl<'a> OfCall<'a> {
    fn new(call_id: &'a str) -> Self {
        Self {
            call_id,
            lines: 0,
            ended: false,
        }
    }

    fn count(&mut self, event: &RunEvent) {
        if !matches!(event.name, EventName::ToolProgress | EventName::ToolEnded)
            || !event.data.contains(self.call_id)
        {
            return;
        }
        let Ok(data) = serde_json::from_str::<Value>(&event.data) else {
            return;
        };
        if data["tool_call_id"].as_str() != Some(self.call_id) {
            return;
        }
        match event.name {
            EventName::ToolProgress => self.lines += data["lines"].as_array().map_or(0, Vec::len),
            EventName::ToolEnded => self.ended = true,
            _ => {}
        }
    }
}

impl RunEvent {
    /// An event as stored; none for a name this version does not know (a
    /// newer node's), which streams skip.
    pub(super) fn read(event: StoredEvent) -> Option<Self> {
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
