//! Forking a session at one of its turns: a new session of the same task
//! whose work tree starts from that turn's end checkpoint and whose
//! conversation holds the source's messages up to that turn, marked as
//! inherited. The source is only read.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{Conductor, Result, SessionSpec, resolve};
use crate::service::ServiceError;
use cinch_store::{
    AccountId, ForkMode, ForkOrigin, Message, MessageKind, Session, SessionId, TaskId,
};

/// A fork to make.
#[derive(Debug, Clone, Default)]
pub struct ForkSpec {
    /// The turn to fork at; the source's latest ended turn when absent.
    pub turn_id: Option<String>,
    /// The harness; the source's when absent.
    pub harness: Option<String>,
    /// The model; the source's when the harness is the source's, else the
    /// harness's default, when absent.
    pub model: Option<String>,
    /// The effort, as the model.
    pub effort: Option<String>,
    /// A message that starts the fork's first turn at once.
    pub message: Option<String>,
}

/// What a fork inherits: the source's messages up to the fork point, and
/// the point as each of them is marked (`{"session_id", "turn_id"}`).
pub(super) struct Inherited {
    pub messages: Vec<Message>,
    pub forked_from: Value,
}

/// Where a fork's work tree comes from, as its boot needs it.
pub(super) struct ForkSource {
    /// The run whose checkpoint refs hold the checkpoint (the source's, or
    /// for a turn the source inherited, that turn's own session's).
    pub run: String,
    /// The end checkpoint.
    pub checkpoint: String,
    /// The source's workspace, when it has one on this node.
    pub source_dir: Option<PathBuf>,
}

/// The kinds of message a fork inherits: the conversation and what was done
/// to the work tree; notes about queues and attachments stay the source's.
fn inherits(kind: MessageKind) -> bool {
    matches!(
        kind,
        MessageKind::User | MessageKind::Assistant | MessageKind::Revert
    )
}

impl Conductor {
    /// Forks the session at `spec.turn_id` (its latest ended turn when
    /// none): a new session of the same task, its work tree that turn's end
    /// checkpoint, its conversation the messages up to it.
    pub async fn fork(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        spec: ForkSpec,
    ) -> Result<Session> {
        let task = self.task(account_id, task_id).await?;
        let source = self.session(account_id, task_id, session_id).await?;
        let agent = self
            .acting_agent(account_id, Some(task.created_by.as_str()))
            .await?;
        if let Some(harness) = &spec.harness
            && self.engine.registry().harness(harness).is_err()
        {
            return Err(ServiceError::invalid_field(
                "harness",
                format!("no harness is named {harness}: GET /v1/models lists them"),
            ));
        }
        let conversation = self.delivered_messages(&source).await?;
        let point = match &spec.turn_id {
            Some(turn_id) => conversation
                .iter()
                .rposition(|message| {
                    message.turn_view().is_some_and(|view| &view.turn_id == turn_id)
                        || message
                            .revert_view()
                            .is_some_and(|view| &view.turn_id == turn_id)
                })
                .ok_or_else(|| {
                    ServiceError::invalid_field("turn_id", format!("the session has no turn {turn_id:?}"))
                })?,
            None => conversation
                .iter()
                .rposition(|message| message.checkpoints().1.is_some())
                .ok_or_else(|| {
                    ServiceError::Conflict(
                        "the session has no ended turn to fork from yet: wait for its first turn to end"
                            .to_owned(),
                    )
                })?,
        };
        let at = &conversation[point];
        let turn_id = turn_id_of(at).unwrap_or_default();
        let Some(checkpoint) = at.checkpoints().1 else {
            return Err(ServiceError::Conflict(format!(
                "turn {turn_id} has no end checkpoint (it is still running, or it ended before taking one): fork at a turn that ended"
            )));
        };

        let same_harness = spec.harness.as_deref().is_none_or(|h| h == source.harness);
        let asked = resolve::Asked {
            harness: Some(spec.harness.as_deref().unwrap_or(&source.harness)),
            model: spec
                .model
                .as_deref()
                .or(source.harness_model.as_deref().filter(|_| same_harness)),
            effort: spec
                .effort
                .as_deref()
                .or(source.harness_effort.as_deref().filter(|_| same_harness)),
        };
        let choice = self.resolve(&asked, &agent);
        let mode = match at.turn_view() {
            Some(view) => {
                let (mode, reason) = self.fork_mode_for(account_id, &view, &choice.harness).await;
                if let Some(reason) = reason {
                    tracing::info!(session = %source.id, turn = %turn_id, "the fork retells the conversation in its brief: {reason}");
                }
                mode
            }
            // A revert ran no harness: there is no harness session to fork.
            None => ForkMode::Brief,
        };
        let forked_from = json!({"session_id": source.id, "turn_id": turn_id});
        let inherited = Inherited {
            messages: conversation[..=point]
                .iter()
                .filter(|message| inherits(message.kind))
                .cloned()
                .collect(),
            forked_from,
        };
        let session_spec = SessionSpec {
            title: Some(source.title.clone()),
            prompt: spec.message,
            environment_id: source.environment_id.clone(),
            branch_name: None,
            base_branch: source.base_branch.clone(),
            auto_commit: source.auto_commit,
            // The source's own approval policy holds in the fork too.
            approvals: self.store.session_approvals(&source.id).await?,
        };
        let origin = ForkOrigin {
            session_id: source.id.clone(),
            turn_id,
            checkpoint,
            mode,
        };
        self.start_session_from(
            &task,
            &agent,
            choice,
            session_spec,
            false,
            Some((origin, inherited)),
            None,
        )
        .await
    }

    /// For a fork not booted yet: where its work tree comes from.
    pub(super) async fn fork_source(&self, session: &Session) -> Result<Option<ForkSource>> {
        let (Some(source_id), Some(turn_id), Some(checkpoint)) = (
            &session.forked_from_session,
            &session.forked_from_turn,
            &session.fork_checkpoint,
        ) else {
            return Ok(None);
        };
        let source = self.store.session(&session.account_id, source_id).await?;
        // A turn the source inherited keeps its checkpoints under its own run.
        let run = self
            .store
            .turn_message(&session.account_id, source_id, turn_id)
            .await?
            .and_then(|message| message.turn_view())
            .map_or_else(|| source_id.to_string(), |view| view.run_id);
        Ok(Some(ForkSource {
            run,
            checkpoint: checkpoint.clone(),
            source_dir: source
                .and_then(|source| source.workspace)
                .map(PathBuf::from),
        }))
    }

    /// Whether the session's next turn starts its harness session anew as
    /// a fork's: briefed with the inherited conversation.
    pub(super) fn briefs_as_fork(session: &Session) -> bool {
        session.fork_mode == Some(ForkMode::Brief) && session.harness_session_id.is_none()
    }

    /// Whether the session's next turn forks the source's harness session.
    pub(super) fn forks_natively(session: &Session) -> bool {
        session.fork_mode == Some(ForkMode::Native) && session.harness_session_id.is_none()
    }
}

/// The id of the turn (or revert) a message records.
fn turn_id_of(message: &Message) -> Option<String> {
    message
        .turn_view()
        .map(|view| view.turn_id)
        .or_else(|| message.revert_view().map(|view| view.turn_id))
}
