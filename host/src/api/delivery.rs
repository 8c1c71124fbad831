//! A session's result, out: commit its changes, push its branch, read its
//! setup commands' whole output.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse as _, Response};
use serde::Deserialize;

use super::extract::{Caller, Json};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::sessions::{Committed, Pushed};
use crate::store::{AccountId, SessionId, TaskId};

type SessionPath = Path<(AccountId, TaskId, SessionId)>;

/// A commit of the session's work tree.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitCreate {
    /// The commit message: not blank, at most 10,000 characters.
    #[schema(pattern = r"\S", max_length = 10000)]
    pub message: String,
}

/// Commits everything in the session's work tree (what its turns changed)
/// on its branch; 409 while a turn runs, or when nothing changed since the
/// last commit.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/commit",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    request_body = CommitCreate,
    responses(
        (status = 201, body = Envelope<Committed>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub async fn commit_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Json(body): Json<CommitCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Committed>>), Problem> {
    caller.account(&account)?;
    let committed = app
        .conductor
        .commit(&account, &task, &session, &body.message)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(committed)))
}

/// A push of the session's branch.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PushCreate {
    /// Its name in the environment's repository (default: the session's
    /// `branch_name`): a git branch name.
    #[schema(max_length = 200)]
    pub branch: Option<String>,
}

/// Pushes the session's branch (its commits; uncommitted changes stay
/// behind, as `uncommitted_changes` says) to its environment's repository:
/// the local repository, or the remote it was cloned from, with the
/// environment's variables and secrets, in the sandbox. Where the remote is
/// on a known forge the answer links to a new pull request. 409 while a
/// turn runs, or when the repository refuses the push.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/push",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    request_body = PushCreate,
    responses(
        (status = 200, body = Envelope<Pushed>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub async fn push_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Json(body): Json<PushCreate>,
) -> Result<axum::Json<Envelope<Pushed>>, Problem> {
    caller.account(&account)?;
    let target = body.branch.as_deref().map(str::trim);
    let pushed = app
        .conductor
        .push(&account, &task, &session, target)
        .await?;
    Ok(Envelope::of(pushed))
}

/// The whole output of the session's setup commands at its last boot, each
/// after a `$ <command>` line, secrets masked; 404 when it ran none here.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/setup-log",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    responses(
        (status = 200, body = String, content_type = "text/plain", description = "The setup log"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub async fn setup_log(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
) -> Result<Response, Problem> {
    caller.account(&account)?;
    let Some(log) = app.conductor.setup_log(&account, &task, &session).await? else {
        return Err(Problem::not_found(
            "the session has no setup log: its environment has no setup commands, or they ran on another node",
        ));
    };
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], log).into_response())
}
