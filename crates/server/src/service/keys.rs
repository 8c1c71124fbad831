//! Idempotency keys: a POST sent again with the same key gets the first
//! answer. The HTTP layer decides what a key's state means for a request;
//! this service only keeps the keys.

use super::ServiceError;
use cinch_store::{AccountId, KeyState, Store};

/// The idempotency-keys service.
#[derive(Clone)]
pub(crate) struct Keys {
    store: Store,
}

impl Keys {
    /// Keys kept in `store`.
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }

    /// Claims `key` for a request with `fingerprint`, or tells what it already holds.
    pub(crate) async fn claim(
        &self,
        account_id: &AccountId,
        key: &str,
        fingerprint: &str,
    ) -> Result<KeyState, ServiceError> {
        Ok(self.store.claim_key(account_id, key, fingerprint).await?)
    }

    /// Records the answer to the request holding `key`.
    pub(crate) async fn answer(
        &self,
        account_id: &AccountId,
        key: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<(), ServiceError> {
        Ok(self
            .store
            .answer_key(account_id, key, status, content_type, body)
            .await?)
    }

    /// Lets go of `key` without an answer, so that a retry runs again.
    pub(crate) async fn release(
        &self,
        account_id: &AccountId,
        key: &str,
    ) -> Result<(), ServiceError> {
        Ok(self.store.release_key(account_id, key).await?)
    }
}
