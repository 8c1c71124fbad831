//! The jobs API (the spec's code-task API): start a turn in one of the account's environments,
//! read its status and result, cancel it, its diff and its harness log.

use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::extract::{Caller, JsonValue, Query};
use super::problem::{FieldError, Problem};
use crate::service::ServiceError;
use crate::service::code_tasks::{NewTask, TaskView};
use cinch_base::timestamp::Timestamp;
use cinch_engine::engine::brief::Note;
use cinch_engine::engine::log::LogView;
use cinch_engine::engine::result::{ChangedFile, Status, TurnResult};

/// How long a client refused for capacity should wait before it tries again.
const CAPACITY_RETRY_SECONDS: u64 = 10;

/// A job to start: one turn, without a task or session.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskRequest {
    /// The whole task, self-contained: not blank.
    #[schema(pattern = r"\S")]
    pub brief: String,
    /// The environment's name; optional when the account has one.
    pub repo: Option<String>,
    /// The harness: a driver's name, as `GET /v1/models` lists them. None
    /// picked is `harness.missing`.
    pub harness: String,
    /// The model, when not the harness's default.
    pub model: Option<String>,
    /// The effort, when not the harness's default.
    pub effort: Option<String>,
    /// Resumes that harness session; the brief is its next turn. Letters,
    /// digits and `_ . : -`, at most 200 characters.
    #[schema(max_length = 200, pattern = r"^[A-Za-z0-9_.:-]+$")]
    pub session_id: Option<String>,
    /// Texts appended to the brief, each under `# <name>`.
    pub notes: Option<Vec<TaskNote>>,
    /// Minutes before the harness is stopped: 1 to 60, default 30.
    #[schema(minimum = 1, maximum = 60)]
    pub timeout_minutes: Option<i64>,
}

/// A note appended to the brief.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TaskNote {
    /// Its heading: not blank.
    #[schema(pattern = r"\S")]
    pub name: String,
    /// Its content: not blank.
    #[schema(pattern = r"\S")]
    pub text: String,
}

impl TaskRequest {
    /// The request in `body`: no harness picked is `harness.missing`, before
    /// anything else; then the schema's rules; then the harness's name.
    fn parse(body: Value, harnesses: &[&str]) -> Result<Self, Problem> {
        if body.get("harness").is_none_or(Value::is_null) {
            return Err(Problem {
                errors: vec![FieldError::new("harness", "required")],
                ..Problem::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "harness.missing",
                    format!(
                        "no harness picked: name one of {} as harness",
                        harnesses.join(", ")
                    ),
                )
            });
        }
        let mut errors = super::validate::Schema::of::<Self>().check(&body);
        if let Some(name) = body.get("harness").and_then(Value::as_str)
            && !harnesses.contains(&name)
        {
            errors.push(FieldError::new(
                "harness",
                format!(
                    "no harness is named {name}; there are {}",
                    harnesses.join(", ")
                ),
            ));
        }
        if !errors.is_empty() {
            return Err(Problem::invalid(errors));
        }
        let request: Self = super::extract::parse(body)?;
        Ok(request)
    }
}

/// `?wait=true`: answer once the turn has ended.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct WaitParams {
    /// Answer with the result once the turn has ended.
    #[serde(default)]
    pub wait: bool,
}

/// Where a job is: running, or how it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum CodeTaskStatus {
    /// The harness is running.
    Running,
    /// The CLI exited 0 and its turn did not end in error.
    Completed,
    /// The CLI exited otherwise, or its turn ended in error.
    Failed,
    /// The timeout passed and the harness was stopped.
    TimedOut,
    /// The task was cancelled.
    Cancelled,
    /// The harness's state is gone, or its result could not be read.
    Interrupted,
}

impl From<Status> for CodeTaskStatus {
    fn from(status: Status) -> Self {
        match status {
            Status::Completed => Self::Completed,
            Status::Failed => Self::Failed,
            Status::TimedOut => Self::TimedOut,
            Status::Cancelled => Self::Cancelled,
            Status::Interrupted => Self::Interrupted,
        }
    }
}

/// A job: its call, its status and, once it has ended, its result.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CodeTask)]
pub(super) struct Task {
    /// The call's id.
    pub call_id: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The engine's turn.
    pub turn_id: String,
    /// The environment it runs in.
    pub environment_id: String,
    /// `running`, or how it ended.
    pub status: CodeTaskStatus,
    /// The harness session, once reported.
    pub session_id: Option<String>,
    /// When it started (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// The result, once it has ended.
    pub result: Option<TaskResult>,
}

/// How a job ended, with the spec's metadata.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TaskResult {
    /// The harness's driver.
    pub harness: String,
    /// The repository: the environment's name, as `repo` takes it.
    pub repository: String,
    /// The CLI's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// From start to end.
    pub duration_ms: u64,
    /// The changed files, at most 30.
    pub files_changed: Vec<ChangedFile>,
    /// All changed files, listed or not.
    pub total_files: usize,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// What explains the status, when something does.
    pub detail: Option<String>,
    /// The harness's final message (redacted).
    pub final_message: Option<String>,
    /// The start checkpoint's commit.
    pub start_sha: Option<String>,
    /// The end checkpoint's commit.
    pub end_sha: Option<String>,
    /// The raw harness log, as the result text's `log:` line names it; the
    /// log route reads it while it is kept.
    pub log_path: String,
    /// The result in the spec's text format.
    pub result_text: String,
    /// The model it ran on, as the harness reported it, else as asked.
    pub model: Option<String>,
    /// Its tokens and cost; null when the harness reported no usage.
    #[schema(value_type = Option<Object>)]
    pub usage: Option<cinch_engine::engine::result::TurnUsage>,
    /// The CLI's version when the turn started, when it said one.
    pub cli_version: Option<String>,
    /// The CLI versions its driver was tested with (a semver range); null
    /// when it names none.
    pub cli_tested: Option<String>,
    /// Whether `cli_version` lies in `cli_tested` (`tested`, `untested`,
    /// `unknown`); null without a range.
    pub cli_drift: Option<cinch_engine::tools::CliDrift>,
    /// Lines of valid JSON of a type the driver does not know, counted by
    /// type (`(no type)` for those without one): the sign that the CLI's
    /// output changed. Type names are cut at 64 characters, characters other
    /// than letters, digits and `_-./:@` shown as `?`; past 32 types per
    /// turn the rest count under `(other types)`.
    pub unknown_events: std::collections::BTreeMap<String, u64>,
    /// Lines of the output that were not JSON.
    pub not_json_lines: u64,
    /// The driver component the turn ran on: its name, version and digest;
    /// null for a turn of an older cinch.
    pub driver: Option<cinch_engine::turn_dir::DriverUsed>,
}

impl TaskResult {
    fn new(result: &TurnResult, repository: &str) -> Self {
        Self {
            harness: result.harness.clone(),
            repository: repository.to_owned(),
            exit_code: result.exit_code,
            duration_ms: result.duration_ms,
            files_changed: result.changes.files_changed.clone(),
            total_files: result.changes.total_files,
            insertions: result.changes.insertions,
            deletions: result.changes.deletions,
            detail: result.detail.clone(),
            final_message: result.final_message.clone(),
            start_sha: result.start_checkpoint.clone(),
            end_sha: result.end_checkpoint.clone(),
            log_path: result.log_path.clone(),
            result_text: result.result_text.clone(),
            model: result.model.clone(),
            usage: result.usage,
            cli_version: result.cli_version.clone(),
            cli_tested: result.cli_tested.clone(),
            cli_drift: result.cli_drift,
            unknown_events: result.unknown_events.clone(),
            not_json_lines: result.not_json_lines,
            driver: result.driver.clone(),
        }
    }
}

/// Starts a job: one turn of `harness` in the environment's repository.
/// With `?wait=true` the answer comes once the turn has ended, with its result.
#[utoipa::path(
    post,
    path = "/api/runs/{run}/tasks",
    params(("run" = String, Path, description = "The run"), WaitParams),
    request_body = TaskRequest,
    responses(
        (status = 201, body = Task, description = "Started (or, with wait, ended)"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json",
            description = "worktree.busy: another turn is running in the repository's working tree"),
        (status = 422, body = Problem, content_type = "application/problem+json",
            description = "Field errors, or the engine's refusal (harness.cli_missing, harness.no_credential, repo.invalid, ...)"),
        (status = 429, body = Problem, content_type = "application/problem+json",
            description = "capacity.full: as many turns as `--max-turns` are running; try again after Retry-After seconds"),
    ),
    tag = "code tasks"
)]
pub(super) async fn start_task(
    State(app): State<AppState>,
    caller: Caller,
    Path(run): Path<String>,
    Query(params): Query<WaitParams>,
    JsonValue(body): JsonValue,
) -> Result<Response, Problem> {
    let request = TaskRequest::parse(body, &app.drivers.registry().names())?;
    let task = NewTask {
        brief: request.brief.trim().to_owned(),
        repo: super::extract::trimmed(request.repo),
        harness: request.harness,
        model: super::extract::trimmed(request.model),
        effort: super::extract::trimmed(request.effort),
        session_id: super::extract::trimmed(request.session_id),
        notes: request
            .notes
            .into_iter()
            .flatten()
            .map(|note| Note {
                name: note.name,
                text: note.text,
            })
            .collect(),
        timeout: Duration::from_secs(request.timeout_minutes.unwrap_or(30) as u64 * 60),
    };
    let started = app
        .code_tasks
        .start(
            &caller.0.account_id,
            &caller.0.owner,
            run,
            task,
            params.wait,
        )
        .await;
    match started {
        Ok(view) => Ok((StatusCode::CREATED, axum::Json(Task::from(&view))).into_response()),
        Err(error @ ServiceError::CapacityFull { .. }) => {
            let mut response = Problem::from(error).into_response();
            response.headers_mut().insert(
                header::RETRY_AFTER,
                header::HeaderValue::from(CAPACITY_RETRY_SECONDS),
            );
            Ok(response)
        }
        Err(error) => Err(error.into()),
    }
}

impl From<&TaskView> for Task {
    fn from(view: &TaskView) -> Self {
        let TaskView {
            call,
            state,
            repository,
        } = view;
        // A turn always ends with a result (an unreadable one is `interrupted`).
        let result = match &state.outcome {
            Some(Ok(result)) => Some(result.clone()),
            _ => None,
        };
        Task {
            call_id: call.call_id.clone(),
            run_id: call.run_id.clone(),
            turn_id: call.turn_id.clone(),
            environment_id: call.environment_id.clone(),
            status: result
                .as_ref()
                .map_or(CodeTaskStatus::Running, |result| result.status.into()),
            session_id: result
                .as_ref()
                .and_then(|result| result.session_id.clone())
                .or_else(|| state.session_id.clone()),
            created_at: call.created_at,
            result: result
                .as_deref()
                .map(|result| TaskResult::new(result, repository)),
        }
    }
}

/// A job's status and, once it has ended, its result.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}",
    // Not the handler's name: the sessions API has a `get_task` of its own.
    operation_id = "get_code_task",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 200, body = Task),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub(super) async fn get_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<axum::Json<Task>, Problem> {
    let view = app
        .code_tasks
        .get(&caller.0.account_id, &run, &call)
        .await?;
    Ok(axum::Json(Task::from(&view)))
}

/// Stops a running job: SIGTERM to the harness, SIGKILL 10 s later; it
/// ends `cancelled`. 409 when it has already ended.
#[utoipa::path(
    post,
    path = "/api/runs/{run}/tasks/{call}/cancel",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 202, body = Task, description = "Stopping"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub(super) async fn cancel_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<(StatusCode, axum::Json<Task>), Problem> {
    let view = app
        .code_tasks
        .cancel(&caller.0.account_id, &run, &call)
        .await?;
    Ok((StatusCode::ACCEPTED, axum::Json(Task::from(&view))))
}

/// How much of each changed file a diff shows.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct DiffParams {
    /// `hunks` (the default): three lines around each change; `whole_files`:
    /// every line of each changed file, for a whole-file view.
    #[param(inline)]
    pub context: Option<cinch_engine::checkpoint::DiffContext>,
}

/// The unified diff of what the task changed: from its start checkpoint to
/// its end checkpoint. 409 while it runs.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}/diff",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call"), DiffParams),
    responses(
        (status = 200, body = String, content_type = "text/x-diff"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub(super) async fn task_diff(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
    Query(params): Query<DiffParams>,
    headers: axum::http::HeaderMap,
) -> Result<Response, Problem> {
    let context = params.context.unwrap_or_default();
    let diff = app
        .code_tasks
        .diff(
            &caller.0.account_id,
            &run,
            &call,
            context,
            forward_as(&headers),
        )
        .await?;
    Ok(([(header::CONTENT_TYPE, "text/x-diff; charset=utf-8")], diff).into_response())
}

/// The task's kept harness log, read through its driver: its events as
/// progress lines and the raw JSONL, both redacted and capped.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}/log",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 200, body = LogView),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json",
            description = "that call has no harness log, its log was pruned with its run (log.pruned), or it ran on another node, whose home keeps it (log.elsewhere)"),
    ),
    tag = "code tasks"
)]
pub(super) async fn task_log(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
    headers: axum::http::HeaderMap,
) -> Result<axum::Json<LogView>, Problem> {
    let view = app
        .code_tasks
        .log(&caller.0.account_id, &run, &call, forward_as(&headers))
        .await?;
    Ok(axum::Json(view))
}

/// The token to ask the node that ran a task with, as this caller: none when
/// this request is already another node asking.
fn forward_as(headers: &axum::http::HeaderMap) -> Option<&str> {
    match headers.contains_key(crate::peers::FORWARDED_HEADER) {
        true => None,
        false => super::extract::bearer(headers),
    }
}
