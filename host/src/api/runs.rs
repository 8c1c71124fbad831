//! Turns the server follows and each run's live events: every turn's
//! progress becomes `tool.progress` events of its run, numbered per run so a
//! client can resume its SSE stream with `Last-Event-ID`.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::Stream;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::AppState;
use super::extract::Caller;
use super::problem::Problem;
use crate::engine::Turn;
use crate::engine::events::{Next, TurnEventKind};
use crate::engine::result::TurnResult;

/// At most this many lines go in one `tool.progress` event (the spec's poll cap).
const LINES_PER_EVENT: usize = 60;

/// How often an idle SSE stream sends a comment to keep proxies from closing it.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

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
struct RunEvent {
    seq: u64,
    name: &'static str,
    data: Value,
}

/// A run's events, kept while the server runs, with the newest number
/// watched by its streams.
struct RunEvents {
    events: Mutex<Vec<RunEvent>>,
    latest: watch::Sender<u64>,
}

impl RunEvents {
    fn new() -> Self {
        Self {
            events: Mutex::new(Vec::new()),
            latest: watch::Sender::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<RunEvent>> {
        self.events
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn publish(&self, name: &'static str, data: Value) {
        let mut events = self.lock();
        let seq = events.len() as u64 + 1;
        events.push(RunEvent { seq, name, data });
        drop(events);
        self.latest.send_replace(seq);
    }

    fn after(&self, seq: u64) -> Vec<RunEvent> {
        self.lock().iter().skip(seq as usize).cloned().collect()
    }
}

/// The turns the server follows, by turn id, and the runs' events, by
/// account and run.
pub struct Runs {
    turns: Mutex<HashMap<String, watch::Sender<LiveState>>>,
    runs: Mutex<HashMap<(String, String), Arc<RunEvents>>>,
    closing: watch::Sender<bool>,
}

impl Default for Runs {
    fn default() -> Self {
        Self {
            turns: Mutex::default(),
            runs: Mutex::default(),
            closing: watch::Sender::new(false),
        }
    }
}

/// Locks a map, carrying on past a panic elsewhere (the maps stay consistent:
/// every change is one insert).
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Which call of which run a followed turn is.
pub struct CallRef {
    /// The caller's account.
    pub account_id: String,
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
}

impl Runs {
    fn events(&self, account_id: &str, run_id: &str) -> Arc<RunEvents> {
        lock(&self.runs)
            .entry((account_id.to_owned(), run_id.to_owned()))
            .or_insert_with(|| Arc::new(RunEvents::new()))
            .clone()
    }

    /// The state of a followed turn, watched; `None` when it is not followed.
    pub fn watch(&self, turn_id: &str) -> Option<watch::Receiver<LiveState>> {
        lock(&self.turns).get(turn_id).map(watch::Sender::subscribe)
    }

    /// Follows `turn` on a thread of its own: its progress goes to its run's
    /// events, its session and result to its live state.
    pub fn follow(&self, call: CallRef, turn: Turn) -> std::io::Result<watch::Receiver<LiveState>> {
        let state = watch::Sender::new(LiveState::default());
        let receiver = state.subscribe();
        lock(&self.turns).insert(turn.id().to_owned(), state.clone());
        let events = self.events(&call.account_id, &call.run_id);
        std::thread::Builder::new()
            .name(format!("follow-{}", turn.id()))
            .spawn(move || pump(&call, turn, &state, &events))?;
        Ok(receiver)
    }

    /// Ends every live event stream (the server is shutting down).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }
}

/// Moves a turn's events to its run until it ends, then records its result.
fn pump(call: &CallRef, turn: Turn, state: &watch::Sender<LiveState>, events: &RunEvents) {
    let mut subscription = turn.subscribe();
    let mut session_id: Option<String> = None;
    loop {
        let batch = match subscription.next(Duration::from_secs(1)) {
            Next::Events(batch) => batch,
            Next::Idle => continue,
            Next::Closed => break,
        };
        let mut lines = Vec::new();
        for event in batch {
            match event.kind {
                TurnEventKind::Progress { line } => lines.push(line),
                TurnEventKind::Session { session_id: id } => {
                    session_id = Some(id.clone());
                    state.send_modify(|state| state.session_id = Some(id));
                }
                TurnEventKind::Ended { .. } => {}
            }
        }
        for chunk in lines.chunks(LINES_PER_EVENT) {
            events.publish(
                "tool.progress",
                json!({
                    "run_id": call.run_id,
                    "tool_call_id": call.call_id,
                    "lines": chunk,
                    "session_id": session_id,
                }),
            );
        }
    }
    let outcome = turn.wait().map(Arc::new).map_err(|error| {
        tracing::error!(call = %call.call_id, "the turn failed to finish: {error:#}");
        format!("{error:#}")
    });
    let status = match &outcome {
        Ok(result) => result.status.as_str(),
        Err(_) => "error",
    };
    events.publish(
        "tool.ended",
        json!({
            "run_id": call.run_id,
            "tool_call_id": call.call_id,
            "status": status,
            "session_id": outcome.as_ref().ok().and_then(|result| result.session_id.clone()).or(session_id),
        }),
    );
    state.send_modify(|state| state.outcome = Some(outcome));
}

/// The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
/// `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
/// `status`, `session_id`), each with its number as `id`; after a
/// reconnect, `Last-Event-ID` resumes after that number.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/events",
    params(
        ("run" = String, Path, description = "The run"),
        ("Last-Event-ID" = Option<u64>, Header, description = "Resume after this event"),
    ),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = String),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub async fn run_events(
    State(app): State<AppState>,
    caller: Caller,
    Path(run): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Problem> {
    super::code_tasks::check_run(&app, &caller, &run).await?;
    let after = match headers.get("last-event-id") {
        None => 0,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
            .ok_or_else(|| {
                Problem::invalid_field("Last-Event-ID", "must be an event's id (a number)")
            })?,
    };
    let events = app.runs.events(&caller.0.account_id, &run);
    let stream = EventStream {
        latest: events.latest.subscribe(),
        closing: app.runs.closing.subscribe(),
        events,
        position: after,
        pending: std::collections::VecDeque::new(),
    };
    let stream = futures_util::stream::unfold(stream, EventStream::next);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// One client's place in a run's events.
struct EventStream {
    events: Arc<RunEvents>,
    latest: watch::Receiver<u64>,
    closing: watch::Receiver<bool>,
    position: u64,
    pending: std::collections::VecDeque<RunEvent>,
}

impl EventStream {
    async fn next(mut self) -> Option<(Result<Event, Infallible>, Self)> {
        loop {
            if *self.closing.borrow() {
                return None;
            }
            if let Some(event) = self.pending.pop_front() {
                self.position = event.seq;
                let sse = Event::default()
                    .id(event.seq.to_string())
                    .event(event.name)
                    .data(event.data.to_string());
                return Some((Ok(sse), self));
            }
            self.latest.mark_unchanged();
            self.pending.extend(self.events.after(self.position));
            if self.pending.is_empty() {
                tokio::select! {
                    changed = self.latest.changed() => {
                        if changed.is_err() {
                            return None;
                        }
                    }
                    _ = self.closing.changed() => {}
                }
            }
        }
    }
}
