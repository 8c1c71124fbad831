//! Tasks and sessions on the turn engine: the spec's lifecycle without HTTP.
//!
//! A session is one harness session in its own workspace (see [`workspace`]);
//! each user message is queued (sequence null) and delivered to the next turn,
//! which runs as one assistant message. The [`Conductor`] owns the lifecycle:
//! booting the workspace, waiting for a turn slot past the cap on concurrent
//! turns, running and finishing turns, abort, close, idle teardown, and picking
//! up running turns after a restart. Every change is stored first, then
//! published as a live event of the session's run (its id).

pub mod attachments;
mod base_branch;
pub mod live;
pub mod preview;
pub mod resolve;
mod revert;
pub mod workspace;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};

use crate::engine::brief::Note;
use crate::engine::result::{Status, TurnResult};
use crate::engine::{Engine, StartCheckpointFailed, TurnRequest};
use crate::home::Home;
use crate::redact::Redactor;
use crate::store::{
    Agent, Attachment, CloseReason, Environment, Message, MessageKind, NewAttachment, NewSession,
    NewTask, Session, SessionStatus, Store, StoreError, Task, TokenOwner,
};
use crate::sync::lock;
use live::{CallRef, LiveState, Runs};
use resolve::{Asked, Choice};

/// How the conductor paces its work.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Turns running at once, at most; past it sessions wait.
    pub max_turns: usize,
    /// How often a waiting session tries for a slot again.
    pub retry_interval: Duration,
    /// How long a session waits before it is closed `resource_exhausted`.
    pub wait_limit: Duration,
    /// How long one turn may run.
    pub turn_timeout: Duration,
    /// How often idle sessions are checked for their idle timeout.
    pub sweep_interval: Duration,
    /// Folders under which environments' local repositories may lie.
    pub repository_roots: Vec<PathBuf>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_turns: 4,
            retry_interval: Duration::from_secs(5),
            wait_limit: Duration::from_secs(65 * 60),
            turn_timeout: Duration::from_secs(30 * 60),
            sweep_interval: Duration::from_secs(1),
            repository_roots: Vec::new(),
        }
    }
}

/// How often idempotency keys past their lifetime are forgotten.
const KEY_SWEEP_INTERVAL: Duration = Duration::from_secs(3600);

/// A new task's idle timeout when the request sets none.
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: i64 = 600;

/// Why a request about tasks or sessions was refused.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A field is wrong; the message says how.
    #[error("{field}: {message}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong with it.
        message: String,
    },
    /// What was named does not exist in the account.
    #[error("{0}")]
    NotFound(String),
    /// The request does not fit the session's state.
    #[error("{0}")]
    Conflict(String),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something else failed on the server's side.
    #[error("{0:#}")]
    Internal(anyhow::Error),
}

fn invalid(field: &str, message: impl Into<String>) -> SessionError {
    SessionError::Invalid {
        field: field.to_owned(),
        message: message.into(),
    }
}

/// The result of a conductor operation.
pub type Result<T> = std::result::Result<T, SessionError>;

/// A task to create.
#[derive(Debug, Clone, Default)]
pub struct TaskSpec {
    /// Its title; taken from the prompt when absent.
    pub title: Option<String>,
    /// Its first message; with one, a session starts at once.
    pub prompt: Option<String>,
    /// Its environment; the agent's when absent.
    pub environment_id: Option<String>,
    /// Seconds before an idle session is closed.
    pub idle_timeout_seconds: Option<i64>,
    /// Context for the agent.
    pub attachments: Vec<NewAttachment>,
    /// The harness for the first session.
    pub harness: Option<String>,
    /// The model for the first session.
    pub model: Option<String>,
    /// The effort for the first session.
    pub effort: Option<String>,
    /// The agent it runs as, by id or name; the connected agent when absent.
    pub created_by: Option<String>,
}

/// A session to start under an existing task.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// Its title; the task's when absent.
    pub title: Option<String>,
    /// Its first message.
    pub prompt: Option<String>,
    /// Its environment; the task's when absent.
    pub environment_id: Option<String>,
    /// Its branch; `cinch/<session id>` when absent.
    pub branch_name: Option<String>,
    /// The branch to start from; the repository's HEAD when absent.
    pub base_branch: Option<String>,
    /// Whether turns' changes are committed on the branch.
    pub auto_commit: bool,
}

/// Why a session is moved on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// Something around it changed (it was made, a turn or a boot ended, a
    /// slot may be free, cinch restarted): a closed session stays closed.
    Progress,
    /// A message came for it: a closed session resumes with its queue.
    Message,
}

/// A task's binding constraint while one of its sessions waits for capacity.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct BindingConstraint {
    /// Always `retrying`.
    pub kind: String,
    /// Seconds until the next attempt.
    pub next_retry_seconds: u64,
    /// Attempts so far.
    pub retries: i64,
}

/// The tasks and sessions of every account, on one engine.
pub struct Conductor {
    store: Store,
    engine: Arc<Engine>,
    runs: Arc<Runs>,
    home: Home,
    settings: Settings,
    /// One lock per session: its lifecycle changes one at a time.
    locks: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
    /// The sessions holding a turn slot.
    slots: Mutex<HashSet<String>>,
    /// The sessions whose workspace is being made.
    booting: Mutex<HashSet<String>>,
    /// The variables of cinch's own that tenants' processes get.
    base_env: BTreeMap<String, String>,
    /// Starts tenants' processes other than turns, in the sandbox.
    launcher: crate::sandbox::Launcher,
    /// Workspaces being made at once, at most as many as turns.
    boots: tokio::sync::Semaphore,
}

/// A title from the first line of a prompt.
fn title_from(prompt: &str) -> String {
    let line = prompt
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("")
        .trim();
    match line.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if line.is_empty() => "Untitled task".to_owned(),
        None => line.to_owned(),
    }
}

impl Conductor {
    /// A conductor on `engine` keeping its state in `store`, its workspaces
    /// and agents' homes under `home`.
    pub fn new(
        store: Store,
        engine: Arc<Engine>,
        runs: Arc<Runs>,
        home: Home,
        settings: Settings,
        base_env: BTreeMap<String, String>,
    ) -> Arc<Self> {
        let boots = tokio::sync::Semaphore::new(settings.max_turns);
        Arc::new(Self {
            store,
            runs,
            home,
            settings,
            locks: Mutex::default(),
            slots: Mutex::default(),
            booting: Mutex::default(),
            base_env,
            launcher: engine.launcher(),
            boots,
            engine,
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn session_lock(&self, session_id: &str) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.locks)
            .entry(session_id.to_owned())
            .or_default()
            .clone()
    }

    /// The agent's home directory: its harnesses' `HOME`, kept across restarts.
    pub fn agent_home(&self, agent_id: &str) -> PathBuf {
        self.home.root().join("agents").join(agent_id)
    }

    fn workspace_dir(&self, session_id: &str) -> PathBuf {
        self.home.root().join("workspaces").join(session_id)
    }

    /// The binding constraint of a task whose session waits.
    pub fn binding_constraint(&self, task: &Task) -> Option<BindingConstraint> {
        task.waiting_retries.map(|retries| BindingConstraint {
            kind: "retrying".to_owned(),
            next_retry_seconds: self.settings.retry_interval.as_secs().max(1),
            retries,
        })
    }

    // ----- requests -----

    /// Creates a task as `caller`; with a prompt its first session starts.
    pub async fn create_task(
        self: &Arc<Self>,
        account_id: &str,
        caller: &TokenOwner,
        spec: TaskSpec,
    ) -> Result<Task> {
        let agent = self
            .acting_agent(account_id, spec.created_by.as_deref())
            .await?;
        let environment_id = match &spec.environment_id {
            Some(id) => Some(self.environment(account_id, id).await?.id),
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
        if let Some(prompt) = spec.prompt {
            let asked = Asked {
                harness: spec.harness.as_deref(),
                model: spec.model.as_deref(),
                effort: spec.effort.as_deref(),
            };
            let choice = self.resolve(&asked, &agent);
            let session_spec = SessionSpec {
                title: Some(title),
                prompt: Some(prompt),
                environment_id,
                ..SessionSpec::default()
            };
            self.start_session(&task, &agent, choice, session_spec, spec.title.is_none())
                .await?;
        }
        self.task(account_id, &task.id).await
    }

    /// The account's task.
    pub async fn task(&self, account_id: &str, task_id: &str) -> Result<Task> {
        self.store
            .task(account_id, task_id)
            .await?
            .ok_or_else(|| SessionError::NotFound("no such task".into()))
    }

    /// The account's session of the task.
    pub async fn session(
        &self,
        account_id: &str,
        task_id: &str,
        session_id: &str,
    ) -> Result<Session> {
        self.store
            .session(account_id, session_id)
            .await?
            .filter(|session| session.task_id == task_id)
            .ok_or_else(|| SessionError::NotFound("no such session".into()))
    }

    /// Starts another session under the task, as the task's agent with its
    /// current settings.
    pub async fn create_session(
        self: &Arc<Self>,
        account_id: &str,
        task_id: &str,
        mut spec: SessionSpec,
    ) -> Result<Session> {
        let task = self.task(account_id, task_id).await?;
        let agent = self
            .acting_agent(account_id, Some(&task.created_by))
            .await?;
        spec.environment_id = match &spec.environment_id {
            Some(id) => Some(self.environment(account_id, id).await?.id),
            None => task.environment_id.clone(),
        };
        if let Some(branch) = &spec.branch_name
            && !workspace::is_valid_branch(branch)
        {
            return Err(invalid(
                "branch_name",
                format!("{branch} is not a valid git branch name"),
            ));
        }
        if let Some(branch) = &spec.base_branch
            && !workspace::is_valid_branch(branch)
        {
            return Err(invalid(
                "base_branch",
                format!("{branch} is not a valid git branch name"),
            ));
        }
        if let (Some(branch), Some(environment_id)) = (&spec.base_branch, &spec.environment_id) {
            self.check_base_branch(account_id, environment_id, branch)
                .await?;
        }
        let choice = self.resolve(&Asked::default(), &agent);
        if spec.title.is_none() {
            spec.title = Some(task.title.clone());
        }
        self.start_session(&task, &agent, choice, spec, false).await
    }

    /// Refuses a base branch the environment's repository does not have,
    /// when the repository can be read now (a local one, or a clone made).
    async fn check_base_branch(
        &self,
        account_id: &str,
        environment_id: &str,
        branch: &str,
    ) -> Result<()> {
        let environment = self.environment(account_id, environment_id).await?;
        let clone_dir = self.home.root().join("repos").join(&environment.id);
        let repository = environment.repository.clone();
        let looked_up = {
            let branch = branch.to_owned();
            tokio::task::spawn_blocking(move || {
                base_branch::look_up(&repository, &clone_dir, &branch)
            })
            .await
            .map_err(|error| SessionError::Internal(error.into()))?
        };
        match looked_up {
            base_branch::BaseBranch::Missing => Err(invalid(
                "base_branch",
                format!(
                    "{branch} is neither a branch of {} nor origin/{branch}",
                    environment.repository
                ),
            )),
            base_branch::BaseBranch::Found | base_branch::BaseBranch::Unknown => Ok(()),
        }
    }

    async fn start_session(
        self: &Arc<Self>,
        task: &Task,
        agent: &Agent,
        choice: Choice,
        spec: SessionSpec,
        title_from_prompt: bool,
    ) -> Result<Session> {
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
                },
            )
            .await?;
        self.publish_session(&session).await;
        if title_from_prompt {
            let message = self
                .store
                .add_message(&session, MessageKind::AiTitle, &session.title, None, true)
                .await?;
            self.publish_message(&session.account_id, "message.created", &message)
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
            self.publish_message(&session.account_id, "message.created", &message)
                .await;
        }
        self.kick(&session.account_id, &session.id, Wake::Progress);
        Ok(session)
    }

    /// Adds an attachment to the task and notes it in each open session;
    /// their next turns get it in the brief.
    pub async fn attach(
        &self,
        account_id: &str,
        task_id: &str,
        attachment: NewAttachment,
    ) -> Result<Attachment> {
        let task = self.task(account_id, task_id).await?;
        let attachment = self
            .store
            .create_attachment(account_id, &task.id, attachment)
            .await?;
        let sessions = self.store.sessions(account_id, &task.id, None, 200).await?;
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
    async fn note_attachment(&self, session: &Session, attachment: &Attachment) -> Result<()> {
        let text = match &attachment.error {
            None => format!("attached {}", attachment.name),
            Some(error) => format!("could not attach {}: {error}", attachment.name),
        };
        let message = self
            .store
            .add_message(session, MessageKind::Attachment, &text, None, true)
            .await?;
        self.publish_message(&session.account_id, "message.created", &message)
            .await;
        Ok(())
    }

    /// Queues a user message and resumes the session if it is idle or closed.
    pub async fn post_message(
        self: &Arc<Self>,
        account_id: &str,
        task_id: &str,
        session_id: &str,
        text: &str,
    ) -> Result<Message> {
        let session = self.session(account_id, task_id, session_id).await?;
        let message = self
            .store
            .add_message(&session, MessageKind::User, text, None, false)
            .await?;
        self.publish_message(&session.account_id, "message.created", &message)
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
            self.publish_message(&session.account_id, "message.created", &note)
                .await;
        }
        self.kick(account_id, &session.id, Wake::Message);
        Ok(message)
    }

    /// Stops the running turn (it ends `cancelled`) or the wait for a slot;
    /// the session stays open, idle.
    pub async fn abort(
        self: &Arc<Self>,
        account_id: &str,
        task_id: &str,
        session_id: &str,
    ) -> Result<Session> {
        let session = self.session(account_id, task_id, session_id).await?;
        match session.status {
            SessionStatus::Running => {
                if let Some(turn) = session.current_turn.clone() {
                    self.stop_turn(turn).await?;
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
            status => Err(SessionError::Conflict(format!(
                "the session is {status}: there is nothing to abort"
            ))),
        }
    }

    /// Closes the session (`close_reason: user_closed`), stopping a running turn.
    pub async fn close(
        self: &Arc<Self>,
        account_id: &str,
        task_id: &str,
        session_id: &str,
    ) -> Result<Session> {
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        let mut session = self.session(account_id, task_id, session_id).await?;
        if session.status == SessionStatus::Closed {
            return Ok(session);
        }
        if let (Some(turn), SessionStatus::Running) = (session.current_turn.clone(), session.status)
        {
            self.stop_turn(turn).await?;
        }
        self.drop_queue(&session).await?;
        self.close_with(&mut session, CloseReason::UserClosed, None)
            .await?;
        Ok(session)
    }

    async fn stop_turn(&self, turn: String) -> Result<()> {
        let engine = self.engine.clone();
        tokio::task::spawn_blocking(move || engine.stop(&turn))
            .await
            .map_err(|error| SessionError::Internal(error.into()))?
            .map_err(|error| SessionError::Conflict(format!("{error:#}")))
    }

    /// Marks the session's queued messages as dropped, so that they are not
    /// delivered later by surprise.
    async fn drop_queue(&self, session: &Session) -> Result<()> {
        let queued = self.store.queued_messages(&session.id).await?;
        if queued.is_empty() {
            return Ok(());
        }
        for message in &queued {
            if let Some(message) = self.store.deliver_message(&message.id).await? {
                self.publish_message(&session.account_id, "message.updated", &message)
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
        self.publish_message(&session.account_id, "message.created", &note)
            .await;
        Ok(())
    }

    // ----- lifecycle -----

    /// Moves the session forward in the background.
    fn kick(self: &Arc<Self>, account_id: &str, session_id: &str, wake: Wake) {
        let this = self.clone();
        let account_id = account_id.to_owned();
        let session_id = session_id.to_owned();
        tokio::spawn(async move {
            if let Err(error) = this.advance(&account_id, &session_id, wake).await {
                tracing::error!(session = %session_id, "moving the session on failed: {error}");
            }
        });
    }

    /// Boots the workspace, waits for a slot, or starts a turn with the
    /// queued messages: whichever the session needs next. A closed session
    /// stays closed, its queued messages kept, until a message wakes it.
    async fn advance(
        self: &Arc<Self>,
        account_id: &str,
        session_id: &str,
        wake: Wake,
    ) -> Result<()> {
        let guard = self.session_lock(session_id);
        loop {
            let held = guard.lock().await;
            let Some(mut session) = self.store.session(account_id, session_id).await? else {
                return Ok(());
            };
            let queued = self.store.queued_messages(&session.id).await?;
            let stays_closed = session.status == SessionStatus::Closed
                && (queued.is_empty() || wake != Wake::Message);
            if session.status == SessionStatus::Running || stays_closed {
                return Ok(());
            }
            if session.workspace.is_none() {
                if !lock(&self.booting).insert(session_id.to_owned()) {
                    // Booting already: that boot moves the session on when done.
                    return Ok(());
                }
                let claimed = self.start_boot(&mut session).await;
                // Setup commands can take minutes: a close must not wait for them.
                drop(held);
                let booted = match claimed {
                    Ok(environment) => self.finish_boot(&session, environment).await,
                    Err(error) => Err(error),
                };
                lock(&self.booting).remove(session_id);
                if !booted? {
                    return Ok(());
                }
                // Look again, with the workspace made.
                continue;
            }
            if session.status == SessionStatus::Closed {
                session.close_reason = None;
                session.error_message = None;
            }
            if queued.is_empty() {
                session.status = SessionStatus::Idle;
                return self.save(&mut session).await;
            }
            if !self.take_slot(&session.id) {
                return self.wait_for_slot(&mut session).await;
            }
            let environment = self.environment_of(&session).await?;
            return match self
                .start_turn(&mut session, environment.as_ref(), &queued)
                .await
            {
                Ok(()) => Ok(()),
                Err(error) => {
                    self.release_slot(&session.id);
                    Err(error)
                }
            };
        }
    }

    /// Marks the session booting (under its lock) and returns its environment.
    async fn start_boot(&self, session: &mut Session) -> Result<Option<Environment>> {
        let environment = self.environment_of(session).await?;
        session.status = SessionStatus::Booting;
        session.close_reason = None;
        session.error_message = None;
        self.save(session).await?;
        Ok(environment)
    }

    /// Makes the session's workspace, without its lock, then records the
    /// outcome under it. Whether the session can go on.
    async fn finish_boot(
        &self,
        session: &Session,
        environment: Option<Environment>,
    ) -> Result<bool> {
        let booted = self.boot(session, environment.as_ref()).await;
        let guard = self.session_lock(&session.id);
        let _held = guard.lock().await;
        let Some(mut session) = self.store.session(&session.account_id, &session.id).await? else {
            return Ok(false);
        };
        let closed_meanwhile = session.status == SessionStatus::Closed;
        match booted {
            Ok(dir) => {
                // Kept even when closed meanwhile: a later message resumes in it.
                session.workspace = Some(dir.display().to_string());
                self.save(&mut session).await?;
                Ok(!closed_meanwhile)
            }
            Err(_) if closed_meanwhile => Ok(false),
            Err(workspace::WorkspaceError::Setup(message)) => {
                self.close_with(&mut session, CloseReason::SetupFailure, Some(message))
                    .await?;
                Ok(false)
            }
            Err(workspace::WorkspaceError::Repository(message)) => {
                self.close_with(&mut session, CloseReason::VmFailure, Some(message))
                    .await?;
                Ok(false)
            }
        }
    }

    /// The session's environment, when it has one.
    async fn environment_of(&self, session: &Session) -> Result<Option<Environment>> {
        match &session.environment_id {
            Some(id) => Ok(self.store.environment(&session.account_id, id).await?),
            None => Ok(None),
        }
    }

    /// Takes a turn slot for `session_id` (or a code task's key): false when
    /// `max_turns` turns already hold one.
    pub fn take_slot(&self, session_id: &str) -> bool {
        let mut slots = lock(&self.slots);
        if slots.contains(session_id) {
            return true;
        }
        if slots.len() >= self.settings.max_turns {
            return false;
        }
        slots.insert(session_id.to_owned());
        true
    }

    /// Gives back the slot `take_slot` gave.
    pub fn release_slot(&self, session_id: &str) {
        lock(&self.slots).remove(session_id);
    }

    async fn wait_for_slot(&self, session: &mut Session) -> Result<()> {
        let now = crate::store::now();
        if session.status != SessionStatus::Waiting {
            session.status = SessionStatus::Waiting;
            session.waiting_since = Some(now.clone());
            session.retries = 0;
        }
        session.retries += 1;
        if self.close_if_overlong(session).await? {
            return Ok(());
        }
        session.error_message = Some(format!(
            "Waiting for a turn slot: {} turns are running, the most cinch runs at once. The session starts by itself when one ends; nothing to do.",
            self.settings.max_turns
        ));
        self.save(session).await
    }

    /// Makes the session's workspace (blocking work, off the async threads).
    async fn boot(
        &self,
        session: &Session,
        environment: Option<&Environment>,
    ) -> std::result::Result<PathBuf, workspace::WorkspaceError> {
        let dir = self.workspace_dir(&session.id);
        let clone_dir = environment.map_or_else(
            || self.home.root().join("repos").join("none"),
            |environment| self.home.root().join("repos").join(&environment.id),
        );
        if let Some(environment) = environment
            && let Some(path) = workspace::local_path(&environment.repository)
        {
            self.check_repository(&session.account_id, path)
                .await
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
        let tmp_dir = self.home.root().join("tmp").join(&session.id);
        let _permit = self.boots.acquire().await;
        let result = tokio::task::spawn_blocking(move || {
            for private in [&tenant.home, &tmp_dir] {
                crate::home::create_private_dir(private)
                    .map_err(|error| workspace::WorkspaceError::Repository(format!("{error:#}")))?;
            }
            let made = workspace::create(&workspace::Plan {
                dir: &dir,
                repository: repository.as_deref(),
                clone_dir: &clone_dir,
                branch: &branch,
                base_branch: base.as_deref(),
                setup: &setup,
                tmp_dir: &tmp_dir,
                tenant: &tenant,
                redactor: &redactor,
            });
            let _ = std::fs::remove_dir_all(&tmp_dir);
            made.map(|()| dir)
        })
        .await;
        match result {
            Ok(result) => result,
            Err(error) => Err(workspace::WorkspaceError::Repository(error.to_string())),
        }
    }

    /// How cinch runs a process for this agent outside its turns: in the
    /// sandbox, with what its harness would get as its environment.
    fn tenant(&self, agent_id: &str, environment: Option<&Environment>) -> workspace::Tenant {
        let mut env = self.base_env.clone();
        env.extend(self.harness_env(agent_id, environment));
        let source = environment
            .filter(|environment| workspace::is_url(&environment.repository))
            .and_then(|environment| workspace::local_path(&environment.repository));
        workspace::Tenant {
            launcher: self.launcher.clone(),
            env,
            home: self.agent_home(agent_id),
            read_only: source.map(Path::to_path_buf).into_iter().collect(),
            config: self.engine.config().sandbox.clone(),
        }
    }

    /// Whether an environment of `account_id` may use the local repository
    /// at `path` (as a path or a `file://` URL): it must exist, lie under one of the operator's repository
    /// roots (anywhere, for the first account, when there are none), and
    /// neither hold nor lie inside cinch's home. The reason when not.
    pub async fn check_repository(
        &self,
        account_id: &str,
        path: &Path,
    ) -> std::result::Result<(), String> {
        let first = self
            .store
            .first_account_id()
            .await
            .map_err(|error| format!("cinch could not check it: {error}"))?;
        crate::sandbox::RepositoryRoots::new(&self.settings.repository_roots, self.home.root())
            .admits(path, first.as_deref() == Some(account_id))
    }

    /// What a harness of this agent runs with on top of cinch's environment:
    /// the agent's home as `HOME`, the environment's variables and secrets.
    fn harness_env(
        &self,
        agent_id: &str,
        environment: Option<&Environment>,
    ) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        env.insert(
            "HOME".to_owned(),
            self.agent_home(agent_id).display().to_string(),
        );
        if let Some(environment) = environment {
            env.extend(environment.env.clone());
            env.extend(environment.secrets.clone());
        }
        env
    }

    async fn start_turn(
        self: &Arc<Self>,
        session: &mut Session,
        environment: Option<&Environment>,
        queued: &[Message],
    ) -> Result<()> {
        let brief = queued
            .iter()
            .map(|message| message.content.as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let workspace = PathBuf::from(session.workspace.clone().unwrap_or_default());
        let notes = self.attachment_notes(session, &workspace).await?;
        let request = TurnRequest {
            harness: session.harness.clone(),
            repo: workspace.clone(),
            brief: brief.clone(),
            notes,
            model: session.harness_model.clone(),
            effort: session.harness_effort.clone(),
            session_id: session.harness_session_id.clone(),
            timeout: self.settings.turn_timeout,
            run: Some(session.id.clone()),
            env: self.harness_env(&session.agent_id, environment),
            secrets: environment
                .map(|e| e.secrets.values().cloned().collect())
                .unwrap_or_default(),
            tcp_ports: environment.and_then(|e| e.allowed_tcp_ports.clone()),
            idle_limit: environment
                .and_then(|e| e.watchdog_minutes)
                .map(|minutes| Duration::from_secs(u64::from(minutes) * 60)),
            agent: Some(session.agent_id.clone()),
            mcp_servers: environment
                .map(|e| e.mcp_servers.clone())
                .unwrap_or_default(),
        };
        for message in queued {
            if let Some(message) = self.store.deliver_message(&message.id).await? {
                self.publish_message(&session.account_id, "message.updated", &message)
                    .await;
            }
        }
        let engine = self.engine.clone();
        let started = tokio::task::spawn_blocking(move || engine.start(request))
            .await
            .map_err(|error| SessionError::Internal(error.into()))?;
        let turn = match started {
            Ok(turn) => turn,
            Err(error) => {
                self.release_slot(&session.id);
                let text = format!("{error:#}");
                session.current_turn = None;
                if error.downcast_ref::<StartCheckpointFailed>().is_some() {
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
        let call = self
            .store
            .create_call(
                &session.account_id,
                &session.id,
                &turn_id,
                session.environment_id.as_deref().unwrap_or(""),
            )
            .await?;
        let display_name = self
            .engine
            .registry()
            .get(&session.harness)
            .map(|driver| driver.info().display_name.clone())
            .unwrap_or_else(|_| session.harness.clone());
        let view = json!({
            "call_id": call.call_id,
            "run_id": session.id,
            "turn_id": turn_id,
            "status": "running",
            "harness": session.harness,
            "harness_display_name": display_name,
            "brief": brief,
            // The repository's name, as the code-task API's `repo` takes it.
            "repository": environment.map_or("scratch", |environment| environment.name.as_str()),
            "workspace": workspace.display().to_string(),
            "session_id": session.harness_session_id,
            "started_at": call.created_at,
            "result": null,
        });
        // The session is running before its turn's message exists, so a reader
        // that sees the message never sees the session idle from before it.
        session.status = SessionStatus::Running;
        session.current_turn = Some(turn_id);
        session.waiting_since = None;
        session.retries = 0;
        session.close_reason = None;
        session.error_message = None;
        session.last_activity_at = crate::store::now();
        self.save(session).await?;
        let message = self
            .store
            .add_message(session, MessageKind::Assistant, "", Some(&view), true)
            .await?;
        self.publish_message(&session.account_id, "message.created", &message)
            .await;
        let live = self
            .runs
            .follow(
                CallRef {
                    account_id: session.account_id.clone(),
                    run_id: session.id.clone(),
                    call_id: call.call_id.clone(),
                },
                turn,
            )
            .await
            .map_err(SessionError::Internal)?;
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
    async fn attachment_notes(&self, session: &Session, workspace: &Path) -> Result<Vec<Note>> {
        let attachments = self
            .store
            .attachments(&session.account_id, &session.task_id)
            .await?;
        let previous = self
            .store
            .messages(
                &session.account_id,
                &session.task_id,
                &session.id,
                crate::store::Direction::Desc,
                None,
                200,
            )
            .await?
            .items
            .into_iter()
            .find(|message| message.kind == MessageKind::Assistant)
            .map(|message| message.created_at);
        let new: Vec<Attachment> = attachments
            .into_iter()
            .filter(|attachment| attachment.status == "ready")
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
        .map_err(|error| SessionError::Internal(error.into()))
    }

    fn watch_turn(
        self: &Arc<Self>,
        account_id: String,
        session_id: String,
        message: Message,
        mut live: tokio::sync::watch::Receiver<LiveState>,
    ) {
        let this = self.clone();
        tokio::spawn(async move {
            let outcome = match live.wait_for(|state| state.outcome.is_some()).await {
                Ok(state) => state.outcome.clone().expect("waited for it"),
                Err(_) => Err("the turn's follower went away".to_owned()),
            };
            if let Err(error) = this
                .finish_turn(&account_id, &session_id, message, outcome)
                .await
            {
                tracing::error!(session = %session_id, "finishing the turn failed: {error}");
            }
            this.kick(&account_id, &session_id, Wake::Progress);
            this.kick_waiting().await;
        });
    }

    async fn finish_turn(
        self: &Arc<Self>,
        account_id: &str,
        session_id: &str,
        message: Message,
        outcome: std::result::Result<Arc<TurnResult>, String>,
    ) -> Result<()> {
        let guard = self.session_lock(session_id);
        let _held = guard.lock().await;
        self.release_slot(session_id);
        if let (Ok(result), Some(call_id)) = (&outcome, message.turn_value()["call_id"].as_str()) {
            // Kept before the session is read, so that its usage counts the turn.
            self.store
                .record_call_result(account_id, session_id, call_id, result)
                .await?;
        }
        let Some(mut session) = self.store.session(account_id, session_id).await? else {
            return Ok(());
        };
        let mut view = message.turn_value();
        let (content, status) = match &outcome {
            Ok(result) => {
                view["status"] = json!(result.status.as_str());
                view["session_id"] = json!(result.session_id);
                view["result"] = turn_result_view(result);
                let content = result
                    .final_message
                    .clone()
                    .or_else(|| result.detail.clone())
                    .unwrap_or_default();
                (content, Some(result.status))
            }
            Err(error) => {
                view["status"] = json!("interrupted");
                (format!("cinch lost track of the turn: {error}"), None)
            }
        };
        let message = self
            .store
            .update_message(&message.id, &content, &view)
            .await?;
        self.publish_message(account_id, "message.updated", &message)
            .await;
        if let Ok(result) = &outcome {
            if let Some(harness_session) = &result.session_id {
                session.harness_session_id = Some(harness_session.clone());
            }
            if let Some(preview) = result.final_message.as_deref().and_then(preview::preview) {
                self.store
                    .set_task_preview(&session.task_id, &preview)
                    .await?;
            }
        }
        session.current_turn = None;
        session.last_activity_at = crate::store::now();
        if session.status == SessionStatus::Closed {
            return self.save(&mut session).await;
        }
        session.status = SessionStatus::Idle;
        session.close_reason = None;
        session.error_message = None;
        match (&outcome, status) {
            (Ok(result), _)
                if result.start_checkpoint.is_some() && result.end_checkpoint.is_none() =>
            {
                let detail = result.detail.clone().unwrap_or_default();
                return self
                    .close_with(
                        &mut session,
                        CloseReason::SnapshotFailure,
                        Some(format!(
                            "cinch could not snapshot the workspace after the turn. {detail}"
                        )),
                    )
                    .await;
            }
            (Ok(result), Some(Status::Failed | Status::TimedOut)) => {
                session.close_reason = Some(CloseReason::TurnFailure);
                session.error_message = Some(format!(
                    "The last turn {}: {}. The transcript is kept; send a message to try again.",
                    if result.status == Status::TimedOut {
                        "timed out"
                    } else {
                        "failed"
                    },
                    result.detail.as_deref().unwrap_or("no detail")
                ));
            }
            (Ok(_), Some(Status::Interrupted)) | (Err(_), _) => {
                session.close_reason = Some(CloseReason::TurnInterrupted);
                session.error_message = Some(
                    "The last turn was interrupted (cinch or the turn's supervisor stopped). The transcript is kept; send a message to carry on."
                        .into(),
                );
            }
            _ => {}
        }
        if let Ok(result) = &outcome
            && session.auto_commit
            && result.total_files > 0
            && let Some(dir) = session.workspace.clone()
        {
            let subject = format!(
                "{}: {}",
                session.title,
                title_from(view["brief"].as_str().unwrap_or(""))
            );
            let tenant = self.tenant(&session.agent_id, None);
            let committed = tokio::task::spawn_blocking(move || {
                workspace::commit_changes(&tenant, std::path::Path::new(&dir), &subject)
            })
            .await
            .map_err(|error| SessionError::Internal(error.into()))?;
            if let Err(error) = committed {
                let message = format!(
                    "cinch could not commit the turn's changes on {}: {error:#}",
                    session.branch_name
                );
                return self
                    .close_with(&mut session, CloseReason::SnapshotFailure, Some(message))
                    .await;
            }
        }
        self.save(&mut session).await
    }

    async fn close_with(
        &self,
        session: &mut Session,
        reason: CloseReason,
        message: Option<String>,
    ) -> Result<()> {
        session.status = SessionStatus::Closed;
        session.close_reason = Some(reason);
        session.error_message = message;
        session.waiting_since = None;
        session.retries = 0;
        self.save(session).await
    }

    async fn save(&self, session: &mut Session) -> Result<()> {
        if session.status != SessionStatus::Waiting {
            session.waiting_since = None;
        }
        self.store.save_session(session).await?;
        self.publish_session(session).await;
        Ok(())
    }

    // ----- background -----

    /// Picks up after a restart: turns that were running are followed again
    /// (or end interrupted), sessions caught booting boot again, and waits
    /// that outlived the wait limit while the server was down are closed.
    pub async fn recover(self: &Arc<Self>) -> Result<()> {
        self.close_overlong_waits().await?;
        for session in self
            .store
            .sessions_in(&[SessionStatus::Running, SessionStatus::Booting])
            .await?
        {
            match (session.status, session.current_turn.clone()) {
                (SessionStatus::Running, Some(turn_id)) => self.reattach(session, turn_id).await?,
                _ => {
                    let mut session = session;
                    session.status = SessionStatus::Idle;
                    self.save(&mut session).await?;
                    self.kick(&session.account_id, &session.id, Wake::Progress);
                }
            }
        }
        Ok(())
    }

    async fn reattach(self: &Arc<Self>, session: Session, turn_id: String) -> Result<()> {
        lock(&self.slots).insert(session.id.clone());
        let message = self
            .store
            .turn_message(&session.account_id, &session.id, &turn_id)
            .await?;
        let Some(message) = message else {
            self.release_slot(&session.id);
            let mut session = session;
            session.status = SessionStatus::Idle;
            session.current_turn = None;
            return self.save(&mut session).await;
        };
        let call_id = message.turn_value()["call_id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let environment = self.environment_of(&session).await?;
        let secrets: Vec<String> = environment
            .map(|e| e.secrets.into_values().collect())
            .unwrap_or_default();
        let engine = self.engine.clone();
        let attach_id = turn_id.clone();
        let attached = tokio::task::spawn_blocking(move || engine.attach(&attach_id, &secrets))
            .await
            .map_err(|error| SessionError::Internal(error.into()))?;
        match attached {
            Ok(turn) => {
                tracing::info!(session = %session.id, turn = %turn_id, "following a turn again after a restart");
                let live = self
                    .runs
                    .follow(
                        CallRef {
                            account_id: session.account_id.clone(),
                            run_id: session.id.clone(),
                            call_id,
                        },
                        turn,
                    )
                    .await
                    .map_err(SessionError::Internal)?;
                self.watch_turn(
                    session.account_id.clone(),
                    session.id.clone(),
                    message,
                    live,
                );
                Ok(())
            }
            Err(error) => {
                self.finish_turn(
                    &session.account_id,
                    &session.id,
                    message,
                    Err(format!("{error:#}")),
                )
                .await
            }
        }
    }

    async fn kick_waiting(self: &Arc<Self>) {
        match self.store.sessions_in(&[SessionStatus::Waiting]).await {
            Ok(sessions) => {
                for session in sessions {
                    self.kick(&session.account_id, &session.id, Wake::Progress);
                }
            }
            Err(error) => tracing::error!("listing waiting sessions: {error}"),
        }
    }

    /// Runs forever: retries waiting sessions, closes idle ones past their
    /// task's idle timeout, and forgets old idempotency keys.
    pub async fn run_background(self: Arc<Self>) {
        let mut since_retry = Duration::ZERO;
        let mut since_key_sweep = KEY_SWEEP_INTERVAL;
        loop {
            tokio::time::sleep(self.settings.sweep_interval).await;
            since_retry += self.settings.sweep_interval;
            since_key_sweep += self.settings.sweep_interval;
            if since_retry >= self.settings.retry_interval {
                since_retry = Duration::ZERO;
                self.kick_waiting().await;
            }
            if since_key_sweep >= KEY_SWEEP_INTERVAL {
                since_key_sweep = Duration::ZERO;
                if let Err(error) = self.store.sweep_keys().await {
                    tracing::error!("forgetting old idempotency keys: {error}");
                }
            }
            if let Err(error) = self.close_idle().await {
                tracing::error!("closing idle sessions: {error}");
            }
            if let Err(error) = self.close_overlong_waits().await {
                tracing::error!("closing waits past the wait limit: {error}");
            }
        }
    }

    /// Closes every wait for a turn slot past the wait limit, whether or not
    /// a retry came round.
    async fn close_overlong_waits(&self) -> Result<()> {
        let limit = self.settings.wait_limit.as_secs() as i64;
        for waiting in self.store.sessions_in(&[SessionStatus::Waiting]).await? {
            let waited = waiting.waiting_since.as_deref().and_then(seconds_since);
            if waited.is_none_or(|waited| waited < limit) {
                continue;
            }
            let guard = self.session_lock(&waiting.id);
            let _held = guard.lock().await;
            let Some(mut session) = self.store.session(&waiting.account_id, &waiting.id).await?
            else {
                continue;
            };
            if session.status == SessionStatus::Waiting {
                self.close_if_overlong(&mut session).await?;
            }
        }
        Ok(())
    }

    /// Closes a waiting session whose wait reached the wait limit, and says
    /// whether it did: `resource_exhausted` when its retries ran to the
    /// limit, `waiting_timeout` when the wait outlived any retry schedule
    /// (cinch was down, or no retry came). Its queued messages stay queued:
    /// the message that resumes the session delivers them with it.
    async fn close_if_overlong(&self, session: &mut Session) -> Result<bool> {
        let Some(waited) = session.waiting_since.as_deref().and_then(seconds_since) else {
            return Ok(false);
        };
        let limit = self.settings.wait_limit.as_secs() as i64;
        if waited < limit {
            return Ok(false);
        }
        // The last retry of the schedule comes at most a retry interval after
        // the limit, and this sweep a sweep interval after that.
        let schedule_end = self.settings.wait_limit
            + self.settings.retry_interval
            + self.settings.sweep_interval
            + Duration::from_secs(1);
        let (reason, message) = if waited <= schedule_end.as_secs() as i64 {
            (
                CloseReason::ResourceExhausted,
                format!(
                    "No turn slot came free in {} minutes ({} turns may run at once). Your queued messages are kept: send a message to try again with them, or raise the cap with `cinch serve --max-turns`.",
                    limit / 60,
                    self.settings.max_turns
                ),
            )
        } else {
            (
                CloseReason::WaitingTimeout,
                format!(
                    "The wait for a turn slot outlasted its retry schedule ({} minutes; cinch was stopped or could not retry). Your queued messages are kept: send a message to try again with them.",
                    waited / 60
                ),
            )
        };
        tracing::info!(session = %session.id, ?reason, "closing a wait for a turn slot after {waited} s");
        self.close_with(session, reason, Some(message)).await?;
        Ok(true)
    }

    async fn close_idle(&self) -> Result<()> {
        for idle in self.store.idle_sessions().await? {
            let idle_for = seconds_since(&idle.last_activity_at).unwrap_or(0);
            if idle_for < idle.idle_timeout_seconds {
                continue;
            }
            let guard = self.session_lock(&idle.session_id);
            let _held = guard.lock().await;
            let Some(mut session) = self
                .store
                .session(&idle.account_id, &idle.session_id)
                .await?
            else {
                continue;
            };
            if session.status == SessionStatus::Idle
                && self.store.queued_messages(&session.id).await?.is_empty()
            {
                tracing::info!(session = %session.id, "closing an idle session after {idle_for} s");
                // After a turn that went well the attempt is done; after a
                // recovery (a failed or interrupted turn) it merely timed out,
                // and what to do next stays in error_message.
                let reason = match session.close_reason {
                    None => CloseReason::Completed,
                    Some(_) => CloseReason::IdleTimeout,
                };
                let keep = session.error_message.take();
                self.close_with(&mut session, reason, keep).await?;
            }
        }
        Ok(())
    }

    // ----- helpers -----

    fn resolve(&self, asked: &Asked, agent: &Agent) -> Choice {
        let infos: Vec<&cinch_driver_sdk::Info> = self
            .engine
            .registry()
            .entries()
            .iter()
            .filter_map(|entry| entry.driver.as_ref().ok())
            .map(|driver| driver.info())
            .collect();
        resolve::resolve(asked, agent, &infos)
    }

    async fn acting_agent(&self, account_id: &str, id_or_name: Option<&str>) -> Result<Agent> {
        let agents = self.store.agents(account_id, None, 200).await?.items;
        let agent = match id_or_name {
            Some(key) => agents
                .into_iter()
                .find(|agent| agent.id == key || agent.name == key),
            None => agents.into_iter().find(|agent| agent.connected),
        };
        match agent {
            Some(agent) if agent.enabled => Ok(agent),
            Some(agent) => Err(invalid(
                "created_by",
                format!("agent {} is disabled", agent.name),
            )),
            None if id_or_name.is_some() => Err(invalid(
                "created_by",
                "no agent of the account has that id or name",
            )),
            None => Err(invalid(
                "created_by",
                "the account has no connected agent; name one",
            )),
        }
    }

    async fn environment(&self, account_id: &str, id: &str) -> Result<Environment> {
        self.store
            .environment(account_id, id)
            .await?
            .ok_or_else(|| {
                invalid(
                    "environment_id",
                    "no environment of the account has that id",
                )
            })
    }

    async fn publish_session(&self, session: &Session) {
        self.runs.webhooks().session_saved(
            &session.account_id,
            &session.id,
            session.status,
            json!(session),
        );
        self.publish(
            &session.account_id,
            &session.id,
            "session.updated",
            json!(session),
        )
        .await;
    }

    async fn publish_message(&self, account_id: &str, name: &str, message: &Message) {
        self.publish(account_id, &message.session_id, name, json!(message))
            .await;
    }

    async fn publish(&self, account_id: &str, run_id: &str, name: &str, data: Value) {
        match self.runs.events(account_id, run_id).await {
            Ok(events) => events.publish(name, data),
            Err(error) => tracing::error!(run = %run_id, "publishing {name}: {error:#}"),
        }
    }
}

/// A turn's result as an assistant message carries it.
fn turn_result_view(result: &TurnResult) -> Value {
    json!({
        "exit_code": result.exit_code,
        "duration_ms": result.duration_ms,
        "files_changed": result.files_changed.iter().map(|file| json!({
            "path": file.path,
            "insertions": file.insertions,
            "deletions": file.deletions,
            "binary": file.binary,
        })).collect::<Vec<_>>(),
        "total_files": result.total_files,
        "insertions": result.insertions,
        "deletions": result.deletions,
        "detail": result.detail,
        "final_message": result.final_message,
        "start_checkpoint": result.start_checkpoint,
        "end_checkpoint": result.end_checkpoint,
        "log_path": result.log_path,
        "result_text": result.result_text,
        "model": result.model,
        "usage": result.usage,
        "cli_version": result.cli_version,
        "unknown_events": result.unknown_events,
        "not_json_lines": result.not_json_lines,
    })
}

/// Whole seconds from a stored timestamp to now.
fn seconds_since(stored: &str) -> Option<i64> {
    let at =
        time::OffsetDateTime::parse(stored, &time::format_description::well_known::Rfc3339).ok()?;
    Some((time::OffsetDateTime::now_utc() - at).whole_seconds())
}
