//! Comparing a task's sessions side by side: how each went (status, turns,
//! duration, usage, last reply), what each changed since their common base,
//! which files differ between them, and the patch between two of them. The
//! git work is the checkpoint module's; this gathers the sessions' trees.

use std::path::PathBuf;

use super::{Conductor, Result, workspace};
use crate::service::ServiceError;
use cinch_engine::checkpoint::compare::{Comparison, Tree};
use cinch_engine::checkpoint::{DiffContext, DiffStat, compare};
use cinch_engine::engine::FILES_LISTED;
use cinch_store::{AccountId, MessageKind, Session, SessionId, TaskId, TurnState};

/// One session as a comparison shows it.
#[derive(Debug, Clone)]
pub struct SessionSummary {
    /// The session.
    pub session: Session,
    /// Its own turns that ended (a fork's inherited ones aside).
    pub turns: usize,
    /// Those turns' time, together.
    pub duration_ms: u64,
    /// The last thing its agent said.
    pub last_reply: Option<String>,
    /// The checkpoint standing for its work tree: its latest end checkpoint
    /// (for a fork without a turn of its own, the one it was forked at).
    pub tree: Option<String>,
    /// What its tree changed since the sessions' common base; none without
    /// a tree on this node, or without a common base.
    pub diffstat: Option<DiffStat>,
}

/// A task's sessions compared.
#[derive(Debug, Clone)]
pub struct TaskComparison {
    /// The commit the compared trees all descend from.
    pub base: Option<String>,
    /// Each session, oldest first.
    pub sessions: Vec<SessionSummary>,
    /// The files whose content differs between the compared trees.
    pub differing_files: Vec<String>,
}

impl Conductor {
    /// Compares the task's sessions (its first 200).
    pub async fn compare(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
    ) -> Result<TaskComparison> {
        self.check_task(account_id, task_id).await?;
        let sessions = self.store.sessions(account_id, task_id, None, 200).await?;
        let mut summaries = Vec::new();
        for session in sessions.items {
            summaries.push(self.summary(session).await?);
        }
        let mut compared = Vec::new();
        let mut trees = Vec::new();
        for (at, summary) in summaries.iter().enumerate() {
            if let Some(tree) = self.tree(summary, &summaries).await {
                compared.push(at);
                trees.push(tree);
            }
        }
        let comparison = blocking(move || compare::compare(&trees, FILES_LISTED)).await?;
        let Comparison {
            base,
            stats,
            differing_files,
        } = comparison;
        for (at, stat) in compared.into_iter().zip(stats) {
            summaries[at].diffstat = Some(stat);
        }
        Ok(TaskComparison {
            base,
            sessions: summaries,
            differing_files,
        })
    }

    /// The summary's tree: in its own workspace when that is on this node,
    /// else fetched from the checkpoint remote into a workspace of another
    /// of `all` that is.
    async fn tree(&self, summary: &SessionSummary, all: &[SessionSummary]) -> Option<Tree> {
        if let Some(tree) = local_tree(summary) {
            return Some(tree);
        }
        let remote = self.settings.checkpoint_remote.clone()?;
        let sha = summary.tree.clone()?;
        let (here, dir) = all
            .iter()
            .find_map(|other| local_tree(other).map(|tree| (&other.session, tree.dir)))?;
        let tenant = self.tenant(&here.agent_id, None);
        // A fork with no turn of its own stands at its source's checkpoint.
        let runs: Vec<String> = std::iter::once(summary.session.id.to_string())
            .chain(
                summary
                    .session
                    .forked_from_session
                    .iter()
                    .map(ToString::to_string),
            )
            .collect();
        let into = dir.clone();
        let fetched = tokio::task::spawn_blocking(move || {
            runs.iter()
                .map(|run| workspace::fetch_checkpoints(&tenant, &into, &remote, run))
                .collect::<anyhow::Result<Vec<()>>>()
        })
        .await;
        match fetched {
            Ok(Ok(_)) => Some(Tree { dir, sha }),
            Ok(Err(error)) => {
                tracing::warn!(session = %summary.session.id, "comparing without its tree, which the checkpoint remote did not give: {error:#}");
                None
            }
            Err(_) => None,
        }
    }

    /// The patch from session `a`'s tree to session `b`'s.
    pub async fn compare_diff(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        a: &SessionId,
        b: &SessionId,
        context: DiffContext,
    ) -> Result<String> {
        let mut summaries = Vec::new();
        for (field, id) in [("a", a), ("b", b)] {
            let session = self.session(account_id, task_id, id).await.map_err(|_| {
                ServiceError::invalid_field(field, format!("the task has no session {id}"))
            })?;
            summaries.push(self.summary(session).await?);
        }
        let mut trees = Vec::new();
        for (summary, id) in summaries.iter().zip([a, b]) {
            let tree = self.tree(summary, &summaries).await.ok_or_else(|| {
                ServiceError::Conflict(format!(
                    "session {id} has no work tree to compare yet (no turn of it ended), or its work tree is on another node and no checkpoint remote gives it"
                ))
            })?;
            trees.push(tree);
        }
        let (b, a) = (trees.pop(), trees.pop());
        let (Some(a), Some(b)) = (a, b) else {
            unreachable!("two trees were pushed")
        };
        blocking(move || compare::diff_between(&a, &b, context)).await
    }

    async fn summary(&self, session: Session) -> Result<SessionSummary> {
        let mut turns = 0;
        let mut duration_ms = 0;
        let mut last_reply = None;
        let mut tree = None;
        for message in self.delivered_messages(&session).await? {
            if let (_, Some(end)) = message.checkpoints() {
                tree = Some(end);
            }
            if message.forked_from.is_some() || message.kind != MessageKind::Assistant {
                continue;
            }
            let Some(view) = message.turn_view() else {
                continue;
            };
            if view.status == TurnState::Running {
                continue;
            }
            turns += 1;
            duration_ms += view
                .result
                .as_ref()
                .and_then(|result| result.duration_ms)
                .unwrap_or(0);
            if !message.content.is_empty() {
                last_reply = Some(message.content);
            }
        }
        Ok(SessionSummary {
            tree: tree.or_else(|| session.fork_checkpoint.clone()),
            session,
            turns,
            duration_ms,
            last_reply,
            diffstat: None,
        })
    }
}

/// The summary's tree, when its workspace is on this node.
fn local_tree(summary: &SessionSummary) -> Option<Tree> {
    let dir = PathBuf::from(summary.session.workspace.as_ref()?);
    dir.exists()
        .then(|| Tree {
            dir,
            sha: summary.tree.clone().unwrap_or_default(),
        })
        .filter(|tree| !tree.sha.is_empty())
}

/// Runs git work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, cinch_engine::checkpoint::CheckpointError>
    + Send
    + 'static,
) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ServiceError::Internal(error.into()))?
        .map_err(|error| {
            ServiceError::Internal(anyhow::anyhow!("comparing the work trees: {error}"))
        })
}
