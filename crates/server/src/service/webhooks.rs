//! An account's webhooks and their deliveries: made only for URLs the
//! sender may reach, listed, removed and sent again.

use super::ServiceError;
use crate::webhooks::Webhooks as Sender;
use cinch_store::{AccountId, Delivery, Page, Store, Webhook, WebhookId};

/// The webhooks service.
#[derive(Clone)]
pub(crate) struct Webhooks {
    store: Store,
    sender: Sender,
}

impl Webhooks {
    /// Webhooks kept in `store`, their URLs checked by the `sender` that
    /// delivers to them.
    pub(crate) fn new(store: Store, sender: Sender) -> Self {
        Self { store, sender }
    }

    /// Makes a webhook POSTing to `url`, signed with `secret`.
    pub(crate) async fn create(
        &self,
        account_id: &AccountId,
        url: &str,
        secret: &str,
    ) -> Result<Webhook, ServiceError> {
        self.sender
            .check_url(url)
            .map_err(|error| ServiceError::invalid_field("url", error.to_string()))?;
        let webhook = self.store.create_webhook(account_id, url, secret).await?;
        tracing::info!(webhook = %webhook.id, "webhook created");
        Ok(webhook)
    }

    /// The account's webhooks, oldest first.
    pub(crate) async fn list(&self, account_id: &AccountId) -> Result<Vec<Webhook>, ServiceError> {
        Ok(self.store.webhooks(account_id).await?)
    }

    /// Removes webhook `id` with its delivery log.
    pub(crate) async fn delete(
        &self,
        account_id: &AccountId,
        id: &WebhookId,
    ) -> Result<(), ServiceError> {
        match self.store.delete_webhook(account_id, id).await? {
            true => Ok(()),
            false => Err(ServiceError::NotFound("no such webhook".to_owned())),
        }
    }

    /// A page of webhook `id`'s deliveries, newest first.
    pub(crate) async fn deliveries(
        &self,
        account_id: &AccountId,
        id: &WebhookId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Delivery>, ServiceError> {
        if self.store.webhook(account_id, id).await?.is_none() {
            return Err(ServiceError::NotFound("no such webhook".to_owned()));
        }
        Ok(self.store.deliveries(account_id, id, cursor, limit).await?)
    }

    /// Queues delivery `delivery` of webhook `id` again, as a new delivery
    /// with the same body.
    pub(crate) async fn redeliver(
        &self,
        account_id: &AccountId,
        id: &WebhookId,
        delivery: &str,
    ) -> Result<Delivery, ServiceError> {
        self.store
            .redeliver(account_id, id, delivery)
            .await?
            .ok_or(ServiceError::NotFound(
                "no such delivery of that webhook".to_owned(),
            ))
    }
}
