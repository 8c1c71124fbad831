//! Sessions of a task, their messages, abort, close and live events.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use serde::Deserialize;

use super::extract::{Caller, Json, PageParams, Query, trimmed};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::service::sessions::SessionSpec;
pub(crate) use crate::service::sessions::views::{Message, Session};
use cinch_store::{AccountId, Direction, SessionId, TaskId};

/// A session to start under the task; every field is optional. Its harness,
/// model and effort come from the task's agent's current settings.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionCreate {
    /// Its title (default: the task's).
    pub title: Option<String>,
    /// Its first message.
    pub prompt: Option<String>,
    /// Its environment (default: the task's).
    pub environment_id: Option<String>,
    /// Its branch (default: `cinch/<session id>`): a git branch name of
    /// letters, digits and `_ - .`, parts separated by `/`.
    #[schema(
        max_length = 200,
        pattern = r"^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*(/[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*)*$"
    )]
    pub branch_name: Option<String>,
    /// The branch to start from (default: the repository's HEAD): a git
    /// branch name the environment's repository has, locally or as `origin/<branch>`.
    #[schema(
        max_length = 200,
        pattern = r"^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*(/[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*)*$"
    )]
    pub base_branch: Option<String>,
    /// Commit what each turn changed on the branch (default false).
    pub auto_commit: Option<bool>,
    /// Its approval policy, over its environment's (see Approvals).
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
}

type SessionPath = Path<(AccountId, TaskId, SessionId)>;

/// The task's sessions, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"), PageParams),
    responses(
        (status = 200, body = Envelope<Vec<Session>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn list_sessions(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<Session>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .conductor
        .sessions(&account, &task, page.cursor()?, page.limit()?)
        .await?;
    let sessions = page.items.into_iter().map(Session::from).collect();
    Ok(Envelope::page(sessions, page.next_cursor))
}

/// Starts another session under the task (a separate attempt or branch).
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for the same key and body")),
    request_body = SessionCreate,
    responses(
        (status = 201, body = Envelope<Session>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn create_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
    Json(body): Json<SessionCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Session>>), Problem> {
    caller.account(&account)?;
    let spec = SessionSpec {
        title: trimmed(body.title),
        prompt: trimmed(body.prompt),
        environment_id: trimmed(body.environment_id).map(Into::into),
        branch_name: body.branch_name,
        base_branch: body.base_branch,
        auto_commit: body.auto_commit.unwrap_or(false),
        approvals: super::environments::checked_policy(body.approvals)?,
    };
    let session = app.conductor.create_session(&account, &task, spec).await?;
    Ok((StatusCode::CREATED, Envelope::of(session.into())))
}

/// One session.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    responses(
        (status = 200, body = Envelope<Session>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn get_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
) -> Result<axum::Json<Envelope<Session>>, Problem> {
    caller.account(&account)?;
    let session = app.conductor.session(&account, &task, &session).await?;
    Ok(Envelope::of(session.into()))
}

/// A change to a session: closing it is the one there is.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SessionUpdate {
    /// `closed`; post a message to resume a session.
    pub status: SessionChange,
}

/// The status a session can be set to.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SessionChange {
    /// Closes it.
    Closed,
}

/// Closes the session: `{"status": "closed"}` is the one change there is.
#[utoipa::path(
    patch,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    request_body = SessionUpdate,
    responses(
        (status = 200, body = Envelope<Session>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn update_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Json(body): Json<SessionUpdate>,
) -> Result<axum::Json<Envelope<Session>>, Problem> {
    caller.account(&account)?;
    let SessionUpdate {
        status: SessionChange::Closed,
    } = body;
    let session = app.conductor.close(&account, &task, &session).await?;
    Ok(Envelope::of(session.into()))
}

/// Interrupts the running turn (it ends `cancelled`) or the wait for a
/// slot, without closing the session; 409 when there is nothing to abort.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/abort",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    responses(
        (status = 202, body = Envelope<Session>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn abort_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
) -> Result<(StatusCode, axum::Json<Envelope<Session>>), Problem> {
    caller.account(&account)?;
    let session = app.conductor.abort(&account, &task, &session).await?;
    Ok((StatusCode::ACCEPTED, Envelope::of(session.into())))
}

/// A turn to revert.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RevertCreate {
    /// The turn: an assistant message's `turn.turn_id`, or a revert
    /// message's (which undoes that revert).
    #[schema(pattern = r"\S")]
    pub turn_id: String,
}

/// Restores the session's work tree to the start of a turn (files; HEAD
/// goes back only past commits made since, which the answer's
/// `turn.result.commits_undone` names), recorded as a `revert` message with
/// its own checkpoints; 409 while a turn runs.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/revert",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session")),
    request_body = RevertCreate,
    responses(
        (status = 201, body = Envelope<Message>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn revert_session(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Json(RevertCreate { turn_id }): Json<RevertCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Message>>), Problem> {
    caller.account(&account)?;
    let turn_id = turn_id.trim();
    let message = app
        .conductor
        .revert(&account, &task, &session, turn_id)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(message.into())))
}

/// Which way and where a page of messages runs.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MessageParams {
    /// `asc` (oldest first, the default) or `desc` (newest first); the
    /// cursor walks the same way.
    #[param(inline)]
    pub direction: Option<MessageOrder>,
}

/// The order of a page of messages.
#[derive(Debug, Clone, Copy, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MessageOrder {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

/// The session's messages, oldest first (or newest first with
/// `direction=desc`); queued ones have `sequence: null`.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session"), MessageParams, PageParams),
    responses(
        (status = 200, body = Envelope<Vec<Message>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn list_messages(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Query(params): Query<MessageParams>,
    Query(page): Query<PageParams>,
) -> Result<axum::response::Response, Problem> {
    caller.account(&account)?;
    let direction = match params.direction {
        None | Some(MessageOrder::Asc) => Direction::Asc,
        Some(MessageOrder::Desc) => Direction::Desc,
    };
    let limit = page.limit()?;
    let cursor = page.cursor()?;
    let (data, next_cursor) = app
        .conductor
        .messages_json(&account, &task, &session, direction, cursor, limit)
        .await?;
    Ok(super::raw_page(data, next_cursor))
}

/// A message to the agent.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct MessageCreate {
    /// What to tell it: not blank.
    #[schema(pattern = r"\S")]
    pub message: String,
}

/// Sends a message: it is queued (sequence null) and delivered to the
/// session's next turn; an idle or closed session resumes.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for the same key and body")),
    request_body = MessageCreate,
    responses(
        (status = 201, body = Envelope<Message>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn post_message(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    Json(body): Json<MessageCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Message>>), Problem> {
    caller.account(&account)?;
    let message = body.message.trim();
    let message = app
        .conductor
        .post_message(&account, &task, &session, message)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(message.into())))
}

/// The session's live events: `session.updated`, `message.created`,
/// `message.updated`, `tool.progress` and `tool.ended`, each with its number
/// as `id`; `Last-Event-ID` resumes after that number, across restarts.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/sessions/{session}/events",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("session" = String, Path, description = "The session"),
        ("Last-Event-ID" = Option<i64>, Header, minimum = 0, description = "Resume after this event")),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream", body = String),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "sessions"
)]
pub(crate) async fn session_events(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, session)): SessionPath,
    headers: HeaderMap,
) -> Result<impl IntoResponse, Problem> {
    caller.account(&account)?;
    let session = app.conductor.session(&account, &task, &session).await?;
    super::runs::stream(&app, &account, session.id.as_str(), &headers).await
}
