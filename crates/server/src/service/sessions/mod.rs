//! Tasks and sessions on the turn engine: the spec's lifecycle without HTTP.
//!
//! A session is one harness session in its own workspace (see [`workspace`]);
//! each user message is queued (sequence null) and delivered to the next turn,
//! which runs as one assistant message. The [`Conductor`] owns the lifecycle:
//! booting the workspace, waiting for a turn slot past the cap on concurrent
//! turns, running and finishing turns, abort, close, idle teardown, and picking
//! up running turns after a restart. Every change is stored first, then
//! published as a live event of the session's run (its id).
//!
//! The conductor's methods live by concern: `requests` (what callers ask),
//! `lifecycle` (the state machine), `turns` (starting and ending a turn),
//! `background` (recovery, retries, sweeps); this module keeps its types,
//! its construction and the helpers they share.
//!
//! Sessions are a service beside the others of [`crate::service`]: their
//! turns start, run and take slots through [`crate::runs`], as code tasks'
//! do, and a refused request is a [`ServiceError`] like any service's.

mod approvals;
pub(crate) mod attachments;
mod background;
mod base_branch;
pub(crate) mod compare;
mod delivery;
mod forge;
mod fork;
mod lifecycle;
mod linked_worktree;
mod machine;
mod native_fork;
pub(crate) mod nodes;
mod ownership;
pub(crate) mod preview;
mod requests;
pub(crate) mod resolve;
mod revert;
mod turns;
pub(crate) mod views;
pub(crate) mod workspace;

pub(crate) use approvals::DecisionScope;
pub(crate) use delivery::{Committed, Pushed};
pub(crate) use fork::ForkSpec;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cinch_base::sync::lock;
use cinch_base::timestamp::Timestamp;
use serde::Serialize;
use serde_json::{Value, json};

use crate::runs::Runner;
use crate::runs::live::{EventName, Runs};
use crate::service::ServiceError;
use cinch_engine::engine::Engine;
use cinch_engine::home::Home;
use cinch_store::{
    AccountId, Agent, Environment, EnvironmentId, Message, NewAttachment, Session, SessionId,
    Store, Task,
};
use resolve::{Asked, Choice};

/// How the conductor paces its work.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Turns running at once on this node, at most; past it sessions wait.
    pub max_turns: usize,
    /// Turns one account runs at once on all nodes together, at most;
    /// `None` for no cap of its own.
    pub max_turns_per_account: Option<usize>,
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
    /// This node's id: whose sessions' leases are whose.
    pub node_id: String,
    /// How long a session's lease lasts unless its node renews it; another
    /// node takes the session over once it ran out.
    pub lease_ttl: Duration,
    /// Where checkpoints are pushed for every node to reach: a bare git
    /// repository (a path or a git URL); `None` for none.
    pub checkpoint_remote: Option<String>,
}

impl Settings {
    /// What the runner of this node's turns runs with.
    pub fn runs(&self) -> crate::runs::Settings {
        crate::runs::Settings {
            node_id: self.node_id.clone(),
            max_turns: self.max_turns,
            max_turns_per_account: self.max_turns_per_account,
            lease_ttl: self.lease_ttl,
            repository_roots: self.repository_roots.clone(),
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            max_turns: 4,
            max_turns_per_account: None,
            retry_interval: Duration::from_secs(5),
            wait_limit: Duration::from_secs(65 * 60),
            turn_timeout: Duration::from_secs(30 * 60),
            sweep_interval: Duration::from_secs(1),
            repository_roots: Vec::new(),
            node_id: "local".to_owned(),
            lease_ttl: DEFAULT_LEASE_TTL,
            checkpoint_remote: None,
        }
    }
}

/// How long a session's lease lasts unless renewed, by default.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// How often idempotency keys past their lifetime are forgotten.
const KEY_SWEEP_INTERVAL: Duration = Duration::from_secs(3600);

/// A new task's idle timeout when the request sets none.
pub(crate) const DEFAULT_IDLE_TIMEOUT_SECONDS: i64 = 600;

/// The result of a conductor operation.
pub(crate) type Result<T> = std::result::Result<T, ServiceError>;

/// A task to create.
#[derive(Debug, Clone, Default)]
pub struct TaskSpec {
    /// Its title; taken from the prompt when absent.
    pub title: Option<String>,
    /// Its first message; with one, a session starts at once.
    pub prompt: Option<String>,
    /// Its environment; the agent's when absent.
    pub environment_id: Option<EnvironmentId>,
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
    /// A fan-out: one session per entry, each in its own worktree from the
    /// same base with the same prompt; empty for one session as above.
    pub sessions: Vec<SessionChoice>,
    /// The approval policy of the session it starts, over its environment's.
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
}

/// The most sessions one task starts at once (a fan-out).
pub(crate) const MOST_FAN_OUT: usize = 8;

/// What one session of a fan-out runs.
#[derive(Debug, Clone, Default)]
pub struct SessionChoice {
    /// Its harness.
    pub harness: String,
    /// Its model.
    pub model: Option<String>,
    /// Its effort.
    pub effort: Option<String>,
}

/// A session to start under an existing task.
#[derive(Debug, Clone, Default)]
pub struct SessionSpec {
    /// Its title; the task's when absent.
    pub title: Option<String>,
    /// Its first message.
    pub prompt: Option<String>,
    /// Its environment; the task's when absent.
    pub environment_id: Option<EnvironmentId>,
    /// Its branch; `cinch/<session id>` when absent.
    pub branch_name: Option<String>,
    /// The branch to start from; the repository's HEAD when absent.
    pub base_branch: Option<String>,
    /// Whether turns' changes are committed on the branch.
    pub auto_commit: bool,
    /// Its approval policy, over its environment's.
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
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
    /// Starts and follows turns, and holds the turn slots.
    runner: Arc<Runner>,
    runs: Arc<Runs>,
    home: Home,
    settings: Settings,
    /// One lock per session: its lifecycle changes one at a time.
    locks: Mutex<HashMap<SessionId, Arc<tokio::sync::Mutex<()>>>>,
    /// The sessions whose workspace is being made.
    booting: Mutex<HashSet<SessionId>>,
    /// The variables of cinch's own that tenants' processes get.
    base_env: BTreeMap<String, String>,
    /// Starts tenants' processes other than turns, in the sandbox.
    launcher: cinch_engine::sandbox::Launcher,
    /// Workspaces being made at once, at most as many as turns.
    boots: tokio::sync::Semaphore,
    /// The sessions whose lease this node holds, with its generation.
    leases: Mutex<HashMap<SessionId, i64>>,
    /// The sessions whose lease another node took from this one: never
    /// written to again by this process.
    lost: Mutex<HashSet<SessionId>>,
    /// Set once the node drains: it takes no work any more.
    draining: std::sync::atomic::AtomicBool,
    /// The listings of waiting sessions asked for by turns' ends.
    waiting_kicks: background::WaitingKicks,
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
    /// A conductor on `engine` keeping its state in `store` and its
    /// workspaces under `home`, running turns with `runner`.
    pub fn new(
        store: Store,
        engine: Arc<Engine>,
        runner: Arc<Runner>,
        home: Home,
        settings: Settings,
        base_env: BTreeMap<String, String>,
    ) -> Arc<Self> {
        let boots = tokio::sync::Semaphore::new(settings.max_turns);
        Arc::new(Self {
            store,
            runs: runner.live().clone(),
            runner,
            home,
            settings,
            locks: Mutex::default(),
            booting: Mutex::default(),
            base_env,
            launcher: engine.launcher(),
            boots,
            engine,
            leases: Mutex::default(),
            lost: Mutex::default(),
            draining: Default::default(),
            waiting_kicks: Default::default(),
        })
    }

    /// The settings it runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn session_lock(&self, session_id: &SessionId) -> Arc<tokio::sync::Mutex<()>> {
        lock(&self.locks)
            .entry(session_id.clone())
            .or_default()
            .clone()
    }

    fn workspace_dir(&self, session_id: &SessionId) -> PathBuf {
        self.home
            .root()
            .join("workspaces")
            .join(session_id.as_str())
    }

    /// The binding constraint of a task whose session waits.
    pub fn binding_constraint(&self, task: &Task) -> Option<BindingConstraint> {
        task.waiting_retries.map(|retries| BindingConstraint {
            kind: "retrying".to_owned(),
            next_retry_seconds: self.settings.retry_interval.as_secs().max(1),
            retries,
        })
    }

    fn resolve(&self, asked: &Asked, agent: &Agent) -> Choice {
        resolve::resolve(asked, agent, self.engine.registry().infos())
    }

    async fn acting_agent(
        &self,
        account_id: &AccountId,
        id_or_name: Option<&str>,
    ) -> Result<Agent> {
        match self.store.acting_agent(account_id, id_or_name).await? {
            Some(agent) if agent.enabled => Ok(agent),
            Some(agent) => Err(ServiceError::invalid_field(
                "created_by",
                format!("agent {} is disabled", agent.name),
            )),
            None if id_or_name.is_some() => Err(ServiceError::invalid_field(
                "created_by",
                "no agent of the account has that id or name",
            )),
            None => Err(ServiceError::invalid_field(
                "created_by",
                "the account has no connected agent; name one",
            )),
        }
    }

    async fn environment(&self, account_id: &AccountId, id: &EnvironmentId) -> Result<Environment> {
        self.store
            .environment(account_id, id)
            .await?
            .ok_or_else(|| {
                ServiceError::invalid_field(
                    "environment_id",
                    "no environment of the account has that id",
                )
            })
    }

    /// The account's environment `id`: `read` when the caller read it
    /// already, else from the store.
    async fn environment_once(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
        read: Option<&Environment>,
    ) -> Result<Environment> {
        match read.filter(|environment| &environment.id == id) {
            Some(environment) => Ok(environment.clone()),
            None => self.environment(account_id, id).await,
        }
    }

    /// A page of up to 200 of the session's messages, newest first, past `cursor`.
    async fn messages_newest_first(
        &self,
        session: &Session,
        cursor: Option<&str>,
    ) -> Result<cinch_store::Page<Message>> {
        Ok(self
            .store
            .messages(
                &session.account_id,
                &session.task_id,
                &session.id,
                cinch_store::Direction::Desc,
                cursor,
                200,
            )
            .await?)
    }

    /// The session's delivered messages, oldest first.
    async fn delivered_messages(&self, session: &Session) -> Result<Vec<Message>> {
        let mut all = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self
                .store
                .messages(
                    &session.account_id,
                    &session.task_id,
                    &session.id,
                    cinch_store::Direction::Asc,
                    cursor.as_deref(),
                    200,
                )
                .await?;
            all.extend(
                page.items
                    .into_iter()
                    .filter(|message| message.sequence.is_some()),
            );
            match page.next_cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(all),
            }
        }
    }

    /// Tells the session's webhooks and live clients what it is now, as
    /// the API shows it.
    async fn publish_session(&self, session: &Session) {
        let view = json!(views::Session::from(session.clone()));
        self.runs.webhooks().session_saved(
            &session.account_id,
            &session.id,
            session.status,
            view.clone(),
        );
        self.publish(
            &session.account_id,
            session.id.as_str(),
            EventName::SessionUpdated,
            view,
        )
        .await;
    }

    /// Tells the session's live clients about the message, as the API shows it.
    async fn publish_message(&self, account_id: &AccountId, name: EventName, message: &Message) {
        let view = json!(views::Message::from(message.clone()));
        self.publish(account_id, message.session_id.as_str(), name, view)
            .await;
    }

    async fn publish(&self, account_id: &AccountId, run_id: &str, name: EventName, data: Value) {
        self.runs.publish(account_id, run_id, name, data).await;
    }
}

/// Whole seconds from `at` to now (none when `at` is later).
fn seconds_since(at: Timestamp) -> i64 {
    Timestamp::now().saturating_duration_since(at).as_secs() as i64
}
