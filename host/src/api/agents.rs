//! Agents: the account's execution identities, their default harness,
//! model, effort and environment, and the size of their homes.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Json, PageParams, Query, nullable, trimmed};
use super::problem::{FieldError, Problem};
use super::{AppState, Envelope};
use crate::store::{Agent, AgentSettings, TokenOwner};

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
pub async fn list_agents(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<AgentView>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .store
        .agents(&account, page.cursor()?, page.limit()?)
        .await?;
    let homes: Vec<_> = page
        .items
        .iter()
        .map(|agent| app.conductor.agent_home(&agent.id))
        .collect();
    let sizes = tokio::task::spawn_blocking(move || {
        homes.iter().map(|home| tree_size(home)).collect::<Vec<_>>()
    })
    .await
    .map_err(|error| Problem::internal(&error))?;
    let agents = page
        .items
        .into_iter()
        .zip(sizes)
        .map(|(agent, home_bytes)| AgentView { agent, home_bytes })
        .collect();
    Ok(Envelope::page(agents, page.next_cursor))
}

/// An agent with the size of its home directory.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct AgentView {
    /// The agent.
    #[serde(flatten)]
    pub agent: Agent,
    /// Bytes in its home directory (its harnesses' `HOME`: their logins and
    /// session state); 0 before its first session.
    pub home_bytes: u64,
}

/// The bytes of the files under `dir`, not following links.
fn tree_size(dir: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => tree_size(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |meta| meta.len()),
            _ => 0,
        })
        .sum()
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
pub struct AgentCreate {
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

/// Checks an agent's settings against the drivers and the account's
/// environments; `current` is the agent being changed.
async fn settings(
    app: &AppState,
    account: &str,
    change: AgentChange,
    current: Option<&Agent>,
) -> Result<AgentSettings, Problem> {
    // The harness is one of the names the document lists, as it is.
    let harness = change.harness;
    let model = setting(change.model);
    let effort = setting(change.effort);
    let environment_id = setting(change.environment_id);
    let mut errors = Vec::new();
    let registry = app.engine.registry();
    let effective = harness
        .clone()
        .unwrap_or_else(|| current.and_then(|agent| agent.harness.clone()));
    let info = effective
        .as_deref()
        .and_then(|name| registry.harness(name).ok().map(|harness| harness.info));
    if let (Some(name), None) = (&effective, &info) {
        errors.push(FieldError::new(
            "harness",
            format!(
                "no harness is named {name}; there are {}",
                registry.names().join(", ")
            ),
        ));
    }
    if let (Some(Some(model)), Some(info)) = (&model, &info)
        && !info.models.is_empty()
        && !info.models.contains(model)
    {
        errors.push(FieldError::new(
            "model",
            format!(
                "{} has no model {model}; it has {}",
                info.name,
                info.models.join(", ")
            ),
        ));
    }
    if let Some(Some(effort)) = &effort {
        match &info {
            None => errors.push(FieldError::new(
                "effort",
                "an effort is pinned for a harness: set harness too",
            )),
            Some(info) if !info.efforts.contains(effort) => errors.push(FieldError::new(
                "effort",
                format!(
                    "{} takes {}",
                    info.name,
                    match info.efforts.is_empty() {
                        true => "no effort".to_owned(),
                        false => format!("one of {}", info.efforts.join(", ")),
                    }
                ),
            )),
            Some(_) => {}
        }
    }
    if let Some(Some(id)) = &environment_id
        && app.store.environment(account, id).await?.is_none()
    {
        errors.push(FieldError::new(
            "environment_id",
            "no environment of the account has that id",
        ));
    }
    if !errors.is_empty() {
        return Err(Problem::invalid(errors));
    }
    Ok(AgentSettings {
        harness,
        model,
        effort,
        environment_id,
        enabled: change.enabled,
    })
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
pub async fn create_agent(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
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
    let settings = settings(&app, &account, change, None).await?;
    let agent = app
        .store
        .create_agent(&account, body.name.trim(), settings)
        .await?;
    Ok((
        StatusCode::CREATED,
        Envelope::of(AgentView {
            agent,
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
pub async fn update_agent(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, agent)): Path<(String, String)>,
    Json(change): Json<AgentChange>,
) -> Result<axum::Json<Envelope<AgentView>>, Problem> {
    caller.account(&account)?;
    member_only(&caller, "agents")?;
    let current = app
        .store
        .agent(&account, &agent)
        .await?
        .ok_or_else(|| Problem::not_found("no such agent"))?;
    let settings = settings(&app, &account, change, Some(&current)).await?;
    let agent = app
        .store
        .update_agent(&account, &current.id, settings)
        .await?
        .ok_or_else(|| Problem::not_found("no such agent"))?;
    let home = app.conductor.agent_home(&agent.id);
    let home_bytes = tokio::task::spawn_blocking(move || tree_size(&home))
        .await
        .map_err(|error| Problem::internal(&error))?;
    Ok(Envelope::of(AgentView { agent, home_bytes }))
}
