//! `GET /healthz` for load balancers and `GET /metrics` for Prometheus:
//! neither needs an account's token (`/metrics` takes the operator's
//! `--metrics-token` when one is set).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::AppState;
use super::problem::Problem;

/// Whether the server can serve.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Health {
    /// Every part is well.
    pub status: HealthStatus,
    /// cinch's version.
    pub version: String,
    /// The database.
    pub database: DatabaseHealth,
    /// The drivers, built-in and plugins.
    pub drivers: DriversHealth,
    /// How turns are contained.
    pub sandbox: SandboxHealth,
}

/// The server's state as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HealthStatus {
    /// It serves.
    Ok,
    /// It cannot serve: the database does not answer.
    Unavailable,
}

/// The database's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DatabaseHealth {
    /// It took (and let go of) its write lock within two seconds.
    pub reachable: bool,
}

/// The drivers' state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct DriversHealth {
    /// The drivers loaded, by name.
    pub loaded: Vec<String>,
    /// The plugins that did not load, by name (`cinch drivers` says why).
    pub failed: Vec<String>,
}

/// The sandbox's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct SandboxHealth {
    /// Turns run sandboxed; false only under `--no-sandbox`.
    pub enforced: bool,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: i32,
}

/// Whether the database answers, the drivers loaded and the sandbox's state.
#[utoipa::path(
    get,
    path = "/healthz",
    security(()),
    responses(
        (status = 200, body = Health, description = "The server serves"),
        (status = 503, body = Health, description = "The database does not answer"),
    ),
    tag = "operations"
)]
pub async fn healthz(State(app): State<AppState>) -> (StatusCode, axum::Json<Health>) {
    let reachable = app.probes.database_answers().await;
    let status = if reachable {
        HealthStatus::Ok
    } else {
        HealthStatus::Unavailable
    };
    let code = match status {
        HealthStatus::Ok => StatusCode::OK,
        HealthStatus::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    };
    let health = Health {
        status,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        database: DatabaseHealth { reachable },
        drivers: drivers(app.drivers.registry()),
        sandbox: SandboxHealth {
            enforced: app.probes.sandbox_enforced(),
            landlock_abi: crate::sandbox::landlock_abi(),
        },
    };
    (code, axum::Json(health))
}

fn drivers(registry: &crate::drivers::Registry) -> DriversHealth {
    let (loaded, failed): (Vec<_>, Vec<_>) = registry
        .entries()
        .iter()
        .partition(|entry| entry.driver.is_ok());
    let names = |entries: Vec<&crate::drivers::Entry>| {
        entries
            .into_iter()
            .map(|entry| entry.name.clone())
            .collect()
    };
    DriversHealth {
        loaded: names(loaded),
        failed: names(failed),
    }
}

/// cinch's metrics in Prometheus's text format: turns ended by harness and
/// status, running turns and waiting sessions, progress lines, driver
/// failures and HTTP latency by route. Open unless the server was started
/// with `--metrics-token`, then that token as a bearer.
#[utoipa::path(
    get,
    path = "/metrics",
    security(()),
    responses(
        (status = 200, body = String, content_type = "text/plain; version=0.0.4", description = "The metrics"),
        (status = 401, body = Problem, content_type = "application/problem+json", description = "The metrics token is missing or wrong"),
    ),
    tag = "operations"
)]
pub async fn metrics(State(app): State<AppState>, headers: HeaderMap) -> Result<Response, Problem> {
    if let Some(expected) = &app.metrics_token {
        let given = super::extract::bearer(&headers).unwrap_or_default();
        if !same_secret(given.as_bytes(), expected.as_bytes()) {
            return Err(Problem::unauthorized(
                "send the server's metrics token: Authorization: Bearer <token>",
            ));
        }
    }
    match app.probes.sessions_waiting().await {
        Ok(waiting) => crate::metrics::sessions_waiting(waiting),
        Err(error) => tracing::warn!("metrics: counting the waiting sessions: {error}"),
    }
    Ok((
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        crate::metrics::render(),
    )
        .into_response())
}

/// Compares two secrets in time that depends on their lengths only.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differs, (a, b)| differs | (a ^ b))
            == 0
}
