//! Accounts, their members, and the models each harness offers.

use axum::extract::{Path, State};
use serde::Serialize;

use super::extract::{Caller, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::store::{Account, Member};

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
    let account = app.accounts.with_usage(&caller.0.account_id).await?;
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
        .accounts
        .members(&account, page.cursor()?, page.limit()?)
        .await?;
    Ok(Envelope::page(page.items, page.next_cursor))
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
        .infos()
        .into_iter()
        .map(|info| HarnessModels {
            harness: info.name.clone(),
            display_name: info.display_name.clone(),
            models: info.models.clone(),
            default_model: info.default_model.clone(),
            efforts: info.efforts.clone(),
            default_effort: info.default_effort.clone(),
        })
        .collect();
    Envelope::of(models)
}
