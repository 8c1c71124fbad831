//! `GET /healthz` for load balancers and `GET /metrics` for Prometheus:
//! neither needs an account's token (`/metrics` takes the operator's
//! `--metrics-token` when one is set).

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::AppState;
use super::problem::Problem;
use cinch_engine::disk::DiskState;

/// Whether the server can serve.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct Health {
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
    /// The disk of cinch's home.
    pub disk: DiskHealth,
}

/// The server's state as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum HealthStatus {
    /// It serves.
    Ok,
    /// It serves, but the disk of its home is low: turns fail once it fills.
    Degraded,
    /// It cannot serve: the database does not answer, or the disk of its
    /// home is full.
    Unavailable,
}

/// The database's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DatabaseHealth {
    /// It took (and let go of) its write lock within two seconds.
    pub reachable: bool,
}

/// The disk of cinch's home, where turns, workspaces and (by default) the
/// database are kept.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DiskHealth {
    /// How it stands: `low` below the configured minimum
    /// (`[serve] min_free_disk_mib`), `full` below 1 MiB.
    pub state: DiskState,
    /// Bytes cinch may still write there; null when it could not be measured.
    pub free_bytes: Option<u64>,
    /// Its size in bytes; null when it could not be measured.
    pub total_bytes: Option<u64>,
}

/// The drivers' state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DriversHealth {
    /// The drivers loaded, by name.
    pub loaded: Vec<String>,
    /// The plugins that did not load, by name (`cinch drivers` says why).
    pub failed: Vec<String>,
}

/// The sandbox's state.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct SandboxHealth {
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
        (status = 200, body = Health, description = "The server serves (`degraded`: its disk is low)"),
        (status = 503, body = Health, description = "The database does not answer, or the disk of cinch's home is full"),
    ),
    tag = "operations"
)]
pub(super) async fn healthz(State(app): State<AppState>) -> (StatusCode, axum::Json<Health>) {
    let reachable = app.probes.database_answers().await;
    let (space, disk) = app.probes.disk();
    let status = match (reachable, disk) {
        (false, _) | (_, DiskState::Full) => HealthStatus::Unavailable,
        (true, DiskState::Low | DiskState::Unknown) => HealthStatus::Degraded,
        (true, DiskState::Ok) => HealthStatus::Ok,
    };
    let code = match status {
        HealthStatus::Ok | HealthStatus::Degraded => StatusCode::OK,
        HealthStatus::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
    };
    let health = Health {
        status,
        version: env!("CARGO_PKG_VERSION").to_owned(),
        database: DatabaseHealth { reachable },
        drivers: drivers(&app.drivers.registry()),
        sandbox: SandboxHealth {
            enforced: app.probes.sandbox_enforced(),
            landlock_abi: cinch_engine::sandbox::landlock_abi(),
        },
        disk: DiskHealth {
            state: disk,
            free_bytes: space.map(|space| space.free_bytes),
            total_bytes: space.map(|space| space.total_bytes),
        },
    };
    (code, axum::Json(health))
}

fn drivers(registry: &cinch_engine::drivers::Registry) -> DriversHealth {
    let (loaded, failed): (Vec<_>, Vec<_>) = registry
        .entries()
        .iter()
        .partition(|entry| entry.driver.is_ok());
    let names = |entries: Vec<&cinch_engine::drivers::Entry>| {
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
/// failures, HTTP latency by route and the room on the home's disk. Open unless the server was started
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
pub(super) async fn metrics(
    State(app): State<AppState>,
    headers: HeaderMap,
) -> Result<Response, Problem> {
    if let Some(expected) = &app.metrics_token {
        let given = super::extract::bearer(&headers).unwrap_or_default();
        if !same_secret(given.as_bytes(), expected.as_bytes()) {
            return Err(Problem::unauthorized(
                "send the server's metrics token: Authorization: Bearer <token>",
            ));
        }
    }
    // Measured now, so that the gauges say how the disk stands at the scrape.
    app.probes.disk();
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
pub(super) fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len()
        && given
            .iter()
            .zip(expected)
            .fold(0u8, |differs, (a, b)| differs | (a ^ b))
            == 0
}
