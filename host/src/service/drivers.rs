//! The drivers and harnesses the engine has, and what turns saw of their
//! drivers: the event types a driver did not know.

use std::sync::Arc;

use super::ServiceError;
use crate::drivers::Registry;
use crate::engine::Engine;
use crate::store::{SeenUnknown, Store};

/// The drivers service.
#[derive(Clone)]
pub struct Drivers {
    store: Store,
    engine: Arc<Engine>,
}

impl Drivers {
    /// The drivers of `engine`, their findings kept in `store`.
    pub fn new(store: Store, engine: Arc<Engine>) -> Self {
        Self { store, engine }
    }

    /// The drivers and harnesses turns run on now.
    pub fn registry(&self) -> Arc<Registry> {
        self.engine.registry()
    }

    /// Every event type turns met that their driver did not know, by
    /// harness and CLI version, across all accounts.
    pub async fn unknown_events(&self) -> Result<Vec<SeenUnknown>, ServiceError> {
        Ok(self.store.unknown_events().await?)
    }
}
