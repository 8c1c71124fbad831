//! Forks of a session at one of its turns, and comparing a task's sessions.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Deserialize;

use super::extract::{Caller, Json, trimmed};
use super::problem::Problem;
use super::sessions::Session;
use super::{AppState, Envelope};
use crate::sessions::ForkSpec;
use crate::store::{AccountId, SessionId, TaskId};

/// A fork to make; every field is optional.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ForkCreate {
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
pub async fn fork_session(
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
