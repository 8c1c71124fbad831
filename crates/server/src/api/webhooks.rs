//! Webhooks: where an account's events go, and the log of their deliveries.

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::agents::member_only;
use super::extract::{Caller, Json, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use cinch_base::timestamp::Timestamp;
use cinch_store::{AccountId, Delivery, DeliveryState, Webhook, WebhookId};

/// A webhook as clients see it: its secret never comes back.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct WebhookView {
    /// Its id.
    #[schema(value_type = String)]
    pub id: WebhookId,
    /// The account whose events it gets.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Where events are POSTed.
    pub url: String,
    /// When it was made (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
}

impl From<Webhook> for WebhookView {
    fn from(webhook: Webhook) -> Self {
        Self {
            id: webhook.id,
            account_id: webhook.account_id,
            url: webhook.url,
            created_at: webhook.created_at,
        }
    }
}

/// A new webhook.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct WebhookCreate {
    /// An http:// or https:// URL. Loopback and private addresses are
    /// refused unless the server allows them.
    #[schema(pattern = r"^https?://[^/?#]+", max_length = 2048)]
    pub url: String,
    /// The key of each delivery's `X-Cinch-Signature` (HMAC-SHA256 over
    /// `<timestamp>.<body>`), 16 to 256 characters. Write-only.
    #[schema(min_length = 16, max_length = 256)]
    pub secret: String,
}

/// One event sent to one webhook, and how its attempts went.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DeliveryView {
    /// Its id (also sent as `X-Cinch-Delivery`).
    pub id: String,
    /// The webhook.
    #[schema(value_type = String)]
    pub webhook_id: WebhookId,
    /// The event's type: `turn.ended` or `session.status_changed`.
    pub event: String,
    /// Where it stands.
    pub state: DeliveryState,
    /// Attempts made so far.
    pub attempts: i64,
    /// When the next attempt is due, while pending.
    #[schema(value_type = Option<String>)]
    pub next_attempt_at: Option<Timestamp>,
    /// The last attempt's HTTP status, when the receiver answered.
    pub last_status: Option<i64>,
    /// Why the last attempt failed, when it did.
    pub last_error: Option<String>,
    /// The body sent, as JSON.
    #[schema(value_type = Object)]
    pub payload: serde_json::Value,
    /// When the event happened (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// When a receiver answered 2xx.
    #[schema(value_type = Option<String>)]
    pub delivered_at: Option<Timestamp>,
}

impl From<Delivery> for DeliveryView {
    fn from(delivery: Delivery) -> Self {
        Self {
            payload: serde_json::from_str(&delivery.payload).unwrap_or_default(),
            id: delivery.id,
            webhook_id: delivery.webhook_id,
            event: delivery.event,
            state: delivery.state,
            attempts: delivery.attempts,
            next_attempt_at: delivery.next_attempt_at,
            last_status: delivery.last_status,
            last_error: delivery.last_error,
            created_at: delivery.created_at,
            delivered_at: delivery.delivered_at,
        }
    }
}

/// Registers a webhook: the account's events are POSTed to it from now on.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/webhooks",
    params(("account" = String, Path, description = "The account")),
    request_body = WebhookCreate,
    responses(
        (status = 201, body = Envelope<WebhookView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "webhooks"
)]
pub(super) async fn create_webhook(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Json(create): Json<WebhookCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<WebhookView>>), Problem> {
    caller.account(&account)?;
    member_only(&caller, "webhooks")?;
    let webhook = app
        .webhooks
        .create(&account, &create.url, &create.secret)
        .await?;
    Ok((StatusCode::CREATED, Envelope::of(webhook.into())))
}

/// The account's webhooks, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/webhooks",
    params(("account" = String, Path, description = "The account")),
    responses(
        (status = 200, body = Envelope<Vec<WebhookView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "webhooks"
)]
pub(super) async fn list_webhooks(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
) -> Result<axum::Json<Envelope<Vec<WebhookView>>>, Problem> {
    caller.account(&account)?;
    let webhooks = app.webhooks.list(&account).await?;
    Ok(Envelope::of(webhooks.into_iter().map(Into::into).collect()))
}

/// Removes a webhook with its delivery log.
#[utoipa::path(
    delete,
    path = "/v1/accounts/{account}/webhooks/{webhook}",
    params(
        ("account" = String, Path, description = "The account"),
        ("webhook" = String, Path, description = "The webhook"),
    ),
    responses(
        (status = 204, description = "Removed"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "webhooks"
)]
pub(super) async fn delete_webhook(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, webhook)): Path<(AccountId, WebhookId)>,
) -> Result<StatusCode, Problem> {
    caller.account(&account)?;
    member_only(&caller, "webhooks")?;
    app.webhooks.delete(&account, &webhook).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The webhook's deliveries, newest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/webhooks/{webhook}/deliveries",
    params(
        ("account" = String, Path, description = "The account"),
        ("webhook" = String, Path, description = "The webhook"),
        PageParams,
    ),
    responses(
        (status = 200, body = Envelope<Vec<DeliveryView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "webhooks"
)]
pub(super) async fn list_deliveries(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, webhook)): Path<(AccountId, WebhookId)>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<DeliveryView>>>, Problem> {
    caller.account(&account)?;
    let deliveries = app
        .webhooks
        .deliveries(&account, &webhook, page.cursor()?, page.limit()?)
        .await?;
    Ok(Envelope::page(
        deliveries.items.into_iter().map(Into::into).collect(),
        deliveries.next_cursor,
    ))
}

/// Sends a delivery's event again, as a new delivery with the same body.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/webhooks/{webhook}/deliveries/{delivery}/redeliver",
    params(
        ("account" = String, Path, description = "The account"),
        ("webhook" = String, Path, description = "The webhook"),
        ("delivery" = String, Path, description = "The delivery to send again"),
    ),
    responses(
        (status = 202, body = Envelope<DeliveryView>, description = "Queued"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 403, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "webhooks"
)]
pub(super) async fn redeliver(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, webhook, delivery)): Path<(AccountId, WebhookId, String)>,
) -> Result<(StatusCode, axum::Json<Envelope<DeliveryView>>), Problem> {
    caller.account(&account)?;
    member_only(&caller, "webhooks")?;
    let queued = app
        .webhooks
        .redeliver(&account, &webhook, &delivery)
        .await?;
    Ok((StatusCode::ACCEPTED, Envelope::of(queued.into())))
}
