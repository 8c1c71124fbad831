//! Environments: a named repository source with its setup commands, its
//! environment variables and its write-only secrets.

use std::collections::BTreeMap;

use super::secrets::{forget_sealed, open_all, put_sealed, read_sealed};
use super::{
    AccountId, EnvironmentId, Page, PerBackend, Result, Store, StoreError, is_unique_violation,
    on_pool,
};
use cinch_base::timestamp::Timestamp;
use cinch_engine::mcp::McpServer;

/// An environment as stored. Its secrets' values are sealed in the database
/// and opened when it is read; nothing that answers a client or writes a
/// log reads them.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Its id.
    pub id: EnvironmentId,
    /// The account it belongs to.
    pub account_id: AccountId,
    /// Its name, unique in the account (the code-task API's `repo`).
    pub name: String,
    /// A local path or a git URL to clone.
    pub repository: String,
    /// Commands run to set a workspace up, in order.
    pub setup: Vec<String>,
    /// Variables set for the harness.
    pub env: BTreeMap<String, String>,
    /// Secret variables set for the harness and masked in its output.
    pub secrets: BTreeMap<String, String>,
    /// When set, the only TCP ports its processes may connect to.
    pub allowed_tcp_ports: Option<Vec<u16>>,
    /// When set, its processes reach the network only through a proxy
    /// admitting these hosts (see [`cinch_engine::sandbox::egress`]).
    pub allowed_hosts: Option<Vec<String>>,
    /// Its approval policy; `None`: nothing is asked.
    pub approvals: Option<crate::approval_policy::ApprovalPolicy>,
    /// Minutes its harness may write nothing before the turn is stopped;
    /// `None`: the server's watchdog.
    pub watchdog_minutes: Option<u32>,
    /// MCP servers its harnesses get; a header's secret by name only.
    pub mcp_servers: Vec<McpServer>,
    /// When it was created (RFC 3339).
    pub created_at: Timestamp,
    /// When it last changed (RFC 3339).
    pub updated_at: Timestamp,
}

/// A new environment's fields.
#[derive(Debug, Clone)]
pub struct NewEnvironment {
    /// Its name.
    pub name: String,
    /// A local path or a git URL.
    pub repository: String,
    /// Setup commands.
    pub setup: Vec<String>,
    /// Variables.
    pub env: BTreeMap<String, String>,
    /// Secrets.
    pub secrets: BTreeMap<String, String>,
    /// The only TCP ports its processes may connect to; `None`: any.
    pub allowed_tcp_ports: Option<Vec<u16>>,
    /// The only hosts its processes may reach, through the proxy; `None`: any.
    pub allowed_hosts: Option<Vec<String>>,
    /// Its approval policy; `None`: nothing is asked.
    pub approvals: Option<crate::approval_policy::ApprovalPolicy>,
    /// Its watchdog in minutes; `None`: the server's.
    pub watchdog_minutes: Option<u32>,
    /// MCP servers its harnesses get.
    pub mcp_servers: Vec<McpServer>,
}

/// Changes to an environment; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct EnvironmentPatch {
    /// A new name.
    pub name: Option<String>,
    /// A new repository.
    pub repository: Option<String>,
    /// New setup commands, replacing the old.
    pub setup: Option<Vec<String>>,
    /// New variables, replacing the old.
    pub env: Option<BTreeMap<String, String>>,
    /// Secrets to set (a value) or remove (`None`); the others stay, since
    /// a client cannot read them back to send them again.
    pub secrets: BTreeMap<String, Option<String>>,
    /// New allowed ports (`Some(None)` opens the network again).
    pub allowed_tcp_ports: Option<Option<Vec<u16>>>,
    /// New allowed hosts (`Some(None)` opens the network again).
    pub allowed_hosts: Option<Option<Vec<String>>>,
    /// A new approval policy (`Some(None)` asks nothing again).
    pub approvals: Option<Option<crate::approval_policy::ApprovalPolicy>>,
    /// A new watchdog (`Some(None)` goes back to the server's).
    pub watchdog_minutes: Option<Option<u32>>,
    /// New MCP servers, replacing the old.
    pub mcp_servers: Option<Vec<McpServer>>,
}

super::rows::row_struct! {
    /// An environment's columns as stored, but for its secrets' names
    /// (`secrets_json`): its secrets are read with their values.
    struct Row {
        id: String,
        account_id: String,
        name: String,
        repository: String,
        setup_json: String,
        env_json: String,
        created_at: Timestamp,
        updated_at: Timestamp,
        tcp_ports_json: Option<String>,
        watchdog_minutes: Option<i64>,
        mcp_servers_json: String,
        allowed_hosts_json: Option<String>,
        approvals_json: Option<String>,
    }
}

super::rows::row_struct! {
    /// One of an environment's secrets beside its row (both `None` when it
    /// has none): its name and sealed value.
    struct JoinedSecret {
        secret_name: Option<String>,
        secret_sealed: Option<String>,
    }
}

/// An environment's [`Row`] joined with one of its secrets, read from the
/// same row of the result by the columns' names.
struct RowWithSecret {
    row: Row,
    secret: JoinedSecret,
}

impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for RowWithSecret
where
    Row: sqlx::FromRow<'r, R>,
    JoinedSecret: sqlx::FromRow<'r, R>,
{
    fn from_row(row: &'r R) -> std::result::Result<Self, sqlx::Error> {
        Ok(Self {
            row: Row::from_row(row)?,
            secret: JoinedSecret::from_row(row)?,
        })
    }
}

impl super::rows::SqliteRow for RowWithSecret {
    fn from_sqlite_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            row: Row::from_sqlite_row(row)?,
            secret: JoinedSecret::from_sqlite_row(row)?,
        })
    }
}

/// [`Row`]'s columns, each name after `$prefix` (a table's alias and a
/// dot, or nothing).
macro_rules! columns {
    ($prefix:literal) => {
        columns!(@named $prefix; id, account_id, name, repository, setup_json, env_json,
            created_at, updated_at, tcp_ports_json, watchdog_minutes, mcp_servers_json,
            allowed_hosts_json, approvals_json)
    };
    (@named $prefix:literal; $first:ident $(, $column:ident)*) => {
        concat!($prefix, stringify!($first) $(, ", ", $prefix, stringify!($column))*)
    };
}

const COLUMNS: &str = columns!("");

/// The account's (`$1`) environment `$2`, a row per secret (one with no
/// secret when it has none), in the order of their names.
const WITH_SECRETS: PerBackend<&str> = PerBackend::same(concat!(
    "SELECT ",
    columns!("e."),
    ", s.name AS secret_name, s.sealed AS secret_sealed FROM environments e \
     LEFT JOIN secrets s ON s.owner_id = e.id \
     WHERE e.account_id = $1 AND e.id = $2 ORDER BY s.name"
));

/// An environment from its row and its secrets.
fn environment_of(row: Row, secrets: BTreeMap<String, String>) -> Result<Environment> {
    Ok(Environment {
        secrets,
        id: row.id.into(),
        account_id: row.account_id.into(),
        name: row.name,
        repository: row.repository,
        setup: serde_json::from_str(&row.setup_json)?,
        env: serde_json::from_str(&row.env_json)?,
        allowed_tcp_ports: row
            .tcp_ports_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()?,
        allowed_hosts: row
            .allowed_hosts_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()?,
        approvals: row
            .approvals_json
            .as_deref()
            .map(serde_json::from_str)
            .transpose()?,
        watchdog_minutes: row
            .watchdog_minutes
            .and_then(|minutes| u32::try_from(minutes).ok()),
        mcp_servers: serde_json::from_str(&row.mcp_servers_json)?,
        created_at: row.created_at,
        updated_at: row.updated_at,
    })
}

fn taken(name: &str) -> StoreError {
    StoreError::Taken(format!(
        "the account already has an environment named {name}"
    ))
}

/// `$environment`'s row written by `$statement` (the insert or the update
/// below) in the transaction `$tx`; a name taken in the account is refused.
macro_rules! write_row {
    ($tx:expr, $statement:expr, $environment:expr) => {{
        let environment: &Environment = $environment;
        sqlx::query($statement)
            .bind(&environment.id)
            .bind(&environment.account_id)
            .bind(&environment.name)
            .bind(&environment.repository)
            .bind(serde_json::to_string(&environment.setup)?)
            .bind(serde_json::to_string(&environment.env)?)
            .bind(serde_json::to_string(
                &environment.secrets.keys().collect::<Vec<_>>(),
            )?)
            .bind(&environment.updated_at)
            .bind(
                environment
                    .allowed_tcp_ports
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
            )
            .bind(environment.watchdog_minutes.map(i64::from))
            .bind(serde_json::to_string(&environment.mcp_servers)?)
            .bind(
                environment
                    .allowed_hosts
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
            )
            .bind(
                environment
                    .approvals
                    .as_ref()
                    .map(serde_json::to_string)
                    .transpose()?,
            )
            .execute(&mut *$tx)
            .await
            .map_err(|error| match is_unique_violation(&error) {
                true => taken(&environment.name),
                false => error.into(),
            })?
    }};
}

const INSERT: &str = "INSERT INTO environments (id, account_id, name, repository, setup_json, \
     env_json, secrets_json, updated_at, tcp_ports_json, watchdog_minutes, mcp_servers_json, \
     allowed_hosts_json, approvals_json, created_at) \
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $8)";

const UPDATE: &str = "UPDATE environments SET name = $3, repository = $4, setup_json = $5, \
     env_json = $6, secrets_json = $7, updated_at = $8, tcp_ports_json = $9, \
     watchdog_minutes = $10, mcp_servers_json = $11, allowed_hosts_json = $12, \
     approvals_json = $13 WHERE id = $1 AND account_id = $2";

/// Applies `patch` to `environment`; the names of the secrets it removes.
fn apply(environment: &mut Environment, patch: EnvironmentPatch) -> Vec<String> {
    if let Some(name) = patch.name {
        environment.name = name;
    }
    if let Some(repository) = patch.repository {
        environment.repository = repository;
    }
    if let Some(setup) = patch.setup {
        environment.setup = setup;
    }
    if let Some(env) = patch.env {
        environment.env = env;
    }
    if let Some(ports) = patch.allowed_tcp_ports {
        environment.allowed_tcp_ports = ports;
    }
    if let Some(hosts) = patch.allowed_hosts {
        environment.allowed_hosts = hosts;
    }
    if let Some(approvals) = patch.approvals {
        environment.approvals = approvals;
    }
    if let Some(watchdog) = patch.watchdog_minutes {
        environment.watchdog_minutes = watchdog;
    }
    if let Some(servers) = patch.mcp_servers {
        environment.mcp_servers = servers;
    }
    let mut removed = Vec::new();
    for (name, value) in patch.secrets {
        match value {
            Some(value) => {
                environment.secrets.insert(name, value);
            }
            None => {
                if environment.secrets.remove(&name).is_some() {
                    removed.push(name);
                }
            }
        }
    }
    environment.updated_at = Timestamp::now();
    removed
}

impl Store {
    /// Stores a new environment of `account_id`: its row and its secrets
    /// in one transaction, so that a failure leaves neither.
    pub async fn create_environment(
        &self,
        account_id: &AccountId,
        new: NewEnvironment,
    ) -> Result<Environment> {
        let created_at = Timestamp::now();
        let environment = Environment {
            id: EnvironmentId::generate()?,
            account_id: account_id.clone(),
            name: new.name,
            repository: new.repository,
            setup: new.setup,
            env: new.env,
            secrets: new.secrets,
            allowed_tcp_ports: new.allowed_tcp_ports,
            allowed_hosts: new.allowed_hosts,
            approvals: new.approvals,
            watchdog_minutes: new.watchdog_minutes,
            mcp_servers: new.mcp_servers,
            created_at,
            updated_at: created_at,
        };
        let sealed = match environment.secrets.is_empty() {
            true => Vec::new(),
            false => self
                .unlocked()?
                .seal_all(environment.id.as_str(), &environment.secrets)?,
        };
        let dialect = self.dialect();
        on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            write_row!(tx, INSERT, &environment);
            put_sealed!(tx, dialect, self.unlocked()?, &environment.id, &sealed);
            tx.commit().await?;
        });
        Ok(environment)
    }

    /// The environment of `row`, its secrets read and opened.
    async fn environment_with_secrets(&self, row: Row) -> Result<Environment> {
        let id = &row.id;
        let sealed = on_pool!(self, |pool| read_sealed!(pool, id))?;
        let secrets = open_all(self.secrets.as_deref(), id, sealed)?;
        environment_of(row, secrets)
    }

    /// The account's environment with this id, its secrets opened: its row
    /// and its secrets in one statement (a turn's start reads it), one row
    /// per secret.
    pub async fn environment(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
    ) -> Result<Option<Environment>> {
        // Read as each session, and each of its turns, starts.
        let rows: Vec<RowWithSecret> = self
            .read_rows(
                &WITH_SECRETS,
                &[account_id.as_str().into(), id.as_str().into()],
            )
            .await?;
        let mut sealed = Vec::new();
        let mut environment = None;
        for RowWithSecret { row, secret } in rows {
            if let (Some(name), Some(value)) = (secret.secret_name, secret.secret_sealed) {
                sealed.push((name, value));
            }
            environment.get_or_insert(row);
        }
        let Some(row) = environment else {
            return Ok(None);
        };
        let secrets = open_all(self.secrets.as_deref(), &row.id, sealed)?;
        Ok(Some(environment_of(row, secrets)?))
    }

    /// A page of the account's environments, oldest first, after `cursor`.
    pub async fn environments(
        &self,
        account_id: &AccountId,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Environment>> {
        let rows: Vec<Row> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM environments WHERE account_id = $1 AND id > $2 \
             ORDER BY id LIMIT $3"
        ))
        .bind(account_id)
        .bind(cursor.unwrap_or(""))
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?;
        let mut environments = Vec::with_capacity(rows.len());
        for row in rows {
            environments.push(self.environment_with_secrets(row).await?);
        }
        Ok(Page::from_rows(environments, limit, |environment| {
            environment.id.as_str()
        }))
    }

    /// Every environment of the account, by name.
    pub async fn environment_names(
        &self,
        account_id: &AccountId,
    ) -> Result<Vec<(EnvironmentId, String)>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT id, name FROM environments WHERE account_id = $1 ORDER BY name"
        )
        .bind(account_id)
        .fetch_all(pool)
        .await)?)
    }

    /// Applies `patch` to the account's environment `id`, its row and its
    /// secrets in one transaction; `None` when there is none.
    pub async fn update_environment(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
        patch: EnvironmentPatch,
    ) -> Result<Option<Environment>> {
        let dialect = self.dialect();
        let sealed = match patch.secrets.values().any(Option::is_some) {
            true => self.unlocked()?.seal_all(
                id.as_str(),
                patch
                    .secrets
                    .iter()
                    .filter_map(|(name, value)| Some((name, value.as_ref()?))),
            )?,
            false => Vec::new(),
        };
        on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            let row: Option<Row> = sqlx::query_as(&format!(
                "SELECT {COLUMNS} FROM environments WHERE account_id = $1 AND id = $2{}",
                dialect.for_update
            ))
            .bind(account_id)
            .bind(id)
            .fetch_optional(&mut *tx)
            .await?;
            let Some(row) = row else {
                return Ok(None);
            };
            let stored = read_sealed!(&mut *tx, id)?;
            let mut environment =
                environment_of(row, open_all(self.secrets.as_deref(), id.as_str(), stored)?)?;
            let removed = apply(&mut environment, patch);
            write_row!(tx, UPDATE, &environment);
            put_sealed!(tx, dialect, self.unlocked()?, id, &sealed);
            for name in removed {
                sqlx::query("DELETE FROM secrets WHERE owner_id = $1 AND name = $2")
                    .bind(id)
                    .bind(name)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
            Ok(Some(environment))
        })
    }

    /// Deletes the account's environment `id` with its secrets; whether
    /// there was one.
    pub async fn delete_environment(
        &self,
        account_id: &AccountId,
        id: &EnvironmentId,
    ) -> Result<bool> {
        let dialect = self.dialect();
        let done = on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            let done = sqlx::query("DELETE FROM environments WHERE account_id = $1 AND id = $2")
                .bind(account_id)
                .bind(id)
                .execute(&mut *tx)
                .await?;
            if done.rows_affected() > 0 {
                forget_sealed!(tx, id);
            }
            tx.commit().await?;
            done.rows_affected()
        });
        Ok(done > 0)
    }
}
