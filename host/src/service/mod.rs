//! The services the HTTP API calls: each holds the rules of one kind of
//! work and reaches the engine and the store for it; none knows HTTP.
//! Sessions are the [`crate::sessions::Conductor`]'s.

pub mod accounts;
pub mod agents;
pub mod code_tasks;
pub mod drivers;
pub mod environments;
pub mod health;
pub mod keys;
pub mod turn_env;
pub mod usage;
pub mod webhooks;

use serde::Serialize;

use cinch_store::StoreError;

/// One field's complaint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct FieldError {
    /// The field, as the request named it (`repo`, `notes[1].name`, ...).
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

impl FieldError {
    /// A complaint about `field`.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Why a request to a service was not carried out.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    /// Fields of the request break rules.
    #[error("invalid fields: {0:?}")]
    Invalid(Vec<FieldError>),
    /// Nothing of the caller's account by that name.
    #[error("{0}")]
    NotFound(&'static str),
    /// The store failed, or refused (a name taken).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Something else failed; the server's log says what.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

impl ServiceError {
    /// A complaint about one field.
    pub fn invalid_field(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid(vec![FieldError::new(field, message)])
    }
}
