//! Errors as `application/problem+json` (RFC 9457), with field errors.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

pub(crate) use crate::service::FieldError;

use crate::service::ServiceError;
use cinch_engine::engine::RefusalCode;
use cinch_store::StoreError;

/// An error answer.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Problem {
    /// What kind of problem: `urn:cinch:<code>`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the kind.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong this time.
    pub detail: String,
    /// The fields at fault, when the request's content is.
    pub errors: Vec<FieldError>,
    /// Seconds to wait before trying again, sent as `Retry-After`.
    #[serde(skip)]
    pub retry_after: Option<u64>,
}

/// What a 503 tells the client to wait, in seconds: about as long as the
/// server gives the database to lend a connection.
const UNAVAILABLE_RETRY_SECONDS: u64 = 2;

impl Problem {
    /// A problem of `status` with code `code` (the type's last part).
    pub(crate) fn new(status: StatusCode, code: &str, detail: impl Into<String>) -> Self {
        Self {
            kind: format!("urn:cinch:{code}"),
            title: status.canonical_reason().unwrap_or("Error").to_owned(),
            status: status.as_u16(),
            detail: detail.into(),
            errors: Vec::new(),
            retry_after: None,
        }
    }

    /// 401: no token, or one that is not known.
    pub(crate) fn unauthorized(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", detail)
    }

    /// 404: nothing there for this caller (another account's object included).
    pub(crate) fn not_found(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", detail)
    }

    /// 409: the object is not in a state that allows the request.
    pub(crate) fn conflict(detail: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", detail)
    }

    /// 422 with the fields at fault.
    pub(crate) fn invalid(errors: Vec<FieldError>) -> Self {
        let detail = errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.message))
            .collect::<Vec<_>>()
            .join("; ");
        Self {
            errors,
            ..Self::new(StatusCode::UNPROCESSABLE_ENTITY, "validation", detail)
        }
    }

    /// 422 for one field.
    pub(crate) fn invalid_field(field: &str, message: impl Into<String>) -> Self {
        Self::invalid(vec![FieldError::new(field, message)])
    }

    /// 503 with `Retry-After`: the database cannot answer now; the cause is
    /// logged, not told.
    pub(crate) fn unavailable(error: &dyn std::fmt::Display) -> Self {
        tracing::warn!("answering 503: {error}");
        Self {
            retry_after: Some(UNAVAILABLE_RETRY_SECONDS),
            ..Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "the database cannot answer now; retry after the time Retry-After gives",
            )
        }
    }

    /// 500, or 503 when the failure is the database's being unreachable
    /// (somewhere in `error`'s causes); the cause is logged, not told.
    pub(crate) fn internal_or_unavailable(error: &anyhow::Error) -> Self {
        let unavailable = error
            .chain()
            .filter_map(|cause| cause.downcast_ref::<StoreError>())
            .any(|cause| matches!(cause, StoreError::Unavailable(_)));
        if unavailable {
            Self::unavailable(&format!("{error:#}"))
        } else {
            Self::internal(&format!("{error:#}"))
        }
    }

    /// 500; the cause is logged, not told.
    pub(crate) fn internal(error: &dyn std::fmt::Display) -> Self {
        tracing::error!("internal error: {error:#}");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the server failed; its log says why",
        )
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let retry_after = self.retry_after;
        let mut response = (status, axum::Json(self)).into_response();
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/problem+json"),
        );
        if let Some(seconds) = retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

impl From<ServiceError> for Problem {
    fn from(error: ServiceError) -> Self {
        let detail = error.to_string();
        match error {
            ServiceError::Invalid(errors) => Self::invalid(errors),
            ServiceError::NotFound(_) => Self::not_found(detail),
            ServiceError::Conflict(_) => Self::conflict(detail),
            ServiceError::OnAnotherNode(node) => Self::conflict(match node.url {
                Some(url) => format!(
                    "the session's work tree is on node {} ({url}), which runs the session: ask it there",
                    node.node_id
                ),
                None => format!(
                    "the session's work tree is on node {}, which runs the session and gave the other nodes no address (start it with --advertise-url): ask that node",
                    node.node_id
                ),
            }),
            ServiceError::NoAgent => {
                Self::new(StatusCode::UNPROCESSABLE_ENTITY, "agent.missing", detail)
            }
            ServiceError::CapacityFull { .. } | ServiceError::AccountCapacityFull { .. } => {
                Self::new(StatusCode::TOO_MANY_REQUESTS, "capacity.full", detail)
            }
            // 409 while another turn runs in the working tree, 422 for the rest.
            ServiceError::Refused(refusal) => {
                let status = match refusal.code {
                    RefusalCode::WorktreeBusy => StatusCode::CONFLICT,
                    _ => StatusCode::UNPROCESSABLE_ENTITY,
                };
                Self::new(status, refusal.code.as_str(), refusal.detail)
            }
            ServiceError::LogPruned(_) => Self::new(StatusCode::NOT_FOUND, "log.pruned", detail),
            ServiceError::LogOnAnotherNode => {
                Self::new(StatusCode::NOT_FOUND, "log.elsewhere", detail)
            }
            ServiceError::Store(StoreError::Taken(message)) => Self {
                errors: vec![FieldError::new("name", message.clone())],
                ..Self::conflict(message)
            },
            ServiceError::Store(StoreError::Missing(message)) => Self::not_found(message),
            ServiceError::Store(unavailable @ StoreError::Unavailable(_)) => {
                Self::unavailable(&unavailable)
            }
            ServiceError::Store(other) => Self::internal(&other),
            ServiceError::Internal(error) => Self::internal_or_unavailable(&error),
        }
    }
}

/// 404 for any path no route serves.
pub(super) async fn no_route() -> Problem {
    Problem::not_found("no such route")
}

/// 405 for a method a route does not serve.
pub(super) async fn no_method() -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        "that method is not served on this route",
    )
}
