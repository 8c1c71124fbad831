//! A session's result, out: commit its changes, push its branch, read its
//! setup commands' whole output.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse as _, Response};
use serde::Deserialize;
use serde_json::{Value, json};

use super::extract::{Caller, Json, bearer};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::peers::FORWARDED_HEADER;
use crate::service::ServiceError;
use crate::service::sessions::{Committed, Pushed};
use cinch_store::{AccountId, SessionId, TaskId};

type SessionPath = Path<(AccountId, TaskId, SessionId)>;

/// A commit of the session's work tree.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CommitCreate {
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
pub(super) async fn commit_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    uri: Uri,
    headers: HeaderMap,
    Json(body): Json<CommitCreate>,
) -> Result<Response, Problem> {
    caller.account(&account)?;
    match app
        .conductor
        .commit(&account, &task, &session, &body.message)
        .await
    {
        Ok(committed) => Ok((StatusCode::CREATED, Envelope::of(committed)).into_response()),
        Err(refused) => {
            let body = json!({"message": body.message});
            ask_its_node(&headers, &uri, body, refused).await
        }
    }
}

/// A push of the session's branch.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PushCreate {
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
pub(super) async fn push_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    uri: Uri,
    headers: HeaderMap,
    Json(body): Json<PushCreate>,
) -> Result<Response, Problem> {
    caller.account(&account)?;
    let target = body.branch.as_deref().map(str::trim);
    match app.conductor.push(&account, &task, &session, target).await {
        Ok(pushed) => Ok(Envelope::of(pushed).into_response()),
        Err(refused) => {
            let body = json!({"branch": body.branch});
            ask_its_node(&headers, &uri, body, refused).await
        }
    }
}

/// The answer of the node that runs the session to this same request (`uri`
/// with the JSON `body`, as this caller), when `refused` says the session's
/// work tree is there; otherwise `refused` as a problem. A request another
/// node passed on is never passed on again.
async fn ask_its_node(
    headers: &HeaderMap,
    uri: &Uri,
    body: Value,
    refused: ServiceError,
) -> Result<Response, Problem> {
    let ServiceError::OnAnotherNode(node) = &refused else {
        return Err(refused.into());
    };
    let (Some(url), Some(token)) = (node.url.clone(), bearer(headers)) else {
        return Err(refused.into());
    };
    if headers.contains_key(FORWARDED_HEADER) {
        return Err(refused.into());
    }
    let path = uri
        .path_and_query()
        .map_or(uri.path(), |path| path.as_str())
        .to_owned();
    let token = token.to_owned();
    let relayed =
        tokio::task::spawn_blocking(move || crate::peers::relay_post(&url, &path, &body, &token))
            .await
            .map_err(|error| Problem::internal(&error))?;
    match relayed {
        Ok(answer) => {
            let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
            let mut response = (status, answer.body).into_response();
            if let Some(content_type) = answer
                .content_type
                .and_then(|value| header::HeaderValue::from_str(&value).ok())
            {
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, content_type);
            }
            Ok(response)
        }
        Err(error) => {
            tracing::warn!(node = %node.node_id, "passing a request on to the session's node: {error:#}");
            Err(Problem::unavailable(&format!(
                "node {} runs the session and did not answer: {error:#}",
                node.node_id
            )))
        }
    }
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
pub(super) async fn setup_log(
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
