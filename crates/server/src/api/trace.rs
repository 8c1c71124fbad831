//! A span per HTTP request for the trace exporter: its method, route
//! template (never the path, which holds ids) and status, continuing the
//! trace of an incoming `traceparent` header.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument as _;

use cinch_engine::telemetry::{self, TARGET};

/// Answers `request` inside its span; installed only while exporting.
pub(super) async fn layer(request: Request, next: Next) -> Response {
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let span = tracing::info_span!(
        target: TARGET,
        "http.request",
        otel.name = %format!("{method} {route}"),
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        http.request.method = %method,
        http.route = %route,
        http.response.status_code = tracing::field::Empty,
    );
    let incoming = request
        .headers()
        .get("traceparent")
        .and_then(|value| value.to_str().ok());
    telemetry::continue_trace(&span, incoming);
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
    response
}
