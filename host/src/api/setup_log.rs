//! A session's setup log: the output of the setup command that failed, as
//! the app shows it under a failed setup (the session's error message keeps
//! only its last lines).

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::AppState;
use super::extract::Caller;
use super::problem::Problem;
use crate::store::{AccountId, SessionId, TaskId};

/// The output of the session's failed setup command, its secrets masked
/// (its last 2,000 lines). 404 when none of its setup commands failed on
/// the node answering.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/setup-log",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    responses(
        (status = 200, body = String, content_type = "text/plain"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub async fn setup_log(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): Path<(AccountId, TaskId, SessionId)>,
) -> Result<Response, Problem> {
    caller.account(&account)?;
    match app.conductor.setup_log(&account, &task, &session).await? {
        Some(log) => {
            Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], log).into_response())
        }
        None => Err(Problem::not_found(
            "this session has no setup log: none of its setup commands failed on this node",
        )),
    }
}
