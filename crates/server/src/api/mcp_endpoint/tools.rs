//! The MCP tools: list environments, start a task, wait for it, read its
//! result and diff, send a follow-up, abort. Each calls the services the
//! HTTP handlers call, as the request's caller; a refusal is a tool error
//! (`isError`) saying what was wrong, never a protocol error.
//!
//! Approvals are not among them: cinch has no pending approvals to answer yet.

use std::sync::OnceLock;
use std::time::Duration;

use axum::http::request::Parts;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{ServerHandler, schemars, tool, tool_handler, tool_router};
use serde::{Deserialize, Serialize};

use super::McpCaller;
use super::turns::{self, Diff, SessionState, TurnReport};
use crate::api::extract::trimmed;
use crate::api::{AppState, Problem};
use crate::service::sessions::TaskSpec;
use cinch_store::{AccountId, Environment, EnvironmentId};

/// How long `wait_for_task` waits unless told.
const DEFAULT_WAIT_SECONDS: u64 = 60;

/// The longest `wait_for_task` waits: MCP clients time calls out (the
/// Python SDK after 300 s of silence).
const MAX_WAIT_SECONDS: u64 = 240;

/// What the server tells a client about using it.
const INSTRUCTIONS: &str = "cinch runs coding-agent CLIs (Claude Code, Codex, ...) in your \
account's environments. start_task hands work to one; wait_for_task until it is done; \
get_result for its answer and diff; send_message to follow up in the same session.";

/// The tools of one request, on the server's services.
#[derive(Clone)]
pub(crate) struct Tools {
    app: AppState,
}

impl Tools {
    /// The tools, acting through `app`'s services.
    pub(crate) fn new(app: AppState) -> Self {
        Self { app }
    }

    /// The tool table, built once: every request gets its own `Tools`.
    fn shared_router() -> &'static ToolRouter<Self> {
        static ROUTER: OnceLock<ToolRouter<Tools>> = OnceLock::new();
        ROUTER.get_or_init(Self::tool_router)
    }
}

/// Arguments of `list_environments`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct ListEnvironments {
    /// Where the page starts: a previous answer's `next_cursor`.
    pub cursor: Option<String>,
}

/// An environment as `list_environments` shows it.
#[derive(Debug, Serialize)]
pub(super) struct EnvironmentSummary {
    /// Its id.
    pub id: String,
    /// Its name, unique in the account.
    pub name: String,
    /// The repository its sessions work in: a local path or a git URL.
    pub repository: String,
}

/// What `list_environments` answers.
#[derive(Debug, Serialize)]
struct EnvironmentPage {
    environments: Vec<EnvironmentSummary>,
    /// Pass as `cursor` for the next page; null on the last.
    next_cursor: Option<String>,
}

impl From<Environment> for EnvironmentSummary {
    fn from(environment: Environment) -> Self {
        Self {
            id: environment.id.into(),
            name: environment.name,
            repository: environment.repository,
        }
    }
}

/// Arguments of `start_task`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct StartTask {
    /// What the agent is to do: the whole task, self-contained.
    pub prompt: String,
    /// The environment, by id or name (default: the agent's).
    pub environment: Option<String>,
    /// The harness: claude, codex, ... (default: the agent's, else claude).
    pub harness: Option<String>,
    /// The model, when not the harness's default.
    pub model: Option<String>,
    /// The task's title (default: the prompt's first line).
    pub title: Option<String>,
}

/// A task and the session named in a call; the newest session when none is.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct TaskRef {
    /// The task, as start_task answered it.
    pub task_id: String,
    /// One of its sessions (default: its newest).
    pub session_id: Option<String>,
}

/// Arguments of `wait_for_task`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct WaitForTask {
    /// The task, as start_task answered it.
    pub task_id: String,
    /// One of its sessions (default: its newest).
    pub session_id: Option<String>,
    /// The longest to wait, in seconds: 1 to 240, default 60.
    pub timeout_seconds: Option<u64>,
}

/// Arguments of `send_message`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub(super) struct SendMessage {
    /// The task, as start_task answered it.
    pub task_id: String,
    /// One of its sessions (default: its newest).
    pub session_id: Option<String>,
    /// What to tell the agent: not blank.
    pub message: String,
}

/// What `wait_for_task` answers.
#[derive(Debug, Serialize)]
struct Waited {
    #[serde(flatten)]
    session: SessionState,
    /// True when the session is idle or closed with nothing queued.
    done: bool,
}

/// What `get_result` answers.
#[derive(Debug, Serialize)]
struct TaskResult {
    #[serde(flatten)]
    session: SessionState,
    /// Its newest turn; none before the first.
    turn: Option<TurnReport>,
    /// That turn's diff, once it ended.
    diff: Option<Diff>,
    /// Why there is no diff, when there is none.
    diff_unavailable: Option<String>,
}

/// What `send_message` answers.
#[derive(Debug, Serialize)]
struct Sent {
    #[serde(flatten)]
    session: SessionState,
    /// The message; it runs as the session's next turn.
    message_id: String,
}

#[tool_router]
impl Tools {
    /// The environments (repositories) of your account that tasks run in,
    /// oldest first, 100 a page.
    #[tool(annotations(read_only_hint = true))]
    async fn list_environments(
        &self,
        Parameters(arguments): Parameters<ListEnvironments>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let cursor = trimmed(arguments.cursor);
        if cursor
            .as_deref()
            .is_some_and(|cursor| !cinch_store::is_id(cursor))
        {
            return Err(
                "cursor: pass a previous answer's next_cursor as it was given, or none".to_owned(),
            );
        }
        let page = self
            .app
            .environments
            .list(&caller.principal.account_id, cursor.as_deref(), 100)
            .await
            .map_err(|error| refusal(error.into()))?;
        answer(&EnvironmentPage {
            environments: page.items.into_iter().map(Into::into).collect(),
            next_cursor: page.next_cursor,
        })
    }

    /// Starts a task: a coding agent (the harness) works on the prompt in a
    /// session of its own, on a branch of the environment's repository.
    /// Answers at once with the task's and session's ids; wait_for_task
    /// then, and get_result.
    #[tool]
    async fn start_task(
        &self,
        Parameters(arguments): Parameters<StartTask>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let prompt = trimmed(Some(arguments.prompt))
            .ok_or_else(|| "prompt: say what the agent is to do; it is blank".to_owned())?;
        let harness = trimmed(arguments.harness);
        if let Some(name) = &harness {
            let registry = self.app.drivers.registry();
            let names = registry.names();
            if !names.contains(&name.as_str()) {
                return Err(format!(
                    "harness: no harness is named {name}; there are {}",
                    names.join(", ")
                ));
            }
        }
        let account = caller.principal.account_id.clone();
        let environment_id = match trimmed(arguments.environment) {
            Some(wanted) => Some(self.environment(&account, &wanted).await?),
            None => None,
        };
        let spec = TaskSpec {
            title: trimmed(arguments.title),
            prompt: Some(prompt),
            environment_id,
            harness,
            model: trimmed(arguments.model),
            ..TaskSpec::default()
        };
        let task = self
            .app
            .conductor
            .create_task(&account, &caller.principal.owner, spec)
            .await
            .map_err(|error| refusal(error.into()))?;
        let session = turns::session_of(&self.app, caller, task.id.as_str(), None)
            .await
            .map_err(refusal)?;
        answer(&SessionState::from(session))
    }

    /// Waits until the task's session is done (idle or closed, nothing
    /// queued) or the timeout passes, and says which: `done`. Call it again
    /// to wait longer.
    #[tool(annotations(read_only_hint = true))]
    async fn wait_for_task(
        &self,
        Parameters(arguments): Parameters<WaitForTask>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let seconds = arguments.timeout_seconds.unwrap_or(DEFAULT_WAIT_SECONDS);
        if !(1..=MAX_WAIT_SECONDS).contains(&seconds) {
            return Err(format!(
                "timeout_seconds: 1 to {MAX_WAIT_SECONDS}; call again to wait longer"
            ));
        }
        let session = turns::session_of(
            &self.app,
            caller,
            &arguments.task_id,
            arguments.session_id.as_deref(),
        )
        .await
        .map_err(refusal)?;
        let (session, done) = turns::wait(&self.app, session, Duration::from_secs(seconds))
            .await
            .map_err(refusal)?;
        answer(&Waited {
            session: session.into(),
            done,
        })
    }

    /// The task's session and its newest turn: the agent's final message,
    /// how the turn ended (status, files changed, usage) and its unified
    /// diff (cut past 256 KiB).
    #[tool(annotations(read_only_hint = true))]
    async fn get_result(
        &self,
        Parameters(arguments): Parameters<TaskRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let session = turns::session_of(
            &self.app,
            caller,
            &arguments.task_id,
            arguments.session_id.as_deref(),
        )
        .await
        .map_err(refusal)?;
        let turn = turns::last_turn(&self.app, &session)
            .await
            .map_err(refusal)?;
        let (diff, diff_unavailable) = match &turn {
            None => (None, Some("no turn has run yet".to_owned())),
            Some(turn) if turn.result.is_none() => (
                None,
                Some("the turn is still running: wait_for_task first".to_owned()),
            ),
            Some(turn) => match turns::diff(&self.app, caller, &session, &turn.call_id).await {
                Ok(diff) => (Some(diff), None),
                Err(problem) => (None, Some(problem.detail)),
            },
        };
        answer(&TaskResult {
            session: session.into(),
            turn,
            diff,
            diff_unavailable,
        })
    }

    /// Sends a follow-up message to the task's session: it runs as the
    /// session's next turn (an idle or closed session resumes, a busy one
    /// queues it). wait_for_task then, and get_result.
    #[tool]
    async fn send_message(
        &self,
        Parameters(arguments): Parameters<SendMessage>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let text = trimmed(Some(arguments.message))
            .ok_or_else(|| "message: say what to tell the agent; it is blank".to_owned())?;
        let session = turns::session_of(
            &self.app,
            caller,
            &arguments.task_id,
            arguments.session_id.as_deref(),
        )
        .await
        .map_err(refusal)?;
        let message = self
            .app
            .conductor
            .post_message(&session.account_id, &session.task_id, &session.id, &text)
            .await
            .map_err(|error| refusal(error.into()))?;
        answer(&Sent {
            session: session.into(),
            message_id: message.id.into(),
        })
    }

    /// Stops the task's running turn (it ends cancelled) or its wait for a
    /// slot; the session stays open for a follow-up.
    #[tool(annotations(destructive_hint = true))]
    async fn abort_task(
        &self,
        Parameters(arguments): Parameters<TaskRef>,
        Extension(parts): Extension<Parts>,
    ) -> Result<CallToolResult, String> {
        let caller = caller(&parts)?;
        let session = turns::session_of(
            &self.app,
            caller,
            &arguments.task_id,
            arguments.session_id.as_deref(),
        )
        .await
        .map_err(refusal)?;
        let session = self
            .app
            .conductor
            .abort(&session.account_id, &session.task_id, &session.id)
            .await
            .map_err(|error| refusal(error.into()))?;
        answer(&SessionState::from(session))
    }
}

impl Tools {
    /// The account's environment named or with the id `wanted`.
    async fn environment(
        &self,
        account: &AccountId,
        wanted: &str,
    ) -> Result<EnvironmentId, String> {
        let environments = &self.app.environments;
        if cinch_store::is_id(wanted)
            && let Ok(environment) = environments
                .get(account, &EnvironmentId::from(wanted.to_owned()))
                .await
        {
            return Ok(environment.id);
        }
        let mut cursor = None;
        loop {
            let page = environments
                .list(account, cursor.as_deref(), 200)
                .await
                .map_err(|error| refusal(error.into()))?;
            if let Some(environment) = page.items.into_iter().find(|env| env.name == wanted) {
                return Ok(environment.id);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => {
                    return Err(format!(
                        "environment: none of your account's environments is named {wanted} or has that id; list_environments shows them"
                    ));
                }
            }
        }
    }
}

#[tool_handler(router = Self::shared_router())]
impl ServerHandler for Tools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("cinch", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }
}

/// The request's caller, as [`super::authenticate`] left it.
fn caller(parts: &Parts) -> Result<&McpCaller, String> {
    parts
        .extensions
        .get::<McpCaller>()
        .ok_or_else(|| "unauthorized: send Authorization: Bearer <token>".to_owned())
}

/// A tool's answer: its JSON as text and as structured content.
fn answer(value: &impl Serialize) -> Result<CallToolResult, String> {
    serde_json::to_value(value)
        .map(CallToolResult::structured)
        .map_err(|error| refusal(Problem::internal(&error)))
}

/// A refusal as a tool error's text: its code and what was wrong.
fn refusal(problem: Problem) -> String {
    let code = problem
        .kind
        .strip_prefix("urn:cinch:")
        .unwrap_or(&problem.kind);
    format!("{code}: {}", problem.detail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_is_listed_with_a_description_and_an_object_schema() {
        let tools = Tools::shared_router().list_all();
        let mut names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "abort_task",
                "get_result",
                "list_environments",
                "send_message",
                "start_task",
                "wait_for_task"
            ]
        );
        for tool in &tools {
            assert!(
                tool.description.as_deref().is_some_and(|d| d.len() > 20),
                "{}",
                tool.name
            );
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
        let start = tools.iter().find(|tool| tool.name == "start_task").unwrap();
        assert_eq!(
            start.input_schema["required"],
            serde_json::json!(["prompt"])
        );
    }
}
