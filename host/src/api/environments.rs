//! Environments: a named repository source, setup commands, variables and
//! write-only secrets (only their names ever come back).

use std::collections::BTreeMap;

use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::Serialize;

use super::extract::{Caller, Fields, JsonObject, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::store::{Environment, EnvironmentPatch, NewEnvironment};

/// An environment as clients see it: secrets by name only.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct EnvironmentView {
    /// Its id.
    pub id: String,
    /// The account it belongs to.
    pub account_id: String,
    /// Its name, unique in the account (the code-task API's `repo`).
    pub name: String,
    /// A local path or a git URL to clone.
    pub repository: String,
    /// Commands run to set a workspace up, in order.
    pub setup: Vec<String>,
    /// Variables set for the harness.
    pub env: BTreeMap<String, String>,
    /// The names of its secrets; their values are never returned.
    pub secret_names: Vec<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it last changed (RFC 3339).
    pub updated_at: String,
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
            created_at: environment.created_at,
            updated_at: environment.updated_at,
        }
    }
}

/// A new environment.
#[derive(Debug, utoipa::ToSchema)]
pub struct EnvironmentCreate {
    /// Required: letters, digits and `_ . -`, at most 100 characters, unique in the account.
    pub name: String,
    /// Required: an absolute local path, or a git URL (`https://`, `ssh://`, `git@host:path`, `file://`).
    pub repository: String,
    /// Commands run to set a workspace up, in order.
    pub setup: Option<Vec<String>>,
    /// Variables set for the harness: NAME to value.
    pub env: Option<BTreeMap<String, String>>,
    /// Secrets set for the harness and masked in its output: NAME to value. Write-only.
    pub secrets: Option<BTreeMap<String, String>>,
}

/// Changes to an environment; absent fields stay as they are.
#[derive(Debug, utoipa::ToSchema)]
pub struct EnvironmentUpdate {
    /// A new name.
    pub name: Option<String>,
    /// A new repository.
    pub repository: Option<String>,
    /// New setup commands, replacing the old.
    pub setup: Option<Vec<String>>,
    /// New variables, replacing the old.
    pub env: Option<BTreeMap<String, String>>,
    /// Secrets to set (a value) or remove (null); secrets not named stay.
    pub secrets: Option<BTreeMap<String, Option<String>>>,
}

fn check_name(fields: &mut Fields, name: Option<&str>) {
    if let Some(name) = name
        && (name.len() > 100
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
            || name.chars().all(|c| c == '.'))
    {
        fields.complain("name", "letters, digits and _ . -, at most 100 characters");
    }
}

fn check_repository(fields: &mut Fields, repository: Option<&str>) {
    let Some(repository) = repository else {
        return;
    };
    let url = ["https://", "http://", "ssh://", "git://", "file://"]
        .iter()
        .any(|scheme| repository.starts_with(scheme))
        || (repository.starts_with("git@") && repository.contains(':'));
    if !url && !repository.starts_with('/') {
        fields.complain(
            "repository",
            "an absolute local path or a git URL (https://, ssh://, git@host:path, file://)",
        );
    }
}

/// Values of a variables object that may not hold nulls.
fn values(variables: Option<BTreeMap<String, Option<String>>>) -> Option<BTreeMap<String, String>> {
    variables.map(|variables| {
        variables
            .into_iter()
            .filter_map(|(name, value)| Some((name, value?)))
            .collect()
    })
}

impl EnvironmentCreate {
    fn parse(body: JsonObject) -> Result<Self, Problem> {
        let mut fields = Fields::new(body);
        let name = fields.required_string("name", "the environment's name");
        check_name(&mut fields, name.as_deref());
        let repository = fields.required_string("repository", "a local path or a git URL");
        check_repository(&mut fields, repository.as_deref());
        let setup = fields.strings("setup");
        let env = values(fields.variables("env", false));
        let secrets = values(fields.variables("secrets", false));
        fields.finish()?;
        Ok(Self {
            name: name.expect("checked by finish"),
            repository: repository.expect("checked by finish"),
            setup,
            env,
            secrets,
        })
    }
}

impl From<EnvironmentCreate> for NewEnvironment {
    fn from(create: EnvironmentCreate) -> Self {
        Self {
            name: create.name,
            repository: create.repository,
            setup: create.setup.unwrap_or_default(),
            env: create.env.unwrap_or_default(),
            secrets: create.secrets.unwrap_or_default(),
        }
    }
}

impl EnvironmentUpdate {
    fn parse(body: JsonObject) -> Result<Self, Problem> {
        let mut fields = Fields::new(body);
        let name = fields.string("name");
        check_name(&mut fields, name.as_deref());
        let repository = fields.string("repository");
        check_repository(&mut fields, repository.as_deref());
        let setup = fields.strings("setup");
        let env = values(fields.variables("env", false));
        let secrets = fields.variables("secrets", true);
        fields.finish()?;
        Ok(Self {
            name,
            repository,
            setup,
            env,
            secrets,
        })
    }
}

impl From<EnvironmentUpdate> for EnvironmentPatch {
    fn from(update: EnvironmentUpdate) -> Self {
        Self {
            name: update.name,
            repository: update.repository,
            setup: update.setup,
            env: update.env,
            secrets: update.secrets.unwrap_or_default(),
        }
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
pub async fn create_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    body: JsonObject,
) -> Result<(StatusCode, axum::Json<Envelope<EnvironmentView>>), Problem> {
    caller.account(&account)?;
    let new = EnvironmentCreate::parse(body)?;
    let environment = app.store.create_environment(&account, new.into()).await?;
    tracing::info!(environment = %environment.id, "environment created");
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
pub async fn list_environments(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<String>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<EnvironmentView>>>, Problem> {
    caller.account(&account)?;
    let page = app
        .store
        .environments(&account, page.cursor("env")?, page.limit()?)
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
pub async fn get_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(String, String)>,
) -> Result<axum::Json<Envelope<EnvironmentView>>, Problem> {
    caller.account(&account)?;
    let environment = app
        .store
        .environment(&account, &id)
        .await?
        .ok_or_else(|| Problem::not_found("no such environment"))?;
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
pub async fn update_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(String, String)>,
    body: JsonObject,
) -> Result<axum::Json<Envelope<EnvironmentView>>, Problem> {
    caller.account(&account)?;
    let patch = EnvironmentUpdate::parse(body)?;
    let environment = app
        .store
        .update_environment(&account, &id, patch.into())
        .await?
        .ok_or_else(|| Problem::not_found("no such environment"))?;
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
pub async fn delete_environment(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, id)): Path<(String, String)>,
) -> Result<StatusCode, Problem> {
    caller.account(&account)?;
    if app.store.delete_environment(&account, &id).await? {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(Problem::not_found("no such environment"))
    }
}
