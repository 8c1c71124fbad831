//! Tasks and their attachments.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Json, PageParams, Query, trimmed};
use super::problem::{FieldError, Problem};
use super::{AppState, Envelope};
use crate::service::sessions::{BindingConstraint, SessionChoice, TaskSpec};
use cinch_base::timestamp::Timestamp;
use cinch_store::{
    self as store, AccountId, AgentId, AttachmentId, AttachmentStatus, EnvironmentId,
    NewAttachment, TaskId, UsageTotals,
};

/// A task, with what its listing shows of its sessions.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Task {
    /// Its id.
    #[schema(value_type = String)]
    pub id: TaskId,
    /// The account it belongs to.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Its title.
    pub title: String,
    /// Always `active`: a task has no terminal state of its own (its
    /// sessions' statuses say what runs), which a plain conversation never
    /// reaches, even when every session idles out or is closed.
    pub status: TaskStatus,
    /// The environment its sessions use unless they name another.
    #[schema(value_type = Option<String>)]
    pub environment_id: Option<EnvironmentId>,
    /// Seconds an idle session waits for a message before it is closed.
    pub idle_timeout_seconds: i64,
    /// The agent it runs as.
    #[schema(value_type = String)]
    pub created_by: AgentId,
    /// That agent's name.
    pub created_by_name: String,
    /// The member responsible for it; none when an agent opened it ("needs someone").
    pub owner: Option<String>,
    /// That member's name.
    pub owner_name: Option<String>,
    /// One line: the last thing the agent said on it, markdown stripped.
    pub last_message_preview: Option<String>,
    /// The harness of its newest session.
    pub harness: Option<String>,
    /// How many sessions it has.
    pub session_count: i64,
    /// The status of its newest session; null before it has one. With
    /// `session_close_reason`, what the app derives its task's state from.
    pub session_status: Option<store::SessionStatus>,
    /// Why its newest session closed, or the failure that left it idle.
    pub session_close_reason: Option<store::CloseReason>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// When it last changed (RFC 3339).
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    /// The tokens and cost of its sessions' turns.
    pub usage: UsageTotals,
}

impl From<store::Task> for Task {
    fn from(row: store::Task) -> Self {
        Self {
            id: row.id,
            account_id: row.account_id,
            title: row.title,
            status: TaskStatus::Active,
            environment_id: row.environment_id,
            idle_timeout_seconds: row.idle_timeout_seconds,
            created_by: row.created_by,
            created_by_name: row.created_by_name,
            owner: row.owner,
            owner_name: row.owner_name,
            last_message_preview: row.last_message_preview,
            harness: row.harness,
            session_count: row.session_count,
            session_status: row.session_status,
            session_close_reason: row.session_close_reason,
            created_at: row.created_at,
            updated_at: row.updated_at,
            usage: row.usage,
        }
    }
}

/// A task's lifecycle status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskStatus {
    /// Not in a terminal state.
    Active,
}

/// A task as clients see it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct TaskView {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// While one of its sessions waits for capacity: how the wait goes.
    pub binding_constraint: Option<BindingConstraint>,
}

impl AppState {
    pub(super) fn task_view(&self, task: store::Task) -> TaskView {
        TaskView {
            binding_constraint: self.conductor.binding_constraint(&task),
            task: task.into(),
        }
    }
}

/// An attachment.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Attachment {
    /// Its id.
    #[schema(value_type = String)]
    pub id: AttachmentId,
    /// Its task.
    #[schema(value_type = String)]
    pub task_id: TaskId,
    /// Its name.
    pub name: String,
    /// Where its content came from (a reference; never fetched).
    pub uri: Option<String>,
    /// Its content's media type.
    #[serde(rename = "mimeType")]
    pub mime_type: Option<String>,
    /// `ready` when its content is available, `failed` when not.
    pub status: AttachmentStatus,
    /// Why it failed.
    pub error: Option<String>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<store::Attachment> for Attachment {
    fn from(row: store::Attachment) -> Self {
        Self {
            id: row.id,
            task_id: row.task_id,
            name: row.name,
            uri: row.uri,
            mime_type: row.mime_type,
            status: row.status,
            error: row.error,
            created_at: row.created_at,
        }
    }
}

/// A task to create; every field is optional. With a prompt, a session starts at once.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskCreate {
    /// Its title (default: the prompt's first line).
    pub title: Option<String>,
    /// Its first message.
    pub prompt: Option<String>,
    /// Its environment (default: its agent's).
    pub environment_id: Option<String>,
    /// Seconds an idle session stays open: 1 to 604800 (a week), default 600.
    #[schema(minimum = 1, maximum = 604800)]
    pub idle_timeout_seconds: Option<i64>,
    /// Context for the agent.
    pub attachments: Option<Vec<AttachmentCreate>>,
    /// `claude`, `codex`, ... (default: the agent's, else claude).
    pub harness: Option<String>,
    /// A model id as `GET /v1/models` lists it.
    pub model: Option<String>,
    /// An effort in the harness's vocabulary.
    pub effort: Option<String>,
    /// The agent it runs as, by id or name (default: the connected agent).
    pub created_by: Option<String>,
    /// A fan-out: 1 to 8 sessions, each in its own worktree from the same
    /// base, all given the `prompt` (then leave `harness`, `model` and
    /// `effort` out: each entry names its own).
    #[schema(min_items = 1, max_items = 8)]
    pub sessions: Option<Vec<FanOutSession>>,
    /// The approval policy of the session the prompt starts, over its
    /// environment's (see Approvals).
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
}

/// One session of a fan-out.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct FanOutSession {
    /// `claude`, `codex`, ... as `GET /v1/models` lists them.
    #[schema(pattern = r"\S")]
    pub harness: String,
    /// A model id of that harness.
    pub model: Option<String>,
    /// An effort in that harness's vocabulary.
    pub effort: Option<String>,
}

/// An attachment to add: an MCP resource with inline `text` or base64
/// `blob` (at most 512 KiB of content); one without content is kept as `failed`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AttachmentCreate {
    /// Its name: not blank.
    #[schema(pattern = r"\S")]
    pub name: String,
    /// Where it came from; never fetched.
    pub uri: Option<String>,
    /// Its media type.
    #[serde(rename = "mimeType")]
    pub mime_type: Option<String>,
    /// Inline text (not with `blob`): at most 524288 characters.
    #[schema(max_length = 524288)]
    pub text: Option<String>,
    /// Base64 content, standard alphabet, padded (not with `text`): at most 512 KiB decoded.
    #[schema(
        max_length = 699052,
        pattern = r"^([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$"
    )]
    pub blob: Option<String>,
}

/// The largest attachment, in bytes of content.
const MAX_ATTACHMENT_BYTES: usize = 512 << 10;

impl AttachmentCreate {
    /// The attachment to store; `text` with `blob`, or too much content, is refused.
    fn into_new(self, field: &str) -> Result<NewAttachment, FieldError> {
        let blob = trimmed(self.blob);
        if self.text.is_some() && blob.is_some() {
            return Err(FieldError::new(
                format!("{field}blob"),
                "send text or blob, not both",
            ));
        }
        let size = self.text.as_ref().map_or(0, String::len)
            + blob.as_ref().map_or(0, |blob| blob.len() / 4 * 3);
        if size > MAX_ATTACHMENT_BYTES {
            return Err(FieldError::new(
                format!("{field}text"),
                format!(
                    "an attachment is at most {} KiB",
                    MAX_ATTACHMENT_BYTES >> 10
                ),
            ));
        }
        let error = (self.text.is_none() && blob.is_none()).then(|| {
            "no content: send inline text or a base64 blob (a uri is never fetched)".to_owned()
        });
        Ok(NewAttachment {
            name: self.name.trim().to_owned(),
            uri: trimmed(self.uri),
            mime_type: trimmed(self.mime_type),
            text: self.text,
            blob,
            error,
        })
    }
}

impl TaskCreate {
    fn into_spec(self) -> Result<TaskSpec, Problem> {
        let mut attachments = Vec::new();
        let mut errors = Vec::new();
        for (index, attachment) in self.attachments.into_iter().flatten().enumerate() {
            match attachment.into_new(&format!("attachments[{index}].")) {
                Ok(attachment) => attachments.push(attachment),
                Err(error) => errors.push(error),
            }
        }
        if self.sessions.as_ref().is_some_and(Vec::is_empty) {
            errors.push(FieldError::new(
                "sessions",
                "name 1 to 8 sessions, or leave sessions out for one",
            ));
        }
        if !errors.is_empty() {
            return Err(Problem::invalid(errors));
        }
        let approvals = super::environments::checked_policy(self.approvals)?;
        Ok(TaskSpec {
            title: trimmed(self.title),
            prompt: trimmed(self.prompt),
            environment_id: trimmed(self.environment_id).map(Into::into),
            idle_timeout_seconds: self.idle_timeout_seconds,
            attachments,
            harness: trimmed(self.harness),
            model: trimmed(self.model),
            effort: trimmed(self.effort),
            created_by: trimmed(self.created_by),
            sessions: self
                .sessions
                .into_iter()
                .flatten()
                .map(|session| SessionChoice {
                    harness: session.harness.trim().to_owned(),
                    model: trimmed(session.model),
                    effort: trimmed(session.effort),
                })
                .collect(),
            approvals,
        })
    }
}

/// Creates a task; with a `prompt`, its first session starts at once
/// (list the task's sessions to find it). `harness`, `model` and `effort`
/// apply to that session and fall back to supported defaults.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks",
    params(("account" = String, Path, description = "The account"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for the same key and body")),
    request_body = TaskCreate,
    responses(
        (status = 201, body = Envelope<TaskView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The same Idempotency-Key is still being answered"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn create_task(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Json(body): Json<TaskCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<TaskView>>), Problem> {
    caller.account(&account)?;
    let spec = body.into_spec()?;
    let task = app
        .conductor
        .create_task(&account, &caller.0.owner, spec)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(app.task_view(task))))
}

/// Filters for the task listing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct TaskFilter {
    /// `none`: only tasks nobody owns (the "needs someone" queue).
    #[param(inline)]
    pub owner: Option<OwnerFilter>,
}

/// Whose tasks a listing shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum OwnerFilter {
    /// Tasks nobody owns.
    None,
}

/// The account's tasks, newest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks",
    params(("account" = String, Path, description = "The account"), TaskFilter, PageParams),
    responses(
        (status = 200, body = Envelope<Vec<TaskView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn list_tasks(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(filter): Query<TaskFilter>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<TaskView>>>, Problem> {
    caller.account(&account)?;
    let unowned = filter.owner == Some(OwnerFilter::None);
    let page = app
        .conductor
        .tasks(&account, unowned, page.cursor()?, page.limit()?)
        .await?;
    let tasks = page
        .items
        .into_iter()
        .map(|task| app.task_view(task))
        .collect();
    Ok(Envelope::page(tasks, page.next_cursor))
}

/// One task.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task")),
    responses(
        (status = 200, body = Envelope<TaskView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn get_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
) -> Result<axum::Json<Envelope<TaskView>>, Problem> {
    caller.account(&account)?;
    let task = app.conductor.task(&account, &task).await?;
    Ok(Envelope::of(app.task_view(task)))
}

/// Adds an attachment to the task: `ready` when it carries content,
/// `failed` (with `error`) when it does not. Later turns of its sessions
/// get it as a note of their brief.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tasks/{task}/attachments",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("Idempotency-Key" = Option<String>, Header, description = "Replays the first answer for the same key and body")),
    request_body = AttachmentCreate,
    responses(
        (status = 201, body = Envelope<Attachment>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn create_attachment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
    Json(body): Json<AttachmentCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<Attachment>>), Problem> {
    caller.account(&account)?;
    app.conductor.check_task(&account, &task).await?;
    let attachment = body
        .into_new("")
        .map_err(|error| Problem::invalid(vec![error]))?;
    let attachment = app.conductor.attach(&account, &task, attachment).await?;
    Ok((StatusCode::CREATED, Envelope::of(attachment.into())))
}

/// The task's attachments, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/attachments",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task")),
    responses(
        (status = 200, body = Envelope<Vec<Attachment>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn list_attachments(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(AccountId, TaskId)>,
) -> Result<axum::Json<Envelope<Vec<Attachment>>>, Problem> {
    caller.account(&account)?;
    let attachments = app.conductor.attachments(&account, &task).await?;
    Ok(Envelope::of(
        attachments.into_iter().map(Attachment::from).collect(),
    ))
}

/// An attachment's contents in MCP `ResourceContents` shape.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ResourceContents {
    /// The contents: one item, with `text` or `blob`.
    pub contents: Vec<ResourceContent>,
}

/// One item of MCP `ResourceContents`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct ResourceContent {
    /// The resource's uri (`cinch://attachments/<id>` when it gave none).
    pub uri: String,
    /// Its media type.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Inline text.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Base64 content.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
}

/// An attachment's contents; 409 for a `failed` one.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tasks/{task}/attachments/{attachment}/contents",
    params(("account" = String, Path, description = "The account"), ("task" = String, Path, description = "The task"),
        ("attachment" = String, Path, description = "The attachment")),
    responses(
        (status = 200, body = Envelope<ResourceContents>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "tasks"
)]
pub(crate) async fn attachment_contents(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, attachment)): Path<(AccountId, TaskId, AttachmentId)>,
) -> Result<axum::Json<Envelope<ResourceContents>>, Problem> {
    caller.account(&account)?;
    let attachment = app
        .conductor
        .attachment(&account, &task, &attachment)
        .await?;
    if attachment.status != AttachmentStatus::Ready {
        return Err(Problem::conflict(format!(
            "that attachment has no content: {}",
            attachment.error.unwrap_or_default()
        )));
    }
    Ok(Envelope::of(ResourceContents {
        contents: vec![ResourceContent {
            uri: attachment
                .uri
                .unwrap_or_else(|| format!("cinch://attachments/{}", attachment.id)),
            mime_type: attachment.mime_type,
            text: attachment.text,
            blob: attachment.blob,
        }],
    }))
}
