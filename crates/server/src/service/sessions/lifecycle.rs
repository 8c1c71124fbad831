//! A session's state machine: boot, wait for a turn slot, start a turn or
//! idle, close; and saving each step.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use cinch_base::sync::lock;
use cinch_base::timestamp::Timestamp;
use tracing::Instrument as _;

use super::machine::{Facts, Step, next_step};
use super::ownership::Hold;
use super::{Conductor, EventName, Result, Wake, workspace};
use crate::runs::repository;
use crate::runs::slots::Full;
use crate::runs::turn_env::TurnEnv;
use crate::service::ServiceError;
use cinch_engine::redact::Redactor;
use cinch_store::{
    AccountId, AgentId, CloseReason, Environment, KeptTurnEnd, RebuiltFrom, Session, SessionId,
    SessionStatus, TurnEnd,
};

/// A session as this node just stored it (made, booted, or its turn's end
/// kept), and its lock, held since: what it needs next is decided without
/// reading it again.
pub(super) struct Held {
    pub(super) held: tokio::sync::OwnedMutexGuard<()>,
    pub(super) session: Session,
}

impl Conductor {
    /// Moves the session forward in the background; what it does belongs
    /// in the trace of the caller's span (a request's), if traced.
    pub(super) fn kick(
        self: &Arc<Self>,
        account_id: &AccountId,
        session_id: &SessionId,
        wake: Wake,
    ) {
        self.kick_with(account_id, session_id, wake, None, None);
    }

    /// Moves on a session this node holds the lock of, as [`Self::kick`]
    /// does, from `held` as it stands; a boot takes `environment`.
    pub(super) fn kick_held(
        self: &Arc<Self>,
        held: Held,
        wake: Wake,
        environment: Option<Environment>,
    ) {
        let (account_id, session_id) = (held.session.account_id.clone(), held.session.id.clone());
        self.kick_with(&account_id, &session_id, wake, environment, Some(held));
    }

    /// `session`, as just stored, with its lock: for a caller about to
    /// hand it on to [`Self::kick_held`] or [`Self::kick_booting`].
    pub(super) async fn locked(&self, session: Session) -> Held {
        let held = self.session_lock(&session.id).lock_owned().await;
        Held { held, session }
    }

    /// Moves a new session on, as [`Self::kick`] does, booting it in
    /// `environment`, its environment as the request creating it read it
    /// (none: read when it boots).
    pub(super) fn kick_booting(self: &Arc<Self>, held: Held, environment: Option<Environment>) {
        self.kick_held(held, Wake::Progress, environment);
    }

    fn kick_with(
        self: &Arc<Self>,
        account_id: &AccountId,
        session_id: &SessionId,
        wake: Wake,
        environment: Option<Environment>,
        held: Option<Held>,
    ) {
        let this = self.clone();
        let account_id = account_id.to_owned();
        let session_id = session_id.to_owned();
        let trace = cinch_engine::telemetry::traceparent(&tracing::Span::current());
        tokio::spawn(async move {
            if let Err(error) = this
                .advance(
                    &account_id,
                    &session_id,
                    wake,
                    trace.as_deref(),
                    environment,
                    held,
                )
                .await
            {
                tracing::error!(session = %session_id, "moving the session on failed: {error}");
            }
        });
    }

    /// Boots the workspace, waits for a slot, or starts a turn with the
    /// queued messages: whichever the session needs next. A closed session
    /// stays closed, its queued messages kept, until a message wakes it.
    /// `environment`, when given, is the session's as just read: its boot
    /// takes it. `handed`, when given, is the session as its caller stored
    /// it, its lock held since.
    pub(super) async fn advance(
        self: &Arc<Self>,
        account_id: &AccountId,
        session_id: &SessionId,
        wake: Wake,
        trace: Option<&str>,
        mut environment: Option<Environment>,
        mut handed: Option<Held>,
    ) -> Result<()> {
        let guard = self.session_lock(session_id);
        loop {
            let (held, mut session) = match handed.take() {
                Some(Held { held, session }) => (held, session),
                None => {
                    let held = guard.clone().lock_owned().await;
                    let Some(session) = self.store.session(account_id, session_id).await? else {
                        return Ok(());
                    };
                    (held, session)
                }
            };
            let facts = |has_queued| Facts {
                status: session.status,
                has_workspace: session.workspace.is_some(),
                has_queued,
                wake,
            };
            // The queue is read only when it decides the step (a session
            // booting or running goes on the same either way), and then
            // under the lock, as the turn it starts takes it.
            let (step, queued) = match next_step(facts(false)) == next_step(facts(true)) {
                true => (next_step(facts(false)), Vec::new()),
                false => {
                    let queued = self.store.queued_messages(&session.id).await?;
                    (next_step(facts(!queued.is_empty())), queued)
                }
            };
            if step != Step::Stay {
                match self.hold(&mut session).await? {
                    Hold::Ours => {}
                    Hold::NotOurs => return Ok(()),
                    Hold::TookOver => {
                        drop(held);
                        continue;
                    }
                }
            }
            match step {
                Step::Stay => return Ok(()),
                Step::Boot => {
                    if !lock(&self.booting).insert(session_id.clone()) {
                        // Booting already: that boot moves the session on when done.
                        return Ok(());
                    }
                    let claimed = self.start_boot(&mut session, environment.take()).await;
                    // Setup commands can take minutes: a close must not wait for them.
                    drop(held);
                    let finished = match claimed {
                        Ok(environment) => self.finish_boot(&session, environment, trace).await,
                        Err(error) => Err(error),
                    };
                    lock(&self.booting).remove(session_id);
                    match finished? {
                        // Look again, with the workspace made.
                        Some(next) => handed = Some(next),
                        None => return Ok(()),
                    }
                    continue;
                }
                Step::Idle => {
                    if session.status == SessionStatus::Idle {
                        // Saved so by the turn's end already: nothing to write.
                        return Ok(());
                    }
                    session.status = SessionStatus::Idle;
                    return self.save(&mut session).await;
                }
                Step::Run => {}
            }
            if session.status == SessionStatus::Closed {
                session.close_reason = None;
                session.error_message = None;
            }
            if !self.confirm_lease(&session.id).await? {
                return Ok(());
            }
            if let Err(full) = self
                .runner
                .slots()
                .take(&session.account_id, session.id.as_str())
                .await?
            {
                return self.wait_for_slot(&mut session, full).await;
            }
            let environment = self.environment_of(&session).await?;
            return match self
                .start_turn(&mut session, environment.as_ref(), &queued, trace)
                .await
            {
                Ok(()) => Ok(()),
                Err(error) => {
                    self.runner.slots().release(session.id.as_str());
                    Err(error)
                }
            };
        }
    }

    /// Marks the session booting (under its lock) and returns its
    /// environment: `read` when that is it, as the caller just read it.
    pub(super) async fn start_boot(
        &self,
        session: &mut Session,
        read: Option<Environment>,
    ) -> Result<Option<Environment>> {
        let environment =
            match read.filter(|read| session.environment_id.as_ref() == Some(&read.id)) {
                Some(read) => Some(read),
                None => self.environment_of(session).await?,
            };
        let marked = session.status == SessionStatus::Booting
            && (session.moved_from_node.is_some()
                || (session.close_reason.is_none() && session.error_message.is_none()));
        if marked {
            // A new session is stored booting: nothing to write.
            return Ok(environment);
        }
        session.status = SessionStatus::Booting;
        if session.moved_from_node.is_none() {
            // A session taken over keeps saying what happened to it.
            session.close_reason = None;
            session.error_message = None;
        }
        self.save(session).await?;
        Ok(environment)
    }

    /// Makes the session's workspace, without its lock, then records the
    /// outcome under it. When the session can go on, the session as saved
    /// with its lock still held.
    pub(super) async fn finish_boot(
        &self,
        session: &Session,
        environment: Option<Environment>,
        trace: Option<&str>,
    ) -> Result<Option<Held>> {
        let span = tracing::info_span!(
            target: cinch_engine::telemetry::TARGET,
            parent: None,
            "cinch.worktree",
            otel.name = "worktree",
            otel.status_code = tracing::field::Empty,
            cinch.rebuilt = session.moved_from_node.is_some(),
        );
        cinch_engine::telemetry::continue_trace(&span, trace);
        let booted = self
            .boot(session, environment.as_ref())
            .instrument(span.clone())
            .await;
        if booted.is_err() {
            span.record("otel.status_code", "ERROR");
        }
        drop(span);
        let held = self.session_lock(&session.id).lock_owned().await;
        let Some(mut session) = self.store.session(&session.account_id, &session.id).await? else {
            return Ok(None);
        };
        let closed_meanwhile = session.status == SessionStatus::Closed;
        match booted {
            Ok((dir, rebuilt)) => {
                // Kept even when closed meanwhile: a later message resumes in it.
                session.workspace = Some(dir.display().to_string());
                if let Some(rebuilt) = rebuilt {
                    session.rebuilt_from = Some(rebuilt);
                    let how = match rebuilt {
                        RebuiltFrom::Checkpoint => format!(
                            "Its work tree was rebuilt on node {} from its last end checkpoint, fetched from the checkpoint remote.",
                            self.node_id()
                        ),
                        RebuiltFrom::Branch => format!(
                            "Its work tree was rebuilt on node {} from branch {} as last committed: what the last turns left uncommitted stayed on the other node (a checkpoint remote, `cinch serve --checkpoint-remote`, carries it over).",
                            self.node_id(),
                            session.branch_name
                        ),
                    };
                    session.error_message = Some(match session.error_message.take() {
                        Some(before) => format!("{before} {how}"),
                        None => how,
                    });
                    tracing::info!(session = %session.id, from = rebuilt.as_str(), "rebuilt the work tree of a session taken over");
                }
                self.save(&mut session).await?;
                Ok((!closed_meanwhile).then_some(Held { held, session }))
            }
            Err(_) if closed_meanwhile => Ok(None),
            Err(workspace::WorkspaceError::Setup(message)) => {
                self.close_with(&mut session, CloseReason::SetupFailure, Some(message))
                    .await?;
                Ok(None)
            }
            Err(workspace::WorkspaceError::Repository(message)) => {
                self.close_with(&mut session, CloseReason::VmFailure, Some(message))
                    .await?;
                Ok(None)
            }
        }
    }

    /// The session's environment, when it has one.
    pub(super) async fn environment_of(&self, session: &Session) -> Result<Option<Environment>> {
        match &session.environment_id {
            Some(id) => Ok(self.store.environment(&session.account_id, id).await?),
            None => Ok(None),
        }
    }

    pub(super) async fn wait_for_slot(&self, session: &mut Session, full: Full) -> Result<()> {
        let now = Timestamp::now();
        if session.status != SessionStatus::Waiting {
            session.status = SessionStatus::Waiting;
            session.waiting_since = Some(now);
            session.retries = 0;
        }
        session.retries += 1;
        if self.close_if_overlong(session).await? {
            return Ok(());
        }
        session.error_message = Some(match full {
            Full::Node => format!(
                "Waiting for a turn slot: {} turns are running, the most cinch runs at once. The session starts by itself when one ends; nothing to do.",
                self.settings.max_turns
            ),
            Full::Account => format!(
                "Waiting for a turn slot: this account runs as many turns as it may at once ({}, `cinch serve --max-turns-per-account`), on all nodes together. The session starts by itself when one of them ends; nothing to do.",
                self.settings.max_turns_per_account.unwrap_or_default()
            ),
        });
        self.save(session).await
    }

    /// Makes the session's workspace (blocking work, off the async threads).
    pub(super) async fn boot(
        &self,
        session: &Session,
        environment: Option<&Environment>,
    ) -> std::result::Result<(PathBuf, Option<RebuiltFrom>), workspace::WorkspaceError> {
        let dir = self.workspace_dir(&session.id);
        let checkpoint = match &session.moved_from_node {
            Some(_) => self
                .last_end_checkpoint(session)
                .await
                .map_err(|error| workspace::WorkspaceError::Repository(error.to_string()))?,
            None => None,
        };
        let rebuilding = session.moved_from_node.is_some();
        let fork = self
            .fork_source(session)
            .await
            .map_err(|error| workspace::WorkspaceError::Repository(error.to_string()))?;
        let remote = self.settings.checkpoint_remote.clone();
        let run = session.id.clone();
        let clone_dir = environment.map_or_else(
            || self.home.root().join("repos").join("none"),
            |environment| self.home.root().join("repos").join(environment.id.as_str()),
        );
        if let Some(environment) = environment
            && let Some(path) = repository::local_path(&environment.repository)
        {
            self.runner
                .check_repository(&session.account_id, path)
                .await
                .map_err(|error| {
                    workspace::WorkspaceError::Repository(format!(
                        "environment {}'s repository could not be checked: {error}",
                        environment.name
                    ))
                })?
                .map_err(|why| {
                    workspace::WorkspaceError::Repository(format!(
                        "environment {}'s repository is refused: {why}",
                        environment.name
                    ))
                })?;
        }
        let tenant = self.tenant(&session.agent_id, environment);
        let redactor = Redactor::new(
            environment
                .into_iter()
                .flat_map(|e| e.secrets.values().cloned()),
        );
        let repository = environment.map(|e| e.repository.clone());
        let setup = environment.map(|e| e.setup.clone()).unwrap_or_default();
        let branch = session.branch_name.clone();
        let base = session.base_branch.clone();
        let tmp_dir = self.home.root().join("tmp").join(session.id.as_str());
        let setup_log = self.setup_log_path(&session.id);
        let _permit = self.boots.acquire().await;
        let result = tokio::task::spawn_blocking(move || {
            for private in [&tenant.home, &tmp_dir] {
                cinch_engine::home::create_private_dir(private)
                    .map_err(|error| workspace::WorkspaceError::Repository(format!("{error:#}")))?;
            }
            // Each boot's setup log is its own.
            let _ = std::fs::remove_file(&setup_log);
            if rebuilding && dir.exists() {
                // Left from when this node last had the session: stale.
                std::fs::remove_dir_all(&dir).map_err(|error| {
                    workspace::WorkspaceError::Repository(format!(
                        "removing the stale work tree {}: {error}",
                        dir.display()
                    ))
                })?;
            }
            let made = workspace::create(&workspace::Plan {
                dir: &dir,
                repository: repository.as_deref(),
                clone_dir: &clone_dir,
                branch: &branch,
                base_branch: base.as_deref(),
                setup: &setup,
                tmp_dir: &tmp_dir,
                setup_log: &setup_log,
                tenant: &tenant,
                redactor: &redactor,
                rebuild: rebuilding.then_some(workspace::Rebuild {
                    run: run.as_str(),
                    checkpoint: checkpoint.as_deref(),
                    remote: remote.as_deref(),
                }),
                fork: fork.as_ref().map(|fork| workspace::ForkFrom {
                    run: &fork.run,
                    checkpoint: &fork.checkpoint,
                    source_dir: fork.source_dir.as_deref(),
                    remote: remote.as_deref(),
                }),
            });
            let _ = std::fs::remove_dir_all(&tmp_dir);
            made.map(|rebuilt| (dir, rebuilt))
        })
        .await;
        match result {
            Ok(result) => result,
            Err(error) => Err(workspace::WorkspaceError::Repository(error.to_string())),
        }
    }

    /// The end checkpoint of the session's last turn that took one.
    pub(super) async fn last_end_checkpoint(&self, session: &Session) -> Result<Option<String>> {
        let mut cursor = None;
        loop {
            let page = self
                .messages_newest_first(session, cursor.as_deref())
                .await?;
            let found = page
                .items
                .iter()
                .find_map(|message| message.checkpoints().1);
            if found.is_some() || page.next_cursor.is_none() {
                return Ok(found);
            }
            cursor = page.next_cursor;
        }
    }

    /// How cinch runs a process for this agent outside its turns: in the
    /// sandbox, with what its harness would get as its environment.
    pub(super) fn tenant(
        &self,
        agent_id: &AgentId,
        environment: Option<&Environment>,
    ) -> workspace::Tenant {
        let mut env = self.base_env.clone();
        env.extend(TurnEnv::new(&self.runner.agent_home(agent_id), environment).env);
        let source = environment
            .filter(|environment| repository::is_url(&environment.repository))
            .and_then(|environment| repository::local_path(&environment.repository));
        workspace::Tenant {
            launcher: self.launcher.clone(),
            env,
            home: self.runner.agent_home(agent_id),
            read_only: source.map(Path::to_path_buf).into_iter().collect(),
            config: self.engine.config().sandbox.clone(),
            allowed_hosts: environment.and_then(|environment| environment.allowed_hosts.clone()),
        }
    }

    pub(super) async fn close_with(
        &self,
        session: &mut Session,
        reason: CloseReason,
        message: Option<String>,
    ) -> Result<()> {
        mark_closed(session, reason, message);
        self.save(session).await?;
        self.give_back(&session.id).await
    }

    /// Stores the session and publishes it. While this node holds its lease
    /// the write is conditioned on it; a session whose lease this node lost
    /// is never written (fencing).
    pub(super) async fn save(&self, session: &mut Session) -> Result<()> {
        let holder = self.writing_as(session)?;
        let written = match holder {
            Some((node, generation)) => {
                self.store
                    .save_session_fenced(session, node, generation)
                    .await?
            }
            None => {
                self.store.save_session(session).await?;
                true
            }
        };
        if !written {
            return Err(self.lost(&session.id).await);
        }
        self.publish_session(session).await;
        Ok(())
    }

    /// Stores the session as [`Self::save`] does, and the turn's `end` with
    /// it in the same transaction; publishes both. False when the session
    /// is gone.
    pub(super) async fn save_turn_end(&self, session: &mut Session, end: TurnEnd) -> Result<bool> {
        let holder = self.writing_as(session)?;
        match self.store.keep_turn_end(session, holder, end).await? {
            KeptTurnEnd::Kept(message) => {
                if let Some(message) = message {
                    self.publish_message(&session.account_id, EventName::MessageUpdated, &message)
                        .await;
                }
                self.publish_session(session).await;
                Ok(true)
            }
            // Without a lease the session is gone: nothing to tell.
            KeptTurnEnd::SessionNotWritten if holder.is_none() => Ok(false),
            KeptTurnEnd::SessionNotWritten => Err(self.lost(&session.id).await),
        }
    }

    /// The lease a write of `session` is conditioned on (a node and a
    /// generation; none when this node holds none), or the refusal when this
    /// node lost it.
    fn writing_as(&self, session: &mut Session) -> Result<Option<(&str, i64)>> {
        if session.status != SessionStatus::Waiting {
            session.waiting_since = None;
        }
        if self.is_fenced(&session.id) {
            return Err(fenced(&session.id));
        }
        Ok(self
            .held_generation(&session.id)
            .map(|generation| (self.node_id(), generation)))
    }

    /// Fences a session whose conditioned write found another node's lease,
    /// and the refusal to say so.
    async fn lost(&self, session_id: &SessionId) -> ServiceError {
        self.fence(session_id).await;
        fenced(session_id)
    }
}

/// Closes `session` for `reason`, with what went wrong and what to do next.
pub(super) fn mark_closed(session: &mut Session, reason: CloseReason, message: Option<String>) {
    session.status = SessionStatus::Closed;
    session.close_reason = Some(reason);
    session.error_message = message;
    session.waiting_since = None;
    session.retries = 0;
}

/// The refusal of a write to a session another node took over.
fn fenced(session_id: &SessionId) -> ServiceError {
    ServiceError::Conflict(format!(
        "session {session_id} was taken over by another node: this node no longer writes to it"
    ))
}
