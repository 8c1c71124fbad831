//! Accounts: who a token is, the account it belongs to, with its usage,
//! and its members.

use super::ServiceError;
use crate::store::{Account, Member, Page, Principal, Store, UsageTotals};

/// An account and the tokens and cost of all its turns.
#[derive(Debug)]
pub struct AccountWithUsage {
    /// The account.
    pub account: Account,
    /// Its usage to date.
    pub usage: UsageTotals,
}

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

    /// Who `token` is; none when it is not a valid token.
    pub async fn authenticate(&self, token: &str) -> Result<Option<Principal>, ServiceError> {
        Ok(self.store.authenticate(token).await?)
    }

    /// The account `id` with its usage to date; none when it is gone.
    pub async fn with_usage(&self, id: &str) -> Result<Option<AccountWithUsage>, ServiceError> {
        let Some(account) = self.store.account(id).await? else {
            return Ok(None);
        };
        let (usage, _) = self.store.usage_report(id, None, None, None).await?;
        Ok(Some(AccountWithUsage { account, usage }))
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
