//! The code-task API: start a turn in one of the account's environments,
//! read its status and result, cancel it, its diff and its harness log.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::AppState;
use super::extract::{Caller, JsonValue, Query};
use super::problem::{FieldError, Problem};
use crate::engine::TurnRequest;
use crate::engine::brief::Note;
use crate::engine::result::TurnResult;
use crate::sessions::live::{CallRef, LiveState};
use crate::store::{Call, Environment};

/// A code task to start.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskRequest {
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
pub struct TaskNote {
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
pub struct WaitParams {
    /// Answer with the result once the turn has ended.
    #[serde(default)]
    pub wait: bool,
}

/// A code task: its call, its status and, once it has ended, its result.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = CodeTask)]
pub struct Task {
    /// The call's id.
    pub call_id: String,
    /// The run it belongs to.
    pub run_id: String,
    /// The engine's turn.
    pub turn_id: String,
    /// The environment it runs in.
    pub environment_id: String,
    /// `running`, or how it ended: `completed`, `failed`, `timed_out`,
    /// `cancelled`, `interrupted`.
    pub status: String,
    /// The harness session, once reported.
    pub session_id: Option<String>,
    /// When it started (RFC 3339).
    pub created_at: String,
    /// The result, once it has ended.
    pub result: Option<TaskResult>,
}

/// How a code task ended.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct TaskResult {
    /// The harness's driver.
    pub harness: String,
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
    /// The commit before the turn.
    pub start_checkpoint: Option<String>,
    /// The commit after the turn.
    pub end_checkpoint: Option<String>,
    /// The result in the spec's text format.
    pub result_text: String,
}

/// A changed file.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct ChangedFile {
    /// Its path in the repository.
    pub path: String,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// Whether it is binary.
    pub binary: bool,
}

impl From<&TurnResult> for TaskResult {
    fn from(result: &TurnResult) -> Self {
        Self {
            harness: result.harness.clone(),
            exit_code: result.exit_code,
            duration_ms: result.duration_ms,
            files_changed: result
                .files_changed
                .iter()
                .map(|file| ChangedFile {
                    path: file.path.clone(),
                    insertions: file.insertions,
                    deletions: file.deletions,
                    binary: file.binary,
                })
                .collect(),
            total_files: result.total_files,
            insertions: result.insertions,
            deletions: result.deletions,
            detail: result.detail.clone(),
            final_message: result.final_message.clone(),
            start_checkpoint: result.start_checkpoint.clone(),
            end_checkpoint: result.end_checkpoint.clone(),
            result_text: result.result_text.clone(),
        }
    }
}

/// A harness log as the spec returns it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HarnessLog {
    /// The log's events as progress lines, at most 2000, redacted, each cut at 240 characters.
    pub lines: Vec<String>,
    /// Whether there were more lines.
    pub lines_truncated: bool,
    /// The raw JSONL, whole lines from the start within 256 KiB, redacted.
    pub raw: String,
    /// Whether the raw log goes on past `raw`.
    pub raw_truncated: bool,
    /// The whole log's size in bytes.
    pub bytes: u64,
    /// Events the driver read from it.
    pub events: usize,
    /// Lines that gave no event.
    pub unparsed: usize,
}

/// The rule for a run id, as answers state it.
const RUN_ID_RULE: &str = "a run id is 1 to 100 letters, digits and _ . -, starting with a letter, digit or _, \
     without .., not ending in . or .lock";

/// Whether `run` may name a run: it names a folder of the home and a
/// component of the git refs of its checkpoints, so it is what both accept.
fn is_valid_run_id(run: &str) -> bool {
    run.len() <= 100
        && run
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphanumeric() || first == '_')
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !run.contains("..")
        && !run.ends_with('.')
        && !run.ends_with(".lock")
}

/// A run id is one account's: a valid one that another account uses is 404.
pub async fn check_run(app: &AppState, caller: &Caller, run: &str) -> Result<(), Problem> {
    if !is_valid_run_id(run) {
        return Err(Problem::invalid_field("run", RUN_ID_RULE));
    }
    if app
        .store
        .run_taken_by_other(&caller.0.account_id, run)
        .await?
    {
        return Err(Problem::not_found("no such run"));
    }
    Ok(())
}

/// Runs a blocking engine call off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<anyhow::Result<T>, Problem> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| Problem::internal(&error))
}

/// An engine refusal (`code.detail: ...`) as a 422 of that code; anything
/// else is the server's fault.
fn engine_problem(error: &anyhow::Error) -> Problem {
    let text = format!("{error:#}");
    match text.split_once(": ") {
        Some((code, detail))
            if code.contains('.')
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || "._".contains(c)) =>
        {
            Problem::new(StatusCode::UNPROCESSABLE_ENTITY, code, detail)
        }
        _ => Problem::internal(&text),
    }
}

/// The environment a task runs in: the one named, or the account's only one.
async fn resolve_environment(
    app: &AppState,
    account_id: &str,
    repo: Option<&str>,
) -> Result<Environment, Problem> {
    let environments = app.store.environment_names(account_id).await?;
    let names = || {
        environments
            .iter()
            .map(|(_, name)| name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let id = match (repo, environments.as_slice()) {
        (_, []) => {
            return Err(Problem::invalid_field(
                "repo",
                "the account has no environments: create one with POST /v1/accounts/{account}/environments",
            ));
        }
        (None, [(id, _)]) => id.clone(),
        (None, _) => {
            return Err(Problem::invalid_field(
                "repo",
                format!("required with several environments: one of {}", names()),
            ));
        }
        (Some(name), _) => match environments.iter().find(|(_, known)| known == name) {
            Some((id, _)) => id.clone(),
            None => {
                return Err(Problem::invalid_field(
                    "repo",
                    format!("no environment is named {name}; there are {}", names()),
                ));
            }
        },
    };
    app.store
        .environment(account_id, &id)
        .await?
        .ok_or_else(|| Problem::not_found("that environment was just deleted"))
}

/// Starts a code task: a turn of `harness` in the environment's repository.
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
        (status = 422, body = Problem, content_type = "application/problem+json",
            description = "Field errors, or the engine's refusal (harness.cli_missing, harness.no_credential, repo.invalid, ...)"),
    ),
    tag = "code tasks"
)]
pub async fn start_task(
    State(app): State<AppState>,
    caller: Caller,
    Path(run): Path<String>,
    Query(params): Query<WaitParams>,
    JsonValue(body): JsonValue,
) -> Result<(StatusCode, axum::Json<Task>), Problem> {
    check_run(&app, &caller, &run).await?;
    let request = TaskRequest::parse(body, &app.engine.registry().names())?;
    let account_id = caller.0.account_id.clone();
    let repo = super::extract::trimmed(request.repo.clone());
    let environment = resolve_environment(&app, &account_id, repo.as_deref()).await?;
    let repo = PathBuf::from(&environment.repository);
    if !repo.is_absolute() {
        return Err(Problem::invalid_field(
            "repo",
            format!(
                "environment {}'s repository is not a local path; code tasks run in a local repository",
                environment.name
            ),
        ));
    }
    let turn_request = TurnRequest {
        harness: request.harness,
        repo,
        brief: request.brief.trim().to_owned(),
        notes: request
            .notes
            .into_iter()
            .flatten()
            .map(|note| Note {
                name: note.name,
                text: note.text,
            })
            .collect(),
        model: super::extract::trimmed(request.model),
        effort: super::extract::trimmed(request.effort),
        session_id: super::extract::trimmed(request.session_id),
        timeout: Duration::from_secs(request.timeout_minutes.unwrap_or(30) as u64 * 60),
        run: Some(run.clone()),
        env: environment
            .env
            .iter()
            .chain(&environment.secrets)
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        secrets: environment.secrets.values().cloned().collect(),
    };
    let engine = app.engine.clone();
    let turn = blocking(move || engine.start(turn_request))
        .await?
        .map_err(|error| engine_problem(&error))?;
    let turn_id = turn.id().to_owned();
    let call = match app
        .store
        .create_call(&account_id, &run, &turn_id, &environment.id)
        .await
    {
        Ok(call) => call,
        Err(error) => {
            // A turn nobody can find must not run on.
            turn.cancel();
            return Err(error.into());
        }
    };
    tracing::info!(call = %call.call_id, turn = %turn_id, run = %run, "code task started");
    let mut live = app
        .runs
        .follow(
            CallRef {
                account_id,
                run_id: run,
                call_id: call.call_id.clone(),
            },
            turn,
        )
        .await
        .map_err(|error| Problem::internal(&format!("{error:#}")))?;
    if params.wait {
        // The turn carries on if the client goes away; only this answer waits.
        live.wait_for(|state| state.outcome.is_some())
            .await
            .map_err(|error| Problem::internal(&error))?;
    }
    let state = live.borrow().clone();
    Ok((StatusCode::CREATED, axum::Json(task(&call, &state))))
}

fn task(call: &Call, state: &LiveState) -> Task {
    let result = match &state.outcome {
        Some(Ok(result)) => Some(result.clone()),
        _ => None,
    };
    Task {
        call_id: call.call_id.clone(),
        run_id: call.run_id.clone(),
        turn_id: call.turn_id.clone(),
        environment_id: call.environment_id.clone(),
        status: match &state.outcome {
            None => "running".to_owned(),
            Some(Ok(result)) => result.status.as_str().to_owned(),
            Some(Err(_)) => "error".to_owned(),
        },
        session_id: result
            .as_ref()
            .and_then(|result| result.session_id.clone())
            .or_else(|| state.session_id.clone()),
        created_at: call.created_at.clone(),
        result: result.as_deref().map(TaskResult::from),
    }
}

/// The caller's call `call` of run `run`, or 404.
async fn find_call(
    app: &AppState,
    caller: &Caller,
    run: &str,
    call: &str,
) -> Result<Call, Problem> {
    app.store
        .call(&caller.0.account_id, run, call)
        .await?
        .ok_or_else(|| Problem::not_found("no such task"))
}

/// The live state of a call's turn; a turn this server does not follow yet
/// (after a restart) is attached to, and a finished one read back.
async fn live_state(app: &AppState, call: &Call) -> Result<LiveState, Problem> {
    if let Some(live) = app.runs.watch(&call.turn_id) {
        return Ok(live.borrow().clone());
    }
    let engine = app.engine.clone();
    let turn_id = call.turn_id.clone();
    let turn = blocking(move || engine.attach(&turn_id, &[]))
        .await?
        .map_err(|_| Problem::not_found("that task's turn is gone from cinch's home"))?;
    let mut live = app
        .runs
        .follow(
            CallRef {
                account_id: call.account_id.clone(),
                run_id: call.run_id.clone(),
                call_id: call.call_id.clone(),
            },
            turn,
        )
        .await
        .map_err(|error| Problem::internal(&format!("{error:#}")))?;
    // A finished turn's result is read back at once; a running one answers as running.
    let _ = tokio::time::timeout(
        Duration::from_secs(2),
        live.wait_for(|state| state.outcome.is_some()),
    )
    .await;
    let state = live.borrow().clone();
    Ok(state)
}

/// A code task's status and, once it has ended, its result.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 200, body = Task),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub async fn get_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<axum::Json<Task>, Problem> {
    let call = find_call(&app, &caller, &run, &call).await?;
    let state = live_state(&app, &call).await?;
    Ok(axum::Json(task(&call, &state)))
}

/// Stops a running code task: SIGTERM to the harness, SIGKILL 10 s later; it
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
pub async fn cancel_task(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<(StatusCode, axum::Json<Task>), Problem> {
    let call = find_call(&app, &caller, &run, &call).await?;
    let state = live_state(&app, &call).await?;
    if state.outcome.is_some() {
        return Err(Problem::conflict("that task has already ended"));
    }
    let engine = app.engine.clone();
    let turn_id = call.turn_id.clone();
    blocking(move || engine.stop(&turn_id))
        .await?
        .map_err(|error| Problem::conflict(format!("{error:#}")))?;
    Ok((StatusCode::ACCEPTED, axum::Json(task(&call, &state))))
}

/// The ended turn's result, or 409 while it runs.
async fn ended(app: &AppState, call: &Call) -> Result<Arc<TurnResult>, Problem> {
    match live_state(app, call).await?.outcome {
        Some(Ok(result)) => Ok(result),
        Some(Err(_)) => Err(Problem::conflict("that task ended without a result")),
        None => Err(Problem::conflict("that task is still running")),
    }
}

/// The unified diff of what the task changed: from its start checkpoint to
/// its end checkpoint. 409 while it runs.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}/diff",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 200, body = String, content_type = "text/x-diff"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "code tasks"
)]
pub async fn task_diff(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<Response, Problem> {
    let call = find_call(&app, &caller, &run, &call).await?;
    let result = ended(&app, &call).await?;
    let (Some(start), Some(end)) = (
        result.start_checkpoint.clone(),
        result.end_checkpoint.clone(),
    ) else {
        return Err(Problem::conflict(
            "that task has no start and end checkpoints",
        ));
    };
    let repository = PathBuf::from(&result.repository);
    let diff = blocking(move || Ok(crate::checkpoint::diff(&repository, &start, &end)?))
        .await?
        .map_err(|error| Problem::internal(&error))?;
    Ok(([(header::CONTENT_TYPE, "text/x-diff; charset=utf-8")], diff).into_response())
}

/// The task's kept harness log, read through its driver: its events as
/// progress lines and the raw JSONL, both redacted and capped.
#[utoipa::path(
    get,
    path = "/api/runs/{run}/tasks/{call}/log",
    params(("run" = String, Path, description = "The run"), ("call" = String, Path, description = "The call")),
    responses(
        (status = 200, body = HarnessLog),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json",
            description = "that call has no harness log"),
    ),
    tag = "code tasks"
)]
pub async fn task_log(
    State(app): State<AppState>,
    caller: Caller,
    Path((run, call)): Path<(String, String)>,
) -> Result<axum::Json<HarnessLog>, Problem> {
    let no_log = || Problem::not_found("that call has no harness log");
    let call = app
        .store
        .call(&caller.0.account_id, &run, &call)
        .await?
        .ok_or_else(no_log)?;
    let engine = app.engine.clone();
    let view = blocking(move || engine.log(&call.turn_id))
        .await?
        .map_err(|_| no_log())?;
    Ok(axum::Json(HarnessLog {
        lines: view.lines,
        lines_truncated: view.lines_truncated,
        raw: view.raw,
        raw_truncated: view.raw_truncated,
        bytes: view.bytes,
        events: view.events,
        unparsed: view.unparsed,
    }))
}
