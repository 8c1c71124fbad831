//! Each account's webhooks as last read, kept on SQLite only: there this
//! process is the database's one writer, so a webhook made or deleted
//! anywhere goes through [`KnownWebhooks::forget`]. Every session's status
//! change looks its account's webhooks up, and most accounts have none.
//! PostgreSQL's nodes share the database: there every lookup reads it.

use std::collections::HashMap;
use std::sync::Mutex;

use super::{AccountId, Webhook};

/// The accounts' webhooks as last read, and a generation that every change
/// bumps, so that a read begun before a change is not kept after it.
#[derive(Default)]
pub(crate) struct KnownWebhooks {
    known: Mutex<(u64, HashMap<AccountId, Vec<Webhook>>)>,
}

impl KnownWebhooks {
    /// The account's webhooks when known; else the generation under which
    /// a read of them may be kept.
    pub(crate) fn get(&self, account_id: &AccountId) -> Result<Vec<Webhook>, u64> {
        let known = cinch_base::sync::lock(&self.known);
        match known.1.get(account_id) {
            Some(webhooks) => Ok(webhooks.clone()),
            None => Err(known.0),
        }
    }

    /// Keeps `webhooks`, read under `generation`, unless a change came since.
    pub(crate) fn keep(&self, account_id: &AccountId, generation: u64, webhooks: &[Webhook]) {
        let mut known = cinch_base::sync::lock(&self.known);
        if known.0 == generation {
            known.1.insert(account_id.clone(), webhooks.to_vec());
        }
    }

    /// Forgets the account's webhooks: one was made or deleted.
    pub(crate) fn forget(&self, account_id: &AccountId) {
        let mut known = cinch_base::sync::lock(&self.known);
        known.0 += 1;
        known.1.remove(account_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_from_before_a_change_is_not_kept() {
        let known = KnownWebhooks::default();
        let account = AccountId::from("acct_1".to_owned());
        let generation = known.get(&account).unwrap_err();
        known.forget(&account);
        known.keep(&account, generation, &[]);
        let generation = known.get(&account).expect_err("the stale read was dropped");
        known.keep(&account, generation, &[]);
        assert!(known.get(&account).expect("kept").is_empty());
        known.forget(&account);
        assert!(known.get(&account).is_err());
    }
}
