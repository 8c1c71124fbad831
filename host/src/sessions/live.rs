//! Turns the server follows and each run's live events. A turn's progress
//! becomes `tool.progress` events of its run; sessions add their status and
//! message changes. Events are numbered per run and stored, and streams see
//! an event only once it is stored, so a stream resumes with `Last-Event-ID`
//! across restarts too: what a client was sent keeps its number. A turn
//! followed again after a restart re-reads its log from the start; what its
//! run already holds of it is not published again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::engine::Turn;
use crate::engine::events::{Next, TurnEventKind};
use crate::engine::result::TurnResult;
use crate::store::{NewEvent, Store};
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

/// An event on its way to the database.
struct Pending {
    account_id: String,
    run_id: String,
    event: RunEvent,
    /// Its run's newest stored number, moved on once it is stored.
    stored: watch::Sender<u64>,
}

/// A run's events, with the newest stored number watched by its streams.
pub struct RunEvents {
    account_id: String,
    run_id: String,
    events: Mutex<Vec<RunEvent>>,
    stored: watch::Sender<u64>,
    writer: mpsc::UnboundedSender<Pending>,
    /// When it was loaded or last published to.
    last_active: Mutex<Instant>,
}

impl RunEvents {
    fn lock(&self) -> MutexGuard<'_, Vec<RunEvent>> {
        lock(&self.events)
    }

    /// Adds an event, numbered next, and stores it; streams see it once stored.
    pub fn publish(&self, name: &str, data: Value) {
        let mut events = self.lock();
        let seq = events.last().map_or(0, |event| event.seq) + 1;
        let event = RunEvent {
            seq,
            name: name.to_owned(),
            data,
        };
        events.push(event.clone());
        // Sent under the lock so the writer stores events in their order.
        let _ = self.writer.send(Pending {
            account_id: self.account_id.clone(),
            run_id: self.run_id.clone(),
            event,
            stored: self.stored.clone(),
        });
        drop(events);
        *lock(&self.last_active) = Instant::now();
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
        let published = self.lock().last().map_or(0, |event| event.seq);
        let _ = self
            .stored
            .subscribe()
            .wait_for(|stored| *stored >= published)
            .await;
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
    runs: tokio::sync::Mutex<HashMap<(String, String), Arc<RunEvents>>>,
    writer: mpsc::UnboundedSender<Pending>,
    closing: watch::Sender<bool>,
}

impl Runs {
    /// Runs whose events are stored in `store`. Must be called inside a
    /// Tokio runtime: a task writes the events.
    pub fn new(store: Store, webhooks: Webhooks) -> Self {
        let (writer, queue) = mpsc::unbounded_channel();
        tokio::spawn(store_events(store.clone(), queue));
        Self {
            store,
            webhooks,
            turns: Mutex::default(),
            runs: tokio::sync::Mutex::default(),
            writer,
            closing: watch::Sender::new(false),
        }
    }

    /// Where the accounts' events are sent.
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// The run's events, read back from the database the first time.
    pub async fn events(&self, account_id: &str, run_id: &str) -> anyhow::Result<Arc<RunEvents>> {
        let key = (account_id.to_owned(), run_id.to_owned());
        let mut runs = self.runs.lock().await;
        if let Some(events) = runs.get(&key) {
            return Ok(events.clone());
        }
        let stored = self
            .store
            .events(account_id, run_id)
            .await?
            .into_iter()
            .map(|event| RunEvent {
                seq: event.seq as u64,
                name: event.name,
                data: serde_json::from_str(&event.data).unwrap_or(Value::Null),
            })
            .collect::<Vec<_>>();
        let latest = stored.last().map_or(0, |event| event.seq);
        let events = Arc::new(RunEvents {
            account_id: account_id.to_owned(),
            run_id: run_id.to_owned(),
            events: Mutex::new(stored),
            stored: watch::Sender::new(latest),
            writer: self.writer.clone(),
            last_active: Mutex::new(Instant::now()),
        });
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
/// transaction, then shows them to streams.
async fn store_events(store: Store, mut queue: mpsc::UnboundedReceiver<Pending>) {
    let mut batch = Vec::with_capacity(STORE_BATCH);
    while queue.recv_many(&mut batch, STORE_BATCH).await > 0 {
        let rows: Vec<NewEvent<'_>> = batch
            .iter()
            .map(|pending| NewEvent {
                account_id: &pending.account_id,
                run_id: &pending.run_id,
                seq: pending.event.seq as i64,
                name: &pending.event.name,
                data: pending.event.data.to_string(),
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
            let seq = pending.event.seq;
            pending.stored.send_if_modified(|stored| {
                let newer = seq > *stored;
                if newer {
                    *stored = seq;
                }
                newer
            });
        }
    }
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
