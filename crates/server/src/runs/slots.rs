//! Turn slots: the cap on turns running at once on this node, and on one
//! account's turns on every node together. Sessions and code tasks take a
//! slot before a turn starts and give it back once it ended.

use std::collections::HashSet;
use std::sync::Mutex;
use std::time::Duration;

use cinch_base::sync::lock;

use cinch_store::{AccountId, Store, StoreError};

/// Which cap left no slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Full {
    /// This node's, `--max-turns`.
    Node,
    /// The account's on all nodes, `--max-turns-per-account`.
    Account,
}

/// This node's turn slots, each held by a session or a code task's key.
pub struct Slots {
    store: Store,
    node_id: String,
    max_turns: usize,
    max_turns_per_account: Option<usize>,
    lease_ttl: Duration,
    held: Mutex<HashSet<String>>,
}

impl Slots {
    /// At most `max_turns` slots on node `node_id`, and at most
    /// `max_turns_per_account` of one account's on every node (counted in
    /// `store`, each lasting `lease_ttl` unless renewed).
    pub fn new(
        store: Store,
        node_id: String,
        max_turns: usize,
        max_turns_per_account: Option<usize>,
        lease_ttl: Duration,
    ) -> Self {
        Self {
            store,
            node_id,
            max_turns,
            max_turns_per_account,
            lease_ttl,
            held: Mutex::default(),
        }
    }

    /// This node's cap on turns at once.
    pub fn max_turns(&self) -> usize {
        self.max_turns
    }

    /// The cap on one account's turns at once on every node, if any.
    pub fn max_turns_per_account(&self) -> Option<usize> {
        self.max_turns_per_account
    }

    /// Takes a slot of this node and one of the account's for `holder`;
    /// which cap is full when either is (nothing is held then).
    pub async fn take(
        &self,
        account_id: &AccountId,
        holder: &str,
    ) -> Result<Result<(), Full>, StoreError> {
        if !self.take_here(holder) {
            return Ok(Err(Full::Node));
        }
        match self.take_for_account(account_id, holder).await {
            Ok(true) => Ok(Ok(())),
            Ok(false) => {
                self.release(holder);
                Ok(Err(Full::Account))
            }
            Err(error) => {
                self.release(holder);
                Err(error)
            }
        }
    }

    /// Takes a slot of this node for `holder`: false when `max_turns` turns
    /// already hold one.
    fn take_here(&self, holder: &str) -> bool {
        let mut held = lock(&self.held);
        if !has_slot(held.len(), self.max_turns, held.contains(holder)) {
            return false;
        }
        held.insert(holder.to_owned());
        true
    }

    /// Takes one of the account's slots (counted on every node) for
    /// `holder`: false when the account runs `max_turns_per_account` turns
    /// already. Always true without that cap.
    async fn take_for_account(
        &self,
        account_id: &AccountId,
        holder: &str,
    ) -> Result<bool, StoreError> {
        let Some(cap) = self.max_turns_per_account else {
            return Ok(true);
        };
        self.store
            .take_turn_slot(account_id, holder, &self.node_id, cap, self.lease_ttl)
            .await
    }

    /// Holds a slot of this node for a turn that runs already (picked up
    /// after a restart), whatever the cap.
    pub fn hold(&self, holder: &str) {
        lock(&self.held).insert(holder.to_owned());
    }

    /// Gives back the slots `holder` holds.
    pub fn release(&self, holder: &str) {
        lock(&self.held).remove(holder);
        if self.max_turns_per_account.is_some()
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // Not renewed any more either: a release that fails runs out.
            let store = self.store.clone();
            let holder = holder.to_owned();
            runtime.spawn(async move {
                if let Err(error) = store.release_turn_slot(&holder).await {
                    tracing::warn!(%holder, "giving back an account's turn slot: {error}");
                }
            });
        }
    }

    /// How many slots of this node are held.
    pub fn held(&self) -> usize {
        lock(&self.held).len()
    }

    /// How many more turns this node may start now.
    pub fn free(&self) -> usize {
        self.max_turns.saturating_sub(self.held())
    }

    /// Renews the account slots this node holds, so that they do not run
    /// out while their turns run.
    pub async fn renew(&self) {
        if self.max_turns_per_account.is_none() {
            return;
        }
        let holders: Vec<String> = lock(&self.held).iter().cloned().collect();
        if let Err(error) = self
            .store
            .renew_turn_slots(&self.node_id, &holders, self.lease_ttl)
            .await
        {
            tracing::error!("renewing the accounts' turn slots: {error}");
        }
    }
}

/// Whether a turn slot is there for a holder, with `held` of `cap` slots
/// taken and `holds_one` when it has one already (asking again changes
/// nothing).
fn has_slot(held: usize, cap: usize, holds_one: bool) -> bool {
    holds_one || held < cap
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_is_there_below_the_cap_or_for_its_holder() {
        assert!(has_slot(0, 1, false));
        assert!(has_slot(3, 4, false));
        assert!(!has_slot(4, 4, false), "at the cap another waits");
        assert!(!has_slot(5, 4, false), "past it (the cap was lowered) too");
        assert!(has_slot(4, 4, true), "a holder keeps its slot");
        assert!(!has_slot(0, 0, false));
    }
}
