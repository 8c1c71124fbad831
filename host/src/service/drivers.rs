//! What turns saw of their drivers: the event types a driver did not know.

use super::ServiceError;
use crate::store::{SeenUnknown, Store};

/// The drivers service.
#[derive(Clone)]
pub struct Drivers {
    store: Store,
}

impl Drivers {
    /// Drivers' findings kept in `store`.
    pub fn new(store: Store) -> Self {
        Self { store }
    }

    /// Every event type turns met that their driver did not know, by
    /// harness and CLI version, across all accounts.
    pub async fn unknown_events(&self) -> Result<Vec<SeenUnknown>, ServiceError> {
        Ok(self.store.unknown_events().await?)
    }
}
