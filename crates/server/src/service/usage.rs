//! Usage: the tokens and cost of an account's turns over a time range.

use super::ServiceError;
use cinch_base::timestamp::Timestamp;
use cinch_store::{AccountId, Store, UsageGroup, UsageRow, UsageTotals};

/// The usage service.
#[derive(Clone)]
pub(crate) struct Usage {
    store: Store,
}

impl Usage {
    /// Usage kept in `store`.
    pub(crate) fn new(store: Store) -> Self {
        Self { store }
    }

    /// The account's turns started in `[from, to)` (stored time form, each
    /// end open when absent): their totals and, with `group_by`, one row
    /// per group.
    pub(crate) async fn report(
        &self,
        account_id: &AccountId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
        group_by: Option<UsageGroup>,
    ) -> Result<(UsageTotals, Vec<UsageRow>), ServiceError> {
        Ok(self
            .store
            .usage_report(account_id, from, to, group_by)
            .await?)
    }
}
