//! Agents: the account's execution identities, their default harness,
//! model, effort and environment (checked against the drivers and the
//! account's environments), and the size of their homes.

use std::path::Path;
use std::sync::Arc;

use super::{FieldError, ServiceError};
use crate::runs::Runner;
use cinch_engine::engine::Engine;
use cinch_store::{AccountId, Agent, AgentId, AgentSettings, Page, Store};

/// The agents service.
#[derive(Clone)]
pub(crate) struct Agents {
    store: Store,
    engine: Arc<Engine>,
    runner: Arc<Runner>,
}

/// An agent and the bytes in its home directory.
#[derive(Debug)]
pub(crate) struct AgentWithHome {
    /// The agent.
    pub agent: Agent,
    /// Bytes in its home directory; 0 before its first session.
    pub home_bytes: u64,
}

impl Agents {
    /// Agents kept in `store`, their harnesses checked against the
    /// `engine`'s drivers, their homes where the `runner` keeps them.
    pub(crate) fn new(store: Store, engine: Arc<Engine>, runner: Arc<Runner>) -> Self {
        Self {
            store,
            engine,
            runner,
        }
    }

    /// A page of the account's agents, oldest first, with their homes' sizes.
    pub(crate) async fn list(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<AgentWithHome>, ServiceError> {
        let page = self.store.agents(account_id, cursor, limit).await?;
        let homes: Vec<_> = page
            .items
            .iter()
            .map(|agent| self.runner.agent_home(&agent.id))
            .collect();
        let sizes = tokio::task::spawn_blocking(move || {
            homes.iter().map(|home| tree_size(home)).collect::<Vec<_>>()
        })
        .await
        .map_err(|error| ServiceError::Internal(error.into()))?;
        let items = page
            .items
            .into_iter()
            .zip(sizes)
            .map(|(agent, home_bytes)| AgentWithHome { agent, home_bytes })
            .collect();
        Ok(Page {
            items,
            next_cursor: page.next_cursor,
        })
    }

    /// Adds the agent `name` with `settings`.
    pub(crate) async fn create(
        &self,
        account_id: &AccountId,
        name: &str,
        settings: AgentSettings,
    ) -> Result<Agent, ServiceError> {
        let settings = self.check(account_id, settings, None).await?;
        Ok(self.store.create_agent(account_id, name, settings).await?)
    }

    /// Sets the agent `id`'s `settings` (absent ones stay).
    pub(crate) async fn update(
        &self,
        account_id: &AccountId,
        id: &AgentId,
        settings: AgentSettings,
    ) -> Result<AgentWithHome, ServiceError> {
        let current = self
            .store
            .agent(account_id, id)
            .await?
            .ok_or(ServiceError::NotFound("no such agent".to_owned()))?;
        let settings = self.check(account_id, settings, Some(&current)).await?;
        let agent = self
            .store
            .update_agent(account_id, &current.id, settings)
            .await?
            .ok_or(ServiceError::NotFound("no such agent".to_owned()))?;
        let home = self.runner.agent_home(&agent.id);
        let home_bytes = tokio::task::spawn_blocking(move || tree_size(&home))
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?;
        Ok(AgentWithHome { agent, home_bytes })
    }

    /// `change` checked against the drivers and the account's
    /// environments; `current` is the agent being changed.
    async fn check(
        &self,
        account_id: &AccountId,
        change: AgentSettings,
        current: Option<&Agent>,
    ) -> Result<AgentSettings, ServiceError> {
        let AgentSettings {
            harness,
            model,
            effort,
            environment_id,
            enabled,
        } = change;
        let mut errors = Vec::new();
        let registry = self.engine.registry();
        let effective = harness
            .clone()
            .unwrap_or_else(|| current.and_then(|agent| agent.harness.clone()));
        let info = effective
            .as_deref()
            .and_then(|name| registry.harness(name).ok().map(|harness| harness.info));
        if let (Some(name), None) = (&effective, &info) {
            errors.push(FieldError::new(
                "harness",
                format!(
                    "no harness is named {name}; there are {}",
                    registry.names().join(", ")
                ),
            ));
        }
        if let (Some(Some(model)), Some(info)) = (&model, &info)
            && !info.models.is_empty()
            && !info.models.contains(model)
        {
            errors.push(FieldError::new(
                "model",
                format!(
                    "{} has no model {model}; it has {}",
                    info.name,
                    info.models.join(", ")
                ),
            ));
        }
        if let Some(Some(effort)) = &effort {
            match &info {
                None => errors.push(FieldError::new(
                    "effort",
                    "an effort is pinned for a harness: set harness too",
                )),
                Some(info) if !info.efforts.contains(effort) => errors.push(FieldError::new(
                    "effort",
                    format!(
                        "{} takes {}",
                        info.name,
                        match info.efforts.is_empty() {
                            true => "no effort".to_owned(),
                            false => format!("one of {}", info.efforts.join(", ")),
                        }
                    ),
                )),
                Some(_) => {}
            }
        }
        if let Some(Some(id)) = &environment_id
            && self.store.environment(account_id, id).await?.is_none()
        {
            errors.push(FieldError::new(
                "environment_id",
                "no environment of the account has that id",
            ));
        }
        if !errors.is_empty() {
            return Err(ServiceError::Invalid(errors));
        }
        Ok(AgentSettings {
            harness,
            model,
            effort,
            environment_id,
            enabled,
        })
    }
}

/// The bytes of the files under `dir`, not following links.
fn tree_size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|entry| match entry.file_type() {
            Ok(kind) if kind.is_dir() => tree_size(&entry.path()),
            Ok(kind) if kind.is_file() => entry.metadata().map_or(0, |meta| meta.len()),
            _ => 0,
        })
        .sum()
}
