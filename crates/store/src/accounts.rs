//! Accounts and who acts in them: members (people) and agents (execution
//! identities, one of them the account's connected agent).

use cinch_base::timestamp::Timestamp;

use super::{
    AccountId, AgentId, EnvironmentId, Page, PerBackend, Pool, Result, Store, StoreError, new_id,
    on_pool, tokens,
};

super::rows::row_struct! {
    /// An account: everything else belongs to one.
    #[derive(Debug, Clone)]
    pub struct Account {
        /// Its id.
        pub id: AccountId,
        /// Its name.
        pub name: String,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
    }
}

super::rows::row_struct! {
    /// A person in an account.
    #[derive(Debug, Clone)]
    pub struct Member {
        /// Its id.
        pub id: String,
        /// The account it belongs to.
        pub account_id: AccountId,
        /// Its name, unique in the account.
        pub name: String,
        /// `admin` or `member`.
        pub role: String,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
    }
}

super::rows::row_struct! {
    /// An execution identity of an account, with its default harness, model,
    /// effort and environment.
    #[derive(Debug, Clone)]
    pub struct Agent {
        /// Its id.
        pub id: AgentId,
        /// The account it belongs to.
        pub account_id: AccountId,
        /// Its name, unique in the account.
        pub name: String,
        /// Whether it is the account's connected agent (the default `created_by`).
        pub connected: bool,
        /// Whether it may run tasks.
        pub enabled: bool,
        /// Its default harness.
        pub harness: Option<String>,
        /// Its default model.
        pub model: Option<String>,
        /// Its pinned effort (applies to its own harness only).
        pub effort: Option<String>,
        /// Its default environment.
        pub environment_id: Option<EnvironmentId>,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
    }
}

/// An agent's columns, in [`Agent`]'s order.
macro_rules! agent_columns {
    () => {
        "id, account_id, name, connected, enabled, harness, model, effort, environment_id, created_at"
    };
}
const AGENT_COLUMNS: &str = agent_columns!();

/// The agent whose id or name is `$2`, the first by id should one's name be
/// another's id.
const AGENT_BY_KEY: &str = concat!(
    "SELECT ",
    agent_columns!(),
    " FROM agents WHERE account_id = $1 AND (id = $2 OR name = $2) ORDER BY id LIMIT 1"
);

/// The account's connected agent, the first by id.
const THE_CONNECTED_AGENT: &str = concat!(
    "SELECT ",
    agent_columns!(),
    " FROM agents WHERE account_id = $1 AND connected ORDER BY id LIMIT 1"
);

/// The PostgreSQL advisory lock nodes take turns with on their first start.
const FIRST_START_LOCK: i64 = 0x6369_6e63_6800_0001;

/// The name of the admin member every new account starts with.
pub(crate) const ADMIN_MEMBER: &str = "admin";

/// The name of the connected agent every new account starts with.
pub(crate) const CONNECTED_AGENT: &str = "agent";

impl Store {
    /// On the first start (no account yet), creates the first account and
    /// returns its admin's token; otherwise `None`. Nodes that start
    /// together on one empty PostgreSQL database take turns here, so that
    /// only the first creates an account.
    pub async fn bootstrap(&self) -> Result<Option<String>> {
        let turn = match &self.pool {
            Pool::Postgres(pool) => {
                let mut turn = pool.begin().await?;
                sqlx::query("SELECT pg_advisory_xact_lock($1)")
                    .bind(FIRST_START_LOCK)
                    .execute(&mut *turn)
                    .await?;
                Some(turn)
            }
            Pool::Sqlite(_) => None,
        };
        let created = self.bootstrap_in_turn().await;
        if let Some(turn) = turn {
            turn.rollback().await?;
        }
        created
    }

    async fn bootstrap_in_turn(&self) -> Result<Option<String>> {
        let (count,): (i64,) =
            on_pool!(self, |pool| sqlx::query_as("SELECT COUNT(*) FROM accounts")
                .fetch_one(pool)
                .await)?;
        if count > 0 {
            return Ok(None);
        }
        let (_, token) = self.create_account("default").await?;
        Ok(Some(token))
    }

    /// Creates an account with its connected agent and an admin member, and
    /// returns it with the admin's new token.
    pub async fn create_account(&self, name: &str) -> Result<(Account, String)> {
        let created_at = Timestamp::now();
        let account = Account {
            id: AccountId::generate()?,
            name: name.to_owned(),
            created_at,
        };
        on_pool!(self, |pool| {
            let mut tx = pool.begin().await?;
            sqlx::query("INSERT INTO accounts (id, name, created_at) VALUES ($1, $2, $3)")
                .bind(&account.id)
                .bind(&account.name)
                .bind(created_at)
                .execute(&mut *tx)
                .await?;
            sqlx::query(
                "INSERT INTO agents (id, account_id, name, connected, enabled, created_at) \
             VALUES ($1, $2, $3, TRUE, TRUE, $4)",
            )
            .bind(AgentId::generate()?)
            .bind(&account.id)
            .bind(CONNECTED_AGENT)
            .bind(created_at)
            .execute(&mut *tx)
            .await?;
            let member_id = new_id("mem")?;
            sqlx::query(
                "INSERT INTO members (id, account_id, name, role, created_at) \
             VALUES ($1, $2, $3, 'admin', $4)",
            )
            .bind(&member_id)
            .bind(&account.id)
            .bind(ADMIN_MEMBER)
            .bind(created_at)
            .execute(&mut *tx)
            .await?;
            let admin = tokens::TokenOwner::Member(member_id);
            let token = tokens::issue!(tx, &account.id, &admin, None::<&str>);
            tx.commit().await?;
            Ok((account, token))
        })
    }

    /// The first account made on this server (the operator's own).
    pub async fn first_account_id(&self) -> Result<Option<AccountId>> {
        if let Some(first) = self.first_account.get() {
            return Ok(Some(first.clone()));
        }
        let row: Option<(AccountId,)> = on_pool!(self, |pool| sqlx::query_as(
            "SELECT id FROM accounts ORDER BY created_at, id LIMIT 1"
        )
        .fetch_optional(pool)
        .await)?;
        Ok(row.map(|(id,)| self.first_account.get_or_init(|| id).clone()))
    }

    /// The account with this id.
    pub async fn account(&self, id: &AccountId) -> Result<Option<Account>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT id, name, created_at FROM accounts WHERE id = $1"
        )
        .bind(id)
        .fetch_optional(pool)
        .await)?)
    }

    /// The account named by `id_or_name`, or the only account when `None`.
    pub async fn find_account(&self, id_or_name: Option<&str>) -> Result<Account> {
        let rows: Vec<Account> = match id_or_name {
            Some(key) => on_pool!(self, |pool| {
                sqlx::query_as(
                "SELECT id, name, created_at FROM accounts WHERE id = $1 OR name = $1 ORDER BY id",
            )
            .bind(key)
            .fetch_all(pool)
            .await
            })?,
            None => on_pool!(self, |pool| sqlx::query_as(
                "SELECT id, name, created_at FROM accounts ORDER BY id"
            )
            .fetch_all(pool)
            .await)?,
        };
        match (rows.len(), id_or_name) {
            (1, _) => Ok(rows.into_iter().next().expect("one row")),
            (0, Some(key)) => Err(StoreError::Missing(format!("no account is named {key}"))),
            (0, None) => Err(StoreError::Missing(
                "there is no account yet: start `cinch serve` once".into(),
            )),
            _ => Err(StoreError::Missing(format!(
                "several accounts match; name one with --account: {}",
                rows.iter()
                    .map(|account| format!("{} ({})", account.name, account.id))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }

    /// A page of the account's members, oldest first, after `cursor`.
    pub async fn members(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Member>> {
        let rows: Vec<Member> = on_pool!(self, |pool| sqlx::query_as(
            "SELECT id, account_id, name, role, created_at FROM members \
             WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3",
        )
        .bind(account_id)
        .bind(cursor.unwrap_or(""))
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?;
        Ok(Page::from_rows(rows, limit, |member| member.id.as_str()))
    }

    /// The agent whose id or name is `key`, or without one the account's
    /// connected agent: who a new task is created by. One indexed read, on
    /// SQLite on the calling thread.
    pub async fn acting_agent(
        &self,
        account_id: &AccountId,
        key: Option<&str>,
    ) -> Result<Option<Agent>> {
        match key {
            Some(key) => {
                self.read_row(
                    &PerBackend::same(AGENT_BY_KEY),
                    &[account_id.as_str().into(), key.into()],
                )
                .await
            }
            None => {
                self.read_row(
                    &PerBackend::same(THE_CONNECTED_AGENT),
                    &[account_id.as_str().into()],
                )
                .await
            }
        }
    }

    /// A page of the account's agents, oldest first, after `cursor`.
    pub async fn agents(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Agent>> {
        let rows: Vec<Agent> = on_pool!(self, |pool| {
            sqlx::query_as(
            &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE account_id = $1 AND id > $2 ORDER BY id LIMIT $3"),
        )
        .bind(account_id)
        .bind(cursor.unwrap_or(""))
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await
        })?;
        Ok(Page::from_rows(rows, limit, |agent| agent.id.as_str()))
    }
}

/// An agent's settings: each `Some` sets a field, `Some(None)` clears it.
#[derive(Debug, Clone, Default)]
pub struct AgentSettings {
    /// Its default harness.
    pub harness: Option<Option<String>>,
    /// Its default model.
    pub model: Option<Option<String>>,
    /// Its pinned effort.
    pub effort: Option<Option<String>>,
    /// Its default environment.
    pub environment_id: Option<Option<EnvironmentId>>,
    /// Whether it may run tasks.
    pub enabled: Option<bool>,
}

impl Store {
    /// The account's agent `id`.
    pub async fn agent(&self, account_id: &AccountId, id: &AgentId) -> Result<Option<Agent>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {AGENT_COLUMNS} FROM agents WHERE account_id = $1 AND id = $2"
        ))
        .bind(account_id)
        .bind(id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Adds an agent named `name` to the account with `settings`.
    pub async fn create_agent(
        &self,
        account_id: &AccountId,
        name: &str,
        settings: AgentSettings,
    ) -> Result<Agent> {
        let id = AgentId::generate()?;
        on_pool!(self, |pool| sqlx::query(
            "INSERT INTO agents (id, account_id, name, connected, enabled, created_at) \
             VALUES ($1, $2, $3, FALSE, TRUE, $4)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(name)
        .bind(Timestamp::now())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))
        .map_err(|error| match super::is_unique_violation(&error) {
            true => StoreError::Taken(format!("the account already has an agent named {name}")),
            false => error.into(),
        })?;
        self.update_agent(account_id, &id, settings)
            .await
            .map(|agent| agent.expect("the agent was just stored"))
    }

    /// Changes the account's agent `id`; `None` when there is none.
    pub async fn update_agent(
        &self,
        account_id: &AccountId,
        id: &AgentId,
        settings: AgentSettings,
    ) -> Result<Option<Agent>> {
        let Some(mut agent) = self.agent(account_id, id).await? else {
            return Ok(None);
        };
        if let Some(harness) = settings.harness {
            agent.harness = harness;
        }
        if let Some(model) = settings.model {
            agent.model = model;
        }
        if let Some(effort) = settings.effort {
            agent.effort = effort;
        }
        if let Some(environment_id) = settings.environment_id {
            agent.environment_id = environment_id;
        }
        if let Some(enabled) = settings.enabled {
            agent.enabled = enabled;
        }
        on_pool!(self, |pool| sqlx::query(
            "UPDATE agents SET harness = $3, model = $4, effort = $5, environment_id = $6, \
             enabled = $7 WHERE account_id = $1 AND id = $2",
        )
        .bind(account_id)
        .bind(id)
        .bind(&agent.harness)
        .bind(&agent.model)
        .bind(&agent.effort)
        .bind(&agent.environment_id)
        .bind(agent.enabled)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(Some(agent))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_store;

    /// Who a task is created by: an agent named by id or name, else the
    /// connected one; never another account's.
    #[tokio::test]
    async fn the_acting_agent_is_found_by_id_name_or_connection() {
        let (store, _dir) = test_store().await;
        let (account, _) = store.create_account("acme").await.unwrap();
        let (other, _) = store.create_account("other").await.unwrap();
        let reviewer = store
            .create_agent(&account.id, "reviewer", AgentSettings::default())
            .await
            .unwrap();
        let theirs = store
            .create_agent(&other.id, "theirs", AgentSettings::default())
            .await
            .unwrap();
        let connected = store
            .acting_agent(&account.id, None)
            .await
            .unwrap()
            .unwrap();
        assert!(connected.connected);
        assert_eq!(connected.name, CONNECTED_AGENT);
        for key in ["reviewer", reviewer.id.as_str()] {
            let found = store.acting_agent(&account.id, Some(key)).await.unwrap();
            assert_eq!(found.unwrap().id, reviewer.id, "{key}");
        }
        for key in ["theirs", theirs.id.as_str(), "nobody"] {
            let found = store.acting_agent(&account.id, Some(key)).await.unwrap();
            assert!(found.is_none(), "{key}");
        }
    }
}
