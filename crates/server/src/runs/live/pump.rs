//! A followed turn's pump: moves its progress to its run's events as the
//! engine publishes it, then gives the turn's result.

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use tokio::sync::watch;

use super::event::EventName;
use super::events::RunEvents;
use super::{AskedApproval, CallRef, LiveState};
use cinch_engine::engine::Turn;
use cinch_engine::engine::events::{TurnEvent, TurnEventKind};
use cinch_engine::engine::result::TurnResult;

/// At most this many lines go in one `tool.progress` event (the spec's poll cap).
const LINES_PER_EVENT: usize = 60;

/// Moves a turn's events to its run until it ends, and gives its result.
/// `published`: how many of its progress lines the run already holds (they
/// are skipped), and whether its end.
///
/// The lines are moved on by the engine's thread that read them (a
/// listener), so no thread wakes for a line; the calling thread only waits
/// for the end.
pub(super) fn pump(
    call: &CallRef,
    turn: Turn,
    state: &watch::Sender<LiveState>,
    events: &Arc<RunEvents>,
    published: (usize, bool),
    approvals: tokio::sync::mpsc::UnboundedSender<AskedApproval>,
) -> Arc<TurnResult> {
    let (to_skip, ended) = published;
    let _running = crate::metrics::RunningTurn::start(turn.harness());
    let mut progress = Progress {
        call: call.clone(),
        state: state.clone(),
        events: events.clone(),
        lines_counted: crate::metrics::progress_lines(turn.harness()),
        to_skip,
        turn_id: turn.id().to_owned(),
        harness: turn.harness().to_owned(),
        approvals,
    };
    turn.listen(Box::new(move |batch| progress.forward(batch)));
    let result = Arc::new(turn.wait());
    if !ended {
        crate::metrics::turn_ended(&result.harness, result.status.as_str());
        if result.cli_drift == Some(cinch_engine::tools::CliDrift::Untested) {
            crate::metrics::untested_cli(
                &result.harness,
                result.cli_version.as_deref().unwrap_or_default(),
            );
        }
        let session_id = result
            .session_id
            .clone()
            .or_else(|| state.borrow().session_id.clone());
        events.publish(
            EventName::ToolEnded,
            &json!({
                "run_id": call.run_id,
                "tool_call_id": call.call_id,
                "status": result.status.as_str(),
                "session_id": session_id,
            }),
        );
    }
    result
}

/// What moves one turn's events to its run.
struct Progress {
    call: CallRef,
    state: watch::Sender<LiveState>,
    events: Arc<RunEvents>,
    lines_counted: metrics::Counter,
    /// Progress lines the run holds already, still to pass over.
    to_skip: usize,
    turn_id: String,
    harness: String,
    /// Where the turn's permission requests go.
    approvals: tokio::sync::mpsc::UnboundedSender<AskedApproval>,
}

impl Progress {
    /// Moves on the events of one publication: its lines together, in
    /// `tool.progress` events of at most [`LINES_PER_EVENT`].
    fn forward(&mut self, batch: &[TurnEvent]) {
        let mut lines = Vec::new();
        for event in batch {
            match &event.kind {
                TurnEventKind::Progress { .. } if self.to_skip > 0 => self.to_skip -= 1,
                TurnEventKind::Progress { line } => lines.push(line.as_str()),
                TurnEventKind::Session { session_id } => self
                    .state
                    .send_modify(|state| state.session_id = Some(session_id.clone())),
                TurnEventKind::Approval { request } => {
                    let _ = self.approvals.send(AskedApproval {
                        call: self.call.clone(),
                        turn_id: self.turn_id.clone(),
                        harness: self.harness.clone(),
                        request: request.clone(),
                    });
                }
                TurnEventKind::Ended { .. } => {}
            }
        }
        self.lines_counted.increment(lines.len() as u64);
        let session_id = self.state.borrow().session_id.clone();
        for chunk in lines.chunks(LINES_PER_EVENT) {
            self.events.publish(
                EventName::ToolProgress,
                &ProgressData {
                    lines: chunk,
                    run_id: &self.call.run_id,
                    session_id: session_id.as_deref(),
                    tool_call_id: &self.call.call_id,
                },
            );
        }
    }
}

/// A `tool.progress` event's data, written to JSON as it is borrowed:
/// building and dropping a `json!` map of it for every event cost more than
/// writing the event's text. Its keys are in the order such a map gave them.
#[derive(Serialize)]
struct ProgressData<'a> {
    lines: &'a [&'a str],
    run_id: &'a str,
    session_id: Option<&'a str>,
    tool_call_id: &'a str,
}
