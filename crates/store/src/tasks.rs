//! Tasks: the work items of an account, who runs them and who owns them.

use cinch_base::timestamp::Timestamp;

use super::not_read_back;
use super::usage::{totals_json, usage_of};
use super::{
    AccountId, AgentId, CloseReason, EnvironmentId, Page, PerBackend, Result, Session,
    SessionStatus, Store, TaskId, UsageTotals, on_pool,
};

super::rows::row_struct! {
    /// A task as stored, with what its listing shows of its sessions.
    #[derive(Debug, Clone)]
    pub struct Task {
        /// Its id.
        pub id: TaskId,
        /// The account it belongs to.
        pub account_id: AccountId,
        /// Its title.
        pub title: String,
        /// The environment its sessions use unless they name another.
        pub environment_id: Option<EnvironmentId>,
        /// Seconds an idle session waits for a message before it is closed.
        pub idle_timeout_seconds: i64,
        /// The agent it runs as.
        pub created_by: AgentId,
        /// That agent's name.
        pub created_by_name: String,
        /// The member responsible for it; none when an agent opened it ("needs someone").
        pub owner: Option<String>,
        /// That member's name.
        pub owner_name: Option<String>,
        /// One line: the last thing the agent said on it, markdown stripped.
        pub last_message_preview: Option<String>,
        /// The harness of its newest session.
        pub harness: Option<String>,
        /// How many sessions it has.
        pub session_count: i64,
        /// The status of its newest session.
        pub session_status: Option<SessionStatus>,
        /// Why its newest session closed, or the recovery that left it idle.
        pub session_close_reason: Option<CloseReason>,
        /// The most attempts a session of it waiting for capacity has made;
        /// `None` when none waits.
        pub waiting_retries: Option<i64>,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
        /// When it last changed (RFC 3339).
        pub updated_at: Timestamp,
        /// The tokens and cost of its sessions' turns.
        pub usage: UsageTotals,
    }
}

super::rows::row_struct! {
    /// Whether a task exists.
    struct Exists {
        found: bool,
    }
}

impl Task {
    /// The task as a read finds it once `sessions`, made after it, are its
    /// only ones and none has ended a turn: a new task's answer, made
    /// without reading it again.
    pub fn with_new_sessions(mut self, sessions: &[Session]) -> Task {
        // The newest, as the listing's columns order them.
        if let Some(newest) = sessions
            .iter()
            .max_by(|a, b| a.id.as_str().cmp(b.id.as_str()))
        {
            self.harness = Some(newest.harness.clone());
            self.session_status = Some(newest.status);
            self.session_close_reason = newest.close_reason;
        }
        self.session_count = sessions.len() as i64;
        self.waiting_retries = sessions
            .iter()
            .filter(|session| session.status == SessionStatus::Waiting)
            .map(|session| session.retries)
            .max();
        self
    }
}

/// What a new task is made of.
#[derive(Debug, Clone)]
pub struct NewTask {
    /// Its title.
    pub title: String,
    /// Its environment.
    pub environment_id: Option<EnvironmentId>,
    /// Seconds before an idle session is closed.
    pub idle_timeout_seconds: i64,
    /// The agent it runs as.
    pub created_by: AgentId,
    /// The member who owns it.
    pub owner: Option<String>,
}

macro_rules! select {
    ($dialect:ident) => {
        concat!(
    "SELECT t.id, t.account_id, t.title, t.environment_id, \
    t.idle_timeout_seconds, t.created_by, a.name AS created_by_name, \
    t.owner, m.name AS owner_name, t.last_message_preview, \
    (SELECT s.harness FROM sessions s WHERE s.task_id = t.id ORDER BY s.id DESC LIMIT 1) AS harness, \
    (SELECT COUNT(*) FROM sessions s WHERE s.task_id = t.id) AS session_count, \
    (SELECT s.status FROM sessions s WHERE s.task_id = t.id ORDER BY s.id DESC LIMIT 1) AS session_status, \
    (SELECT s.close_reason FROM sessions s WHERE s.task_id = t.id ORDER BY s.id DESC LIMIT 1) \
        AS session_close_reason, \
    (SELECT MAX(s.retries) FROM sessions s WHERE s.task_id = t.id AND s.status = 'waiting') \
        AS waiting_retries, \
    t.created_at, t.updated_at, ",
    usage_of!($dialect,
        "c.account_id = t.account_id AND c.run_id IN (SELECT s.id FROM sessions s WHERE s.task_id = t.id)"
    ),
    " AS usage \
    FROM tasks t JOIN agents a ON a.id = t.created_by LEFT JOIN members m ON m.id = t.owner"
        )
    };
}

/// A task with its listing's columns, its usage rolled up.
const SELECT: PerBackend<&str> = PerBackend {
    sqlite: select!(sqlite),
    postgres: select!(postgres),
};

/// The account's (`$1`) task `$2`.
const TASK: PerBackend<&str> = PerBackend {
    sqlite: concat!(select!(sqlite), " WHERE t.account_id = $1 AND t.id = $2"),
    postgres: concat!(select!(postgres), " WHERE t.account_id = $1 AND t.id = $2"),
};

/// Stores a new task (`$1`) of account `$2`, titled `$3`, in environment
/// `$4`, idle for `$5` s at most, made by agent `$6` for member `$7` at `$8`;
/// gives back the agent's and the member's names.
const CREATE: &str = "INSERT INTO tasks (id, account_id, title, environment_id, \
     idle_timeout_seconds, created_by, owner, created_at, updated_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) \
     RETURNING (SELECT a.name FROM agents a WHERE a.id = tasks.created_by), \
     (SELECT m.name FROM members m WHERE m.id = tasks.owner)";

impl Store {
    /// Stores a new task of `account_id`. It is made, not read back: a
    /// task's row with its listing's columns costs a dozen lookups, and a
    /// new one has no sessions, no usage and no preview yet.
    pub async fn create_task(&self, account_id: &AccountId, new: NewTask) -> Result<Task> {
        let id = TaskId::generate()?;
        let created_at = Timestamp::now();
        let (created_by_name, owner_name): (String, Option<String>) = match &self.writer {
            Some(writer) => {
                let params: Vec<rusqlite::types::Value> = vec![
                    id.as_str().to_owned().into(),
                    account_id.as_str().to_owned().into(),
                    new.title.clone().into(),
                    new.environment_id
                        .as_ref()
                        .map(|id| id.as_str().to_owned())
                        .into(),
                    new.idle_timeout_seconds.into(),
                    new.created_by.as_str().to_owned().into(),
                    new.owner.clone().into(),
                    created_at.to_string().into(),
                ];
                writer
                    .returning(CREATE, params, |row| Ok((row.get(0)?, row.get(1)?)))
                    .await?
                    .ok_or_else(|| not_read_back(id.as_str()))?
            }
            None => on_pool!(self, |pool| {
                sqlx::query_as(CREATE)
                    .bind(&id)
                    .bind(account_id)
                    .bind(&new.title)
                    .bind(&new.environment_id)
                    .bind(new.idle_timeout_seconds)
                    .bind(&new.created_by)
                    .bind(&new.owner)
                    .bind(created_at)
                    .fetch_one(pool)
                    .await
            })?,
        };
        Ok(Task {
            id,
            account_id: account_id.clone(),
            title: new.title,
            environment_id: new.environment_id,
            idle_timeout_seconds: new.idle_timeout_seconds,
            created_by: new.created_by,
            created_by_name,
            owner: new.owner,
            owner_name,
            last_message_preview: None,
            harness: None,
            session_count: 0,
            session_status: None,
            session_close_reason: None,
            waiting_retries: None,
            created_at,
            updated_at: created_at,
            usage: UsageTotals::default(),
        })
    }

    /// Whether the account has task `id`: what a request about the task's
    /// sessions or attachments checks first, without its listing's columns.
    pub async fn has_task(&self, account_id: &AccountId, id: &TaskId) -> Result<bool> {
        let exists: Option<Exists> = self
            .read_row(
                &PerBackend::same(
                    "SELECT EXISTS (SELECT 1 FROM tasks WHERE account_id = $1 AND id = $2) AS found",
                ),
                &[account_id.as_str().into(), id.as_str().into()],
            )
            .await?;
        Ok(exists.is_some_and(|exists| exists.found))
    }

    /// The account's task `id`.
    pub async fn task(&self, account_id: &AccountId, id: &TaskId) -> Result<Option<Task>> {
        self.read_row(&TASK, &[account_id.as_str().into(), id.as_str().into()])
            .await
    }

    /// A page of the account's tasks, newest first, before `cursor`; with
    /// `unowned`, only those nobody owns.
    pub async fn tasks(
        &self,
        account_id: &AccountId,
        unowned: bool,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Task>> {
        let select = SELECT.get(self.backend());
        let rows: Vec<Task> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "{select} WHERE t.account_id = $1 AND ($2 = '' OR t.id < $2) \
             AND (NOT $3 OR t.owner IS NULL OR EXISTS (SELECT 1 FROM approvals a \
             WHERE a.task_id = t.id AND a.status = 'pending')) ORDER BY t.id DESC LIMIT $4"
        ))
        .bind(account_id)
        .bind(cursor.unwrap_or(""))
        .bind(unowned)
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?;
        Ok(Page::from_rows(rows, limit, |task| task.id.as_str()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewSession, test_store};

    async fn new_session(store: &Store, task: &Task, harness: &str) -> Session {
        store
            .create_session(
                &task.account_id,
                NewSession {
                    task_id: task.id.clone(),
                    agent_id: task.created_by.clone(),
                    title: task.title.clone(),
                    environment_id: None,
                    branch_name: None,
                    base_branch: None,
                    auto_commit: false,
                    harness: harness.into(),
                    vendor: "any".into(),
                    harness_model: None,
                    harness_effort: None,
                    fork: None,
                },
            )
            .await
            .unwrap()
    }

    /// A new task is made from what was stored, not read back: it must be
    /// what a read finds, names and empty rollups included, on either
    /// backend.
    #[tokio::test]
    async fn a_new_task_is_what_a_read_finds() {
        let (store, _dir) = test_store().await;
        let (account, _) = store.create_account("acme").await.unwrap();
        let agent = store.agents(&account.id, None, 10).await.unwrap().items[0].clone();
        let member = store.members(&account.id, None, 10).await.unwrap().items[0].clone();
        for owner in [None, Some(member.id.clone())] {
            let made = store
                .create_task(
                    &account.id,
                    NewTask {
                        title: "Fix the build".into(),
                        environment_id: None,
                        idle_timeout_seconds: 600,
                        created_by: agent.id.clone(),
                        owner,
                    },
                )
                .await
                .unwrap();
            let read = store.task(&account.id, &made.id).await.unwrap().unwrap();
            assert_eq!(format!("{made:?}"), format!("{read:?}"));
            assert_eq!(made.created_by_name, agent.name);
            assert!(store.has_task(&account.id, &made.id).await.unwrap());
            let mut sessions = Vec::new();
            for harness in ["claude", "codex", "gemini"] {
                sessions.push(new_session(&store, &made, harness).await);
                let answered = made.clone().with_new_sessions(&sessions);
                let read = store.task(&account.id, &made.id).await.unwrap().unwrap();
                assert_eq!(format!("{answered:?}"), format!("{read:?}"));
                assert_eq!(read.session_count, sessions.len() as i64);
            }
        }
        let (other, _) = store.create_account("other").await.unwrap();
        let theirs = store
            .tasks(&account.id, false, None, 1)
            .await
            .unwrap()
            .items[0]
            .clone();
        assert!(!store.has_task(&other.id, &theirs.id).await.unwrap());
    }
}
