//! The HTTP server: axum routes under `/v1` (accounts, members, agents,
//! environments, models, drivers, tasks, sessions, messages, attachments) and `/api` (the code-task API and a run's live
//! events), bearer auth, problem+json errors and the OpenAPI document
//! generated from the handlers, `Idempotency-Key` on POST, and cinch's own
//! MCP endpoint at `/mcp` (see [`mcp_endpoint`]). It holds no
//! process or git logic and never reaches the store: tasks and sessions go
//! through the [`Conductor`], the rest through its service in
//! [`crate::service`].
//!
//! `/v1` answers are enveloped as `{"data": ..., "meta": {"next_cursor": ...}}`;
//! the code-task routes answer with the spec's bodies as they are.

mod accounts;
pub(crate) mod agents;
mod approvals;
mod body;
mod code_tasks;
pub(crate) mod connections;
mod delivery;
mod document;
pub(crate) mod drivers;
mod environments;
mod extract;
mod forks;
mod health;
mod idempotency;
mod mcp_endpoint;
mod problem;
mod runs;
mod server;
pub(crate) mod sessions;
mod stall;
pub(crate) mod tasks;
mod tokens;
mod trace;
mod usage;
mod validate;
mod webhooks;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use serde::Serialize;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::runs::Runner;
use crate::runs::live::Runs;
use crate::service::accounts::Accounts;
use crate::service::agents::Agents;
use crate::service::code_tasks::CodeTasks;
use crate::service::drivers::Drivers;
use crate::service::environments::Environments;
use crate::service::health::Probes;
use crate::service::keys::Keys;
use crate::service::sessions::Conductor;
use crate::service::usage::Usage;
use crate::service::webhooks::Webhooks;
use cinch_engine::engine::Engine;
use cinch_store::Store;

pub(crate) use problem::{FieldError, Problem};

/// Request bodies are at most this many bytes unless configured otherwise.
pub const DEFAULT_BODY_LIMIT: usize = 1 << 20;

/// What every handler shares. Each request gets a clone: one count to
/// raise, however many services there are.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

/// The services behind the handlers.
#[derive(Clone)]
pub struct Services {
    runs: Arc<Runs>,
    conductor: Arc<Conductor>,
    code_tasks: CodeTasks,
    accounts: Accounts,
    agents: Agents,
    drivers: Drivers,
    environments: Environments,
    keys: Keys,
    probes: Probes,
    usage: Usage,
    webhooks: Webhooks,
    body_limit: usize,
    answering: Arc<idempotency::Answering>,
    metrics_token: Option<Arc<str>>,
    operator_token: Option<Arc<str>>,
}

impl AppState {
    /// The state of a server on `store`, running turns with `engine` and
    /// sessions with `conductor`, starting and following turns with
    /// `runner`; request bodies are at most `body_limit` bytes.
    pub fn new(
        store: Store,
        engine: Arc<Engine>,
        runner: Arc<Runner>,
        conductor: Arc<Conductor>,
        body_limit: usize,
    ) -> Self {
        Self(Arc::new(Services {
            code_tasks: CodeTasks::new(store.clone(), engine.clone(), runner.clone()),
            accounts: Accounts::new(store.clone()),
            agents: Agents::new(store.clone(), engine.clone(), runner.clone()),
            drivers: Drivers::new(store.clone(), engine.clone()),
            environments: Environments::new(store.clone(), runner.clone()),
            keys: Keys::new(store.clone()),
            probes: Probes::new(store.clone(), engine),
            usage: Usage::new(store.clone()),
            webhooks: Webhooks::new(store, runner.live().webhooks().clone()),
            runs: runner.live().clone(),
            conductor,
            body_limit,
            answering: Default::default(),
            metrics_token: None,
            operator_token: None,
        }))
    }

    /// This state counting the home's disk low under `bytes` free.
    pub fn with_disk_low_below(mut self, bytes: u64) -> Self {
        let services = Arc::make_mut(&mut self.0);
        services.probes = services.probes.clone().with_disk_low_below(bytes);
        self
    }

    /// This state taking plugin changes (`POST`/`DELETE /v1/drivers`) from
    /// the bearer of `token`; without one they are refused.
    pub fn with_operator_token(mut self, token: &str) -> Self {
        Arc::make_mut(&mut self.0).operator_token = Some(token.into());
        self
    }

    /// This state requiring `token` as the bearer of `GET /metrics`.
    pub fn with_metrics_token(mut self, token: &str) -> Self {
        Arc::make_mut(&mut self.0).metrics_token = Some(token.into());
        self
    }
}

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

/// A `/v1` answer: the data and, for listings, where the next page starts.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(crate) struct Envelope<T> {
    /// The answer.
    pub data: T,
    /// About the answer.
    pub meta: Meta,
}

/// About an answer.
#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub(crate) struct Meta {
    /// Pass as `cursor` to get the next page; null on the last.
    pub next_cursor: Option<String>,
}

impl<T> Envelope<T> {
    /// One object, or a listing without more pages.
    pub(crate) fn of(data: T) -> axum::Json<Self> {
        axum::Json(Self {
            data,
            meta: Meta::default(),
        })
    }

    /// A page of a listing.
    pub(crate) fn page(data: T, next_cursor: Option<String>) -> axum::Json<Self> {
        axum::Json(Self {
            data,
            meta: Meta { next_cursor },
        })
    }
}

/// A `/v1` page whose items are already JSON (an array): spliced in as is.
fn raw_page(data: String, next_cursor: Option<String>) -> axum::response::Response {
    use axum::response::IntoResponse as _;
    let meta = serde_json::to_string(&Meta { next_cursor }).expect("a cursor serializes");
    // One allocation of the whole size, one copy of the page.
    let body = ["{\"data\":", &data, ",\"meta\":", &meta, "}"].concat();
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

#[derive(utoipa::OpenApi)]
#[openapi(
    info(title = "cinch", description = "Coding-agent CLIs, one turn at a time, over HTTP."),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    components(schemas(Problem, FieldError))
)]
struct ApiDoc;

/// Declares the bearer scheme every route uses.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
    }
}

/// The routes and the OpenAPI document describing them.
fn routes(state: AppState) -> (axum::Router, utoipa::openapi::OpenApi) {
    use utoipa::OpenApi as _;
    let (router, api) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(accounts::list_accounts))
        .routes(routes!(accounts::list_members))
        .routes(routes!(agents::list_agents, agents::create_agent))
        .routes(routes!(agents::update_agent))
        .routes(routes!(tokens::create_token, tokens::list_tokens))
        .routes(routes!(tokens::revoke_token))
        .routes(routes!(accounts::list_models))
        .routes(routes!(drivers::list_drivers, drivers::add_driver))
        .routes(routes!(drivers::remove_driver))
        .routes(routes!(server::get_server))
        .routes(routes!(
            environments::create_environment,
            environments::list_environments
        ))
        .routes(routes!(
            environments::get_environment,
            environments::update_environment,
            environments::delete_environment
        ))
        .routes(routes!(tasks::create_task, tasks::list_tasks))
        .routes(routes!(tasks::get_task))
        .routes(routes!(tasks::create_attachment, tasks::list_attachments))
        .routes(routes!(tasks::attachment_contents))
        .routes(routes!(sessions::create_session, sessions::list_sessions))
        .routes(routes!(sessions::get_session, sessions::update_session))
        .routes(routes!(sessions::abort_session))
        .routes(routes!(sessions::revert_session))
        .routes(routes!(delivery::commit_session))
        .routes(routes!(delivery::push_session))
        .routes(routes!(delivery::setup_log))
        .routes(routes!(forks::fork_session))
        .routes(routes!(forks::compare_sessions))
        .routes(routes!(forks::compare_diff))
        .routes(routes!(sessions::post_message, sessions::list_messages))
        .routes(routes!(sessions::session_events))
        .routes(routes!(code_tasks::start_task))
        .routes(routes!(code_tasks::get_task))
        .routes(routes!(code_tasks::cancel_task))
        .routes(routes!(code_tasks::task_diff))
        .routes(routes!(code_tasks::task_log))
        .routes(routes!(runs::run_events))
        .routes(routes!(approvals::list_approvals))
        .routes(routes!(approvals::get_approval))
        .routes(routes!(approvals::decide_approval))
        .routes(routes!(webhooks::create_webhook, webhooks::list_webhooks))
        .routes(routes!(webhooks::delete_webhook))
        .routes(routes!(webhooks::list_deliveries))
        .routes(routes!(webhooks::redeliver))
        .routes(routes!(usage::get_usage))
        .routes(routes!(health::healthz))
        .routes(routes!(health::metrics))
        .with_state(state)
        .split_for_parts();
    let mut api = api;
    utoipa::Modify::modify(&document::SharedAnswers, &mut api);
    (router, api)
}

/// The whole application: the routes, `/openapi.json`, the body limit and
/// problem answers for unknown routes and methods.
fn app(state: AppState) -> axum::Router {
    let body_limit = state.body_limit;
    let (router, mut api) = routes(state.clone());
    document::name_harnesses(&mut api, &state.drivers.registry().names());
    let api = Arc::new(api);
    let router = router
        // The document describes the API, not any account's data: it is public.
        .route(
            "/openapi.json",
            axum::routing::get(move || {
                let api = api.clone();
                async move { axum::Json(api.as_ref().clone()) }
            }),
        )
        .merge(crate::web::router())
        .merge(mcp_endpoint::router(state.clone()))
        .fallback(problem::no_route)
        .method_not_allowed_fallback(problem::no_method)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            idempotency::layer,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state,
            body::read_whole,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
        .layer(axum::middleware::from_fn(crate::metrics::track_http));
    if cinch_engine::telemetry::exporting() {
        router.layer(axum::middleware::from_fn(trace::layer))
    } else {
        router
    }
}

/// How long a stopping server waits for the idempotent requests it is
/// answering to record their answers.
const ANSWER_DRAIN: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves `state` on `listener` within `limits` until Ctrl-C or SIGTERM;
/// live event streams end then, so that the shutdown does not wait on
/// them, and idempotent requests whose clients went away get to record
/// their answers.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    limits: connections::Limits,
) {
    let runs = state.runs.clone();
    let answering = state.answering.clone();
    connections::serve(listener, app(state), limits, async move {
        shutdown_signal().await;
        runs.close();
    })
    .await;
    answering.drain(ANSWER_DRAIN).await;
}

async fn shutdown_signal() {
    let mut terminate =
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(signal) => signal,
            Err(error) => {
                tracing::warn!("cannot watch SIGTERM: {error}");
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
        };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
    }
    tracing::info!("shutting down: running turns carry on under their supervisors");
}
