//! What callers ask of the conductor: tasks, sessions, messages, attachments,
//! abort and close.

use cinch_store::AttachmentId;
use std::sync::Arc;

use super::resolve::{Asked, Choice};
use super::{
    Conductor, DEFAULT_IDLE_TIMEOUT_SECONDS, MOST_FAN_OUT, Result, SessionSpec, TaskSpec, Wake,
    base_branch, title_from, workspace,
};
use crate::runs::live::EventName;
use crate::service::ServiceError;
use cinch_store::{
    AccountId, Agent, Attachment, CloseReason, Direction, Environment, EnvironmentId, Message,
    MessageKind, NewAttachment, NewSession, NewTask, Page, Session, SessionId, SessionStatus, Task,
    TaskId, TokenOwner, TurnView,
};

impl Conductor {
    /// Creates a task as `caller`; with a prompt its first session starts.
    pub async fn create_task(
        self: &Arc<Self>,
        account_id: &AccountId,
        caller: &TokenOwner,
        spec: TaskSpec,
    ) -> Result<Task> {
        let agent = self
            .acting_agent(account_id, spec.created_by.as_deref())
            .await?;
        self.check_fan_out(&spec)?;
        // Read once: the approvals check and the sessions' boot take it from here.
        let environment = match &spec.environment_id {
            Some(id) => Some(self.environment(account_id, id).await?),
            None => None,
        };
        let environment_id = match &environment {
            Some(environment) => Some(environment.id.clone()),
            None => agent.environment_id.clone(),
        };
        let owner = match caller {
            TokenOwner::Member(id) => Some(id.clone()),
            TokenOwner::Agent(_) => None,
        };
        let title = spec
            .title
            .clone()
            .unwrap_or_else(|| title_from(spec.prompt.as_deref().unwrap_or("")));
        // One session, or one per entry of a fan-out.
        let asked: Vec<Asked> = if spec.sessions.is_empty() {
            vec![Asked {
                harness: spec.harness.as_deref(),
                model: spec.model.as_deref(),
                effort: spec.effort.as_deref(),
            }]
        } else {
            spec.sessions
                .iter()
                .map(|choice| Asked {
                    harness: Some(&choice.harness),
                    model: choice.model.as_deref(),
                    effort: choice.effort.as_deref(),
                })
                .collect()
        };
        let choices: Vec<_> = asked
            .iter()
            .map(|asked| self.resolve(asked, &agent))
            .collect();
        if spec.prompt.is_some() {
            for choice in &choices {
                self.check_approvals(
                    account_id,
                    spec.approvals.as_ref(),
                    environment_id.as_ref(),
                    environment.as_ref(),
                    &choice.harness,
                )
                .await?;
            }
        }
        let task = self
            .store
            .create_task(
                account_id,
                NewTask {
                    title: title.clone(),
                    environment_id: environment_id.clone(),
                    idle_timeout_seconds: spec
                        .idle_timeout_seconds
                        .unwrap_or(DEFAULT_IDLE_TIMEOUT_SECONDS),
                    created_by: agent.id.clone(),
                    owner,
                },
            )
            .await?;
        for attachment in spec.attachments {
            self.store
                .create_attachment(account_id, &task.id, attachment)
                .await?;
        }
        let mut sessions = Vec::new();
        if let Some(prompt) = spec.prompt {
            for choice in choices {
                let session_spec = SessionSpec {
                    title: Some(title.clone()),
                    prompt: Some(prompt.clone()),
                    environment_id: environment_id.clone(),
                    approvals: spec.approvals.clone(),
                    ..SessionSpec::default()
                };
                let session = self
                    .start_session(
                        &task,
                        &agent,
                        choice,
                        session_spec,
                        spec.title.is_none(),
                        environment.as_ref(),
                    )
                    .await?;
                sessions.push(session);
            }
        }
        Ok(task.with_new_sessions(&sessions))
    }

    /// Refuses a fan-out that cannot start as asked, before anything is stored.
    fn check_fan_out(&self, spec: &TaskSpec) -> Result<()> {
        if spec.sessions.is_empty() {
            return Ok(());
        }
        if spec.sessions.len() > MOST_FAN_OUT {
            return Err(ServiceError::invalid_field(
                "sessions",
                format!("at most {MOST_FAN_OUT} sessions start at once"),
            ));
        }
        if spec.prompt.is_none() {
            return Err(ServiceError::invalid_field(
                "prompt",
                "sessions start with a prompt: send one for them all",
            ));
        }
        if spec.harness.is_some() || spec.model.is_some() || spec.effort.is_some() {
            return Err(ServiceError::invalid_field(
                "sessions",
                "with sessions, each names its harness, model and effort: leave the task's out",
            ));
        }
        for (index, choice) in spec.sessions.iter().enumerate() {
            if self.engine.registry().harness(&choice.harness).is_err() {
                return Err(ServiceError::invalid_field(
                    format!("sessions[{index}].harness"),
                    format!(
                        "no harness is named {}: GET /v1/models lists them",
                        choice.harness
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The account's task.
    pub async fn task(&self, account_id: &AccountId, task_id: &TaskId) -> Result<Task> {
        self.store
            .task(account_id, task_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound("no such task".into()))
    }

    /// Refuses a task the account does not have: for a request about its
    /// sessions or attachments, which needs no more of it.
    pub async fn check_task(&self, account_id: &AccountId, task_id: &TaskId) -> Result<()> {
        if self.store.has_task(account_id, task_id).await? {
            Ok(())
        } else {
            Err(ServiceError::NotFound("no such task".into()))
        }
    }

    /// A page of the account's tasks, newest first; with `unowned`, only
    /// those nobody owns.
    pub async fn tasks(
        &self,
        account_id: &AccountId,
        unowned: bool,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Task>> {
        Ok(self.store.tasks(account_id, unowned, cursor, limit).await?)
    }

    /// A page of the task's sessions, oldest first.
    pub async fn sessions(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Session>> {
        self.check_task(account_id, task_id).await?;
        Ok(self
            .store
            .sessions(account_id, task_id, cursor, limit)
            .await?)
    }

    /// A page of the session's messages in `direction`, as a JSON array's
    /// text, and the cursor of the next page: the listing is the API's
    /// busiest read, so the store writes its JSON.
    pub async fn messages_json(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        direction: Direction,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<(String, Option<String>)> {
        let (data, count, next_cursor) = self
            .store
            .messages_json(account_id, task_id, session_id, direction, cursor, limit)
            .await?;
        if count == 0 {
            // No rows: an empty page of a session that exists, or not found.
            self.session(account_id, task_id, session_id).await?;
        }
        Ok((data, next_cursor))
    }

    /// The task's attachments, oldest first.
    pub async fn attachments(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
    ) -> Result<Vec<Attachment>> {
        self.check_task(account_id, task_id).await?;
        Ok(self.store.attachments(account_id, task_id).await?)
    }

    /// The task's attachment.
    pub async fn attachment(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        attachment_id: &AttachmentId,
    ) -> Result<Attachment> {
        self.store
            .attachment(account_id, task_id, attachment_id)
            .await?
            .ok_or_else(|| ServiceError::NotFound("no such attachment".into()))
    }

    /// The account's session of the task.
    pub async fn session(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
    ) -> Result<Session> {
        self.store
            .session(account_id, session_id)
            .await?
            .filter(|session| &session.task_id == task_id)
            .ok_or_else(|| ServiceError::NotFound("no such session".into()))
    }

    /// The account's session of the task, and whether it has done all it
    /// was asked: idle or closed with no message waiting for a turn. Read
    /// under the session's lock, which a turn's start holds from handing it
    /// the queued messages until the session shows as running, so that
    /// moment never reads as done. (A turn another node sharing the
    /// database starts is outside this lock.)
    pub async fn settled(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
    ) -> Result<(Session, bool)> {
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let session = self.session(account_id, task_id, session_id).await?;
        let settled = matches!(session.status, SessionStatus::Idle | SessionStatus::Closed)
            && self.store.queued_messages(&session.id).await?.is_empty();
        Ok((session, settled))
    }

    /// The session's newest turn, as its assistant message holds it; none
    /// before its first turn (or past its 200 newest messages).
    pub async fn last_turn(&self, session: &Session) -> Result<Option<(Message, TurnView)>> {
        let Some(message) = self
            .messages_newest_first(session, None)
            .await?
            .items
            .into_iter()
            .find(|message| message.kind == MessageKind::Assistant)
        else {
            return Ok(None);
        };
        let turn = match &message.turn {
            Some(turn) => serde_json::from_str(turn.get()).map_err(|error| {
                ServiceError::Internal(anyhow::anyhow!("a stored turn: {error}"))
            })?,
            None => return Ok(None),
        };
        Ok(Some((message, turn)))
    }

    /// Starts another session under the task, as the task's agent with its
    /// current settings.
    pub async fn create_session(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        mut spec: SessionSpec,
    ) -> Result<Session> {
        let task = self.task(account_id, task_id).await?;
        let agent = self
            .acting_agent(account_id, Some(task.created_by.as_str()))
            .await?;
        // Read once: the checks below and the session's boot take it from here.
        let environment = match &spec.environment_id {
            Some(id) => Some(self.environment(account_id, id).await?),
            None => None,
        };
        spec.environment_id = match &environment {
            Some(environment) => Some(environment.id.clone()),
            None => task.environment_id.clone(),
        };
        if let Some(branch) = &spec.branch_name
            && !workspace::is_valid_branch(branch)
        {
            return Err(ServiceError::invalid_field(
                "branch_name",
                format!("{branch} is not a valid git branch name"),
            ));
        }
        if let Some(branch) = &spec.base_branch
            && !workspace::is_valid_branch(branch)
        {
            return Err(ServiceError::invalid_field(
                "base_branch",
                format!("{branch} is not a valid git branch name"),
            ));
        }
        if let (Some(branch), Some(environment_id)) = (&spec.base_branch, &spec.environment_id) {
            self.check_base_branch(account_id, environment_id, environment.as_ref(), branch)
                .await?;
        }
        let choice = self.resolve(&Asked::default(), &agent);
        self.check_approvals(
            account_id,
            spec.approvals.as_ref(),
            spec.environment_id.as_ref(),
            environment.as_ref(),
            &choice.harness,
        )
        .await?;
        if spec.title.is_none() {
            spec.title = Some(task.title.clone());
        }
        self.start_session(&task, &agent, choice, spec, false, environment.as_ref())
            .await
    }

    /// Refuses an approval policy (the one given, else the environment's)
    /// that needs asking when `harness` cannot ask. `read` is the
    /// environment when the caller read it already.
    async fn check_approvals(
        &self,
        account_id: &AccountId,
        given: Option<&cinch_store::approval_policy::ApprovalPolicy>,
        environment_id: Option<&EnvironmentId>,
        read: Option<&Environment>,
        harness: &str,
    ) -> Result<()> {
        let policy = match (given, environment_id) {
            (Some(policy), _) => Some(policy.clone()),
            (None, Some(id)) => self.environment_once(account_id, id, read).await?.approvals,
            (None, None) => None,
        };
        match policy {
            Some(policy) => self.check_policy_fits(&policy, harness),
            None => Ok(()),
        }
    }

    /// Refuses a base branch the environment's repository does not have,
    /// when the repository can be read now (a local one, or a clone made).
    /// `read` is the environment when the caller read it already.
    pub(super) async fn check_base_branch(
        &self,
        account_id: &AccountId,
        environment_id: &EnvironmentId,
        read: Option<&Environment>,
        branch: &str,
    ) -> Result<()> {
        let environment = self
            .environment_once(account_id, environment_id, read)
            .await?;
        let clone_dir = self.home.root().join("repos").join(environment.id.as_str());
        let repository = environment.repository.clone();
        let looked_up = {
            let branch = branch.to_owned();
            tokio::task::spawn_blocking(move || {
                base_branch::look_up(&repository, &clone_dir, &branch)
            })
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?
        };
        match looked_up {
            base_branch::BaseBranch::Missing => Err(ServiceError::invalid_field(
                "base_branch",
                format!(
                    "{branch} is neither a branch of {} nor origin/{branch}",
                    environment.repository
                ),
            )),
            base_branch::BaseBranch::Found | base_branch::BaseBranch::Unknown => Ok(()),
        }
    }

    /// Starts a session of the task; `read` is its environment when the
    /// request read it already: its boot takes it from there.
    pub(super) async fn start_session(
        self: &Arc<Self>,
        task: &Task,
        agent: &Agent,
        choice: Choice,
        spec: SessionSpec,
        title_from_prompt: bool,
        read: Option<&Environment>,
    ) -> Result<Session> {
        self.start_session_from(task, agent, choice, spec, title_from_prompt, None, read)
            .await
    }

    /// [`Self::start_session`], for a fork with where it comes from and
    /// what it inherits: its inherited messages come first.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn start_session_from(
        self: &Arc<Self>,
        task: &Task,
        agent: &Agent,
        choice: Choice,
        spec: SessionSpec,
        title_from_prompt: bool,
        fork: Option<(cinch_store::ForkOrigin, super::fork::Inherited)>,
        read: Option<&Environment>,
    ) -> Result<Session> {
        let (origin, inherited) = fork.unzip();
        let session = self
            .store
            .create_session(
                &task.account_id,
                NewSession {
                    task_id: task.id.clone(),
                    agent_id: agent.id.clone(),
                    title: spec.title.clone().unwrap_or_else(|| task.title.clone()),
                    environment_id: spec.environment_id.clone(),
                    branch_name: spec.branch_name.clone(),
                    base_branch: spec.base_branch.clone(),
                    auto_commit: spec.auto_commit,
                    harness: choice.harness,
                    vendor: choice.vendor,
                    harness_model: choice.model,
                    harness_effort: choice.effort,
                    fork: origin,
                },
            )
            .await?;
        // Held until its advance takes it as made, so that nothing changes
        // it meanwhile and the advance needs not read it again.
        let held = self.locked(session.clone()).await;
        if let Some(policy) = &spec.approvals {
            self.store
                .set_session_approvals(&session.id, policy)
                .await?;
        }
        if let Some(inherited) = inherited {
            self.store
                .inherit_messages(&session, &inherited.messages, &inherited.forked_from)
                .await?;
        }
        self.publish_session(&session).await;
        if title_from_prompt {
            let message = self
                .store
                .add_message(&session, MessageKind::AiTitle, &session.title, None, true)
                .await?;
            self.publish_message(&session.account_id, EventName::MessageCreated, &message)
                .await;
        }
        for attachment in self.store.attachments(&task.account_id, &task.id).await? {
            self.note_attachment(&session, &attachment).await?;
        }
        if let Some(prompt) = spec.prompt {
            let message = self
                .store
                .add_message(&session, MessageKind::User, &prompt, None, false)
                .await?;
            self.publish_message(&session.account_id, EventName::MessageCreated, &message)
                .await;
        }
        let environment = read.filter(|read| session.environment_id.as_ref() == Some(&read.id));
        self.kick_booting(held, environment.cloned());
        Ok(session)
    }

    /// Adds an attachment to the task and notes it in each open session;
    /// their next turns get it in the brief.
    pub async fn attach(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        attachment: NewAttachment,
    ) -> Result<Attachment> {
        self.check_task(account_id, task_id).await?;
        let attachment = self
            .store
            .create_attachment(account_id, task_id, attachment)
            .await?;
        let sessions = self.store.sessions(account_id, task_id, None, 200).await?;
        for session in sessions
            .items
            .iter()
            .filter(|s| s.status != SessionStatus::Closed)
        {
            self.note_attachment(session, &attachment).await?;
        }
        Ok(attachment)
    }

    /// An internal `attachment` message: what the agent will be given.
    pub(super) async fn note_attachment(
        &self,
        session: &Session,
        attachment: &Attachment,
    ) -> Result<()> {
        let text = match &attachment.error {
            None => format!("attached {}", attachment.name),
            Some(error) => format!("could not attach {}: {error}", attachment.name),
        };
        let message = self
            .store
            .add_message(session, MessageKind::Attachment, &text, None, true)
            .await?;
        self.publish_message(&session.account_id, EventName::MessageCreated, &message)
            .await;
        Ok(())
    }

    /// Queues a user message and resumes the session if it is idle or closed.
    pub async fn post_message(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        text: &str,
    ) -> Result<Message> {
        let session = self.session(account_id, task_id, session_id).await?;
        let message = self
            .store
            .add_message(&session, MessageKind::User, text, None, false)
            .await?;
        self.publish_message(&session.account_id, EventName::MessageCreated, &message)
            .await;
        if session.status == SessionStatus::Running || session.status == SessionStatus::Waiting {
            let note = self
                .store
                .add_message(
                    &session,
                    MessageKind::QueueOperation,
                    "queued: delivered when the current turn ends",
                    None,
                    true,
                )
                .await?;
            self.publish_message(&session.account_id, EventName::MessageCreated, &note)
                .await;
        }
        self.kick(account_id, &session.id, Wake::Message);
        self.wake_on_other_nodes(account_id, &session.id).await;
        Ok(message)
    }

    /// Stops the running turn (it ends `cancelled`) or the wait for a slot;
    /// the session stays open, idle.
    pub async fn abort(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
    ) -> Result<Session> {
        let session = self.session(account_id, task_id, session_id).await?;
        match session.status {
            SessionStatus::Running => {
                if let Some(turn) = session.current_turn.clone() {
                    self.stop_turn_wherever(account_id, session_id, turn)
                        .await?;
                }
                Ok(session)
            }
            SessionStatus::Waiting => {
                let guard = self.session_lock(session_id);
                let _held = guard.lock().await;
                let mut session = self.session(account_id, task_id, session_id).await?;
                self.drop_queue(&session).await?;
                session.status = SessionStatus::Idle;
                session.waiting_since = None;
                session.retries = 0;
                session.error_message = None;
                self.save(&mut session).await?;
                Ok(session)
            }
            status => Err(ServiceError::Conflict(format!(
                "the session is {status}: there is nothing to abort"
            ))),
        }
    }

    /// Closes the session (`close_reason: user_closed`), stopping a running turn.
    pub async fn close(
        self: &Arc<Self>,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
    ) -> Result<Session> {
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let mut session = self.session(account_id, task_id, session_id).await?;
        if session.status == SessionStatus::Closed {
            return Ok(session);
        }
        if let (Some(turn), SessionStatus::Running) = (session.current_turn.clone(), session.status)
        {
            self.stop_turn_wherever(account_id, session_id, turn)
                .await?;
        }
        self.drop_queue(&session).await?;
        self.close_with(&mut session, CloseReason::UserClosed, None)
            .await?;
        Ok(session)
    }

    /// Stops the session's `turn` on the node that runs it: here, or, on a
    /// shared database, another node told to.
    async fn stop_turn_wherever(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        turn: String,
    ) -> Result<()> {
        if self.store.is_shared() && !self.runs_turn_here(session_id, &turn) {
            return self
                .stop_on_other_nodes(account_id, session_id, &turn)
                .await;
        }
        self.stop_turn(turn).await
    }

    pub(super) async fn stop_turn(&self, turn: String) -> Result<()> {
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || engine.stop(&turn))
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?
            .map_err(|error| ServiceError::Conflict(format!("{error:#}")))
    }

    /// Marks the session's queued messages as dropped, so that they are not
    /// delivered later by surprise.
    pub(super) async fn drop_queue(&self, session: &Session) -> Result<()> {
        let queued = self.store.queued_messages(&session.id).await?;
        if queued.is_empty() {
            return Ok(());
        }
        for message in &queued {
            if let Some(message) = self.store.deliver_message(&message.id).await? {
                self.publish_message(&session.account_id, EventName::MessageUpdated, &message)
                    .await;
            }
        }
        let note = self
            .store
            .add_message(
                session,
                MessageKind::QueueOperation,
                &format!(
                    "dropped {} queued message(s): the session was stopped",
                    queued.len()
                ),
                None,
                true,
            )
            .await?;
        self.publish_message(&session.account_id, EventName::MessageCreated, &note)
            .await;
        Ok(())
    }
}
