//! Forks of a session at one of its turns, and comparing a task's sessions.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Json, Query, trimmed};
use super::problem::Problem;
use super::sessions::Session;
use super::{AppState, Envelope};
use crate::service::sessions::ForkSpec;
use crate::service::sessions::compare::TaskComparison;
use cinch_engine::checkpoint::DiffStat;
use cinch_store::{AccountId, SessionId, TaskId};

/// A fork to make; every field is optional.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ForkCreate {
    /// The turn to fork at: an assistant message's `turn.turn_id` (or a
    /// revert's); default the session's latest turn that ended.
    pub turn_id: Option<String>,
    /// The harness (default the source's): another harness is allowed.
    pub harness: Option<String>,
    /// A model id as `GET /v1/models` lists it (default the source's on
    /// the same harness, else the harness's default).
    pub model: Option<String>,
    /// An effort in the harness's vocabulary (defaults as `model`).
    pub effort: Option<String>,
    /// A message that starts the fork's first turn at once.
    pub message: Option<String>,
}

/// Forks the session at a turn: a new session of the same task whose work
/// tree (a new worktree and branch) starts from that turn's end checkpoint
/// and whose conversation holds the messages up to that turn, each marked
/// `forked_from`. The source is untouched. `fork_mode` says how the harness
/// session begins (`brief`: a new one, given the conversation).
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/fork",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session to fork"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for the same key and body")),
    request_body = ForkCreate,
    responses(
        (status = 201, body = Envelope<Session>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The turn has not ended, or the session has no ended turn"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(super) async fn fork_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): Path<(AccountId, TaskId, SessionId)>,
    Json(body): Json<ForkCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Session>>), Problem> {
    caller.account(&account)?;
    let spec = ForkSpec {
        turn_id: trimmed(body.turn_id),
        harness: trimmed(body.harness),
        model: trimmed(body.model),
        effort: trimmed(body.effort),
        message: trimmed(body.message),
    };
    let fork = app.conductor.fork(&account, &task, &session, spec).await?;
    Ok((StatusCode::CREATED, Envelope::of(fork.into())))
}

/// One session in a comparison.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct ComparedSession {
    /// The session.
    pub session: Session,
    /// Its own turns that ended (a fork's inherited ones aside).
    pub turns: usize,
    /// Those turns' time together, in milliseconds.
    pub duration_ms: u64,
    /// The last thing its agent said.
    pub last_reply: Option<String>,
    /// The checkpoint standing for its work tree: its latest end checkpoint
    /// (a fork with no turn of its own yet: the one it was forked at).
    pub tree: Option<String>,
    /// What its tree changed since the sessions' common base
    /// (`files_changed`, at most 30 listed, `total_files`, `insertions`,
    /// `deletions`); null without a tree on this node.
    #[schema(value_type = Option<Object>)]
    pub diffstat: Option<DiffStat>,
}

/// A task's sessions side by side.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct Comparison {
    /// The commit every compared tree descends from.
    pub base: Option<String>,
    /// Each session, oldest first.
    pub sessions: Vec<ComparedSession>,
    /// The files whose content is not the same in every compared tree.
    pub differing_files: Vec<String>,
}

impl From<TaskComparison> for Comparison {
    fn from(comparison: TaskComparison) -> Self {
        Self {
            base: comparison.base,
            sessions: comparison
                .sessions
                .into_iter()
                .map(|summary| ComparedSession {
                    session: summary.session.into(),
                    turns: summary.turns,
                    duration_ms: summary.duration_ms,
                    last_reply: summary.last_reply,
                    tree: summary.tree,
                    diffstat: summary.diffstat,
                })
                .collect(),
            differing_files: comparison.differing_files,
        }
    }
}

/// The task's sessions side by side: each one's status, turns, duration,
/// usage (tokens and cost) and last reply, its changes since the sessions'
/// common base, and the files that differ between them.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/compare",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task")),
    responses(
        (status = 200, body = Envelope<Comparison>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(super) async fn compare_sessions(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
) -> Result<axum::Json<Envelope<Comparison>>, Problem> {
    caller.account(&account)?;
    let comparison = app.conductor.compare(&account, &task).await?;
    Ok(Envelope::of(comparison.into()))
}

/// The two sessions to diff.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct DiffPair {
    /// The session the patch goes from.
    pub a: String,
    /// The session the patch goes to.
    pub b: String,
    /// `hunks` (the default): three lines around each change; `whole_files`:
    /// every line of each changed file, for a whole-file view.
    #[param(inline)]
    pub context: Option<cinch_engine::checkpoint::DiffContext>,
}

/// The unified patch from session `a`'s work tree to session `b`'s (each
/// as its latest end checkpoint), as `git diff -M` prints it.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/compare/diff",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"), DiffPair),
    responses(
        (status = 200, description = "The patch", content_type = "text/x-diff", body = String),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "A session has no work tree to compare yet"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(super) async fn compare_diff(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
    Query(pair): Query<DiffPair>,
) -> Result<Response, Problem> {
    caller.account(&account)?;
    let patch = app
        .conductor
        .compare_diff(
            &account,
            &task,
            &SessionId::from(pair.a.trim().to_owned()),
            &SessionId::from(pair.b.trim().to_owned()),
            pair.context.unwrap_or_default(),
        )
        .await?;
    Ok((
        [(header::CONTENT_TYPE, "text/x-diff; charset=utf-8")],
        patch,
    )
        .into_response())
}
