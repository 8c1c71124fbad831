//! Accounts, their members, and the models each harness offers.

use axum::extract::{Path, State};
use serde::Serialize;

use super::extract::{Caller, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::service::accounts::AccountWithUsage;
use cinch_base::timestamp::Timestamp;
use cinch_engine::engine::server_credential::ServerCredential;
use cinch_store::{self as store, AccountId, UsageTotals};

/// An account: everything else belongs to one.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(super) struct Account {
    /// Its id.
    #[schema(value_type = String)]
    pub id: AccountId,
    /// Its name.
    pub name: String,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// The tokens and cost of all its turns, where the API shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageTotals>,
}

impl From<AccountWithUsage> for Account {
    fn from(AccountWithUsage { account, usage }: AccountWithUsage) -> Self {
        Self {
            id: account.id,
            name: account.name,
            created_at: account.created_at,
            usage: Some(usage),
        }
    }
}

/// A person in an account.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(super) struct Member {
    /// Its id.
    pub id: String,
    /// The account it belongs to.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Its name, unique in the account.
    pub name: String,
    /// `admin` or `member`.
    pub role: String,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<store::Member> for Member {
    fn from(row: store::Member) -> Self {
        Self {
            id: row.id,
            account_id: row.account_id,
            name: row.name,
            role: row.role,
            created_at: row.created_at,
        }
    }
}

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
pub(super) async fn list_accounts(
    State(app): State<AppState>,
    caller: Caller,
) -> Result<axum::Json<Envelope<Vec<Account>>>, Problem> {
    let account = app.accounts.with_usage(&caller.0.account_id).await?;
    Ok(Envelope::of(
        account.into_iter().map(Account::from).collect(),
    ))
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
pub(super) async fn list_members(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<Member>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .accounts
        .members(&account, page.cursor()?, page.limit()?)
        .await?;
    let members = page.items.into_iter().map(Member::from).collect();
    Ok(Envelope::page(members, page.next_cursor))
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct HarnessModels {
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
    /// Whether this server's turns of the harness have a credential of the
    /// server's own, or need one from their environment's secrets.
    pub credential: ServerCredential,
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
pub(super) async fn list_models(
    State(app): State<AppState>,
    _caller: Caller,
) -> axum::Json<Envelope<Vec<HarnessModels>>> {
    let models = app
        .drivers
        .registry()
        .infos()
        .iter()
        .filter_map(|info| {
            Some(HarnessModels {
                harness: info.name.clone(),
                display_name: info.display_name.clone(),
                models: info.models.clone(),
                default_model: info.default_model.clone(),
                efforts: info.efforts.clone(),
                default_effort: info.default_effort.clone(),
                credential: app.drivers.server_credential(&info.name)?,
            })
        })
        .collect();
    Envelope::of(models)
}
