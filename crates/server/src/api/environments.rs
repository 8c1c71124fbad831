//! Environments: a named repository source, setup commands, variables and
//! write-only secrets (only their names ever come back).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{Array, ArrayBuilder, Object, ObjectBuilder, SchemaType, Type};

use super::extract::{Caller, Json, PageParams, Query, nullable};
use super::problem::FieldError;
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::service::ServiceError;
use cinch_base::timestamp::Timestamp;
use cinch_engine::mcp::{HeaderValue, McpServer, McpServerKind, Transport};
use cinch_store::{AccountId, Environment, EnvironmentId, EnvironmentPatch, NewEnvironment};

/// An environment as clients see it: secrets by name only.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EnvironmentView {
    /// Its id.
    #[schema(value_type = String)]
    pub id: EnvironmentId,
    /// The account it belongs to.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Its name, unique in the account (the jobs API's `repo`).
    pub name: String,
    /// A local path or a git URL to clone.
    pub repository: String,
    /// Commands run to set a workspace up, in order.
    pub setup: Vec<String>,
    /// Variables set for the harness.
    pub env: BTreeMap<String, String>,
    /// The names of its secrets; their values are never returned.
    pub secret_names: Vec<String>,
    /// The only TCP ports its harnesses may connect to; null: any.
    pub allowed_tcp_ports: Option<Vec<u16>>,
    /// The only hosts its harnesses and setup commands may reach, through
    /// cinch's HTTP proxy (names, `*.domain` wildcards, addresses); null: any.
    pub allowed_hosts: Option<Vec<String>>,
    /// When its sessions' agents ask before they act (see Approvals); null:
    /// they never ask.
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
    /// Minutes its harness may write nothing before the turn is stopped
    /// (`timed_out`); null: the server's watchdog.
    pub watchdog_minutes: Option<u32>,
    /// MCP servers its harnesses get; a header that takes a secret shows
    /// `{"secret": NAME}`, never the value.
    pub mcp_servers: Vec<McpServerSpec>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// When it last changed (RFC 3339).
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
}

impl From<Environment> for EnvironmentView {
    fn from(environment: Environment) -> Self {
        Self {
            id: environment.id,
            account_id: environment.account_id,
            name: environment.name,
            repository: environment.repository,
            setup: environment.setup,
            env: environment.env,
            secret_names: environment.secrets.into_keys().collect(),
            allowed_tcp_ports: environment.allowed_tcp_ports,
            allowed_hosts: environment.allowed_hosts,
            approvals: environment.approvals,
            watchdog_minutes: environment.watchdog_minutes,
            mcp_servers: environment
                .mcp_servers
                .into_iter()
                .map(McpServerSpec::from)
                .collect(),
            created_at: environment.created_at,
            updated_at: environment.updated_at,
        }
    }
}

/// The names of an environment's variables and secrets.
const VARIABLE_NAME: &str = "^[A-Za-z_][A-Za-z0-9_]*$";

/// An object of variables: NAME to a string, or with `nulls` also to null.
fn variables_schema(nulls: bool) -> Object {
    let value = match nulls {
        true => SchemaType::Array(vec![Type::String, Type::Null]),
        false => SchemaType::Type(Type::String),
    };
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(VARIABLE_NAME))
                .description(Some(
                    "a name is letters, digits and _, not starting with a digit",
                )),
        ))
        .additional_properties(Some(ObjectBuilder::new().schema_type(value)))
        .build()
}

fn variables() -> Object {
    variables_schema(false)
}

fn nullable_variables() -> Object {
    variables_schema(true)
}

/// TCP ports, 1 to 65535, or null.
fn tcp_ports() -> Array {
    ArrayBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(65535)),
        )
        .build()
}

/// An approval policy checked: each malformed rule or bound is a field
/// error under `approvals`.
pub(super) fn checked_policy(
    policy: Option<cinch_store::approval_policy::ApprovalPolicy>,
) -> Result<Option<cinch_store::approval_policy::ApprovalPolicy>, ServiceError> {
    let Some(policy) = policy else {
        return Ok(None);
    };
    let errors: Vec<FieldError> = policy
        .check()
        .into_iter()
        .map(|(field, why)| FieldError::new(format!("approvals.{field}"), why))
        .collect();
    if errors.is_empty() {
        Ok(Some(policy))
    } else {
        Err(ServiceError::Invalid(errors))
    }
}

/// Host names, `*.domain` wildcards and IP addresses, or null.
fn allowed_hosts_schema() -> Array {
    ArrayBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Array, Type::Null]))
        .max_items(Some(cinch_engine::sandbox::egress::hosts::MAX_HOSTS))
        .items(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(1))
                .max_length(Some(255))
                .description(Some(
                    "a host name (api.anthropic.com), a wildcard for the names below a domain (*.npmjs.org) or an IP address; no scheme, port or path",
                )),
        )
        .build()
}

/// The entries of `allowed_hosts` checked and normalized (lower case, no
/// final dot); every bad entry is a field error.
fn allowed_hosts(hosts: Option<Vec<String>>) -> Result<Option<Vec<String>>, ServiceError> {
    use cinch_engine::sandbox::egress::hosts::{MAX_HOSTS, check, normalize};
    let Some(hosts) = hosts else {
        return Ok(None);
    };
    if hosts.len() > MAX_HOSTS {
        return Err(ServiceError::Invalid(vec![FieldError::new(
            "allowed_hosts",
            format!("at most {MAX_HOSTS} hosts"),
        )]));
    }
    let errors: Vec<FieldError> = hosts
        .iter()
        .enumerate()
        .filter_map(|(index, host)| {
            check(host)
                .err()
                .map(|why| FieldError::new(format!("allowed_hosts[{index}]"), why))
        })
        .collect();
    if !errors.is_empty() {
        return Err(ServiceError::Invalid(errors));
    }
    Ok(Some(hosts.iter().map(|host| normalize(host)).collect()))
}

/// A header's value: a string, or `{"secret": NAME}` naming one of the
/// environment's secrets.
fn header_value() -> utoipa::openapi::schema::OneOf {
    utoipa::openapi::schema::OneOfBuilder::new()
        .item(ObjectBuilder::new().schema_type(Type::String))
        .item(
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .property(
                    "secret",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .pattern(Some(VARIABLE_NAME))
                        .description(Some("the name of one of the environment's secrets")),
                )
                .required("secret")
                .additional_properties(Some(
                    utoipa::openapi::schema::AdditionalProperties::FreeForm(false),
                )),
        )
        .build()
}

/// HTTP headers: a name to a value or a secret's name.
fn headers() -> Object {
    ObjectBuilder::new()
        .schema_type(SchemaType::Array(vec![Type::Object, Type::Null]))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(HEADER_NAME))
                .description(Some("a header name is letters, digits and !#$%&'*+-.^_`|~")),
        ))
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::RefOr(
            utoipa::openapi::RefOr::T(utoipa::openapi::Schema::OneOf(header_value())),
        )))
        .build()
}

/// Variables of a stdio server, or null.
fn nullable_env() -> Object {
    let mut schema = variables();
    schema.schema_type = SchemaType::Array(vec![Type::Object, Type::Null]);
    schema
}

/// A header name (an HTTP token).
const HEADER_NAME: &str = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$";

/// An MCP server a harness gets: a stdio program (`command`, `args`, `env`)
/// or an HTTP URL (`url`, `headers`).
#[derive(Debug, Clone, Deserialize, Serialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct McpServerSpec {
    /// 1 to 64 letters, digits, `_` and `-`, unique in the environment; harnesses prefix the server's tools with it.
    #[schema(pattern = r"^[A-Za-z0-9_-]{1,64}$")]
    pub name: String,
    /// `stdio`: a program the harness starts in the turn's sandbox; `http`: a streamable-HTTP URL.
    #[serde(rename = "type")]
    pub kind: McpServerKind,
    /// stdio: the program to start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_length = 1)]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// stdio: variables set for it: NAME to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = nullable_env)]
    pub env: Option<BTreeMap<String, String>>,
    /// http: the URL (`http://` or `https://`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = r"^https?://[^/?#\s]+")]
    pub url: Option<String>,
    /// http: headers sent with each request: NAME to a value, or to `{"secret": NAME}` for one of the environment's secrets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(schema_with = headers)]
    pub headers: Option<BTreeMap<String, HeaderValue>>,
}

impl From<McpServer> for McpServerSpec {
    fn from(server: McpServer) -> Self {
        let blank = Self {
            name: server.name,
            kind: McpServerKind::Stdio,
            command: None,
            args: None,
            env: None,
            url: None,
            headers: None,
        };
        match server.transport {
            Transport::Stdio { command, args, env } => Self {
                command: Some(command),
                args: Some(args),
                env: Some(env),
                ..blank
            },
            Transport::Http { url, headers } => Self {
                kind: McpServerKind::Http,
                url: Some(url),
                headers: Some(headers),
                ..blank
            },
        }
    }
}

/// The servers of `specs` with their types checked: each field belongs to
/// its kind, and each kind has what it needs. Then [`cinch_engine::mcp::check`]
/// against the environment's secrets `secrets`.
fn mcp_servers(
    specs: Vec<McpServerSpec>,
    secrets: &std::collections::BTreeSet<&str>,
) -> Result<Vec<McpServer>, ServiceError> {
    let mut errors = Vec::new();
    let mut servers = Vec::new();
    for (index, spec) in specs.into_iter().enumerate() {
        let field = |name: &str| format!("mcp_servers[{index}].{name}");
        let mut stray = |present: bool, name: &str, kind: &str| {
            if present {
                errors.push(FieldError::new(
                    field(name),
                    format!("not for a {kind} server"),
                ));
            }
        };
        match spec.kind {
            McpServerKind::Stdio => {
                stray(spec.url.is_some(), "url", "stdio");
                stray(spec.headers.is_some(), "headers", "stdio");
            }
            McpServerKind::Http => {
                stray(spec.command.is_some(), "command", "http");
                stray(spec.args.is_some(), "args", "http");
                stray(spec.env.is_some(), "env", "http");
            }
        }
        let transport = match spec.kind {
            McpServerKind::Stdio => spec.command.map(|command| Transport::Stdio {
                command,
                args: spec.args.unwrap_or_default(),
                env: spec.env.unwrap_or_default(),
            }),
            McpServerKind::Http => spec.url.map(|url| Transport::Http {
                url,
                headers: spec.headers.unwrap_or_default(),
            }),
        };
        match transport {
            Some(transport) => servers.push(McpServer {
                name: spec.name,
                transport,
            }),
            None => {
                let (name, what) = match spec.kind {
                    McpServerKind::Stdio => (
                        "command",
                        "required for a stdio server: the program to start",
                    ),
                    McpServerKind::Http => ("url", "required for an http server: its URL"),
                };
                errors.push(FieldError::new(field(name), what));
            }
        }
    }
    if errors.is_empty() {
        errors.extend(
            cinch_engine::mcp::check(&servers, secrets)
                .into_iter()
                .map(|(field, message)| FieldError::new(format!("mcp_servers{field}"), message)),
        );
    }
    match errors.is_empty() {
        true => Ok(servers),
        false => Err(ServiceError::Invalid(errors)),
    }
}

/// A new environment.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EnvironmentCreate {
    /// Letters, digits and `_ . -`, at most 100 characters, not only dots; unique in the account.
    #[schema(
        max_length = 100,
        pattern = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
    )]
    pub name: String,
    /// An absolute local path, or a git URL (`https://`, `http://`, `ssh://`, `git://`, `file://`, `git@host:path`).
    #[schema(pattern = r"^(/|https://|http://|ssh://|git://|file://|git@[^:]*:)")]
    pub repository: String,
    /// Commands run to set a workspace up, in order.
    pub setup: Option<Vec<String>>,
    /// Variables set for the harness: NAME to value.
    #[schema(schema_with = variables)]
    pub env: Option<BTreeMap<String, String>>,
    /// Secrets set for the harness and masked in its output: NAME to value. Write-only.
    #[schema(schema_with = variables)]
    pub secrets: Option<BTreeMap<String, String>>,
    /// When set, the harness and setup commands may open outbound TCP
    /// connections only to these ports (1 to 65535); absent or null: any.
    #[schema(schema_with = tcp_ports)]
    pub allowed_tcp_ports: Option<Vec<u16>>,
    /// When set, the harness and setup commands run in a network of their
    /// own whose only way out is cinch's HTTP proxy (`HTTPS_PROXY`,
    /// `HTTP_PROXY`), which lets through only these hosts: names
    /// (`api.anthropic.com`), wildcards for the names below a domain
    /// (`*.npmjs.org`) or IP addresses, at most 100; `[]` lets nothing out.
    /// Absent or null: the network is open.
    #[schema(schema_with = allowed_hosts_schema)]
    pub allowed_hosts: Option<Vec<String>>,
    /// When its sessions' agents ask before they act: `mode` (`allow`,
    /// `ask`, `deny`), `allow` and `deny` rules (`Bash(git push*)`),
    /// `timeout_seconds` and `on_timeout`; absent or null: never.
    pub approvals: Option<cinch_store::approval_policy::ApprovalPolicy>,
    /// Minutes its harness may write nothing before the turn is stopped
    /// (1 to 60); absent or null: the server's watchdog (10 by default).
    #[schema(minimum = 1, maximum = 60)]
    pub watchdog_minutes: Option<u32>,
    /// MCP servers its harnesses get (at most 20): claude, codex and gemini
    /// take them; a cursor turn in this environment is refused.
    #[schema(max_items = 20)]
    pub mcp_servers: Option<Vec<McpServerSpec>>,
}

/// Changes to an environment; absent fields stay as they are.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EnvironmentUpdate {
    /// A new name: letters, digits and `_ . -`, at most 100 characters, not only dots.
    #[schema(
        max_length = 100,
        pattern = r"^[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*$"
    )]
    pub name: Option<String>,
    /// A new repository: an absolute local path, or a git URL.
    #[schema(pattern = r"^(/|https://|http://|ssh://|git://|file://|git@[^:]*:)")]
    pub repository: Option<String>,
    /// New setup commands, replacing the old.
    pub setup: Option<Vec<String>>,
    /// New variables, replacing the old.
    #[schema(schema_with = variables)]
    pub env: Option<BTreeMap<String, String>>,
    /// Secrets to set (a value) or remove (null); secrets not named stay.
    #[schema(schema_with = nullable_variables)]
    pub secrets: Option<BTreeMap<String, Option<String>>>,
    /// New allowed TCP ports; null opens the network again.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = tcp_ports)]
    pub allowed_tcp_ports: Option<Option<Vec<u16>>>,
    /// New allowed hosts, replacing the old; null opens the network again.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(schema_with = allowed_hosts_schema)]
    pub allowed_hosts: Option<Option<Vec<String>>>,
    /// A new approval policy, replacing the old; null asks nothing again.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<cinch_store::approval_policy::ApprovalPolicy>)]
    pub approvals: Option<Option<cinch_store::approval_policy::ApprovalPolicy>>,
    /// A new watchdog in minutes (1 to 60); null goes back to the server's.
    #[serde(default, deserialize_with = "nullable")]
    #[schema(value_type = Option<u32>, minimum = 1, maximum = 60)]
    pub watchdog_minutes: Option<Option<u32>>,
    /// New MCP servers, replacing the old (`[]` removes them all).
    #[schema(max_items = 20)]
    pub mcp_servers: Option<Vec<McpServerSpec>>,
}

impl EnvironmentCreate {
    /// The environment to store, its MCP servers checked against its secrets.
    fn into_new(self) -> Result<NewEnvironment, ServiceError> {
        let secrets = self.secrets.unwrap_or_default();
        let names = secrets.keys().map(String::as_str).collect();
        let mcp_servers = mcp_servers(self.mcp_servers.unwrap_or_default(), &names)?;
        let allowed_hosts = allowed_hosts(self.allowed_hosts)?;
        let approvals = checked_policy(self.approvals)?;
        Ok(NewEnvironment {
            name: self.name,
            repository: self.repository,
            setup: self.setup.unwrap_or_default(),
            env: self.env.unwrap_or_default(),
            allowed_tcp_ports: self.allowed_tcp_ports,
            allowed_hosts,
            approvals,
            watchdog_minutes: self.watchdog_minutes,
            mcp_servers,
            secrets,
        })
    }
}

impl EnvironmentUpdate {
    /// The changes to store. MCP servers (new ones, or the stored ones when
    /// secrets change) are checked against the secrets the environment will
    /// have, so no header names a secret that is gone.
    fn into_patch(self, current: &Environment) -> Result<EnvironmentPatch, ServiceError> {
        let secrets = self.secrets.unwrap_or_default();
        let mut names: std::collections::BTreeSet<&str> =
            current.secrets.keys().map(String::as_str).collect();
        for (name, value) in &secrets {
            match value {
                Some(_) => names.insert(name),
                None => names.remove(name.as_str()),
            };
        }
        let mcp_servers = match self.mcp_servers {
            Some(specs) => Some(mcp_servers(specs, &names)?),
            None => {
                let complaints = cinch_engine::mcp::check(&current.mcp_servers, &names);
                if !complaints.is_empty() {
                    return Err(ServiceError::Invalid(
                        complaints
                            .into_iter()
                            .map(|(field, message)| {
                                FieldError::new(format!("mcp_servers{field}"), message)
                            })
                            .collect(),
                    ));
                }
                None
            }
        };
        let allowed_hosts = self.allowed_hosts.map(allowed_hosts).transpose()?;
        let approvals = self.approvals.map(checked_policy).transpose()?;
        Ok(EnvironmentPatch {
            name: self.name,
            repository: self.repository,
            setup: self.setup,
            env: self.env,
            secrets,
            allowed_tcp_ports: self.allowed_tcp_ports,
            allowed_hosts,
            approvals,
            watchdog_minutes: self.watchdog_minutes,
            mcp_servers,
        })
    }
}

/// Creates an environment.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/environments",
    params(("account" = String, Path, description = "The account")),
    request_body = EnvironmentCreate,
    responses(
        (status = 201, body = Envelope<EnvironmentView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The name is taken"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "environments"
)]
pub(super) async fn create_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Json(new): Json<EnvironmentCreate>,
) -> Result<(StatusCode, axum::Json<Envelope<EnvironmentView>>), Problem> {
    caller.account(&account)?;
    let environment = app.environments.create(&account, new.into_new()?).await?;
    Ok((StatusCode::CREATED, Envelope::of(environment.into())))
}

/// The account's environments, oldest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/environments",
    params(("account" = String, Path, description = "The account"), PageParams),
    responses(
        (status = 200, body = Envelope<Vec<EnvironmentView>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "environments"
)]
pub(super) async fn list_environments(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<EnvironmentView>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .environments
        .list(&account, page.cursor()?, page.limit()?)
        .await?;
    Ok(Envelope::page(
        page.items.into_iter().map(Into::into).collect(),
        page.next_cursor,
    ))
}

/// One environment.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/environments/{id}",
    params(("account" = String, Path, description = "The account"), ("id" = String, Path, description = "The environment")),
    responses(
        (status = 200, body = Envelope<EnvironmentView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "environments"
)]
pub(super) async fn get_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(AccountId, EnvironmentId)>,
) -> Result<axum::Json<Envelope<EnvironmentView>>, Problem> {
    caller.account(&account)?;
    let environment = app.environments.get(&account, &id).await?;
    Ok(Envelope::of(environment.into()))
}

/// Changes an environment.
#[utoipa::path(
    patch,
    path = "/v1/accounts/{account}/environments/{id}",
    params(("account" = String, Path, description = "The account"), ("id" = String, Path, description = "The environment")),
    request_body = EnvironmentUpdate,
    responses(
        (status = 200, body = Envelope<EnvironmentView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json", description = "The name is taken"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "environments"
)]
pub(super) async fn update_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(AccountId, EnvironmentId)>,
    Json(patch): Json<EnvironmentUpdate>,
) -> Result<axum::Json<Envelope<EnvironmentView>>, Problem> {
    caller.account(&account)?;
    let environment = app
        .environments
        .update(&account, &id, |current| patch.into_patch(current))
        .await?;
    Ok(Envelope::of(environment.into()))
}

/// Deletes an environment.
#[utoipa::path(
    delete,
    path = "/v1/accounts/{account}/environments/{id}",
    params(("account" = String, Path, description = "The account"), ("id" = String, Path, description = "The environment")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "environments"
)]
pub(super) async fn delete_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(AccountId, EnvironmentId)>,
) -> Result<StatusCode, Problem> {
    caller.account(&account)?;
    app.environments.delete(&account, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}
