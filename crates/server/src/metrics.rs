//! cinch's metrics, in Prometheus's text format for `GET /metrics`.
//!
//! The `metrics` facade records them; `cinch serve` installs a Prometheus
//! recorder (without its own listener: the API's route renders it). Where no
//! recorder is installed (`cinch run`), recording costs nothing and goes
//! nowhere. Counters only count: rates are Prometheus's to compute. What a
//! turn's life records itself is `cinch_engine::metrics`; this module
//! describes those names too.

use std::sync::OnceLock;
use std::time::Instant;

use anyhow::Context as _;
use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use cinch_engine::metrics::{DRIVER_FAILURES, EGRESS_REFUSED};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Turns that ended, by `harness` and `status`.
pub(crate) const TURNS_ENDED: &str = "cinch_turns_ended_total";
/// Turns the server follows that have not ended, by `harness`.
pub(crate) const TURNS_RUNNING: &str = "cinch_turns_running";
/// Sessions waiting for a turn slot.
pub(crate) const SESSIONS_WAITING: &str = "cinch_sessions_waiting";
/// Progress lines of turns, by `harness`.
pub(crate) const PROGRESS_LINES: &str = "cinch_progress_lines_total";
/// Bytes cinch may still write on the disk of its home.
pub(crate) const HOME_FREE_BYTES: &str = "cinch_home_disk_free_bytes";
/// The size in bytes of the disk of cinch's home.
pub(crate) const HOME_SIZE_BYTES: &str = "cinch_home_disk_size_bytes";
/// Turns that ran on a CLI outside the versions its driver was tested
/// with, by `harness` and `cli_version`.
pub(crate) const TURNS_UNTESTED_CLI: &str = "cinch_turns_untested_cli_total";
/// HTTP requests' latency in seconds, by `method`, `route` (its template,
/// `unmatched` for none) and `status`.
pub(crate) const HTTP_REQUEST_SECONDS: &str = "cinch_http_request_duration_seconds";

/// The latency histogram's buckets, in seconds.
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
];

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the Prometheus recorder for this process (once; later calls do
/// nothing) and describes cinch's metrics.
pub fn install() -> anyhow::Result<()> {
    if HANDLE.get().is_some() {
        return Ok(());
    }
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(
            Matcher::Full(HTTP_REQUEST_SECONDS.to_owned()),
            LATENCY_BUCKETS,
        )
        .context("configuring the metrics' buckets")?
        .install_recorder()
        .context("installing the metrics recorder")?;
    let _ = HANDLE.set(handle);
    metrics::describe_counter!(TURNS_ENDED, "Turns that ended, by harness and status.");
    metrics::describe_gauge!(
        TURNS_RUNNING,
        "Turns the server follows that have not ended, by harness."
    );
    metrics::describe_gauge!(SESSIONS_WAITING, "Sessions waiting for a turn slot.");
    metrics::describe_gauge!(
        HOME_FREE_BYTES,
        "Bytes cinch may still write on the disk of its home."
    );
    metrics::describe_gauge!(
        HOME_SIZE_BYTES,
        "The size of the disk of cinch's home, in bytes."
    );
    metrics::describe_counter!(
        TURNS_UNTESTED_CLI,
        "Turns that ran on a CLI outside the versions its driver was tested with, by harness and cli_version."
    );
    metrics::describe_counter!(PROGRESS_LINES, "Progress lines of turns, by harness.");
    metrics::describe_counter!(
        DRIVER_FAILURES,
        "Calls into a driver that failed (panic, trap, time or memory), by harness."
    );
    metrics::describe_counter!(
        EGRESS_REFUSED,
        "Requests to hosts not in the environment's allowed_hosts that the egress proxy refused, by harness (setup for setup commands)."
    );
    metrics::describe_histogram!(
        HTTP_REQUEST_SECONDS,
        metrics::Unit::Seconds,
        "HTTP requests' latency, by method, route template and status."
    );
    Ok(())
}

/// Everything recorded so far, in Prometheus's text format; empty when no
/// recorder is installed.
pub(crate) fn render() -> String {
    HANDLE.get().map_or_else(String::new, |handle| {
        handle.run_upkeep();
        handle.render()
    })
}

/// Counts a turn that ended.
pub(crate) fn turn_ended(harness: &str, status: &str) {
    metrics::counter!(TURNS_ENDED, "harness" => harness.to_owned(), "status" => status.to_owned())
        .increment(1);
}

/// Counts a turn of `harness` that ran on its CLI at `cli_version`,
/// outside the versions its driver was tested with.
pub(crate) fn untested_cli(harness: &str, cli_version: &str) {
    metrics::counter!(
        TURNS_UNTESTED_CLI,
        "harness" => harness.to_owned(),
        "cli_version" => cli_version.to_owned()
    )
    .increment(1);
}

/// The count of progress lines moved on for `harness`'s turns, to add to
/// as they come.
pub(crate) fn progress_lines(harness: &str) -> metrics::Counter {
    metrics::counter!(PROGRESS_LINES, "harness" => harness.to_owned())
}

/// Sets how many sessions wait for a turn slot.
pub(crate) fn sessions_waiting(count: usize) {
    metrics::gauge!(SESSIONS_WAITING).set(count as f64);
}

/// Sets the disk gauges to `space`.
pub(crate) fn disk_space(space: &cinch_engine::disk::Space) {
    metrics::gauge!(HOME_FREE_BYTES).set(space.free_bytes as f64);
    metrics::gauge!(HOME_SIZE_BYTES).set(space.total_bytes as f64);
}

/// Counts a followed turn as running until dropped.
pub(crate) struct RunningTurn {
    harness: String,
}

impl RunningTurn {
    /// A turn of `harness` the server follows from now on.
    pub(crate) fn start(harness: &str) -> Self {
        metrics::gauge!(TURNS_RUNNING, "harness" => harness.to_owned()).increment(1.0);
        Self {
            harness: harness.to_owned(),
        }
    }
}

impl Drop for RunningTurn {
    fn drop(&mut self) {
        metrics::gauge!(TURNS_RUNNING, "harness" => self.harness.clone()).decrement(1.0);
    }
}

/// Middleware: times every request, labelled with its route's template (so
/// that ids in paths do not make a series each).
pub(crate) async fn track_http(request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    metrics::histogram!(
        HTTP_REQUEST_SECONDS,
        "method" => method,
        "route" => route,
        "status" => response.status().as_u16().to_string(),
    )
    .record(started.elapsed().as_secs_f64());
    response
}
