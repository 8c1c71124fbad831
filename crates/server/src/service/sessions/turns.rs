//! A session's turns: starting one with its queued messages and notes,
//! following it, and recording how it ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::lifecycle::Held;
use super::machine::{AfterTurn, after_turn};
use super::{Conductor, Result, Wake, attachments, preview, title_from, workspace};
use crate::runs::launch::{Launch, LaunchError, Started};
use crate::runs::live::{CallRef, EventName, LiveState};
use crate::service::ServiceError;
use cinch_base::timestamp::Timestamp;
use cinch_engine::engine::StartError;
use cinch_engine::engine::brief::Note;
use cinch_engine::engine::result::{Status, TurnResult};
use cinch_store::{
    AccountId, Attachment, AttachmentStatus, CloseReason, Environment, Message, MessageKind,
    Session, SessionId, SessionStatus, TurnEnd, TurnOutcome, TurnState, TurnView,
};

/// The first pause before recording a turn's end again, when the database
/// could not; it doubles up to [`FINISH_RETRY_MOST`].
const FINISH_RETRY_FIRST: std::time::Duration = std::time::Duration::from_secs(1);

/// The longest pause between two attempts to record a turn's end.
const FINISH_RETRY_MOST: std::time::Duration = std::time::Duration::from_secs(30);

/// The most of the conversation, in bytes, the first brief on a node that
/// took a session over carries.
pub(super) const CONTINUATION_LIMIT: usize = 32 * 1024;

impl Conductor {
    pub(super) async fn start_turn(
        self: &Arc<Self>,
        session: &mut Session,
        environment: Option<&Environment>,
        queued: &[Message],
        trace_parent: Option<&str>,
    ) -> Result<()> {
        let mut brief = queued
            .iter()
            .map(|message| message.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        // A native fork whose source session cannot be placed here falls
        // back to a brief fork, and says why.
        let mut fork_from = None;
        let mut fallback = None;
        if Self::forks_natively(session) {
            match self.place_native_fork(session).await {
                Ok(harness_session) => fork_from = Some(harness_session),
                Err(reason) => {
                    tracing::warn!(session = %session.id, "the fork cannot fork its harness session, so its brief retells the conversation: {reason}");
                    session.fork_mode = Some(cinch_store::ForkMode::Brief);
                    self.save(session).await?;
                    fallback = Some(reason);
                }
            }
        }
        if let Some(previous) = session.moved_from_node.take() {
            let header = format!(
                "[cinch: this session continues from node {previous}, which stopped; the earlier harness session stayed there, so this one starts anew. The conversation so far:]"
            );
            brief = self
                .conversation_brief(session, &header, queued, &brief)
                .await?;
        } else if Self::briefs_as_fork(session) {
            if fallback.is_none() {
                fallback = self.brief_reason(session).await;
            }
            let why = fallback
                .map(|reason| format!(" (it could not fork the source's: {reason})"))
                .unwrap_or_default();
            let header = format!(
                "[cinch: this session is a fork of session {} at its turn {}: the work tree is as that turn left it, and this harness session starts anew{why}. The conversation so far:]",
                session
                    .forked_from_session
                    .as_ref()
                    .map_or("", SessionId::as_str),
                session.forked_from_turn.as_deref().unwrap_or_default()
            );
            brief = self
                .conversation_brief(session, &header, queued, &brief)
                .await?;
        }
        let workspace = PathBuf::from(session.workspace.clone().unwrap_or_default());
        let notes = self.attachment_notes(session, &workspace).await?;
        let policy = self.approval_policy(session, environment).await?;
        let launch = Launch {
            account_id: &session.account_id,
            run: session.id.as_str(),
            agent_id: &session.agent_id,
            environment,
            harness: session.harness.clone(),
            repo: workspace.clone(),
            brief: brief.clone(),
            notes,
            model: session.harness_model.clone(),
            effort: session.harness_effort.clone(),
            session_id: fork_from
                .clone()
                .or_else(|| session.harness_session_id.clone()),
            fork: fork_from.is_some(),
            timeout: self.settings.turn_timeout,
            ask: self.turn_asks(&policy, &session.harness),
            trace_parent: trace_parent.map(str::to_owned),
        };
        for message in queued {
            if let Some(message) = self.store.deliver_message(&message.id).await? {
                self.publish_message(&session.account_id, EventName::MessageUpdated, &message)
                    .await;
            }
        }
        let Started { turn, call } = match self.runner.start(launch).await {
            Ok(started) => started,
            Err(LaunchError::Call(error)) => return Err(error.into()),
            Err(LaunchError::Start(error)) => {
                self.runner.slots().release(session.id.as_str());
                let text = format!("{error:#}");
                session.current_turn = None;
                if matches!(error, StartError::CheckpointFailed(_)) {
                    return self
                        .close_with(
                            session,
                            CloseReason::SnapshotFailure,
                            Some(format!(
                                "cinch could not snapshot the workspace before the turn: {text}"
                            )),
                        )
                        .await;
                }
                session.status = SessionStatus::Idle;
                session.close_reason = Some(CloseReason::TurnFailure);
                session.error_message = Some(format!(
                    "The turn could not start: {text}. The transcript is kept; fix that and send a message to try again."
                ));
                return self.save(session).await;
            }
        };
        let turn_id = turn.id().to_owned();
        let display_name = self
            .engine
            .registry()
            .harness(&session.harness)
            .map(|harness| harness.info.display_name)
            .unwrap_or_else(|_| session.harness.clone());
        let view = TurnView {
            call_id: call.call_id.clone(),
            run_id: session.id.to_string(),
            turn_id: turn_id.clone(),
            status: TurnState::Running,
            harness: session.harness.clone(),
            harness_display_name: display_name,
            brief,
            repository: environment
                .map_or("scratch", |environment| environment.name.as_str())
                .to_owned(),
            workspace: workspace.display().to_string(),
            session_id: session.harness_session_id.clone(),
            started_at: call.created_at,
            result: None,
        };
        // The session is running before its turn's message exists, so a reader
        // that sees the message never sees the session idle from before it.
        session.status = SessionStatus::Running;
        session.current_turn = Some(turn_id);
        session.waiting_since = None;
        session.retries = 0;
        session.close_reason = None;
        session.error_message = None;
        session.last_activity_at = Timestamp::now();
        self.save(session).await?;
        let message = self
            .store
            .add_message(
                session,
                MessageKind::Assistant,
                "",
                Some(&view.to_value()),
                true,
            )
            .await?;
        self.publish_message(&session.account_id, EventName::MessageCreated, &message)
            .await;
        self.follow_turn(session, call.call_id, turn, message).await
    }

    /// The brief of a turn that starts a new harness session in a session
    /// with a conversation already (one taken over from another node, or a
    /// fork): `header` says why, then the conversation so far (its most
    /// recent part, up to [`CONTINUATION_LIMIT`] bytes), then `brief`.
    async fn conversation_brief(
        &self,
        session: &Session,
        header: &str,
        queued: &[Message],
        brief: &str,
    ) -> Result<String> {
        let mut lines = Vec::new();
        let mut size = 0;
        let mut cursor = None;
        'pages: loop {
            let page = self
                .messages_newest_first(session, cursor.as_deref())
                .await?;
            for message in &page.items {
                let who = match message.kind {
                    MessageKind::User if !queued.iter().any(|q| q.id == message.id) => "User",
                    MessageKind::Assistant if !message.content.is_empty() => "Assistant",
                    _ => continue,
                };
                let line = format!("{who}: {}", message.content);
                size += line.len() + 2;
                if size > CONTINUATION_LIMIT {
                    lines.push("[earlier messages left out]".to_owned());
                    break 'pages;
                }
                lines.push(line);
            }
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => break,
            }
        }
        lines.reverse();
        Ok(format!(
            "{header}\n\n{}\n\n[cinch: the new message follows.]\n\n{brief}",
            lines.join("\n\n")
        ))
    }

    /// Follows `turn`, call `call_id` of the session's run whose assistant
    /// message is `message`, and ends the session's turn when it ends.
    pub(super) async fn follow_turn(
        self: &Arc<Self>,
        session: &Session,
        call_id: String,
        turn: cinch_engine::engine::Turn,
        message: Message,
    ) -> Result<()> {
        let live = self
            .runner
            .follow(
                CallRef {
                    account_id: session.account_id.clone(),
                    run_id: session.id.to_string(),
                    call_id,
                },
                turn,
            )
            .await
            .map_err(ServiceError::Internal)?;
        self.watch_turn(
            session.account_id.clone(),
            session.id.clone(),
            message,
            live,
        );
        Ok(())
    }

    /// Notes for the turn: the task's attachments, on a session's first turn
    /// all of them, later only those added since the previous turn; binary
    /// ones written to files in `workspace`.
    pub(super) async fn attachment_notes(
        &self,
        session: &Session,
        workspace: &Path,
    ) -> Result<Vec<Note>> {
        let attachments: Vec<Attachment> = self
            .store
            .attachments(&session.account_id, &session.task_id)
            .await?
            .into_iter()
            .filter(|attachment| attachment.status == AttachmentStatus::Ready)
            .collect();
        if attachments.is_empty() {
            // Then when the previous turn was does not matter.
            return Ok(Vec::new());
        }
        let previous = self
            .messages_newest_first(session, None)
            .await?
            .items
            .into_iter()
            // A fork's inherited turns were another harness session's.
            .find(|message| message.kind == MessageKind::Assistant && message.forked_from.is_none())
            .map(|message| message.created_at);
        let new: Vec<Attachment> = attachments
            .into_iter()
            .filter(|attachment| {
                previous
                    .as_ref()
                    .is_none_or(|at| &attachment.created_at > at)
            })
            .collect();
        let workspace = workspace.to_path_buf();
        tokio::task::spawn_blocking(move || {
            new.into_iter()
                .filter_map(|attachment| attachments::note(attachment, &workspace))
                .collect()
        })
        .await
        .map_err(|error| ServiceError::Internal(error.into()))
    }

    pub(super) fn watch_turn(
        self: &Arc<Self>,
        account_id: AccountId,
        session_id: SessionId,
        message: Message,
        mut live: tokio::sync::watch::Receiver<LiveState>,
    ) {
        let this = self.clone();
        tokio::spawn(async move {
            let (outcome, stored) = match live.wait_for(|state| state.outcome.is_some()).await {
                Ok(state) => (
                    state.outcome.clone().expect("waited for it"),
                    state.result_stored,
                ),
                Err(_) => (Err("the turn's follower went away".to_owned()), false),
            };
            if let Some(turn) = message.turn_view()
                && let Err(error) = this
                    .turn_ended_approvals(&account_id, &session_id, &turn.turn_id)
                    .await
            {
                tracing::error!(session = %session_id, "cancelling the ended turn's approvals: {error}");
            }
            // A database that cannot write (its disk is full, it is down)
            // is waited out: the turn's end is recorded once it can.
            let mut pause = FINISH_RETRY_FIRST;
            let stored_end = loop {
                match this
                    .finish_turn(
                        &account_id,
                        &session_id,
                        message.clone(),
                        outcome.clone(),
                        stored,
                    )
                    .await
                {
                    Ok(stored_end) => break stored_end,
                    Err(ServiceError::Store(error)) => {
                        tracing::error!(session = %session_id, "finishing the turn failed, trying again in {} s: {error}", pause.as_secs());
                        tokio::time::sleep(pause).await;
                        pause = (pause * 2).min(FINISH_RETRY_MOST);
                    }
                    Err(error) => {
                        tracing::error!(session = %session_id, "finishing the turn failed: {error}");
                        break None;
                    }
                }
            };
            match stored_end {
                Some(held) => this.kick_held(held, Wake::Progress, None),
                None => this.kick(&account_id, &session_id, Wake::Progress),
            }
            this.kick_waiting_after_end().await;
        });
    }

    /// Keeps the turn's end with its session. The session as kept, its lock
    /// still held, when it was kept whole (not closed by it, not another
    /// node's, not gone): what it does next is decided from that.
    pub(super) async fn finish_turn(
        self: &Arc<Self>,
        account_id: &AccountId,
        session_id: &SessionId,
        message: Message,
        outcome: std::result::Result<Arc<TurnResult>, String>,
        result_stored: bool,
    ) -> Result<Option<Held>> {
        let held = self.session_lock(session_id).lock_owned().await;
        self.runner.slots().release(session_id.as_str());
        // Only a shared database has other nodes to take the lease (as
        // confirm_lease has it).
        if let Some(generation) = self.held_generation(session_id)
            && self.store.is_shared()
            && !self
                .store
                .holds_lease(session_id, self.node_id(), generation)
                .await?
        {
            self.fence(session_id).await;
        }
        if self.is_fenced(session_id) {
            tracing::warn!(session = %session_id, "a turn ended for a session another node took over: not recorded here");
            return Ok(None);
        }
        let Some(mut view) = message.turn_view() else {
            return Err(ServiceError::Internal(anyhow::anyhow!(
                "the turn's message {} holds no turn",
                message.id
            )));
        };
        // Kept before the session is read, so that its usage counts the
        // turn; by the turn's follower already unless that failed (a second
        // write a turn's end cost as much as the first).
        if let Ok(result) = &outcome
            && !result_stored
        {
            self.store
                .record_call_result(account_id, session_id.as_str(), &view.call_id, result)
                .await?;
        }
        let Some(mut session) = self.store.session(account_id, session_id).await? else {
            return Ok(None);
        };
        let content = match &outcome {
            Ok(result) => {
                view.status = turn_state(result.status);
                view.session_id = result.session_id.clone();
                view.result = Some(TurnOutcome::from(&**result));
                result
                    .final_message
                    .clone()
                    .or_else(|| result.detail.clone())
                    .unwrap_or_default()
            }
            Err(error) => {
                view.status = TurnState::Interrupted;
                format!("cinch lost track of the turn: {error}")
            }
        };
        // A native fork's first turn that ended without a harness session:
        // the harness would not fork the source's, so the fork goes on as a
        // brief one.
        let fork_refused = Self::forks_natively(&session)
            && outcome.as_ref().map_or(true, |result| {
                result.session_id.is_none() && result.status != Status::Completed
            });
        if fork_refused {
            tracing::warn!(session = %session.id, "the harness did not fork the source's session: the fork goes on as a brief one");
            session.fork_mode = Some(cinch_store::ForkMode::Brief);
        }
        let mut preview = None;
        if let Ok(result) = &outcome {
            if let Some(harness_session) = &result.session_id {
                session.harness_session_id = Some(harness_session.clone());
            }
            preview = result.final_message.as_deref().and_then(preview::preview);
        }
        let end = TurnEnd {
            message_id: message.id.clone(),
            content,
            turn: view.to_value(),
            preview,
        };
        if let (Ok(result), Some(remote), Some(dir)) = (
            &outcome,
            self.settings.checkpoint_remote.clone(),
            session.workspace.clone(),
        ) && result.end_checkpoint.is_some()
        {
            let tenant = self.tenant(&session.agent_id, None);
            let run = session.id.clone();
            let pushed = tokio::task::spawn_blocking(move || {
                workspace::push_checkpoints(&tenant, Path::new(&dir), &remote, run.as_str())
            })
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?;
            if let Err(error) = pushed {
                // The session goes on; a node taking it over would fall back to the branch.
                tracing::error!(session = %session.id, "{error:#}");
            }
        }
        session.current_turn = None;
        session.last_activity_at = Timestamp::now();
        if session.status == SessionStatus::Closed {
            self.save_turn_end(&mut session, end).await?;
            return Ok(None);
        }
        session.status = SessionStatus::Idle;
        session.close_reason = None;
        session.error_message = None;
        match after_turn(outcome.as_deref().map_err(String::as_str)) {
            AfterTurn::Idle => {}
            AfterTurn::IdleAfter(reason, message) => {
                session.close_reason = Some(reason);
                session.error_message = Some(if fork_refused {
                    format!(
                        "{message} The harness did not fork the source's session, so the next turn starts this fork anew with the conversation so far in its brief."
                    )
                } else {
                    message
                });
            }
            AfterTurn::Close(reason, message) => {
                self.close_after_turn(&mut session, end, reason, message)
                    .await?;
                return Ok(None);
            }
        }
        if let Ok(result) = &outcome
            && session.auto_commit
            && result.changes.total_files > 0
            && let Some(dir) = session.workspace.clone()
        {
            let subject = format!("{}: {}", session.title, title_from(&view.brief));
            let tenant = self.tenant(&session.agent_id, None);
            let committed = tokio::task::spawn_blocking(move || {
                workspace::commit_changes(&tenant, std::path::Path::new(&dir), &subject)
            })
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?;
            if let Err(error) = committed {
                let message = format!(
                    "cinch could not commit the turn's changes on {}: {error:#}",
                    session.branch_name
                );
                self.close_after_turn(&mut session, end, CloseReason::SnapshotFailure, message)
                    .await?;
                return Ok(None);
            }
        }
        let kept = self.save_turn_end(&mut session, end).await?;
        Ok(kept.then_some(Held { held, session }))
    }

    /// Closes the session as [`Self::close_with`] does, keeping the turn's
    /// `end` with it.
    async fn close_after_turn(
        &self,
        session: &mut Session,
        end: TurnEnd,
        reason: CloseReason,
        message: String,
    ) -> Result<()> {
        super::lifecycle::mark_closed(session, reason, Some(message));
        self.save_turn_end(session, end).await?;
        self.give_back(&session.id).await
    }
}

/// Where a turn that ended with `status` stands.
fn turn_state(status: Status) -> TurnState {
    match status {
        Status::Completed => TurnState::Completed,
        Status::Failed => TurnState::Failed,
        Status::TimedOut => TurnState::TimedOut,
        Status::Cancelled => TurnState::Cancelled,
        Status::Interrupted => TurnState::Interrupted,
    }
}
