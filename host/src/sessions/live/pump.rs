//! A followed turn's pump: moves its progress to its run's events until it
//! ends.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio::sync::watch;

use super::events::{EventName, RunEvents};
use super::{CallRef, LiveState};
use crate::engine::Turn;
use crate::engine::events::{Next, TurnEventKind};
use crate::engine::result::TurnResult;

/// At most this many lines go in one `tool.progress` event (the spec's poll cap).
const LINES_PER_EVENT: usize = 60;

/// How long a followed turn's pump waits for its next event before it
/// waits again: events and the turn's end wake it, so this only bounds one
/// wait and costs nothing while a turn is silent.
const EVENT_WAIT: Duration = Duration::from_secs(3600);

/// Moves a turn's events to its run until it ends, and gives its result.
/// `published`: how many of its progress lines the run already holds (they
/// are skipped), and whether its end.
pub(super) fn pump(
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
                EventName::ToolProgress,
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
            EventName::ToolEnded,
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
