//! Accounts: the one a token belongs to, with its usage, and its members.

use super::ServiceError;
use crate::store::{Account, Member, Page, Store};

/// The accounts service.
#[derive(Clone)]
pub struct Accounts {
    store: Store,
}

impl Accounts {
    /// Accounts kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// The account `id` with its usage to date; none when it is gone.
    pub async fn with_usage(&self, id: &str) -> Result<Option<Account>, ServiceError> {
        let Some(mut account) = self.store.account(id).await? else {
            return Ok(None);
        };
        let (totals, _) = self.store.usage_report(id, None, None, None).await?;
        account.usage = Some(totals);
        Ok(Some(account))
    }

    /// A page of the account's members, oldest first.
    pub async fn members(
        &self,
        account_id: &str,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Member>, ServiceError> {
        Ok(self.store.members(account_id, cursor, limit).await?)
    }
}
