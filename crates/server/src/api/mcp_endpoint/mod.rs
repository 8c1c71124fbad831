//! cinch's own MCP endpoint, `/mcp`: an agent in an editor hands work to
//! cinch through MCP tools (Streamable HTTP, stateless: every POST carries
//! its own JSON-RPC request and gets its answer, so any node answers any
//! call). Each request is authenticated with the API's bearer token and the
//! tools act for that token's account only. Not to be confused with
//! [`cinch_engine::mcp`], the MCP servers an environment gives its harnesses.
//!
//! The endpoint is JSON-RPC, not REST: it is not in `/openapi.json`.

mod tools;
mod turns;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::AppState;
use super::extract::{bearer, principal};
use cinch_store::Principal;

pub(super) use tools::Tools;

/// The endpoint's path.
pub(super) const PATH: &str = "/mcp";

/// Who called: the token's principal, and the token itself, to read a
/// turn's diff from the node that ran it as this caller. No `Debug`: the
/// token is never printed.
#[derive(Clone)]
pub(super) struct McpCaller {
    principal: Principal,
    token: Arc<str>,
}

/// `/mcp`: POST for JSON-RPC; GET and DELETE are 405, as the transport
/// allows a server without sessions or server-initiated streams.
pub(super) fn router(state: AppState) -> axum::Router {
    let config = StreamableHttpServerConfig::default()
        // Sessions would tie a client to the node that answered its
        // initialize; without them any node answers any request.
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_max_request_body_bytes(state.body_limit)
        // The Host check guards unauthenticated local servers against DNS
        // rebinding; every request here needs a bearer token a browser on a
        // rebound name does not have, and cinch is served under any name.
        .disable_allowed_hosts();
    let tools_state = state.clone();
    let service = StreamableHttpService::new(
        move || Ok(Tools::new(tools_state.clone())),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    axum::Router::new()
        .route_service(PATH, service)
        .layer(axum::middleware::from_fn_with_state(state, authenticate))
}

/// Lets a request with a valid bearer token through, carrying its caller;
/// answers any other with 401 and `WWW-Authenticate: Bearer`.
async fn authenticate(State(app): State<AppState>, mut request: Request, next: Next) -> Response {
    match principal(&app, request.headers()).await {
        Ok(principal) => {
            let token = bearer(request.headers()).unwrap_or_default().into();
            request
                .extensions_mut()
                .insert(McpCaller { principal, token });
            next.run(request).await
        }
        Err(problem) => {
            let mut response = problem.into_response();
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            response
        }
    }
}
