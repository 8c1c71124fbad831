//! Reverting a turn: the session's work tree goes back to the turn's start
//! checkpoint, recorded as a `revert` message with a checkpoint pair of its
//! own, so that reverting the revert brings the work back.

use std::path::PathBuf;
use std::sync::Arc;

use super::{Conductor, EventName, Result};
use crate::service::ServiceError;
use cinch_base::timestamp::Timestamp;
use cinch_engine::checkpoint;
use cinch_engine::engine::FILES_LISTED;
use cinch_store::{
    AccountId, Message, MessageKind, RevertView, SessionId, SessionStatus, TaskId, TurnState,
};

impl Conductor {
    /// Restores the session's work tree to the start of turn `turn_id` (an
    /// assistant message's `turn.turn_id`, or a revert's, which undoes that
    /// revert): files only, and HEAD back to where it was then when commits
    /// were made since, which the message names. Refused while a turn runs.
    pub async fn revert(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        turn_id: &str,
    ) -> Result<Message> {
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let mut session = self.session(account_id, task_id, session_id).await?;
        if matches!(
            session.status,
            SessionStatus::Running | SessionStatus::Booting
        ) {
            return Err(ServiceError::Conflict(format!(
                "the session is {}: a revert waits until no turn runs (abort it, or wait for it to end)",
                session.status
            )));
        }
        let Some(workspace) = session.workspace.clone().map(PathBuf::from) else {
            return Err(ServiceError::Conflict(
                "the session has no work tree yet".to_owned(),
            ));
        };
        let Some(message) = self
            .store
            .turn_message(account_id, session_id, turn_id)
            .await?
        else {
            return Err(ServiceError::invalid_field(
                "turn_id",
                format!("the session has no turn {turn_id:?}"),
            ));
        };
        let (Some(target), _) = message.checkpoints() else {
            return Err(ServiceError::Conflict(format!(
                "turn {turn_id} has no start checkpoint to go back to"
            )));
        };
        let revert_id = cinch_store::new_id("revert")?;
        let refs = format!("refs/cinch/runs/{}/reverts/{revert_id}", session.id);
        let started_at = Timestamp::now();
        let restored = tokio::task::spawn_blocking(move || {
            checkpoint::restore(
                &workspace,
                &target,
                &format!("{refs}/start"),
                &format!("{refs}/end"),
                FILES_LISTED,
            )
        })
        .await
        .map_err(|error| ServiceError::Internal(error.into()))?
        .map_err(|error| {
            ServiceError::Internal(anyhow::anyhow!("reverting the work tree: {error}"))
        })?;

        let mut content = format!("Reverted the work tree to {}.", reverted(&message, turn_id));
        if !restored.commits_undone.is_empty() {
            let shas: Vec<&str> = restored
                .commits_undone
                .iter()
                .map(|commit| &commit.sha[..12])
                .collect();
            content.push_str(&format!(
                " The branch went back past the commits made since: {}.",
                shas.join(", ")
            ));
        }
        let view = serde_json::to_value(RevertView {
            turn_id: revert_id,
            reverted_turn_id: turn_id.to_owned(),
            status: TurnState::Completed,
            started_at,
            result: restored,
        })
        .map_err(|error| ServiceError::Internal(error.into()))?;
        let message = self
            .store
            .add_message(&session, MessageKind::Revert, &content, Some(&view), true)
            .await?;
        self.publish_message(account_id, EventName::MessageCreated, &message)
            .await;
        session.last_activity_at = Timestamp::now();
        self.save(&mut session).await?;
        Ok(message)
    }
}

/// The turn or revert `message` records, as a revert names it: a turn by
/// its harness and the first line of its brief, as the conversation shows
/// it, and its id.
fn reverted(message: &Message, turn_id: &str) -> String {
    match (message.kind, message.turn_view()) {
        (MessageKind::Assistant, Some(view)) => format!(
            "the start of turn {turn_id} ({}: \"{}\")",
            view.harness_display_name,
            super::title_from(&view.brief)
        ),
        (MessageKind::Revert, _) => {
            format!("the start of revert {turn_id}, undoing it")
        }
        _ => format!("the start of turn {turn_id}"),
    }
}
