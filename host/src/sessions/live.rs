//! Turns the server follows and each run's live events. A turn's progress
//! becomes `tool.progress` events of its run; sessions add their status and
//! message changes. Events are numbered per run and stored, and streams see
//! an event only once it is stored, so a stream resumes with `Last-Event-ID`
//! across restarts too: what a client was sent keeps its number. A turn
//! followed again after a restart re-reads its log from the start; what its
//! run already holds of it is not published again.
//!
//! On SQLite this node is the database's only writer: it numbers events as
//! they are published and keeps them in memory. On PostgreSQL every node
//! writes the same runs (a session's turn on one node, a message posted on
//! another), so the database numbers them as it stores them ([`Numbering`]),
//! and what a node holds in memory is what it read back: when it is told
//! another node stored some ([`Runs::read_back`], from `super::nodes`), after
//! storing its own, and on each new stream. A stream's ids are then the same
//! on every node, and `Last-Event-ID` resumes on any.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};

use crate::engine::Turn;
use crate::engine::events::{Next, TurnEventKind};
use crate::engine::result::TurnResult;
use crate::store::{NewEvent, RunKey, Store, StoredEvent};
use crate::sync::lock;
use crate::webhooks::{EventKind, Webhooks};

/// Runs whose events stay in memory before dormant ones are dropped.
const KEPT_RUNS: usize = 256;

/// A run nobody follows or streams, quiet this long, is dormant. Long past
/// the moment the writer stores its last event, so that reading it back
/// later finds every event.
const DORMANT_AFTER: Duration = Duration::from_secs(60);

/// At most this many lines go in one `tool.progress` event (the spec's poll cap).
const LINES_PER_EVENT: usize = 60;

/// How long a followed turn's pump waits for its next event before it
/// waits again: events and the turn's end wake it, so this only bounds one
/// wait and costs nothing while a turn is silent.
const EVENT_WAIT: Duration = Duration::from_secs(3600);

/// What the server knows of a turn it follows.
#[derive(Debug, Clone, Default)]
pub struct LiveState {
    /// The harness session, once reported.
    pub session_id: Option<String>,
    /// The result once the turn has ended, or why it could not be had.
    pub outcome: Option<Result<Arc<TurnResult>, String>>,
}

/// One event of a run.
#[derive(Debug, Clone)]
pub struct RunEvent {
    /// Its number in the run, from 1.
    pub seq: u64,
    /// Its SSE event name.
    pub name: String,
    /// Its data.
    pub data: Value,
}

/// Who numbers a run's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Numbering {
    /// This node, as they are published: it is the database's only writer.
    Here,
    /// The database, as they are stored: other nodes write the same runs.
    Database,
}

impl Numbering {
    fn of(store: &Store) -> Self {
        if store.is_shared() {
            Self::Database
        } else {
            Self::Here
        }
    }
}

/// An event on its way to the database.
struct Pending {
    run: RunKey,
    name: String,
    data: Value,
    /// Its number and its run's newest stored number (moved on once it is
    /// stored), when this node numbers events.
    numbered: Option<(u64, watch::Sender<u64>)>,
}

/// What the writer is asked to do, in order.
enum Job {
    /// Store an event.
    Store(Pending),
    /// Answer once every event asked before is stored.
    Flush(oneshot::Sender<()>),
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
    fn new(
        run: RunKey,
        numbering: Numbering,
        stored: Vec<StoredEvent>,
        writer: mpsc::UnboundedSender<Job>,
    ) -> Self {
        let events: Vec<RunEvent> = stored.into_iter().map(RunEvent::from).collect();
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
    pub fn publish(&self, name: &str, data: Value) {
        let mut events = self.lock();
        let numbered = (self.numbering == Numbering::Here).then(|| {
            let seq = events.last().map_or(0, |event| event.seq) + 1;
            events.push(RunEvent {
                seq,
                name: name.to_owned(),
                data: data.clone(),
            });
            (seq, self.stored.clone())
        });
        // Sent under the lock so the writer stores events in their order.
        let _ = self.writer.send(Job::Store(Pending {
            run: self.run.clone(),
            name: name.to_owned(),
            data,
            numbered,
        }));
        drop(events);
        *lock(&self.last_active) = Instant::now();
    }

    /// Reads back what the database holds of the run past the newest event
    /// in memory, whichever node stored it.
    async fn read_back(&self, store: &Store) {
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
        let fresh = stored.into_iter().map(RunEvent::from);
        events.extend(fresh.filter(|event| event.seq > held));
        let newest = events.last().map_or(0, |event| event.seq);
        drop(events);
        self.stored.send_replace(newest);
        *lock(&self.last_active) = Instant::now();
    }

    /// Whether a stream or a followed turn holds it, besides the runs' map.
    fn is_held(self: &Arc<Self>) -> bool {
        Arc::strong_count(self) > 1
    }

    /// Whether nothing holds it but the map and nothing was published to it
    /// for a while: it can be dropped and read back from the database later.
    fn is_dormant(self: &Arc<Self>) -> bool {
        let quiet = lock(&self.last_active).elapsed() > DORMANT_AFTER;
        Arc::strong_count(self) == 1 && quiet
    }

    /// The stored events after number `seq`.
    pub fn after(&self, seq: u64) -> Vec<RunEvent> {
        let stored = *self.stored.borrow();
        let events = self.lock();
        let start = events.partition_point(|event| event.seq <= seq);
        let end = events.partition_point(|event| event.seq <= stored);
        events[start..end.max(start)].to_vec()
    }

    /// The newest stored event's number, watched.
    pub fn latest(&self) -> watch::Receiver<u64> {
        self.stored.subscribe()
    }

    /// Waits until every event published so far is stored.
    async fn flushed(&self) {
        let (done, stored) = oneshot::channel();
        if self.writer.send(Job::Flush(done)).is_ok() {
            let _ = stored.await;
        }
    }

    /// What the run already holds of call `call_id`: how many progress lines,
    /// and whether its end.
    fn published_of(&self, call_id: &str) -> (usize, bool) {
        let events = self.lock();
        let of_call = events
            .iter()
            .filter(|event| event.data["tool_call_id"].as_str() == Some(call_id));
        let mut lines = 0;
        let mut ended = false;
        for event in of_call {
            match event.name.as_str() {
                PROGRESS => lines += event.data["lines"].as_array().map_or(0, Vec::len),
                ENDED => ended = true,
                _ => {}
            }
        }
        (lines, ended)
    }
}

impl From<StoredEvent> for RunEvent {
    fn from(event: StoredEvent) -> Self {
        Self {
            seq: event.seq as u64,
            name: event.name,
            data: serde_json::from_str(&event.data).unwrap_or(Value::Null),
        }
    }
}

/// The event of a turn's progress lines.
const PROGRESS: &str = "tool.progress";
/// The event of a turn's end.
const ENDED: &str = "tool.ended";

/// Which call of which run a followed turn is.
#[derive(Debug, Clone)]
pub struct CallRef {
    /// The account.
    pub account_id: String,
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
}

/// The turns the server follows, by turn id, and the runs' events, by
/// account and run.
pub struct Runs {
    store: Store,
    webhooks: Webhooks,
    turns: Mutex<HashMap<String, watch::Sender<LiveState>>>,
    runs: Arc<RunMap>,
    numbering: Numbering,
    writer: mpsc::UnboundedSender<Job>,
    closing: watch::Sender<bool>,
}

/// The runs whose events are in memory.
type RunMap = tokio::sync::Mutex<HashMap<RunKey, Arc<RunEvents>>>;

impl Runs {
    /// Runs whose events are stored in `store`. Must be called inside a
    /// Tokio runtime: a task writes the events.
    pub fn new(store: Store, webhooks: Webhooks) -> Self {
        let (writer, queue) = mpsc::unbounded_channel();
        let runs = Arc::new(RunMap::default());
        let numbering = Numbering::of(&store);
        tokio::spawn(store_events(store.clone(), queue, runs.clone()));
        Self {
            store,
            webhooks,
            turns: Mutex::default(),
            runs,
            numbering,
            writer,
            closing: watch::Sender::new(false),
        }
    }

    /// Adds an event to the account's run (see [`RunEvents::publish`]),
    /// without reading the run's events when the database numbers them.
    pub async fn publish(&self, account_id: &str, run_id: &str, name: &str, data: Value) {
        let run = RunKey {
            account_id: account_id.to_owned(),
            run_id: run_id.to_owned(),
        };
        if self.numbering == Numbering::Database {
            let _ = self.writer.send(Job::Store(Pending {
                run,
                name: name.to_owned(),
                data,
                numbered: None,
            }));
            return;
        }
        match self.events(account_id, run_id).await {
            Ok(events) => events.publish(name, data),
            Err(error) => tracing::error!(run = %run_id, "publishing {name}: {error:#}"),
        }
    }

    /// Reads back what the database holds of the run past what this node
    /// has in memory, when it has the run in memory: another node stored
    /// events of it.
    pub async fn read_back(&self, run: &RunKey) {
        let events = self.runs.lock().await.get(run).cloned();
        if let Some(events) = events {
            events.read_back(&self.store).await;
        }
    }

    /// Reads back every run in memory that a stream or a followed turn
    /// holds (`all`: every one): notices about them may have been missed.
    pub async fn read_back_held(&self, all: bool) {
        let held: Vec<Arc<RunEvents>> = self
            .runs
            .lock()
            .await
            .values()
            .filter(|events| all || events.is_held())
            .cloned()
            .collect();
        for events in held {
            events.read_back(&self.store).await;
        }
    }

    /// Where the accounts' events are sent.
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// The run's events, read back from the database the first time.
    /// On PostgreSQL what it holds is read back first: a notice from
    /// another node may have been missed.
    pub async fn events(&self, account_id: &str, run_id: &str) -> anyhow::Result<Arc<RunEvents>> {
        let key = RunKey {
            account_id: account_id.to_owned(),
            run_id: run_id.to_owned(),
        };
        let mut runs = self.runs.lock().await;
        if let Some(events) = runs.get(&key).cloned() {
            drop(runs);
            if self.numbering == Numbering::Database {
                events.read_back(&self.store).await;
            }
            return Ok(events);
        }
        let stored = self.store.events(account_id, run_id).await?;
        let events = Arc::new(RunEvents::new(
            key.clone(),
            self.numbering,
            stored,
            self.writer.clone(),
        ));
        if runs.len() >= KEPT_RUNS {
            runs.retain(|_, events| !events.is_dormant());
        }
        runs.insert(key, events.clone());
        Ok(events)
    }

    /// The state of a followed turn, watched; `None` when it is not followed.
    pub fn watch(&self, turn_id: &str) -> Option<watch::Receiver<LiveState>> {
        lock(&self.turns).get(turn_id).map(watch::Sender::subscribe)
    }

    /// Follows `turn` on a thread of its own: its progress goes to its run's
    /// events, its session and result to its live state. A turn followed
    /// before (by a server since restarted) carries on after what its run
    /// already holds of it; a turn this server follows already (attached
    /// twice at once) is not followed again: the live state is shared.
    pub async fn follow(
        &self,
        call: CallRef,
        turn: Turn,
    ) -> anyhow::Result<watch::Receiver<LiveState>> {
        let events = self.events(&call.account_id, &call.run_id).await?;
        let state = {
            let mut turns = lock(&self.turns);
            if let Some(followed) = turns.get(turn.id()) {
                return Ok(followed.subscribe());
            }
            let state = watch::Sender::new(LiveState::default());
            turns.insert(turn.id().to_owned(), state.clone());
            state
        };
        let receiver = state.subscribe();
        let published = events.published_of(&call.call_id);
        // The result outlives the turn's files, which go with its run's log;
        // webhooks hear of the end once (not again from a restarted server).
        let store = self.store.clone();
        let webhooks = (!published.1).then(|| self.webhooks.clone());
        let (ended, result) = tokio::sync::oneshot::channel::<Arc<TurnResult>>();
        let stored = call.clone();
        let run_events = events.clone();
        let outcome = state.clone();
        tokio::spawn(async move {
            let Ok(result) = result.await else {
                outcome.send_modify(|state| {
                    state.outcome = Some(Err("the turn's follower stopped".to_owned()))
                });
                return;
            };
            // The end event is stored before the result: a server killed in
            // between follows the turn again (no stored result) and
            // publishes the end then, rather than never. The outcome is
            // shown only once stored, so whoever waits for it (`?wait=true`)
            // reads it back everywhere.
            run_events.flushed().await;
            if let Err(error) = store
                .record_call_result(&stored.account_id, &stored.run_id, &stored.call_id, &result)
                .await
            {
                tracing::error!(call = %stored.call_id, "storing the turn's result: {error}");
            }
            outcome.send_modify(|state| state.outcome = Some(Ok(result.clone())));
            if let Some(webhooks) = webhooks {
                webhooks.notify(
                    &stored.account_id,
                    EventKind::TurnEnded,
                    json!({"run_id": stored.run_id, "call_id": stored.call_id, "result": *result}),
                );
            }
        });
        std::thread::Builder::new()
            .name(format!("follow-{}", turn.id()))
            .spawn(move || {
                let result = pump(&call, turn, &state, &events, published);
                let _ = ended.send(result);
            })?;
        Ok(receiver)
    }

    /// Whether the server is shutting down, watched.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Ends every live event stream (the server is shutting down).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }
}

/// Events stored in one transaction, at most.
const STORE_BATCH: usize = 256;

/// Stores events in the order they were published, as many as wait in one
/// transaction, then shows them to streams; answers flushes once what came
/// before them is stored.
async fn store_events(store: Store, mut queue: mpsc::UnboundedReceiver<Job>, runs: Arc<RunMap>) {
    let mut jobs = Vec::with_capacity(STORE_BATCH);
    let mut batch = Vec::with_capacity(STORE_BATCH);
    let mut flushes = Vec::new();
    let numbering = Numbering::of(&store);
    while queue.recv_many(&mut jobs, STORE_BATCH).await > 0 {
        for job in jobs.drain(..) {
            match job {
                Job::Store(pending) => batch.push(pending),
                Job::Flush(done) => flushes.push(done),
            }
        }
        match numbering {
            Numbering::Here => store_numbered(&store, &mut batch).await,
            Numbering::Database => store_unnumbered(&store, &mut batch, &runs).await,
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// Stores events this node numbered, then moves their runs' newest stored
/// number on.
async fn store_numbered(store: &Store, batch: &mut Vec<Pending>) {
    let rows: Vec<NewEvent<'_>> = batch
        .iter()
        .filter_map(|pending| {
            let (seq, _) = pending.numbered.as_ref()?;
            Some(NewEvent {
                account_id: &pending.run.account_id,
                run_id: &pending.run.run_id,
                seq: *seq as i64,
                name: &pending.name,
                data: pending.data.to_string(),
            })
        })
        .collect();
    if let Err(error) = store.append_events(&rows).await {
        tracing::warn!(
            events = rows.len(),
            "storing run events together failed, storing them one by one: {error}"
        );
        for row in &rows {
            if let Err(error) = store.append_events(std::slice::from_ref(row)).await {
                // Shown all the same: live streams carry on; only a
                // resume across a restart misses it.
                tracing::error!(run = %row.run_id, seq = row.seq, "storing an event: {error}");
            }
        }
    }
    for pending in batch.drain(..) {
        let Some((seq, stored)) = pending.numbered else {
            continue;
        };
        stored.send_if_modified(|stored| {
            let newer = seq > *stored;
            if newer {
                *stored = seq;
            }
            newer
        });
    }
}

/// Stores events for the database to number, each run's in one
/// transaction, then reads the runs in memory back (which shows them to
/// streams, with whatever other nodes stored in between).
async fn store_unnumbered(store: &Store, batch: &mut Vec<Pending>, runs: &RunMap) {
    let mut by_run: Vec<(RunKey, Vec<(&str, String)>)> = Vec::new();
    for pending in batch.iter() {
        let event = (pending.name.as_str(), pending.data.to_string());
        match by_run.iter_mut().find(|(run, _)| *run == pending.run) {
            Some((_, events)) => events.push(event),
            None => by_run.push((pending.run.clone(), vec![event])),
        }
    }
    for (run, events) in &by_run {
        if let Err(error) = store.append_numbered_events(run, events).await {
            // Nothing else holds them: streams on every node miss them.
            tracing::error!(run = %run.run_id, events = events.len(), "storing events: {error}");
        }
        let held = runs.lock().await.get(run).cloned();
        if let Some(held) = held {
            held.read_back(store).await;
        }
    }
    batch.clear();
}

/// Moves a turn's events to its run until it ends, and gives its result.
/// `published`: how many of its progress lines the run already holds (they
/// are skipped), and whether its end.
fn pump(
    call: &CallRef,
    turn: Turn,
    state: &watch::Sender<LiveState>,
    events: &RunEvents,
    published: (usize, bool),
) -> Arc<TurnResult> {
    let (mut to_skip, ended) = published;
    let _running = crate::metrics::RunningTurn::start(turn.harness());
    let mut subscription = turn.subscribe();
    let mut session_id: Option<String> = None;
    loop {
        let batch = match subscription.next(EVENT_WAIT) {
            Next::Events(batch) => batch,
            Next::Idle => continue,
            Next::Closed => break,
        };
        let mut lines = Vec::new();
        for event in batch {
            match event.kind {
                TurnEventKind::Progress { .. } if to_skip > 0 => to_skip -= 1,
                TurnEventKind::Progress { line } => lines.push(line),
                TurnEventKind::Session { session_id: id } => {
                    session_id = Some(id.clone());
                    state.send_modify(|state| state.session_id = Some(id));
                }
                TurnEventKind::Ended { .. } => {}
            }
        }
        crate::metrics::progress_lines(turn.harness(), lines.len());
        for chunk in lines.chunks(LINES_PER_EVENT) {
            events.publish(
                PROGRESS,
                json!({
                    "run_id": call.run_id,
                    "tool_call_id": call.call_id,
                    "lines": chunk,
                    "session_id": session_id,
                }),
            );
        }
    }
    let result = Arc::new(turn.wait());
    if !ended {
        crate::metrics::turn_ended(&result.harness, result.status.as_str());
        events.publish(
            ENDED,
            json!({
                "run_id": call.run_id,
                "tool_call_id": call.call_id,
                "status": result.status.as_str(),
                "session_id": result.session_id.clone().or(session_id),
            }),
        );
    }
    result
}
