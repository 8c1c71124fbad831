//! `Idempotency-Key` on POST, with Stripe's semantics: the same key with the
//! same request replays the first answer; with another request it is a 422;
//! while the first is still being answered, a 409 with `Retry-After`. Keys
//! are the account's and kept at least 24 hours.
//!
//! Everything after the body is read runs detached from the connection (the
//! claim of the key, the work, the recorded answer, the key handed back): a
//! client that goes away at any moment stops none of it, so a key is never
//! left held by a request that is gone. An answer the database cannot take
//! at once (it is down) is recorded when it is back, the key held meanwhile.
//! A key that a stopped server was answering is never run again, since its
//! effect may exist: it answers 409 saying so.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::{Body, Bytes, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use sha2::{Digest as _, Sha256};
use tokio::sync::watch;
use tracing::Instrument as _;

use super::AppState;
use super::problem::Problem;
use crate::service::ServiceError;
use cinch_store::{AccountId, KeyState, StoreError};

/// The header.
const HEADER: &str = "idempotency-key";

/// The longest key.
const MAX_KEY_LEN: usize = 255;

/// What a 409 for a key in flight tells the client to wait, in seconds.
const RETRY_AFTER_SECONDS: u64 = 1;

/// How long a key's answer is tried again while the database cannot take
/// it, and how often.
const SETTLE_LIMIT: Duration = Duration::from_secs(60);
const SETTLE_RETRY: Duration = Duration::from_millis(500);

/// The keys this process is answering, so that a key the database holds
/// without an answer is told apart: in flight here, or left by a server
/// that stopped.
#[derive(Default)]
pub(super) struct Answering {
    keys: Mutex<HashSet<(AccountId, String)>>,
    count: watch::Sender<usize>,
}

impl Answering {
    /// Takes `key` of `account` for this process until the guard is dropped;
    /// `None` when it already answers it.
    fn take(self: &Arc<Self>, account: &AccountId, key: &str) -> Option<Held> {
        let held = (account.to_owned(), key.to_owned());
        let mut keys = cinch_base::sync::lock(&self.keys);
        let taken = keys.insert(held.clone());
        self.count.send_replace(keys.len());
        taken.then(|| Held {
            answering: self.clone(),
            key: held,
        })
    }

    /// Waits up to `limit` for every request being answered to record its
    /// answer; one still running then is told apart after a restart.
    pub(super) async fn drain(&self, limit: Duration) {
        let mut count = self.count.subscribe();
        let drained = tokio::time::timeout(limit, count.wait_for(|count| *count == 0))
            .await
            .is_ok();
        if !drained {
            tracing::warn!(
                "stopping with {} idempotent requests unanswered; their keys will say so",
                *self.count.borrow()
            );
        }
    }
}

/// A key this process answers, handed back when dropped: on every way out
/// of answering it, a panic's included.
struct Held {
    answering: Arc<Answering>,
    key: (AccountId, String),
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut keys = cinch_base::sync::lock(&self.answering.keys);
        keys.remove(&self.key);
        self.answering.count.send_replace(keys.len());
    }
}

/// Wraps every POST that carries a key.
pub(super) async fn layer(State(app): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(HEADER) {
        return next.run(request).await;
    }
    // Authenticate first: a stranger learns nothing from a key, valid or not.
    let principal = match super::extract::principal(&app, request.headers()).await {
        Ok(principal) => principal,
        Err(problem) => return problem.into_response(),
    };
    match keyed(&app, &principal.account_id, request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn keyed(
    app: &AppState,
    account: &AccountId,
    request: Request,
    next: Next,
) -> Result<Response, Response> {
    let key = request
        .headers()
        .get(HEADER)
        .and_then(|value| value.to_str().ok())
        .filter(|key| is_valid_key(key))
        .map(str::to_owned)
        .ok_or_else(|| {
            Problem::invalid_field(
                "Idempotency-Key",
                format!(
                    "a key is 1 to {MAX_KEY_LEN} printable ASCII characters (spaces only inside)"
                ),
            )
            .into_response()
        })?;
    let (parts, body) = request.into_parts();
    // The body was read whole, within its limit, before this layer.
    let bytes = to_bytes(body, usize::MAX)
        .await
        .map_err(|error| Problem::internal(&error).into_response())?;
    let fingerprint = fingerprint(&parts.method, &parts.uri, &bytes);
    let request = Request::from_parts(parts, Body::from(bytes));
    // From the claim on, in a task of its own: hyper drops this future when
    // the client hangs up, which must neither strand a claimed key nor stop
    // the work it was claimed for.
    let app = app.clone();
    let account = account.to_owned();
    let first = tokio::spawn(
        async move { first_or_recorded(&app, &account, &key, &fingerprint, request, next).await }
            .instrument(tracing::Span::current()),
    );
    first
        .await
        .map_err(|error| Problem::internal(&error).into_response())?
}

/// Claims `key` and answers `request`, recording its answer; or the answer
/// the key already holds.
async fn first_or_recorded(
    app: &AppState,
    account: &AccountId,
    key: &str,
    fingerprint: &str,
    request: Request,
    next: Next,
) -> Result<Response, Response> {
    let Some(held) = app.answering.take(account, key) else {
        return Err(in_flight());
    };
    let state = app
        .keys
        .claim(account, key, fingerprint)
        .await
        .map_err(|error| Problem::from(error).into_response())?;
    match state {
        KeyState::Claimed => {}
        KeyState::Answered {
            status,
            content_type,
            body,
        } => return Ok(replay(status, content_type, body)),
        KeyState::Unanswered => {
            return Err(Problem::new(
                StatusCode::CONFLICT,
                "idempotency_interrupted",
                "the server stopped while answering the first request with this key, so whether it took effect is not known: look for its effect before sending it again with a new key",
            )
            .into_response());
        }
        KeyState::Mismatch => {
            return Err(Problem::invalid_field(
                "Idempotency-Key",
                "this key was used with a different request; use a new key for a new request",
            )
            .into_response());
        }
    }
    // The handler in its own task, so that even its panic lets go of the key.
    // In the request's span (if traced), though it may outlive the request.
    let work = tokio::spawn(next.run(request).instrument(tracing::Span::current()));
    let (response, outcome) = answer(work).await;
    settle(app, held, outcome).await;
    Ok(response)
}

/// What a key keeps once its first request has its answer.
enum Outcome {
    /// The answer, for retries to replay.
    Record {
        status: u16,
        content_type: Option<String>,
        body: Bytes,
    },
    /// Nothing (the server failed): a retry runs again.
    Release,
}

/// The handler's answer, and what its key is to keep of it.
async fn answer(work: tokio::task::JoinHandle<Response>) -> (Response, Outcome) {
    let response = match work.await {
        Ok(response) => response,
        Err(error) => return (Problem::internal(&error).into_response(), Outcome::Release),
    };
    let (parts, body) = response.into_parts();
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(error) => return (Problem::internal(&error).into_response(), Outcome::Release),
    };
    let outcome = if parts.status.is_server_error() {
        Outcome::Release
    } else {
        Outcome::Record {
            status: parts.status.as_u16(),
            content_type: parts
                .headers
                .get(header::CONTENT_TYPE)
                .and_then(|value| value.to_str().ok())
                .map(str::to_owned),
            body: bytes.clone(),
        }
    };
    (Response::from_parts(parts, Body::from(bytes)), outcome)
}

/// Stores `outcome` for the key `held`. When the database cannot take it
/// now, tries again in the background for up to [`SETTLE_LIMIT`] while
/// this process goes on holding the key: a retry meanwhile is told to wait,
/// not that the server stopped.
async fn settle(app: &AppState, held: Held, outcome: Outcome) {
    match store(app, &held, &outcome).await {
        Ok(()) => {}
        Err(ServiceError::Store(StoreError::Unavailable(_))) => {
            let app = app.clone();
            tokio::spawn(async move {
                let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
                loop {
                    tokio::time::sleep(SETTLE_RETRY).await;
                    match store(&app, &held, &outcome).await {
                        Ok(()) => return,
                        Err(error) if tokio::time::Instant::now() >= deadline => {
                            return settle_failed(&held, &error);
                        }
                        Err(_) => {}
                    }
                }
            });
        }
        Err(error) => settle_failed(&held, &error),
    }
}

async fn store(app: &AppState, held: &Held, outcome: &Outcome) -> Result<(), ServiceError> {
    let (account, key) = &held.key;
    match outcome {
        Outcome::Record {
            status,
            content_type,
            body,
        } => {
            app.keys
                .answer(account, key, *status, content_type.as_deref(), body)
                .await
        }
        Outcome::Release => app.keys.release(account, key).await,
    }
}

fn settle_failed(held: &Held, error: &ServiceError) {
    tracing::error!(key = %held.key.1, "recording what became of an idempotent request: {error}");
}

/// The recorded answer, marked as replayed.
fn replay(status: u16, content_type: Option<String>, body: Vec<u8>) -> Response {
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
    if let Some(content_type) = content_type.and_then(|ct| HeaderValue::from_str(&ct).ok()) {
        response
            .headers_mut()
            .insert(header::CONTENT_TYPE, content_type);
    }
    response
        .headers_mut()
        .insert("idempotent-replayed", HeaderValue::from_static("true"));
    response
}

/// The document's rule for a key: 1 to [`MAX_KEY_LEN`] printable ASCII
/// characters, not starting or ending with a space (a tab, which a header may
/// carry, is not one of them).
fn is_valid_key(key: &str) -> bool {
    let bytes = key.as_bytes();
    (1..=MAX_KEY_LEN).contains(&bytes.len())
        && bytes.iter().all(|byte| (b' '..=b'~').contains(byte))
        && bytes.first() != Some(&b' ')
        && bytes.last() != Some(&b' ')
}

fn in_flight() -> Response {
    Problem {
        retry_after: Some(RETRY_AFTER_SECONDS),
        ..Problem::conflict(
            "a request with this Idempotency-Key is still being answered; retry after a moment",
        )
    }
    .into_response()
}

/// What makes two requests the same: method, path and query, and the body
/// as parsed JSON (neither whitespace nor the order of keys counts), or its
/// bytes when it is not JSON.
fn fingerprint(method: &Method, uri: &axum::http::Uri, body: &[u8]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(method.as_str());
    hasher.update([0]);
    hasher.update(uri.to_string());
    hasher.update([0]);
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            hasher.update([b'j']);
            hasher.update(canonical(&value));
        }
        Err(_) => {
            hasher.update([b'b']);
            hasher.update(body);
        }
    }
    cinch_base::hex::encode(&hasher.finalize())
}

/// `value` as compact JSON with every object's keys sorted.
fn canonical(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by_key(|(name, _)| *name);
            let fields: Vec<String> = entries
                .into_iter()
                .map(|(name, value)| format!("{}:{}", Value::from(name.as_str()), canonical(value)))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_json_is_the_same_request_whatever_its_layout() {
        let uri: axum::http::Uri = "/v1/accounts/a/tasks".parse().unwrap();
        let compact = fingerprint(&Method::POST, &uri, br#"{"a":1,"b":{"c":[1,2],"d":"x"}}"#);
        let spread = fingerprint(
            &Method::POST,
            &uri,
            b"{ \"b\" : { \"d\": \"x\", \"c\": [1, 2] },\n  \"a\": 1 }",
        );
        assert_eq!(compact, spread);
        let other = fingerprint(&Method::POST, &uri, br#"{"a":1,"b":{"c":[2,1],"d":"x"}}"#);
        assert_ne!(compact, other);
    }
}
