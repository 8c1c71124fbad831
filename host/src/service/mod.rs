//! The services the HTTP API calls: each holds the rules of one kind of
//! work and reaches the engine and the store for it; none knows HTTP.
//! Sessions are the [`crate::sessions::Conductor`]'s.

pub mod code_tasks;
pub mod turn_env;
