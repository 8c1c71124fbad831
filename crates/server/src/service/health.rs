//! The server's health as operators probe it: whether the database
//! answers, the room left on the disk of cinch's home, and how many
//! sessions wait for capacity.

use std::sync::Arc;
use std::time::Duration;

use super::ServiceError;
use cinch_engine::disk::{DiskState, Space};
use cinch_engine::engine::Engine;
use cinch_engine::sandbox::Mode;
use cinch_store::{SessionStatus, Store};

/// How long the database has to answer before the server counts as down.
const DATABASE_ANSWER: Duration = Duration::from_secs(2);

/// The health-probes service.
#[derive(Clone)]
pub(crate) struct Probes {
    store: Store,
    engine: Arc<Engine>,
    /// Free bytes under which the home's disk counts as low.
    disk_low_below: u64,
}

impl Probes {
    /// Probes of `store` and of how `engine` runs turns.
    pub(crate) fn new(store: Store, engine: Arc<Engine>) -> Self {
        Self {
            store,
            engine,
            disk_low_below: cinch_engine::disk::DEFAULT_LOW_BELOW_BYTES,
        }
    }

    /// These probes counting the home's disk low under `bytes` free.
    pub(crate) fn with_disk_low_below(mut self, bytes: u64) -> Self {
        self.disk_low_below = bytes;
        self
    }

    /// The room on the disk of cinch's home, and how it stands; also set as
    /// the metrics' gauges. A disk that cannot be measured is logged.
    pub(crate) fn disk(&self) -> (Option<Space>, DiskState) {
        match Space::of(self.engine.home().root()) {
            Ok(space) => {
                crate::metrics::disk_space(&space);
                (Some(space), space.state(self.disk_low_below))
            }
            Err(error) => {
                tracing::error!(
                    "health: measuring the room in {}: {error}",
                    self.engine.home().root().display()
                );
                (None, DiskState::Unknown)
            }
        }
    }

    /// Whether turns run in the sandbox.
    pub(crate) fn sandbox_enforced(&self) -> bool {
        self.engine.sandbox() == Mode::Enforced
    }

    /// Whether the database takes (and lets go of) its write lock within
    /// two seconds; why not is logged.
    pub(crate) async fn database_answers(&self) -> bool {
        let store = self.store.clone();
        // The probe runs to its end on its own, so a connection is never given
        // back to the pool in the middle of it; the answer waits only so long.
        let probe = tokio::spawn(async move { store.ping().await });
        match tokio::time::timeout(DATABASE_ANSWER, probe).await {
            Ok(Ok(Ok(()))) => true,
            Ok(Ok(Err(error))) => {
                tracing::error!("health: the database refused its probe: {error}");
                false
            }
            Ok(Err(error)) => {
                tracing::error!("health: the database probe failed: {error}");
                false
            }
            Err(_) => {
                tracing::error!(
                    "health: the database did not answer within {} s",
                    DATABASE_ANSWER.as_secs()
                );
                false
            }
        }
    }

    /// How many sessions wait for a turn slot.
    pub(crate) async fn sessions_waiting(&self) -> Result<usize, ServiceError> {
        Ok(self
            .store
            .sessions_in(&[SessionStatus::Waiting])
            .await?
            .len())
    }
}
