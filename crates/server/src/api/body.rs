//! Request bodies are read whole before any handler sees them, within the
//! size limit and a read timeout: a client that announces more than it sends
//! gets a 408 instead of holding its connection open for ever.

use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt as _;

use super::AppState;
use super::problem::Problem;

/// The longest a body may go without a byte arriving.
const IDLE_TIMEOUT: Duration = Duration::from_secs(10);

/// The longest a whole body may take to arrive.
const TOTAL_TIMEOUT: Duration = Duration::from_secs(60);

/// Reads the request's body within the limit and the timeouts, then hands
/// the request on with the body in memory.
pub(super) async fn read_whole(
    State(app): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let limit = app.body_limit;
    let announced = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.parse::<u64>().ok());
    if announced.is_some_and(|length| length > limit as u64) {
        return too_large(limit).into_response();
    }
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(TOTAL_TIMEOUT, collect(body, limit)).await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(problem)) => return problem.into_response(),
        Err(_) => return timed_out(TOTAL_TIMEOUT, "to arrive whole").into_response(),
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// The body's bytes, at most `limit` of them, each chunk within [`IDLE_TIMEOUT`].
async fn collect(body: Body, limit: usize) -> Result<Bytes, Problem> {
    let mut stream = body.into_data_stream();
    let mut bytes = Vec::new();
    loop {
        let chunk = match tokio::time::timeout(IDLE_TIMEOUT, stream.next()).await {
            Err(_) => return Err(timed_out(IDLE_TIMEOUT, "between two of its bytes")),
            Ok(None) => return Ok(Bytes::from(bytes)),
            Ok(Some(Err(error))) => {
                return Err(Problem::new(
                    StatusCode::BAD_REQUEST,
                    "malformed_body",
                    format!("the body could not be read: {error}"),
                ));
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        if bytes.len() + chunk.len() > limit {
            return Err(too_large(limit));
        }
        bytes.extend_from_slice(&chunk);
    }
}

fn too_large(limit: usize) -> Problem {
    Problem::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "body_too_large",
        format!("the body is over {limit} bytes"),
    )
}

fn timed_out(timeout: Duration, what: &str) -> Problem {
    Problem::new(
        StatusCode::REQUEST_TIMEOUT,
        "body_timeout",
        format!(
            "the body took over {} seconds {what}; send it as fast as its Content-Length says",
            timeout.as_secs()
        ),
    )
}
