//! Live event streams (SSE): a run's, and a session's (its run).

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_util::stream::Stream;
use tokio::sync::watch;

use super::AppState;
use super::extract::Caller;
use super::problem::Problem;
use crate::runs::live::{RunEvent, RunEvents};
use cinch_store::AccountId;

/// How often an idle SSE stream sends a comment to keep proxies from closing it.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Events a stream takes from its run at a time: the next batch once the
/// client has been sent this one. A client too slow to read them is cut off
/// by the connection's idle timeout and resumes with `Last-Event-ID`.
const BATCH: usize = 64;

/// The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
/// `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
/// `status`, `session_id`), each with its number as `id`; after a
/// reconnect, `Last-Event-ID` resumes after that number.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/events",
    params(
        ("run" = String, Path, description = "The run"),
        ("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "Resume after this event"),
    ),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = String),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub(super) async fn run_events(
    State(app): State<AppState>,
    caller: Caller,
    Path(run): Path<String>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>>>, Problem> {
    // An unknown run is 404 like another account's, so that the answer
    // tells nothing and holds no stream open.
    app.code_tasks
        .check_run_started(&caller.0.account_id, &run)
        .await?;
    stream(&app, &caller.0.account_id, &run, &headers).await
}

/// The live events of `run` after the request's `Last-Event-ID`.
pub(super) async fn stream(
    app: &AppState,
    account_id: &AccountId,
    run: &str,
    headers: &HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<Event, Infallible>> + use<>>, Problem> {
    let after = match headers.get("last-event-id") {
        None => 0,
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<i64>().ok())
            .and_then(|id| u64::try_from(id).ok())
            .ok_or_else(|| {
                Problem::invalid_field("Last-Event-ID", "must be an event's id (0 to 2^63-1)")
            })?,
    };
    let events = app
        .runs
        .events(account_id, run)
        .await
        .map_err(|error| Problem::internal_or_unavailable(&error))?;
    let stream = EventStream {
        latest: events.latest(),
        closing: app.runs.closing(),
        events,
        position: after,
        pending: VecDeque::new(),
    };
    let stream = futures_util::stream::unfold(stream, EventStream::next);
    Ok(Sse::new(stream).keep_alive(KeepAlive::new().interval(KEEP_ALIVE)))
}

/// One client's place in a run's events.
pub(super) struct EventStream {
    events: Arc<RunEvents>,
    latest: watch::Receiver<u64>,
    closing: watch::Receiver<bool>,
    position: u64,
    pending: VecDeque<RunEvent>,
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
                    .event(event.name.as_str())
                    .data(&*event.data);
                return Some((Ok(sse), self));
            }
            self.latest.mark_unchanged();
            match self.events.after(self.position, BATCH).await {
                Ok(events) => self.pending.extend(events),
                Err(error) => {
                    // The client resumes with `Last-Event-ID`.
                    tracing::warn!("ending an event stream: {error:#}");
                    return None;
                }
            }
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
