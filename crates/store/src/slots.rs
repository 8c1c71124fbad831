//! Turn slots per account, across nodes: the per-account cap on turns at
//! once. A node holds a slot for each session or code task of the account
//! running a turn there; its heartbeat keeps them, so a dead node's slots
//! run out like its leases.

use cinch_base::timestamp::Timestamp;
use std::time::Duration;

use super::{AccountId, Result, Store, on_pool};

impl Store {
    /// Takes a slot of `account_id` for `holder` on `node` until `ttl` from
    /// now, unless the account's unexpired slots on every node number `cap`
    /// already; a holder that has one keeps it. Whether it holds one now.
    /// The account's row is locked meanwhile, so two nodes taking the last
    /// slot at once cannot both have it.
    pub async fn take_turn_slot(
        &self,
        account_id: &AccountId,
        holder: &str,
        node: &str,
        cap: usize,
        ttl: Duration,
    ) -> Result<bool> {
        let dialect = self.dialect();
        let at = Timestamp::now();
        let until = Timestamp::now() + ttl;
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_with(dialect.begin_write).await?;
            sqlx::query(&format!(
                "SELECT id FROM accounts WHERE id = $1{}",
                dialect.for_update
            ))
            .bind(account_id)
            .fetch_optional(&mut *transaction)
            .await?;
            let (held,): (i64,) = sqlx::query_as(
                "SELECT COUNT(*) FROM turn_slots WHERE account_id = $1 AND holder <> $2 \
                 AND expires_at > $3",
            )
            .bind(account_id)
            .bind(holder)
            .bind(at)
            .fetch_one(&mut *transaction)
            .await?;
            if held as usize >= cap {
                transaction.rollback().await?;
                return Ok(false);
            }
            sqlx::query(
                "INSERT INTO turn_slots (holder, account_id, node_id, expires_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (holder) DO UPDATE SET \
                 account_id = excluded.account_id, node_id = excluded.node_id, \
                 expires_at = excluded.expires_at",
            )
            .bind(holder)
            .bind(account_id)
            .bind(node)
            .bind(until)
            .execute(&mut *transaction)
            .await?;
            transaction.commit().await?;
            Ok(true)
        })
    }

    /// Gives `holder`'s slot back.
    pub async fn release_turn_slot(&self, holder: &str) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "DELETE FROM turn_slots WHERE holder = $1"
        )
        .bind(holder)
        .execute(pool)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// Keeps `node`'s slots of `holders` until `ttl` from now. The node's
    /// other slots are left to run out: one whose release failed, or one of
    /// a turn from before a restart.
    pub async fn renew_turn_slots(
        &self,
        node: &str,
        holders: &[String],
        ttl: Duration,
    ) -> Result<()> {
        let until = Timestamp::now() + ttl;
        for holder in holders {
            on_pool!(self, |pool| sqlx::query(
                "UPDATE turn_slots SET expires_at = $3 WHERE holder = $1 AND node_id = $2"
            )
            .bind(holder)
            .bind(node)
            .bind(until)
            .execute(pool)
            .await
            .map(|_| ()))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_store;

    #[tokio::test]
    async fn an_accounts_slots_are_capped_across_nodes_and_run_out_with_their_node() {
        let (store, _dir) = test_store().await;
        let (account, _) = store.create_account("acme").await.unwrap();
        let account = account.id;
        {
            let ttl = Duration::from_secs(30);
            assert!(
                store
                    .take_turn_slot(&account, "ses_a", "n1", 2, ttl)
                    .await
                    .unwrap()
            );
            assert!(
                store
                    .take_turn_slot(&account, "ses_b", "n2", 2, ttl)
                    .await
                    .unwrap()
            );
            assert!(
                !store
                    .take_turn_slot(&account, "ses_c", "n1", 2, ttl)
                    .await
                    .unwrap(),
                "a third turn of the account waits"
            );
            assert!(
                store
                    .take_turn_slot(&account, "ses_a", "n1", 2, ttl)
                    .await
                    .unwrap(),
                "a holder keeps its slot"
            );
            store.release_turn_slot("ses_a").await.unwrap();
            assert!(
                store
                    .take_turn_slot(&account, "ses_c", "n1", 2, ttl)
                    .await
                    .unwrap()
            );
            // n2 died: its slot is not renewed and runs out; n1's is renewed.
            let short = Duration::from_millis(300);
            store
                .renew_turn_slots("n1", &["ses_c".to_owned()], ttl)
                .await
                .unwrap();
            store
                .renew_turn_slots("n2", &["ses_b".to_owned()], short)
                .await
                .unwrap();
            assert!(
                !store
                    .take_turn_slot(&account, "ses_d", "n1", 2, ttl)
                    .await
                    .unwrap()
            );
            tokio::time::sleep(short * 2).await;
            assert!(
                store
                    .take_turn_slot(&account, "ses_d", "n1", 2, ttl)
                    .await
                    .unwrap(),
                "a slot its node no longer renews runs out"
            );
            assert!(
                !store
                    .take_turn_slot(&account, "ses_e", "n1", 2, ttl)
                    .await
                    .unwrap()
            );
            let (other, _) = store.create_account("other").await.unwrap();
            assert!(
                store
                    .take_turn_slot(&other.id, "ses_f", "n1", 2, ttl)
                    .await
                    .unwrap(),
                "another account has slots of its own"
            );
        }
    }
}
