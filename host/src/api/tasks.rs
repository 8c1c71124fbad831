//! Tasks and their attachments.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Fields, JsonObject, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::sessions::{BindingConstraint, TaskSpec};
use crate::store::{Attachment, NewAttachment, Task};

/// A task as clients see it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TaskView {
    /// The task.
    #[serde(flatten)]
    pub task: Task,
    /// While one of its sessions waits for capacity: how the wait goes.
    pub binding_constraint: Option<BindingConstraint>,
}

impl AppState {
    pub(super) fn task_view(&self, task: Task) -> TaskView {
        TaskView {
            binding_constraint: self.conductor.binding_constraint(&task),
            task,
        }
    }
}

/// A task to create: `title`, `prompt`, `environment_id`,
/// `idle_timeout_seconds`, `attachments`, `harness`, `model`, `effort`,
/// `created_by`; all optional. With a prompt, a session starts at once.
#[derive(Debug, utoipa::ToSchema)]
pub struct TaskCreate {
    /// Its title (default: the prompt's first line).
    pub title: Option<String>,
    /// Its first message.
    pub prompt: Option<String>,
    /// Its environment (default: its agent's).
    pub environment_id: Option<String>,
    /// Seconds an idle session stays open (default 600).
    pub idle_timeout_seconds: Option<i64>,
    /// Context for the agent.
    pub attachments: Vec<AttachmentCreate>,
    /// `claude`, `codex`, ... (default: the agent's, else claude).
    pub harness: Option<String>,
    /// A model id as `GET /v1/models` lists it.
    pub model: Option<String>,
    /// An effort in the harness's vocabulary.
    pub effort: Option<String>,
    /// The agent it runs as, by id or name (default: the connected agent).
    pub created_by: Option<String>,
}

/// An attachment to add: an MCP resource with inline `text` or base64 `blob`.
#[derive(Debug, utoipa::ToSchema)]
pub struct AttachmentCreate {
    /// Its name.
    pub name: String,
    /// Where it came from; never fetched.
    pub uri: Option<String>,
    /// Its media type.
    #[schema(rename = "mimeType")]
    pub mime_type: Option<String>,
    /// Inline text.
    pub text: Option<String>,
    /// Base64 content.
    pub blob: Option<String>,
}

/// The largest attachment, in bytes of content.
const MAX_ATTACHMENT_BYTES: usize = 512 << 10;

fn attachment_fields(fields: &mut Fields) -> Option<NewAttachment> {
    let name = fields.required_string("name", "the attachment's name");
    let uri = fields.string("uri");
    let mime_type = fields.string("mimeType");
    let text = fields.raw_string("text");
    let blob = fields.string("blob");
    if text.is_some() && blob.is_some() {
        fields.complain("blob", "send text or blob, not both");
    }
    let mut error = None;
    if text.is_none() && blob.is_none() {
        error = Some(
            "no content: send inline text or a base64 blob (a uri is never fetched)".to_owned(),
        );
    }
    if let Some(blob) = &blob
        && !is_base64(blob)
    {
        fields.complain("blob", "must be base64 (standard alphabet, padded)");
    }
    let size =
        text.as_ref().map_or(0, String::len) + blob.as_ref().map_or(0, |blob| blob.len() / 4 * 3);
    if size > MAX_ATTACHMENT_BYTES {
        fields.complain(
            "text",
            format!(
                "an attachment is at most {} KiB",
                MAX_ATTACHMENT_BYTES >> 10
            ),
        );
    }
    Some(NewAttachment {
        name: name?,
        uri,
        mime_type,
        text,
        blob,
        error,
    })
}

fn is_base64(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.len().is_multiple_of(4)
        && bytes.iter().enumerate().all(|(index, byte)| {
            byte.is_ascii_alphanumeric()
                || matches!(byte, b'+' | b'/')
                || (*byte == b'=' && index + 2 >= bytes.len())
        })
}

impl TaskCreate {
    fn parse(body: JsonObject) -> Result<TaskSpec, Problem> {
        let mut fields = Fields::new(body);
        let title = fields.string("title");
        let prompt = fields.string("prompt");
        let environment_id = fields.string("environment_id");
        let idle_timeout_seconds = fields.integer("idle_timeout_seconds", 1..=7 * 24 * 3600);
        let attachments = fields.objects("attachments", attachment_fields);
        let harness = fields.string("harness");
        let model = fields.string("model");
        let effort = fields.string("effort");
        let created_by = fields.string("created_by");
        fields.finish()?;
        Ok(TaskSpec {
            title,
            prompt,
            environment_id,
            idle_timeout_seconds,
            attachments: attachments.unwrap_or_default(),
            harness,
            model,
            effort,
            created_by,
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
pub async fn create_task(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    body: JsonObject,
) -> Result<(StatusCode, axum::Json<Envelope<TaskView>>), Problem> {
    caller.account(&account)?;
    let spec = TaskCreate::parse(body)?;
    let task = app
        .conductor
        .create_task(&account, &caller.0.owner, spec)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(app.task_view(task))))
}

/// Filters for the task listing.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TaskFilter {
    /// `none`: only tasks nobody owns (the "needs someone" queue).
    pub owner: Option<String>,
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
pub async fn list_tasks(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    Query(filter): Query<TaskFilter>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<TaskView>>>, Problem> {
    caller.account(&account)?;
    let unowned = match filter.owner.as_deref() {
        None => false,
        Some("none") => true,
        Some(_) => {
            return Err(Problem::invalid_field(
                "owner",
                "owner=none is the only filter",
            ));
        }
    };
    let page = app
        .store
        .tasks(&account, unowned, page.cursor("task")?, page.limit()?)
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
pub async fn get_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(String, String)>,
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
pub async fn create_attachment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(String, String)>,
    body: JsonObject,
) -> Result<(StatusCode, axum::Json<Envelope<Attachment>>), Problem> {
    caller.account(&account)?;
    app.conductor.task(&account, &task).await?;
    let mut fields = Fields::new(body);
    let attachment = attachment_fields(&mut fields);
    fields.finish()?;
    let attachment = attachment.expect("checked by finish");
    let attachment = app.conductor.attach(&account, &task, attachment).await?;
    Ok((StatusCode::CREATED, Envelope::of(attachment)))
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
pub async fn list_attachments(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task)): Path<(String, String)>,
) -> Result<axum::Json<Envelope<Vec<Attachment>>>, Problem> {
    caller.account(&account)?;
    let task = app.conductor.task(&account, &task).await?;
    Ok(Envelope::of(
        app.store.attachments(&account, &task.id).await?,
    ))
}

/// An attachment's contents in MCP `ResourceContents` shape.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResourceContents {
    /// The contents: one item, with `text` or `blob`.
    pub contents: Vec<ResourceContent>,
}

/// One item of MCP `ResourceContents`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ResourceContent {
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
pub async fn attachment_contents(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, task, attachment)): Path<(String, String, String)>,
) -> Result<axum::Json<Envelope<ResourceContents>>, Problem> {
    caller.account(&account)?;
    let attachment = app
        .store
        .attachment(&account, &task, &attachment)
        .await?
        .ok_or_else(|| Problem::not_found("no such attachment"))?;
    if attachment.status != "ready" {
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
