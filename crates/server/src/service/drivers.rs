//! The drivers and harnesses the engine has, what turns saw of their
//! drivers (the event types a driver did not know), and the operator's
//! plugin changes: added from an OCI registry, removed.

use std::sync::Arc;

use super::ServiceError;
use cinch_engine::drivers::Registry;
use cinch_engine::engine::Engine;
use cinch_engine::engine::server_credential::ServerCredential;
use cinch_engine::plugins::reference::Reference;
use cinch_engine::plugins::{Candidate, Installed, Pin, SourceMoved, oci};
use cinch_engine::tools::Tool;
use cinch_store::{SeenCliVersion, SeenUnknown, Store};

/// The drivers service.
#[derive(Clone)]
pub(crate) struct Drivers {
    store: Store,
    engine: Arc<Engine>,
}

impl Drivers {
    /// The drivers of `engine`, their findings kept in `store`.
    pub(crate) fn new(store: Store, engine: Arc<Engine>) -> Self {
        Self { store, engine }
    }

    /// The drivers and harnesses turns run on now.
    pub(crate) fn registry(&self) -> Arc<Registry> {
        self.engine.registry()
    }

    /// Whether this server's turns of the harness `name` have a credential
    /// of the server's own; none for a harness the registry does not have.
    pub(crate) fn server_credential(&self, name: &str) -> Option<ServerCredential> {
        self.engine.server_credential(name).ok()
    }

    /// The harness `name`'s CLI as cinch installs and pins it: its
    /// package, tested range and pinned version.
    pub(crate) fn tool(&self, name: &str) -> Option<Tool> {
        self.engine.tool(name).ok()
    }

    /// The versions config.toml pins harnesses' CLIs to, by harness.
    pub(crate) fn pinned_versions(&self) -> std::collections::BTreeMap<String, String> {
        self.engine.config().pinned_versions()
    }

    /// Every CLI version turns ran on, by harness, across all accounts.
    pub(crate) async fn cli_versions(&self) -> Result<Vec<SeenCliVersion>, ServiceError> {
        Ok(self.store.cli_versions().await?)
    }

    /// Every event type turns met that their driver did not know, by
    /// harness and CLI version, across all accounts.
    pub(crate) async fn unknown_events(&self) -> Result<Vec<SeenUnknown>, ServiceError> {
        Ok(self.store.unknown_events().await?)
    }
}

impl Drivers {
    /// Pulls the component the OCI reference `source` names (every digest
    /// checked; credentials from the server's ~/.docker/config.json),
    /// installs it and puts it in force for new turns.
    pub(crate) async fn add(
        &self,
        source: String,
        update: bool,
    ) -> Result<Installed, ServiceError> {
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || {
            let refused = |error: &dyn std::fmt::Display| refused_source(error.to_string());
            let reference = Reference::parse(&source).map_err(|error| refused(&error))?;
            let credentials = oci::Credentials::from_docker_config(&reference.registry)
                .map_err(|error| refused_source(format!("{error:#}")))?;
            let mut client = oci::Client::new(&reference, false, credentials);
            let candidate =
                Candidate::pull(&reference, &mut client).map_err(|error| refused(&error))?;
            engine.install_plugin(candidate, update).map_err(|error| {
                match error.downcast::<SourceMoved>() {
                    Ok(moved) => ServiceError::Conflict(moved.to_string()),
                    Err(error) => refused_source(format!("{error:#}")),
                }
            })
        })
        .await
        .map_err(|error| refused_source(format!("the install stopped: {error}")))?
    }

    /// Removes plugin `name`; the built-in of that name, if any, is back.
    pub(crate) async fn remove(&self, name: String) -> Result<Option<Pin>, ServiceError> {
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || {
            engine
                .remove_plugin(&name)
                .map_err(|error| ServiceError::NotFound(format!("{error:#}")))
        })
        .await
        .map_err(|error| refused_source(format!("the removal stopped: {error}")))?
    }
}

/// A source that cannot be installed as asked: not an OCI reference, not
/// reachable, not a driver, not signed as config.toml requires, ...
fn refused_source(why: String) -> ServiceError {
    ServiceError::invalid_field("source", why)
}
