//! Idempotency keys: a POST sent again with the same key gets the first answer.

use super::{AccountId, Result, Store, is_unique_violation, on_pool};
use cinch_base::timestamp::Timestamp;

/// What a key says about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// The key is new: it is now held for this request.
    Claimed,
    /// The first request with this key has answered; here is its answer.
    Answered {
        /// Its status code.
        status: u16,
        /// Its content type.
        content_type: Option<String>,
        /// Its body.
        body: Vec<u8>,
    },
    /// The first request with this key has no answer yet: it is still
    /// running, or the server stopped while answering it.
    Unanswered,
    /// The key was used with another request.
    Mismatch,
}

/// Keys are kept this long before a sweep may forget them.
pub(crate) const KEY_LIFETIME_HOURS: i64 = 48;

impl Store {
    /// Claims `key` for a request with `fingerprint`, or tells what it already holds.
    pub async fn claim_key(
        &self,
        account_id: &AccountId,
        key: &str,
        fingerprint: &str,
    ) -> Result<KeyState> {
        let inserted = on_pool!(self, |pool| sqlx::query(
            "INSERT INTO idempotency_keys (account_id, key, fingerprint, created_at) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(account_id)
        .bind(key)
        .bind(fingerprint)
        .bind(Timestamp::now())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()));
        match inserted {
            Ok(_) => return Ok(KeyState::Claimed),
            Err(error) if is_unique_violation(&error) => {}
            Err(error) => return Err(error.into()),
        }
        let (stored, status, content_type, body): (
            String,
            Option<i64>,
            Option<String>,
            Option<Vec<u8>>,
        ) = on_pool!(self, |pool| sqlx::query_as(
            "SELECT fingerprint, status, content_type, body FROM idempotency_keys \
                 WHERE account_id = $1 AND key = $2",
        )
        .bind(account_id)
        .bind(key)
        .fetch_one(pool)
        .await)?;
        Ok(match status {
            _ if stored != fingerprint => KeyState::Mismatch,
            None => KeyState::Unanswered,
            Some(status) => KeyState::Answered {
                status: status as u16,
                content_type,
                body: body.unwrap_or_default(),
            },
        })
    }

    /// Records the answer to the request holding `key`.
    pub async fn answer_key(
        &self,
        account_id: &AccountId,
        key: &str,
        status: u16,
        content_type: Option<&str>,
        body: &[u8],
    ) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "UPDATE idempotency_keys SET status = $3, content_type = $4, body = $5 \
             WHERE account_id = $1 AND key = $2",
        )
        .bind(account_id)
        .bind(key)
        .bind(i64::from(status))
        .bind(content_type)
        .bind(body)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Lets go of `key` without an answer (the request failed on the
    /// server's side), so that a retry runs again.
    pub async fn release_key(&self, account_id: &AccountId, key: &str) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2"
        )
        .bind(account_id)
        .bind(key)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// Forgets keys older than [`KEY_LIFETIME_HOURS`].
    pub async fn sweep_keys(&self) -> Result<u64> {
        let cutoff =
            Timestamp::now() - std::time::Duration::from_secs(KEY_LIFETIME_HOURS as u64 * 60 * 60);
        let done = on_pool!(self, |pool| sqlx::query(
            "DELETE FROM idempotency_keys WHERE created_at < $1"
        )
        .bind(cutoff)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(done)
    }
}
