//! Environments: the repositories, setup, variables and secrets an account
//! runs its work in, each repository admitted by the operator's rules.

use std::sync::Arc;

use super::ServiceError;
use crate::runs::Runner;
use crate::runs::repository::local_path;
use cinch_store::{
    AccountId, Environment, EnvironmentId, EnvironmentPatch, NewEnvironment, Page, Store,
};

/// The environments service.
#[derive(Clone)]
pub(crate) struct Environments {
    store: Store,
    runner: Arc<Runner>,
}

impl Environments {
    /// Environments kept in `store`; their local repositories are admitted
    /// by the `runner`'s rules.
    pub(crate) fn new(store: Store, runner: Arc<Runner>) -> Self {
        Self { store, runner }
    }

    /// Creates `new` in the account.
    pub(crate) async fn create(
        &self,
        account_id: &AccountId,
        new: NewEnvironment,
    ) -> Result<Environment, ServiceError> {
        self.admit_repository(account_id, &new.repository).await?;
        let environment = self.store.create_environment(account_id, new).await?;
        tracing::info!(environment = %environment.id, "environment created");
        Ok(environment)
    }

    /// A page of the account's environments, oldest first.
    pub(crate) async fn list(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Environment>, ServiceError> {
        Ok(self.store.environments(account_id, cursor, limit).await?)
    }

    /// The account's environment `id`.
    pub(crate) async fn get(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
    ) -> Result<Environment, ServiceError> {
        self.store
            .environment(account_id, id)
            .await?
            .ok_or(ServiceError::NotFound("no such environment".to_owned()))
    }

    /// Changes environment `id` by the patch `change` makes of it as it is.
    pub(crate) async fn update(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
        change: impl FnOnce(&Environment) -> Result<EnvironmentPatch, ServiceError>,
    ) -> Result<Environment, ServiceError> {
        let current = self.get(account_id, id).await?;
        let patch = change(&current)?;
        if let Some(repository) = &patch.repository {
            self.admit_repository(account_id, repository).await?;
        }
        self.store
            .update_environment(account_id, id, patch)
            .await?
            .ok_or(ServiceError::NotFound("no such environment".to_owned()))
    }

    /// Deletes environment `id`.
    pub(crate) async fn delete(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
    ) -> Result<(), ServiceError> {
        match self.store.delete_environment(account_id, id).await? {
            true => Ok(()),
            false => Err(ServiceError::NotFound("no such environment".to_owned())),
        }
    }

    /// Refuses a local repository the account may not use (see
    /// [`Runner::check_repository`]); a URL is cloned, not admitted here.
    async fn admit_repository(
        &self,
        account_id: &AccountId,
        repository: &str,
    ) -> Result<(), ServiceError> {
        let Some(path) = local_path(repository) else {
            return Ok(());
        };
        self.runner
            .check_repository(account_id, path)
            .await?
            .map_err(|why| ServiceError::invalid_field("repository", why))
    }
}
