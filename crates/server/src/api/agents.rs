//! Agents: the account's execution identities, their default harness,
//! model, effort and environment, and the size of their homes.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Json, PageParams, Query, nullable, trimmed};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::service::agents::AgentWithHome;
use cinch_base::timestamp::Timestamp;
use cinch_store::{self as store, AccountId, AgentId, AgentSettings, EnvironmentId, TokenOwner};

/// The account's agents, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/agents",
    params(("account" = String, Path, description = "The account"), PageParams),
    responses(
        (status = 200, body = Envelope<Vec<AgentView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(crate) async fn list_agents(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<AgentView>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .agents
        .list(&account, page.cursor()?, page.limit()?)
        .await?;
    let agents = page.items.into_iter().map(AgentView::from).collect();
    Ok(Envelope::page(agents, page.next_cursor))
}

/// An execution identity of an account, with its default harness, model,
/// effort and environment.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Agent {
    /// Its id.
    #[schema(value_type = String)]
    pub id: AgentId,
    /// The account it belongs to.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Its name, unique in the account.
    pub name: String,
    /// Whether it is the account's connected agent (the default `created_by`).
    pub connected: bool,
    /// Whether it may run tasks.
    pub enabled: bool,
    /// Its default harness.
    pub harness: Option<String>,
    /// Its default model.
    pub model: Option<String>,
    /// Its pinned effort (applies to its own harness only).
    pub effort: Option<String>,
    /// Its default environment.
    #[schema(value_type = Option<String>)]
    pub environment_id: Option<EnvironmentId>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<store::Agent> for Agent {
    fn from(row: store::Agent) -> Self {
        Self {
            id: row.id,
            account_id: row.account_id,
            name: row.name,
            connected: row.connected,
            enabled: row.enabled,
            harness: row.harness,
            model: row.model,
            effort: row.effort,
            environment_id: row.environment_id,
            created_at: row.created_at,
        }
    }
}

/// An agent with the size of its home directory.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct AgentView {
    /// The agent.
    #[serde(flatten)]
    pub agent: Agent,
    /// Bytes in its home directory (its harnesses' `HOME`: their logins and
    /// session state); 0 before its first session.
    pub home_bytes: u64,
}

impl From<AgentWithHome> for AgentView {
    fn from(AgentWithHome { agent, home_bytes }: AgentWithHome) -> Self {
        Self {
            agent: agent.into(),
            home_bytes,
        }
    }
}

/// An agent's settings to set; absent ones stay, null clears one.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentChange {
    /// Its default harness: a driver's name, as `GET /v1/models` lists them.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub harness: Option<Option<String>>,
    /// Its default model, as `GET /v1/models` lists it.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub model: Option<Option<String>>,
    /// Its pinned effort, in its harness's vocabulary; it applies only when
    /// a task runs on that harness.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub effort: Option<Option<String>>,
    /// Its default environment.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub environment_id: Option<Option<String>>,
    /// Whether it may run tasks.
    pub enabled: Option<bool>,
}

/// A new agent: a `name` and, optionally, its settings as in [`AgentChange`].
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct AgentCreate {
    /// Its name, unique in the account: not blank.
    #[schema(pattern = r"\S")]
    pub name: String,
    /// Its default harness.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub harness: Option<Option<String>>,
    /// Its default model.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub model: Option<Option<String>>,
    /// Its pinned effort.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub effort: Option<Option<String>>,
    /// Its default environment.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<String>)]
    pub environment_id: Option<Option<String>>,
    /// Whether it may run tasks (default true).
    pub enabled: Option<bool>,
}

/// A nullable setting trimmed: blank is null.
fn setting(value: Option<Option<String>>) -> Option<Option<String>> {
    value.map(trimmed)
}

impl From<AgentChange> for AgentSettings {
    /// The settings as asked, each trimmed (blank is null); the harness is
    /// one of the names the document lists, as it is.
    fn from(change: AgentChange) -> Self {
        Self {
            harness: change.harness,
            model: setting(change.model),
            effort: setting(change.effort),
            environment_id: setting(change.environment_id).map(|id| id.map(EnvironmentId::from)),
            enabled: change.enabled,
        }
    }
}

/// Some things (agents, webhooks) are changed by the account's people, not
/// by its agents; `what` names them.
pub(super) fn member_only(caller: &Caller, what: &str) -> Result<(), Problem> {
    match caller.0.owner {
        TokenOwner::Member(_) => Ok(()),
        TokenOwner::Agent(_) => Err(Problem::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("an agent's token cannot change {what}; use a member's"),
        )),
    }
}

/// Adds an agent to the account.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/agents",
    params(("account" = String, Path, description = "The account")),
    request_body = AgentCreate,
    responses(
        (status = 201, body = Envelope<AgentView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The name is taken"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(crate) async fn create_agent(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Json(body): Json<AgentCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<AgentView>>), Problem> {
    caller.account(&account)?;
    member_only(&caller, "agents")?;
    let change = AgentChange {
        harness: body.harness,
        model: body.model,
        effort: body.effort,
        environment_id: body.environment_id,
        enabled: body.enabled,
    };
    let agent = app
        .agents
        .create(&account, body.name.trim(), change.into())
        .await?;
    Ok((
        StatusCode::CREATED,
        Envelope::of(AgentView {
            agent: agent.into(),
            home_bytes: 0,
        }),
    ))
}

/// Changes an agent's settings.
#[utoipa::path(
    patch,
    path = "/v1/accounts/{account}/agents/{agent}",
    params(("account" = String, Path, description = "The account"), ("agent" = String, Path, description = "The agent")),
    request_body = AgentChange,
    responses(
        (status = 200, body = Envelope<AgentView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(crate) async fn update_agent(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, agent)): Path<(AccountId, AgentId)>,
    Json(change): Json<AgentChange>,
) -> Result<axum::Json<Envelope<AgentView>>, Problem> {
    caller.account(&account)?;
    member_only(&caller, "agents")?;
    let agent = app.agents.update(&account, &agent, change.into()).await?;
    Ok(Envelope::of(agent.into()))
}
