//! Accounts, their members and agents, and the models each harness offers.

use axum::extract::{Path, State};
use serde::Serialize;

use super::extract::{Caller, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::store::{Account, Agent, Member};

/// The accounts the token may see: its own.
#[utoipa::path(
    get,
    path = "/v1/accounts",
    responses(
        (status = 200, body = Envelope<Vec<Account>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub async fn list_accounts(
    State(app): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Envelope<Vec<Account>>>, Problem> {
    let account = app.store.account(&caller.0.account_id).await?;
    Ok(Envelope::of(account.into_iter().collect()))
}

/// The account's members, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/members",
    params(("account" = String, Path, description = "The account"), PageParams),
    responses(
        (status = 200, body = Envelope<Vec<Member>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub async fn list_members(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<Member>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .store
        .members(&account, page.cursor.as_deref(), page.limit()?)
        .await?;
    Ok(Envelope::page(page.items, page.next_cursor))
}

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
        .agents(&account, page.cursor.as_deref(), page.limit()?)
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

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct HarnessModels {
    /// The harness, as a request's `harness` names it.
    pub harness: String,
    /// What people call it.
    pub display_name: String,
    /// Model ids, exactly as a request's `model` takes them; empty when any id goes.
    pub models: Vec<String>,
    /// The model used when a request names none.
    pub default_model: Option<String>,
    /// The harness's effort vocabulary.
    pub efforts: Vec<String>,
    /// The effort used when a request names none.
    pub default_effort: Option<String>,
}

/// Each harness's models and efforts.
#[utoipa::path(
    get,
    path = "/v1/models",
    responses(
        (status = 200, body = Envelope<Vec<HarnessModels>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "models"
)]
pub async fn list_models(
    State(app): State<AppState>,
    _caller: Caller,
) -> axum::Json<Envelope<Vec<HarnessModels>>> {
    let models = app
        .engine
        .registry()
        .entries()
        .iter()
        .filter_map(|entry| entry.driver.as_ref().ok())
        .map(|driver| {
            let info = driver.info();
            HarnessModels {
                harness: info.name.clone(),
                display_name: info.display_name.clone(),
                models: info.models.clone(),
                default_model: info.default_model.clone(),
                efforts: info.efforts.clone(),
                default_effort: info.default_effort.clone(),
            }
        })
        .collect();
    Envelope::of(models)
}
