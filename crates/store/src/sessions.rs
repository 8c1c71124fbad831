//! Sessions: one harness session each, in its own workspace, with its
//! lifecycle state.

use cinch_base::timestamp::Timestamp;
use serde::Serialize;

use super::not_read_back;
use super::readers::numbered;
use super::rows::SqliteRow as _;
use super::usage::{totals_json, usage_of};
use super::{
    AccountId, AgentId, EnvironmentId, Page, PerBackend, Result, SessionId, Store, TaskId,
    UsageTotals, on_pool,
};

/// Writes back every changing field of a session (`$1`) while the node
/// `$15` holds its lease at generation `$16`; whoever holds it when `$15`
/// is NULL.
pub(super) const SAVE: &str = "UPDATE sessions SET title = $2, status = $3, \
     harness_session_id = $4, workspace = $5, current_turn = $6, waiting_since = $7, \
     retries = $8, close_reason = $9, error_message = $10, last_activity_at = $11, \
     updated_at = $12, moved_from_node = $13, rebuilt_from = $14, fork_mode = $17 \
     WHERE id = $1 AND ($15 IS NULL OR EXISTS (SELECT 1 FROM session_leases l \
     WHERE l.session_id = sessions.id AND l.node_id = $15 AND l.generation = $16))";

/// [`SAVE`] through sqlx: `session` written while `node` holds its lease
/// at `generation` (both `None`: whoever holds it).
macro_rules! save_query {
    ($session:expr, $node:expr, $generation:expr) => {
        sqlx::query($crate::sessions::SAVE)
            .bind(&$session.id)
            .bind(&$session.title)
            .bind($session.status)
            .bind(&$session.harness_session_id)
            .bind(&$session.workspace)
            .bind(&$session.current_turn)
            .bind($session.waiting_since)
            .bind($session.retries)
            .bind($session.close_reason)
            .bind(&$session.error_message)
            .bind($session.last_activity_at)
            .bind($session.updated_at)
            .bind(&$session.moved_from_node)
            .bind($session.rebuilt_from)
            .bind($node)
            .bind($generation)
            .bind($session.fork_mode)
    };
}
pub(super) use save_query;

super::rows::row_struct! {
    /// A session as stored.
    #[derive(Debug, Clone)]
    pub struct Session {
        /// Its id; also the run id of its turns.
        pub id: SessionId,
        /// The account it belongs to.
        pub account_id: AccountId,
        /// Its task.
        pub task_id: TaskId,
        /// The agent it runs as (its harnesses' HOME is that agent's).
        pub agent_id: AgentId,
        /// Its title.
        pub title: String,
        /// Where it is in its life.
        pub status: SessionStatus,
        /// Its environment.
        pub environment_id: Option<EnvironmentId>,
        /// The branch its workspace is on.
        pub branch_name: String,
        /// The branch that one started from.
        pub base_branch: Option<String>,
        /// Whether what a turn changed is committed on the branch.
        pub auto_commit: bool,
        /// The harness (a driver's name).
        pub harness: String,
        /// Who makes the harness's models.
        pub vendor: String,
        /// The model it runs, when not the harness's default.
        pub harness_model: Option<String>,
        /// The effort it runs at, when not the harness's default.
        pub harness_effort: Option<String>,
        /// The harness's own session id, once reported; later turns resume it.
        pub harness_session_id: Option<String>,
        /// The workspace's path, once made.
        pub workspace: Option<String>,
        /// The engine turn running now.
        pub current_turn: Option<String>,
        /// When the wait for capacity began; only while `waiting`.
        pub waiting_since: Option<Timestamp>,
        /// Attempts to get capacity so far in this wait.
        pub retries: i64,
        /// Why it stopped, or the recovery that left it idle.
        pub close_reason: Option<CloseReason>,
        /// What went wrong and what to do next.
        pub error_message: Option<String>,
        /// When it last started or ended a turn or took a message.
        pub last_activity_at: Timestamp,
        /// The node it was taken over from, until its next turn starts: that
        /// turn starts a new harness session, briefed with the conversation.
        pub moved_from_node: Option<String>,
        /// What its work tree was rebuilt from when another node took it over.
        pub rebuilt_from: Option<RebuiltFrom>,
        /// The session it was forked from, when it is a fork.
        pub forked_from_session: Option<SessionId>,
        /// The turn of that session it was forked at.
        pub forked_from_turn: Option<String>,
        /// That turn's end checkpoint: its work tree's files at the start.
        pub fork_checkpoint: Option<String>,
        /// How a fork's harness session began.
        pub fork_mode: Option<ForkMode>,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
        /// When it last changed (RFC 3339).
        pub updated_at: Timestamp,
        /// The tokens and cost of its turns.
        pub usage: UsageTotals,
    }
}

/// Where a session is in its life, stored as its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    /// Preparing its workspace (clone or worktree, setup commands).
    Booting,
    /// A turn runs.
    Running,
    /// Queued messages wait for a turn slot.
    Waiting,
    /// Ready for a message.
    Idle,
    /// Stopped; a message reopens it.
    Closed,
}

impl SessionStatus {
    pub(super) const ALL: [Self; 5] = [
        Self::Booting,
        Self::Running,
        Self::Waiting,
        Self::Idle,
        Self::Closed,
    ];

    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Booting => "booting",
            Self::Running => "running",
            Self::Waiting => "waiting",
            Self::Idle => "idle",
            Self::Closed => "closed",
        }
    }
}

super::text_column!(SessionStatus);

impl std::fmt::Display for SessionStatus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Why a session closed, or the recovery that left it idle; stored as its
/// snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// Someone closed it.
    UserClosed,
    /// It idled out after a turn that went well.
    Completed,
    /// It idled out after a recovery; what to do next is in its error message.
    IdleTimeout,
    /// A setup command failed.
    SetupFailure,
    /// Its workspace could not be made.
    VmFailure,
    /// The workspace could not be snapshotted around a turn.
    SnapshotFailure,
    /// A turn failed or could not start (the session stays idle).
    TurnFailure,
    /// A turn was interrupted (the session stays idle).
    TurnInterrupted,
    /// No turn slot came free within the wait limit.
    ResourceExhausted,
    /// The wait for a slot outlasted its retry schedule (the server was down).
    WaitingTimeout,
}

impl CloseReason {
    pub(super) const ALL: [Self; 10] = [
        Self::UserClosed,
        Self::Completed,
        Self::IdleTimeout,
        Self::SetupFailure,
        Self::VmFailure,
        Self::SnapshotFailure,
        Self::TurnFailure,
        Self::TurnInterrupted,
        Self::ResourceExhausted,
        Self::WaitingTimeout,
    ];

    /// Its name as stored.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::UserClosed => "user_closed",
            Self::Completed => "completed",
            Self::IdleTimeout => "idle_timeout",
            Self::SetupFailure => "setup_failure",
            Self::VmFailure => "vm_failure",
            Self::SnapshotFailure => "snapshot_failure",
            Self::TurnFailure => "turn_failure",
            Self::TurnInterrupted => "turn_interrupted",
            Self::ResourceExhausted => "resource_exhausted",
            Self::WaitingTimeout => "waiting_timeout",
        }
    }
}

super::text_column!(CloseReason);

/// What a session's work tree was rebuilt from on the node that took it
/// over, stored as its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum RebuiltFrom {
    /// Its last end checkpoint, fetched from the checkpoint remote.
    Checkpoint,
    /// Its branch as last committed (no checkpoint could be had).
    Branch,
}

impl RebuiltFrom {
    pub(super) const ALL: [Self; 2] = [Self::Checkpoint, Self::Branch];

    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Checkpoint => "checkpoint",
            Self::Branch => "branch",
        }
    }
}

super::text_column!(RebuiltFrom);

/// How a fork's harness session began, stored as its snake_case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ForkMode {
    /// The harness forked the source's own session: it remembers the
    /// conversation itself.
    Native,
    /// A new harness session, given the conversation so far in its first brief.
    Brief,
}

impl ForkMode {
    pub(super) const ALL: [Self; 2] = [Self::Native, Self::Brief];

    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Brief => "brief",
        }
    }
}

super::text_column!(ForkMode);

/// Where a fork comes from: set once, when it is made.
#[derive(Debug, Clone)]
pub struct ForkOrigin {
    /// The source session.
    pub session_id: SessionId,
    /// Its turn the fork starts after.
    pub turn_id: String,
    /// That turn's end checkpoint.
    pub checkpoint: String,
    /// How the harness session begins.
    pub mode: ForkMode,
}

super::rows::row_struct! {
    /// An idle session and how long it may stay idle.
    #[derive(Debug, Clone)]
    pub struct IdleSession {
        /// The session.
        pub session_id: SessionId,
        /// Its account.
        pub account_id: AccountId,
        /// When it last started or ended a turn or took a message.
        pub last_activity_at: Timestamp,
        /// Its task's idle timeout.
        pub idle_timeout_seconds: i64,
    }
}

/// What a new session is made of.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// Its task.
    pub task_id: TaskId,
    /// The agent it runs as.
    pub agent_id: AgentId,
    /// Its title.
    pub title: String,
    /// Its environment.
    pub environment_id: Option<EnvironmentId>,
    /// Its branch; `None` for `cinch/<session id>`.
    pub branch_name: Option<String>,
    /// The branch to start from.
    pub base_branch: Option<String>,
    /// Whether turns' changes are committed.
    pub auto_commit: bool,
    /// The resolved harness.
    pub harness: String,
    /// Its vendor.
    pub vendor: String,
    /// The resolved model.
    pub harness_model: Option<String>,
    /// The resolved effort.
    pub harness_effort: Option<String>,
    /// Where it was forked from, for a fork.
    pub fork: Option<ForkOrigin>,
}

macro_rules! columns {
    ($dialect:ident) => {
        concat!(
            "id, account_id, task_id, agent_id, title, status, environment_id, \
    branch_name, base_branch, auto_commit, harness, vendor, harness_model, harness_effort, \
    harness_session_id, workspace, current_turn, waiting_since, retries, close_reason, \
    error_message, last_activity_at, moved_from_node, rebuilt_from, forked_from_session, \
    forked_from_turn, fork_checkpoint, fork_mode, created_at, updated_at, ",
            usage_of!(
                $dialect,
                "c.account_id = sessions.account_id AND c.run_id = sessions.id"
            ),
            " AS usage"
        )
    };
}

/// A session's columns, its usage rolled up.
const COLUMNS: PerBackend<&str> = PerBackend {
    sqlite: columns!(sqlite),
    postgres: columns!(postgres),
};

/// Sessions with their columns, `$clauses` choosing them, on each backend.
macro_rules! select_sessions {
    ($clauses:literal) => {
        PerBackend {
            sqlite: concat!("SELECT ", columns!(sqlite), " FROM sessions ", $clauses),
            postgres: concat!("SELECT ", columns!(postgres), " FROM sessions ", $clauses),
        }
    };
}

/// The account's (`$1`) session `$2`.
const SESSION: PerBackend<&str> = select_sessions!("WHERE account_id = $1 AND id = $2");

/// The account's (`$1`) sessions of task `$2` after `$3`, oldest first, `$4`
/// at most.
const TASK_SESSIONS: PerBackend<&str> =
    select_sessions!("WHERE account_id = $1 AND task_id = $2 AND id > $3 ORDER BY id LIMIT $4");

impl Store {
    /// Stores a new session, `booting`.
    pub async fn create_session(&self, account_id: &AccountId, new: NewSession) -> Result<Session> {
        let id = SessionId::generate()?;
        let created_at = Timestamp::now();
        let branch = new.branch_name.unwrap_or_else(|| format!("cinch/{id}"));
        // Read back as stored in the same statement.
        let create = |columns: &str| {
            format!(
                "INSERT INTO sessions (id, account_id, task_id, agent_id, title, status, \
                 environment_id, branch_name, base_branch, auto_commit, harness, vendor, \
                 harness_model, harness_effort, last_activity_at, created_at, updated_at, \
                 forked_from_session, forked_from_turn, fork_checkpoint, fork_mode) \
                 VALUES ($1, $2, $3, $4, $5, 'booting', $6, $7, $8, $9, $10, $11, $12, $13, $14, \
                 $14, $14, $15, $16, $17, $18) RETURNING {columns}",
            )
        };
        if let Some(writer) = &self.writer {
            let sql = create(COLUMNS.sqlite);
            let fork = new.fork.as_ref();
            let params: Vec<rusqlite::types::Value> = vec![
                id.as_str().to_owned().into(),
                account_id.as_str().to_owned().into(),
                new.task_id.as_str().to_owned().into(),
                new.agent_id.as_str().to_owned().into(),
                new.title.into(),
                new.environment_id.map(|id| id.as_str().to_owned()).into(),
                branch.into(),
                new.base_branch.into(),
                new.auto_commit.into(),
                new.harness.into(),
                new.vendor.into(),
                new.harness_model.into(),
                new.harness_effort.into(),
                created_at.to_string().into(),
                fork.map(|fork| fork.session_id.as_str().to_owned()).into(),
                fork.map(|fork| fork.turn_id.clone()).into(),
                fork.map(|fork| fork.checkpoint.clone()).into(),
                fork.map(|fork| fork.mode.as_str().to_owned()).into(),
            ];
            return writer
                .returning(sql, params, Session::from_sqlite_row)
                .await?
                .ok_or_else(|| not_read_back(id.as_str()));
        }
        let create = create(COLUMNS.get(self.backend()));
        Ok(on_pool!(self, |pool| {
            sqlx::query_as(&create)
                .bind(&id)
                .bind(account_id)
                .bind(&new.task_id)
                .bind(&new.agent_id)
                .bind(&new.title)
                .bind(&new.environment_id)
                .bind(&branch)
                .bind(&new.base_branch)
                .bind(new.auto_commit)
                .bind(&new.harness)
                .bind(&new.vendor)
                .bind(&new.harness_model)
                .bind(&new.harness_effort)
                .bind(created_at)
                .bind(new.fork.as_ref().map(|fork| &fork.session_id))
                .bind(new.fork.as_ref().map(|fork| &fork.turn_id))
                .bind(new.fork.as_ref().map(|fork| &fork.checkpoint))
                .bind(new.fork.as_ref().map(|fork| fork.mode))
                .fetch_one(pool)
                .await
        })?)
    }

    /// The account's session `id`.
    pub async fn session(&self, account_id: &AccountId, id: &SessionId) -> Result<Option<Session>> {
        // Read eight times in a session's life.
        self.read_row(&SESSION, &[account_id.as_str().into(), id.as_str().into()])
            .await
    }

    /// A page of the task's sessions, oldest first, after `cursor`.
    pub async fn sessions(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Session>> {
        let most = i64::from(limit) + 1;
        // A listing the app reads often.
        let rows: Vec<Session> = self
            .read_rows(
                &TASK_SESSIONS,
                &[
                    account_id.as_str().into(),
                    task_id.as_str().into(),
                    cursor.unwrap_or("").into(),
                    most.into(),
                ],
            )
            .await?;
        Ok(Page::from_rows(rows, limit, |session| session.id.as_str()))
    }

    /// Every session in one of `statuses`, oldest first, of every account.
    pub async fn sessions_in(&self, statuses: &[SessionStatus]) -> Result<Vec<Session>> {
        let columns = COLUMNS.get(self.backend());
        if statuses.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = (1..=statuses.len())
            .map(|n| format!("${n}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!("SELECT {columns} FROM sessions WHERE status IN ({wanted}) ORDER BY id");
        Ok(on_pool!(self, |pool| {
            let mut query = sqlx::query_as(&sql);
            for status in statuses {
                query = query.bind(*status);
            }
            query.fetch_all(pool).await
        })?)
    }

    /// Every idle session with its task's idle timeout, in one query (the
    /// background sweep asks every second).
    pub async fn idle_sessions(&self) -> Result<Vec<IdleSession>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT s.id AS session_id, s.account_id, s.last_activity_at, t.idle_timeout_seconds \
             FROM sessions s JOIN tasks t ON t.id = s.task_id WHERE s.status = 'idle'",
        )
        .fetch_all(pool)
        .await)?)
    }

    /// Writes back every changing field of `session`, stamping `updated_at`.
    pub async fn save_session(&self, session: &mut Session) -> Result<()> {
        self.save_session_as(session, None).await.map(drop)
    }

    /// Writes back `session` as [`Store::save_session`] does, but only while
    /// `node` holds its lease at `generation` (fencing); whether it did.
    pub async fn save_session_fenced(
        &self,
        session: &mut Session,
        node: &str,
        generation: i64,
    ) -> Result<bool> {
        self.save_session_as(session, Some((node, generation)))
            .await
    }

    async fn save_session_as(
        &self,
        session: &mut Session,
        holder: Option<(&str, i64)>,
    ) -> Result<bool> {
        session.updated_at = Timestamp::now();
        if let Some(writer) = &self.writer {
            let session = session.clone();
            let holder = holder.map(|(node, generation)| (node.to_owned(), generation));
            return writer
                .write_off_task(move |transaction| save_on(transaction, &session, holder.as_ref()))
                .await;
        }
        let (node, generation) = holder.unzip();
        let changed = on_pool!(self, |pool| save_query!(session, node, generation)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))?;
        Ok(changed == 1)
    }
}

/// [`SAVE`] on the store's own SQLite connection: whether the session was
/// written (not when another node holds its lease). `holder` is owned: it
/// crosses to the writer's thread with the session.
pub(super) fn save_on(
    transaction: &rusqlite::Transaction<'_>,
    session: &Session,
    holder: Option<&(String, i64)>,
) -> rusqlite::Result<bool> {
    let (node, generation) = holder
        .map(|(node, generation)| (node.as_str(), *generation))
        .unzip();
    let text = |at: Option<Timestamp>| at.map(|at| at.to_string());
    let changed = transaction.prepare_cached(SAVE)?.execute(&*numbered(&[
        &session.id,
        &session.title,
        &session.status,
        &session.harness_session_id,
        &session.workspace,
        &session.current_turn,
        &text(session.waiting_since),
        &session.retries,
        &session.close_reason,
        &session.error_message,
        &text(Some(session.last_activity_at)),
        &text(Some(session.updated_at)),
        &session.moved_from_node,
        &session.rebuilt_from,
        &node,
        &generation,
        &session.fork_mode,
    ]))?;
    Ok(changed == 1)
}
