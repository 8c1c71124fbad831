//! Getting a session's result out: committing its work tree's changes on
//! its branch, pushing that branch to the environment's repository (with a
//! link to open a pull request where the remote is a known forge), and the
//! whole output of its setup commands.
//!
//! The git work runs for the tenant, in the sandbox, as the session's other
//! git work does (see [`workspace`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::{Conductor, Result, forge, workspace};
use crate::runs::repository;
use crate::service::{OtherNode, ServiceError};
use cinch_base::timestamp::Timestamp;
use cinch_engine::redact::Redactor;
use cinch_store::{AccountId, Session, SessionId, SessionStatus, TaskId};

/// How long a commit message may be.
const MESSAGE_MAX_CHARS: usize = 10_000;

/// A commit made on a session's branch.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Committed {
    /// The branch it is on.
    pub branch: String,
    /// Its id (the full hex sha).
    pub commit: String,
    /// Its message.
    pub message: String,
}

/// A session's branch, pushed.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Pushed {
    /// The session's branch.
    pub branch: String,
    /// The name it has in the repository it was pushed to.
    pub pushed_as: String,
    /// The repository it was pushed to: the environment's (credentials
    /// left out).
    pub repository: String,
    /// The page that opens a pull request of it, where the repository is
    /// on github.com, gitlab.com, bitbucket.org or codeberg.org.
    pub pull_request_url: Option<String>,
    /// Whether the work tree has changes no commit holds yet: they were
    /// not pushed (commit them first).
    pub uncommitted_changes: bool,
}

impl Conductor {
    /// Where the setup commands of session `session_id`'s last boot wrote
    /// their output.
    pub(super) fn setup_log_path(&self, session_id: &SessionId) -> PathBuf {
        self.home
            .root()
            .join("setup-logs")
            .join(format!("{session_id}.log"))
    }

    /// The whole output of the session's setup commands at its last boot
    /// (redacted); `None` when it ran none on this node.
    pub async fn setup_log(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
    ) -> Result<Option<String>> {
        // The session is the account's: its id names a file cinch wrote.
        let session = self.session(account_id, task_id, session_id).await?;
        let path = self.setup_log_path(&session.id);
        match tokio::fs::read(&path).await {
            Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(ServiceError::Internal(anyhow::anyhow!(
                "reading {}: {error}",
                path.display()
            ))),
        }
    }

    /// Commits everything in the session's work tree on its branch, with
    /// `message`. Refused while a turn runs, and when nothing changed.
    pub async fn commit(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        message: &str,
    ) -> Result<Committed> {
        let message = message.trim();
        if message.is_empty() {
            return Err(ServiceError::invalid_field(
                "message",
                "the commit message is blank: say what the change does",
            ));
        }
        if message.contains('\0') {
            return Err(ServiceError::invalid_field(
                "message",
                "the commit message holds a NUL character, which git cannot store",
            ));
        }
        if message.chars().count() > MESSAGE_MAX_CHARS {
            return Err(ServiceError::invalid_field(
                "message",
                format!("the commit message is longer than {MESSAGE_MAX_CHARS} characters"),
            ));
        }
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let session = self.session(account_id, task_id, session_id).await?;
        refuse_while_busy(&session, "a commit")?;
        self.refuse_on_another_node(&session).await?;
        let dir = work_tree(&session)?;
        let environment = self.environment_of(&session).await?;
        let tenant = self.tenant(&session.agent_id, environment.as_ref());
        let owned = message.to_owned();
        let committed =
            tokio::task::spawn_blocking(move || workspace::commit_changes(&tenant, &dir, &owned))
                .await
                .map_err(|error| ServiceError::Internal(error.into()))?
                .map_err(|error| {
                    ServiceError::Internal(error.context(format!(
                        "committing on branch {} of session {}",
                        session.branch_name, session.id
                    )))
                })?;
        let Some(commit) = committed else {
            return Err(ServiceError::Conflict(format!(
                "nothing to commit: the work tree of branch {} has no changes since its last commit",
                session.branch_name
            )));
        };
        tracing::info!(session = %session.id, %commit, "committed the session's changes");
        Ok(Committed {
            branch: session.branch_name,
            commit,
            message: message.to_owned(),
        })
    }

    /// Pushes the session's branch to its environment's repository, as
    /// `target` there (default: the same name). Refused while a turn runs.
    pub async fn push(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        target: Option<&str>,
    ) -> Result<Pushed> {
        if let Some(target) = target
            && !workspace::is_valid_branch(target)
        {
            return Err(ServiceError::invalid_field(
                "branch",
                format!("{target:?} is not a git branch name"),
            ));
        }
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let session = self.session(account_id, task_id, session_id).await?;
        refuse_while_busy(&session, "a push")?;
        self.refuse_on_another_node(&session).await?;
        let dir = work_tree(&session)?;
        let Some(environment) = self.environment_of(&session).await? else {
            return Err(ServiceError::Conflict(
                "the session has no environment: its scratch repository is the only copy, with nowhere to push to (start the task in an environment)".to_owned(),
            ));
        };
        if let Some(path) = repository::local_path(&environment.repository) {
            let checked = self
                .runner
                .check_repository(account_id, path)
                .await?
                .map_err(|why| {
                    ServiceError::Conflict(format!(
                        "environment {}'s repository is refused: {why}",
                        environment.name
                    ))
                });
            checked?;
        }
        let tenant = self.tenant(&session.agent_id, Some(&environment));
        // git may repeat the URL, with a password in it, in what it says.
        let redactor = Redactor::new(
            environment
                .secrets
                .values()
                .cloned()
                .chain(url_password(&environment.repository)),
        );
        let repository = environment.repository.clone();
        let branch = session.branch_name.clone();
        let pushed_as = target.unwrap_or(&branch).to_owned();
        let (outcome, dirty) = {
            let (repository, branch, pushed_as) =
                (repository.clone(), branch.clone(), pushed_as.clone());
            tokio::task::spawn_blocking(move || {
                let dirty = workspace::has_changes(&tenant, &dir);
                let pushed =
                    workspace::push_branch(&tenant, &dir, &repository, &branch, &pushed_as);
                (pushed, dirty)
            })
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?
        };
        let default_branch = outcome.map_err(|error| {
            ServiceError::Conflict(redactor.redact(format!(
                "could not push branch {branch} to {}: {error:#}",
                without_credentials(&repository)
            )))
        })?;
        let base = session.base_branch.clone().or(default_branch);
        let pull_request_url = repository::is_url(&repository)
            .then(|| forge::pull_request_url(&repository, &pushed_as, base.as_deref()))
            .flatten();
        tracing::info!(session = %session.id, branch = %pushed_as, "pushed the session's branch");
        Ok(Pushed {
            branch,
            pushed_as,
            repository: without_credentials(&repository),
            pull_request_url,
            uncommitted_changes: dirty.unwrap_or(false),
        })
    }
}

/// Refuses `what` while the session's work tree is being made or a turn runs in it.
fn refuse_while_busy(session: &Session, what: &str) -> Result<()> {
    if matches!(
        session.status,
        SessionStatus::Running | SessionStatus::Booting
    ) {
        return Err(ServiceError::Conflict(format!(
            "the session is {}: {what} waits until no turn runs (abort it, or wait for it to end)",
            session.status
        )));
    }
    Ok(())
}

impl Conductor {
    /// Refuses work on the session's work tree when another node holds its
    /// lease: the tree there is the one its turns change (a path here, even
    /// one that exists, is not), so the request is for that node.
    async fn refuse_on_another_node(&self, session: &Session) -> Result<()> {
        if self.held_generation(&session.id).is_some() {
            return Ok(());
        }
        let Some(lease) = self.store.lease(&session.id).await? else {
            return Ok(());
        };
        if lease.node_id == self.node_id() || lease.expired_by(Timestamp::now()) {
            return Ok(());
        }
        let url = self.store.node_url(&lease.node_id).await?;
        Err(ServiceError::OnAnotherNode(OtherNode {
            node_id: lease.node_id,
            url,
        }))
    }
}

/// The session's work tree on this node.
fn work_tree(session: &Session) -> Result<PathBuf> {
    let Some(dir) = session.workspace.as_deref().map(PathBuf::from) else {
        return Err(ServiceError::Conflict(
            "the session has no work tree yet: send it a message first".to_owned(),
        ));
    };
    if !Path::new(&dir).join(".git").exists() {
        return Err(ServiceError::Conflict(format!(
            "the session's work tree is not on this node ({}): ask the node that runs it",
            dir.display()
        )));
    }
    Ok(dir)
}

/// The password of a `scheme://user:password@host/…` URL, when it has one.
fn url_password(repository: &str) -> Option<String> {
    let (_, rest) = repository.split_once("://")?;
    let authority = rest.split('/').next()?;
    let (userinfo, _) = authority.rsplit_once('@')?;
    let (_, password) = userinfo.split_once(':')?;
    (!password.is_empty()).then(|| password.to_owned())
}

/// `repository` without a `user:password@` part.
fn without_credentials(repository: &str) -> String {
    let Some((scheme, rest)) = repository.split_once("://") else {
        return repository.to_owned();
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://{host}/{path}"),
        None => repository.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::{url_password, without_credentials};

    #[test]
    fn credentials_stay_out_of_the_answer() {
        assert_eq!(
            without_credentials("https://x:tok@github.com/a/b.git"),
            "https://github.com/a/b.git"
        );
        assert_eq!(without_credentials("/srv/repo"), "/srv/repo");
        assert_eq!(
            url_password("https://x:tok@github.com/a/b.git").as_deref(),
            Some("tok")
        );
        assert_eq!(url_password("https://github.com/a/b.git"), None);
        assert_eq!(
            without_credentials("git@github.com:a/b.git"),
            "git@github.com:a/b.git"
        );
    }
}
