//! Runs' live events, kept so that a stream resumes across restarts.

use super::{Result, Store, now};

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

impl Store {
    /// Appends event `seq` of the account's run.
    pub async fn append_event(
        &self,
        account_id: &str,
        run_id: &str,
        seq: i64,
        name: &str,
        data: &str,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO run_events (account_id, run_id, seq, name, data, created_at) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(account_id)
        .bind(run_id)
        .bind(seq)
        .bind(name)
        .bind(data)
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    /// Every stored event of the account's run, in order.
    pub async fn events(&self, account_id: &str, run_id: &str) -> Result<Vec<StoredEvent>> {
        Ok(sqlx::query_as(
            "SELECT seq, name, data FROM run_events WHERE account_id = $1 AND run_id = $2 \
             ORDER BY seq",
        )
        .bind(account_id)
        .bind(run_id)
        .fetch_all(&self.pool)
        .await?)
    }
}
