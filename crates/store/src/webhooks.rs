//! Webhooks and their deliveries. A webhook's signing secret is one of the
//! sealed secrets (see [`super::secrets`]), owned by the webhook's id.

use cinch_base::timestamp::Timestamp;
use serde::Serialize;

use super::secrets::{forget_sealed, open_all, put_sealed, read_sealed};
use super::{
    AccountId, Backend, Page, PerBackend, Result, Store, StoreError, WebhookId, new_id, on_pool,
};

/// The name of a webhook's signing secret among its secrets.
const SECRET_KEY: &str = "signing_secret";

super::rows::row_struct! {
    /// Where an account's events are sent.
    #[derive(Debug, Clone)]
    pub struct Webhook {
        /// Its id.
        pub id: WebhookId,
        /// The account whose events it gets.
        pub account_id: AccountId,
        /// The URL events are POSTed to.
        pub url: String,
        /// When it was made (RFC 3339).
        pub created_at: Timestamp,
    }
}

/// Where a delivery stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DeliveryState {
    /// Not yet answered 2xx; another attempt is due.
    Pending,
    /// Answered 2xx.
    Delivered,
    /// Never answered 2xx within a day of attempts.
    Failed,
}

impl DeliveryState {
    pub(super) const ALL: [Self; 3] = [Self::Pending, Self::Delivered, Self::Failed];

    /// Its name as stored.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Delivered => "delivered",
            Self::Failed => "failed",
        }
    }
}

super::text_column!(DeliveryState);

super::rows::row_struct! {
    /// One event sent (or to be sent) to one webhook.
    #[derive(Debug, Clone)]
    pub struct Delivery {
        /// Its id.
        pub id: String,
        /// The webhook.
        pub webhook_id: WebhookId,
        /// The account.
        pub account_id: AccountId,
        /// The event's type, e.g. `turn.ended`.
        pub event: String,
        /// The body sent, exactly.
        pub payload: String,
        /// Where it stands.
        pub state: DeliveryState,
        /// Attempts made.
        pub attempts: i64,
        /// When the next attempt is due, while pending.
        pub next_attempt_at: Option<Timestamp>,
        /// The HTTP status of the last attempt, when one answered.
        pub last_status: Option<i64>,
        /// Why the last attempt failed, when it did.
        pub last_error: Option<String>,
        /// When the event happened (RFC 3339).
        pub created_at: Timestamp,
        /// When it was answered 2xx.
        pub delivered_at: Option<Timestamp>,
    }
}

/// A delivery that is due, with where it goes.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    /// The delivery.
    pub delivery: Delivery,
    /// Its webhook's URL.
    pub url: String,
}

/// How one attempt went.
#[derive(Debug, Clone)]
pub enum Attempt {
    /// Answered 2xx with this status.
    Delivered(u16),
    /// Not delivered; try again at `next` (RFC 3339).
    Retry {
        /// The status, when the receiver answered.
        status: Option<u16>,
        /// What went wrong.
        error: String,
        /// When to try again.
        next: Timestamp,
    },
    /// Not delivered, and no more attempts.
    GaveUp {
        /// The status, when the receiver answered.
        status: Option<u16>,
        /// What went wrong.
        error: String,
    },
}

/// The account's (`$1`) webhooks, oldest first.
const ACCOUNT_WEBHOOKS: PerBackend<&str> = PerBackend::same(
    "SELECT id, account_id, url, created_at FROM webhooks WHERE account_id = $1 ORDER BY id",
);

const DELIVERY_COLUMNS: &str = "id, webhook_id, account_id, event, payload, state, attempts, \
     next_attempt_at, last_status, last_error, created_at, delivered_at";

impl Store {
    /// Makes a webhook of `account_id` POSTing to `url`, signed with `secret`.
    pub async fn create_webhook(
        &self,
        account_id: &AccountId,
        url: &str,
        secret: &str,
    ) -> Result<Webhook> {
        let webhook = Webhook {
            id: WebhookId::generate()?,
            account_id: account_id.to_owned(),
            url: url.to_owned(),
            created_at: Timestamp::now(),
        };
        let unlocked = self.unlocked()?;
        let sealed = unlocked.seal_all(
            webhook.id.as_str(),
            [(&SECRET_KEY.to_owned(), &secret.to_owned())],
        )?;
        let dialect = self.dialect();
        on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            sqlx::query(
                "INSERT INTO webhooks (id, account_id, url, created_at) VALUES ($1, $2, $3, $4)",
            )
            .bind(&webhook.id)
            .bind(&webhook.account_id)
            .bind(&webhook.url)
            .bind(webhook.created_at)
            .execute(&mut *tx)
            .await?;
            put_sealed!(tx, dialect, unlocked, &webhook.id, &sealed);
            tx.commit().await?;
        });
        self.known_webhooks.forget(account_id);
        Ok(webhook)
    }

    /// The account's webhooks, oldest first.
    pub async fn webhooks(&self, account_id: &AccountId) -> Result<Vec<Webhook>> {
        // Read as each session of the account starts.
        self.read_rows(&ACCOUNT_WEBHOOKS, &[account_id.as_str().into()])
            .await
    }

    /// The account's webhook `id`.
    pub async fn webhook(&self, account_id: &AccountId, id: &WebhookId) -> Result<Option<Webhook>> {
        Ok(on_pool!(self, |pool| {
            sqlx::query_as(
            "SELECT id, account_id, url, created_at FROM webhooks WHERE account_id = $1 AND id = $2",
        )
        .bind(account_id)
        .bind(id)
        .fetch_optional(pool)
        .await
        })?)
    }

    /// Deletes the account's webhook `id` with its deliveries and secret;
    /// whether there was one.
    pub async fn delete_webhook(&self, account_id: &AccountId, id: &WebhookId) -> Result<bool> {
        let done = on_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query("DELETE FROM webhook_deliveries WHERE account_id = $1 AND webhook_id = $2")
                .bind(account_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            let done = sqlx::query("DELETE FROM webhooks WHERE account_id = $1 AND id = $2")
                .bind(account_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() > 0 {
                forget_sealed!(tx, id);
            }
            tx.commit().await?;
            done.rows_affected()
        });
        self.known_webhooks.forget(account_id);
        Ok(done > 0)
    }

    /// The webhook's signing secret.
    pub async fn webhook_secret(&self, webhook_id: &WebhookId) -> Result<String> {
        let sealed = on_pool!(self, |pool| read_sealed!(pool, webhook_id))?;
        open_all(self.secrets.as_deref(), webhook_id.as_str(), sealed)?
            .remove(SECRET_KEY)
            .ok_or_else(|| {
                StoreError::Missing(format!("webhook {webhook_id} has no signing secret"))
            })
    }

    /// Queues the payload `payload` makes (an event of type `event`) for
    /// every webhook of the account; how many deliveries were queued. The
    /// payload is made only for an account with webhooks: most have none,
    /// and every session's status change comes here.
    pub async fn enqueue_deliveries(
        &self,
        account_id: &AccountId,
        event: &str,
        payload: impl FnOnce() -> String,
    ) -> Result<usize> {
        let webhooks = self.webhooks_to_notify(account_id).await?;
        if webhooks.is_empty() {
            return Ok(0);
        }
        let payload = payload();
        let created_at = Timestamp::now();
        for webhook in &webhooks {
            self.insert_delivery(&webhook.id, account_id, event, &payload, created_at)
                .await?;
        }
        Ok(webhooks.len())
    }

    /// The account's webhooks, as [`Store::webhooks`] reads them; on SQLite
    /// as last read unless one was made or deleted since (see
    /// [`super::known_webhooks`]).
    async fn webhooks_to_notify(&self, account_id: &AccountId) -> Result<Vec<Webhook>> {
        if self.backend() != Backend::Sqlite {
            return self.webhooks(account_id).await;
        }
        match self.known_webhooks.get(account_id) {
            Ok(webhooks) => Ok(webhooks),
            Err(generation) => {
                let webhooks = self.webhooks(account_id).await?;
                self.known_webhooks.keep(account_id, generation, &webhooks);
                Ok(webhooks)
            }
        }
    }

    async fn insert_delivery(
        &self,
        webhook_id: &WebhookId,
        account_id: &AccountId,
        event: &str,
        payload: &str,
        created_at: Timestamp,
    ) -> Result<Delivery> {
        let id = new_id("dlv")?;
        on_pool!(self, |pool| sqlx::query(
            "INSERT INTO webhook_deliveries (id, webhook_id, account_id, event, payload, state, \
             attempts, next_attempt_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, 0, $7, $7)",
        )
        .bind(&id)
        .bind(webhook_id)
        .bind(account_id)
        .bind(event)
        .bind(payload)
        .bind(DeliveryState::Pending)
        .bind(created_at)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        self.delivery_by_id(&id).await
    }

    async fn delivery_by_id(&self, id: &str) -> Result<Delivery> {
        Ok(on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1"
        ))
        .bind(id)
        .fetch_one(pool)
        .await)?)
    }

    /// Pending deliveries due at `at` (RFC 3339), oldest first, at most `limit`.
    pub async fn due_deliveries(&self, at: Timestamp, limit: u32) -> Result<Vec<DueDelivery>> {
        let rows: Vec<Delivery> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
             WHERE state = $1 AND next_attempt_at <= $2 ORDER BY next_attempt_at, id LIMIT $3"
        ))
        .bind(DeliveryState::Pending)
        .bind(at)
        .bind(i64::from(limit))
        .fetch_all(pool)
        .await)?;
        let mut due = Vec::with_capacity(rows.len());
        for delivery in rows {
            let url: Option<(String,)> = on_pool!(self, |pool| sqlx::query_as(
                "SELECT url FROM webhooks WHERE id = $1"
            )
            .bind(&delivery.webhook_id)
            .fetch_optional(pool)
            .await)?;
            if let Some((url,)) = url {
                due.push(DueDelivery { delivery, url });
            }
        }
        Ok(due)
    }

    /// Records how an attempt at delivery `id` went.
    pub async fn record_attempt(&self, id: &str, attempt: &Attempt) -> Result<()> {
        let (state, status, error, next, delivered_at) = match attempt {
            Attempt::Delivered(status) => (
                DeliveryState::Delivered,
                Some(*status),
                None,
                None,
                Some(Timestamp::now()),
            ),
            Attempt::Retry {
                status,
                error,
                next,
            } => (
                DeliveryState::Pending,
                *status,
                Some(error.clone()),
                Some(*next),
                None,
            ),
            Attempt::GaveUp { status, error } => (
                DeliveryState::Failed,
                *status,
                Some(error.clone()),
                None,
                None,
            ),
        };
        on_pool!(self, |pool| sqlx::query(
            "UPDATE webhook_deliveries SET state = $2, attempts = attempts + 1, \
             last_status = $3, last_error = $4, next_attempt_at = $5, delivered_at = $6 \
             WHERE id = $1",
        )
        .bind(id)
        .bind(state)
        .bind(status.map(i64::from))
        .bind(error)
        .bind(next)
        .bind(delivered_at)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// A page of the webhook's deliveries, newest first, before `cursor`.
    pub async fn deliveries(
        &self,
        account_id: &AccountId,
        webhook_id: &WebhookId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Delivery>> {
        let rows: Vec<Delivery> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
             WHERE account_id = $1 AND webhook_id = $2 AND ($3 = '' OR id < $3) \
             ORDER BY id DESC LIMIT $4"
        ))
        .bind(account_id)
        .bind(webhook_id)
        .bind(cursor.unwrap_or(""))
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?;
        Ok(Page::from_rows(rows, limit, |delivery| &delivery.id))
    }

    /// Queues delivery `id` of the account's webhook again, as a new delivery
    /// of the same event (the same body, so receivers can tell it is one).
    pub async fn redeliver(
        &self,
        account_id: &AccountId,
        webhook_id: &WebhookId,
        id: &str,
    ) -> Result<Option<Delivery>> {
        let original: Option<Delivery> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {DELIVERY_COLUMNS} FROM webhook_deliveries \
             WHERE account_id = $1 AND webhook_id = $2 AND id = $3"
        ))
        .bind(account_id)
        .bind(webhook_id)
        .bind(id)
        .fetch_optional(pool)
        .await)?;
        let Some(original) = original else {
            return Ok(None);
        };
        self.insert_delivery(
            webhook_id,
            account_id,
            &original.event,
            &original.payload,
            Timestamp::now(),
        )
        .await
        .map(Some)
    }
}
