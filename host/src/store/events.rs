//! Runs' live events, kept so that a stream resumes across restarts.

use super::{Result, Store, now, on_pool};

/// One stored event of a run.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct StoredEvent {
    /// Its number in the run, from 1.
    pub seq: i64,
    /// Its SSE event name.
    pub name: String,
    /// Its data, JSON.
    pub data: String,
}

/// An event to store.
#[derive(Debug, Clone)]
pub struct NewEvent<'a> {
    /// Its run's account.
    pub account_id: &'a str,
    /// Its run.
    pub run_id: &'a str,
    /// Its number in the run.
    pub seq: i64,
    /// Its SSE event name.
    pub name: &'a str,
    /// Its data, JSON.
    pub data: String,
}

impl Store {
    /// Appends `events`, all or none.
    pub async fn append_events(&self, events: &[NewEvent<'_>]) -> Result<()> {
        let created_at = now();
        on_pool!(self, |pool| {
            let mut transaction = pool.begin().await?;
            for event in events {
                sqlx::query(
                    "INSERT INTO run_events (account_id, run_id, seq, name, data, created_at) \
                 VALUES ($1, $2, $3, $4, $5, $6)",
                )
                .bind(event.account_id)
                .bind(event.run_id)
                .bind(event.seq)
                .bind(event.name)
                .bind(&event.data)
                .bind(&created_at)
                .execute(&mut *transaction)
                .await?;
            }
            transaction.commit().await?;
            Ok(())
        })
    }

    /// Every stored event of the account's run, in order.
    pub async fn events(&self, account_id: &str, run_id: &str) -> Result<Vec<StoredEvent>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT seq, name, data FROM run_events WHERE account_id = $1 AND run_id = $2 \
             ORDER BY seq",
        )
        .bind(account_id)
        .bind(run_id)
        .fetch_all(pool)
        .await)?)
    }
}
