//! `Idempotency-Key` on POST: the same key with the same request replays the
//! first answer; with another request it is a 422; while the first is still
//! being answered, a 409. Keys are the account's and kept at least 24 hours.

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest as _, Sha256};

use super::AppState;
use super::problem::Problem;
use crate::store::KeyState;

/// The header.
const HEADER: &str = "idempotency-key";

/// The longest key.
const MAX_KEY_LEN: usize = 255;

/// Wraps every POST that carries a key.
pub async fn layer(State(app): State<AppState>, request: Request, next: Next) -> Response {
    if request.method() != Method::POST || !request.headers().contains_key(HEADER) {
        return next.run(request).await;
    }
    match keyed(&app, request, next).await {
        Ok(response) | Err(response) => response,
    }
}

async fn keyed(app: &AppState, request: Request, next: Next) -> Result<Response, Response> {
    let key = request
        .headers()
        .get(HEADER)
        .and_then(|value| value.to_str().ok())
        .map(str::trim)
        .filter(|key| !key.is_empty() && key.len() <= MAX_KEY_LEN)
        .map(str::to_owned)
        .ok_or_else(|| {
            Problem::invalid_field(
                "Idempotency-Key",
                format!("a key is 1 to {MAX_KEY_LEN} printable ASCII characters"),
            )
            .into_response()
        })?;
    let Some(principal) = super::extract::principal(app, request.headers()).await.ok() else {
        // Not authenticated: the route itself answers 401.
        return Ok(next.run(request).await);
    };
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, app.body_limit).await.map_err(|_| {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body_too_large",
            format!("the body is over {} bytes", app.body_limit),
        )
        .into_response()
    })?;
    let mut hasher = Sha256::new();
    hasher.update(parts.method.as_str());
    hasher.update([0]);
    hasher.update(parts.uri.to_string());
    hasher.update([0]);
    hasher.update(&bytes);
    let fingerprint: String = hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    let account = principal.account_id;
    let state = app
        .store
        .claim_key(&account, &key, &fingerprint)
        .await
        .map_err(|error| Problem::from(error).into_response())?;
    match state {
        KeyState::Claimed => {}
        KeyState::Answered {
            status,
            content_type,
            body,
        } => {
            let mut response = Response::new(Body::from(body));
            *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::OK);
            if let Some(content_type) = content_type.and_then(|ct| HeaderValue::from_str(&ct).ok())
            {
                response
                    .headers_mut()
                    .insert(header::CONTENT_TYPE, content_type);
            }
            response
                .headers_mut()
                .insert("idempotent-replayed", HeaderValue::from_static("true"));
            return Ok(response);
        }
        KeyState::InFlight => {
            return Err(Problem::conflict(
                "a request with this Idempotency-Key is still being answered; retry in a moment",
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
    let response = next
        .run(Request::from_parts(parts, Body::from(bytes)))
        .await;
    let (parts, body) = response.into_parts();
    let bytes = match to_bytes(body, usize::MAX).await {
        Ok(bytes) => bytes,
        Err(error) => {
            let _ = app.store.release_key(&account, &key).await;
            return Err(Problem::internal(&error).into_response());
        }
    };
    let stored = if parts.status.is_server_error() {
        // A failure on the server's side is not the answer: a retry runs again.
        app.store.release_key(&account, &key).await
    } else {
        let content_type = parts
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok());
        app.store
            .answer_key(&account, &key, parts.status.as_u16(), content_type, &bytes)
            .await
    };
    if let Err(error) = stored {
        tracing::error!(key = %key, "recording an idempotent answer: {error}");
    }
    Ok(Response::from_parts(parts, Body::from(bytes)))
}
