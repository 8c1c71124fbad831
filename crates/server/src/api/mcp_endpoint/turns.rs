//! What the tools read of a task: the session they act on, whether it is
//! done, and its newest turn with that turn's diff.

use std::time::{Duration, Instant};

use serde::Serialize;

use super::McpCaller;
use crate::api::{AppState, Problem};
use cinch_base::timestamp::Timestamp;
use cinch_store::{
    CloseReason, Session, SessionId, SessionStatus, TaskId, TurnOutcome, TurnState, TurnView,
};

/// How often a wait looks at the session again.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// The most of a diff a result carries, in bytes; the rest is cut.
pub(super) const MAX_DIFF_BYTES: usize = 256 << 10;

/// A session as the tools show it.
#[derive(Debug, Serialize)]
pub(super) struct SessionState {
    /// Its task.
    pub task_id: String,
    /// The session.
    pub session_id: String,
    /// `booting`, `waiting`, `running`, `idle` or `closed`.
    pub status: SessionStatus,
    /// The harness it runs.
    pub harness: String,
    /// Why it stopped, or the recovery that left it idle.
    pub close_reason: Option<CloseReason>,
    /// What went wrong and what to do next.
    pub error_message: Option<String>,
}

impl From<Session> for SessionState {
    fn from(session: Session) -> Self {
        Self {
            task_id: session.task_id.into(),
            session_id: session.id.into(),
            status: session.status,
            harness: session.harness,
            close_reason: session.close_reason,
            error_message: session.error_message,
        }
    }
}

/// A turn as the tools show it: the code-task call it is and how it ended.
#[derive(Debug, Serialize)]
pub(super) struct TurnReport {
    /// The call: with the session's id as the run, the code-task API's
    /// `/api/runs/{session_id}/tasks/{call_id}` reads it too.
    pub call_id: String,
    /// Where it stands.
    pub status: TurnState,
    /// When it started (RFC 3339).
    pub started_at: Timestamp,
    /// The agent's answer: its last message.
    pub final_message: String,
    /// Once it ended: exit code, files changed, usage, the result text.
    pub result: Option<TurnOutcome>,
}

/// The caller's task `task_id` and its session `session_id`, or its newest
/// session when none is named.
pub(super) async fn session_of(
    app: &AppState,
    caller: &McpCaller,
    task_id: &str,
    session_id: Option<&str>,
) -> Result<Session, Problem> {
    let account = caller.principal.account_id.clone();
    let task = TaskId::from(task_id.trim().to_owned());
    if let Some(session_id) = session_id.map(str::trim).filter(|id| !id.is_empty()) {
        return Ok(app
            .conductor
            .session(&account, &task, &SessionId::from(session_id.to_owned()))
            .await?);
    }
    let mut newest = None;
    let mut cursor = None;
    loop {
        let page = app
            .conductor
            .sessions(&account, &task, cursor.as_deref(), 200)
            .await?;
        newest = page.items.into_iter().last().or(newest);
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => break,
        }
    }
    newest.ok_or_else(|| Problem::conflict("that task has no session yet"))
}

/// Waits up to `timeout` for `session` to be done (idle or closed, nothing
/// queued): the session as it is then, and whether it is done.
pub(super) async fn wait(
    app: &AppState,
    session: Session,
    timeout: Duration,
) -> Result<(Session, bool), Problem> {
    let deadline = Instant::now() + timeout;
    let mut session = session;
    loop {
        // A turn being started holds the session's lock for as long as its
        // checkpoint takes: that counts against the timeout too.
        let remaining = deadline.saturating_duration_since(Instant::now());
        let settled = app
            .conductor
            .settled(&session.account_id, &session.task_id, &session.id);
        match tokio::time::timeout(remaining.max(POLL_INTERVAL), settled).await {
            Ok(settled) => {
                let (now, done) = settled?;
                session = now;
                if done {
                    return Ok((session, true));
                }
            }
            Err(_) => return Ok((session, false)),
        }
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            return Ok((session, false));
        }
        tokio::time::sleep(POLL_INTERVAL.min(remaining)).await;
    }
}

/// The session's newest turn, if it has run one.
pub(super) async fn last_turn(
    app: &AppState,
    session: &Session,
) -> Result<Option<TurnReport>, Problem> {
    let Some((message, turn)) = app.conductor.last_turn(session).await? else {
        return Ok(None);
    };
    let TurnView {
        call_id,
        status,
        started_at,
        result,
        ..
    } = turn;
    Ok(Some(TurnReport {
        call_id,
        status,
        started_at,
        final_message: message.content,
        result,
    }))
}

/// A diff, cut to [`MAX_DIFF_BYTES`] at a line's end.
#[derive(Debug, Serialize)]
pub(super) struct Diff {
    /// The unified diff (from the turn's start checkpoint to its end).
    pub text: String,
    /// Whether the text was cut; the code-task API's diff route has it whole.
    pub truncated: bool,
}

/// The unified diff of the session's ended turn `call_id`.
pub(super) async fn diff(
    app: &AppState,
    caller: &McpCaller,
    session: &Session,
    call_id: &str,
) -> Result<Diff, Problem> {
    let text = app
        .code_tasks
        .diff(
            &caller.principal.account_id,
            session.id.as_str(),
            call_id,
            cinch_engine::checkpoint::DiffContext::Hunks,
            Some(&*caller.token),
        )
        .await?;
    Ok(cut(text))
}

fn cut(mut text: String) -> Diff {
    if text.len() <= MAX_DIFF_BYTES {
        return Diff {
            text,
            truncated: false,
        };
    }
    let end = text[..MAX_DIFF_BYTES].rfind('\n').map_or(0, |at| at + 1);
    text.truncate(end);
    Diff {
        text,
        truncated: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_diff_is_cut_at_a_line_end() {
        let line = "+é".repeat(40) + "\n";
        let whole = line.repeat(MAX_DIFF_BYTES / line.len() + 2);
        let diff = cut(whole.clone());
        assert!(diff.truncated);
        assert!(diff.text.len() <= MAX_DIFF_BYTES);
        assert!(diff.text.ends_with('\n'));
        assert!(whole.starts_with(&diff.text));
        let short = cut(line.clone());
        assert!(!short.truncated);
        assert_eq!(short.text, line);
    }
}
