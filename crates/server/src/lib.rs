//! cinch's server: everything above a turn and its store that the `cinch`
//! command starts with `cinch serve`. Persistence (SQLite or PostgreSQL) is
//! the crate `cinch_store`; a turn's life (supervisor, sandbox, turn files,
//! checkpoints, the reading pipeline, drivers, config and home) is the crate
//! `cinch_engine`; the command line is the `cinch` crate, which depends on
//! this one and never the other way.
//!
//! Modules, by job:
//! - [`runs`]: what every service that runs turns shares: the launcher that
//!   starts and follows a turn, turn slots, the harness environment, live
//!   events.
//! - [`service`]: the services (sessions, code tasks, accounts, agents,
//!   environments, drivers, webhooks, usage), each over the store and runs.
//! - [`api`]: the HTTP server on the services; [`web`]: the browser app,
//!   embedded; [`approvals`]: which harnesses can ask for approvals, and an
//!   approval as the API shows it.
//! - [`webhooks`]: signed POSTs of an account's events, retried;
//!   [`peers`]: requests between the nodes sharing one database.
//! - [`metrics`]: counters and latencies for `GET /metrics`; [`telemetry`]:
//!   traces exported over OpenTelemetry.

pub mod api;
pub mod approvals;
pub mod metrics;
pub mod peers;
pub mod runs;
pub mod service;
pub mod telemetry;
pub mod web;
pub mod webhooks;
