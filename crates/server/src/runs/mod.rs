//! Runs: the turns every service starts, below them all. The [`Runner`]
//! starts and follows a turn as one call of a run ([`launch`]), holds the
//! turn slots ([`slots`]), the agents' homes and which local repositories
//! environments may use ([`repository`]); [`turn_env`] is what an agent and
//! its environment give a turn, and [`live`] each run's live events.
//! Sessions and code tasks use it alike; it knows no service.

pub(crate) mod launch;
pub(crate) mod live;
pub(crate) mod repository;
pub(crate) mod slots;
pub(crate) mod turn_env;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use cinch_engine::engine::Engine;
use cinch_engine::home::Home;
use cinch_store::{AccountId, AgentId, Store, StoreError};
use live::Runs;
use slots::Slots;

/// What the runner runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    /// This node's id: whose calls and slots are whose.
    pub node_id: String,
    /// Turns running at once on this node, at most.
    pub max_turns: usize,
    /// Turns one account runs at once on all nodes together, at most;
    /// `None` for no cap of its own.
    pub max_turns_per_account: Option<usize>,
    /// How long an account's slot lasts unless this node renews it.
    pub lease_ttl: Duration,
    /// Folders under which environments' local repositories may lie.
    pub repository_roots: Vec<PathBuf>,
}

/// Starts and follows turns for every service, on one engine.
pub struct Runner {
    store: Store,
    engine: Arc<Engine>,
    live: Arc<Runs>,
    home: Home,
    node_id: String,
    repository_roots: Vec<PathBuf>,
    slots: Slots,
}

impl Runner {
    /// A runner of turns on `engine`, recording calls in `store` and
    /// following turns in `live`, with agents' homes under `home`.
    pub fn new(
        store: Store,
        engine: Arc<Engine>,
        live: Arc<Runs>,
        home: Home,
        settings: Settings,
    ) -> Arc<Self> {
        let slots = Slots::new(
            store.clone(),
            settings.node_id.clone(),
            settings.max_turns,
            settings.max_turns_per_account,
            settings.lease_ttl,
        );
        Arc::new(Self {
            store,
            engine,
            live,
            home,
            node_id: settings.node_id,
            repository_roots: settings.repository_roots,
            slots,
        })
    }

    /// This node's id.
    pub fn node_id(&self) -> &str {
        &self.node_id
    }

    /// The turn slots of this node.
    pub fn slots(&self) -> &Slots {
        &self.slots
    }

    /// The runs' live events.
    pub fn live(&self) -> &Arc<Runs> {
        &self.live
    }

    /// The agent's home directory: its harnesses' `HOME`, kept across restarts.
    pub fn agent_home(&self, agent_id: &AgentId) -> PathBuf {
        self.home.root().join("agents").join(agent_id.as_str())
    }

    /// Whether `path` lies in this node's home: what a turn's result names
    /// there (its log) is this node's, not another's.
    pub fn is_in_home(&self, path: &Path) -> bool {
        path.starts_with(self.home.root())
    }

    /// Whether an environment of `account_id` may use the local repository
    /// at `path` (as a path or a `file://` URL): it must exist, lie under one of the operator's repository
    /// roots (anywhere, for the first account, when there are none), and
    /// neither hold nor lie inside cinch's home. The reason when not; the
    /// store's error when it could not be told.
    pub async fn check_repository(
        &self,
        account_id: &AccountId,
        path: &Path,
    ) -> Result<Result<(), String>, StoreError> {
        let first = self.store.first_account_id().await?;
        Ok(
            cinch_engine::sandbox::RepositoryRoots::new(&self.repository_roots, self.home.root())
                .admits(path, first.as_ref() == Some(account_id)),
        )
    }
}
