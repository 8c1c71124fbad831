//! The nodes sharing the database and where each answers.

use super::{Result, Store, on_pool};
use cinch_base::timestamp::Timestamp;

impl Store {
    /// Records that `node` answers at `url` (a node starting).
    pub async fn announce_node(&self, node: &str, url: &str) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "INSERT INTO nodes (node_id, url, seen_at) VALUES ($1, $2, $3) \
             ON CONFLICT (node_id) DO UPDATE SET url = excluded.url, seen_at = excluded.seen_at"
        )
        .bind(node)
        .bind(url)
        .bind(Timestamp::now())
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// Where `node` answers, if it said.
    pub async fn node_url(&self, node: &str) -> Result<Option<String>> {
        Ok(on_pool!(self, |pool| sqlx::query_scalar(
            "SELECT url FROM nodes WHERE node_id = $1"
        )
        .bind(node)
        .fetch_optional(pool)
        .await)?)
    }
}
