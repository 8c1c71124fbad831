//! The account's API tokens: made (their text shown once), listed (never
//! their text), revoked.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::agents::member_only;
use super::extract::{Caller, Json};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::service::accounts::TokenRefusal;
use cinch_base::timestamp::Timestamp;
use cinch_store::{AccountId, AgentId, TokenInfo, TokenOwner};

/// Whom a token acts for.
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum TokenOwnerKind {
    /// A member of the account: a person.
    Member,
    /// An agent of the account.
    Agent,
}

/// A token as listed: never its text.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct Token {
    /// Its id: `tok_` and 16 hex digits.
    pub id: String,
    /// Whether a member or an agent uses it.
    pub owner_kind: TokenOwnerKind,
    /// That member's or agent's id.
    pub owner_id: String,
    /// That member's or agent's name.
    pub owner_name: String,
    /// The name it was given when made ("CI", "laptop"), if any.
    pub name: Option<String>,
    /// When it was made (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<TokenInfo> for Token {
    fn from(info: TokenInfo) -> Self {
        let (owner_kind, owner_id) = match info.owner {
            TokenOwner::Member(id) => (TokenOwnerKind::Member, id),
            TokenOwner::Agent(id) => (TokenOwnerKind::Agent, id.into()),
        };
        Self {
            id: info.id,
            owner_kind,
            owner_id,
            owner_name: info.owner_name,
            name: info.name,
            created_at: info.created_at,
        }
    }
}

/// A new token, with its text: the only time it is shown.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct NewToken {
    /// The token as listed.
    #[serde(flatten)]
    pub token: Token,
    /// Its text, for `Authorization: Bearer …`. Keep it now: cinch keeps
    /// only its hash and never shows it again.
    pub secret: String,
}

/// Whom a new token is for.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TokenCreate {
    /// An agent of the account, by id; absent: the calling member.
    pub agent_id: Option<String>,
    /// What the token is for, to tell it from the others in a list ("CI",
    /// "laptop"): one line, at most 100 characters.
    pub name: Option<String>,
}

/// Makes a token for the caller or for one of the account's agents.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/tokens",
    params(("account" = String, Path, description = "The account")),
    request_body = TokenCreate,
    responses(
        (status = 201, body = Envelope<NewToken>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(super) async fn create_token(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Json(body): Json<TokenCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<NewToken>>), Problem> {
    caller.account(&account)?;
    member_only(&caller, "tokens")?;
    let (secret, info) = app
        .accounts
        .issue_token(
            &caller.0,
            body.agent_id.map(AgentId::from).as_ref(),
            body.name.as_deref(),
        )
        .await?;
    Ok((
        StatusCode::CREATED,
        Envelope::of(NewToken {
            token: info.into(),
            secret,
        }),
    ))
}

/// The account's tokens, oldest first; never their text.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/tokens",
    params(("account" = String, Path, description = "The account")),
    responses(
        (status = 200, body = Envelope<Vec<Token>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(super) async fn list_tokens(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
) -> Result<axum::Json<Envelope<Vec<Token>>>, Problem> {
    caller.account(&account)?;
    member_only(&caller, "tokens")?;
    let tokens = app.accounts.tokens(&account).await?;
    Ok(Envelope::of(tokens.into_iter().map(Into::into).collect()))
}

/// Revokes a token: the caller's own or an agent's. It stops working on
/// this node at once, on others within a minute.
#[utoipa::path(
    delete,
    path = "/v1/accounts/{account}/tokens/{token}",
    params(
        ("account" = String, Path, description = "The account"),
        ("token" = String, Path, description = "The token's id"),
    ),
    responses(
        (status = 204, description = "Revoked"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "accounts"
)]
pub(super) async fn revoke_token(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, token)): Path<(AccountId, String)>,
) -> Result<StatusCode, Problem> {
    caller.account(&account)?;
    member_only(&caller, "tokens")?;
    match app.accounts.revoke_token(&caller.0, &token).await {
        Ok(Some(_)) => Ok(StatusCode::NO_CONTENT),
        Ok(None) => Err(Problem::not_found("no token of this account has that id")),
        Err(TokenRefusal::OthersToken) => Err(Problem::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            TokenRefusal::OthersToken.to_string(),
        )),
        Err(TokenRefusal::Service(error)) => Err(error.into()),
    }
}
