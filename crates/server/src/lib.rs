//! cinch's server: everything above a turn and its store that the `cinch`
//! command starts with `cinch serve`. Persistence (SQLite or PostgreSQL) is
//! the crate `cinch_store`; a turn's life (supervisor, sandbox, turn files,
//! checkpoints, the reading pipeline, drivers, config and home) is the crate
//! `cinch_engine`; the command line is the `cinch` crate, which depends on
//! this one and never the other way.
//!
//! Modules, by job (private: the command line uses what the crate root
//! re-exports):
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

mod api;
mod approvals;
mod metrics;
mod peers;
mod runs;
mod service;
mod telemetry;
mod web;
mod webhooks;

// What the command line builds a server from (`cinch serve`), and the few
// pieces it shares with the server; everything else is this crate's own.
pub use api::connections::{Limits as ConnectionLimits, raise_open_file_limit};
pub use api::drivers::by_version as unknown_events_by_version;
pub use api::{AppState, DEFAULT_BODY_LIMIT, serve};
pub use metrics::install as install_metrics;
pub use runs::Runner;
pub use runs::live::Runs;
pub use service::accounts::token_name;
pub use service::sessions::nodes::hear_other_nodes;
pub use service::sessions::{Conductor, DEFAULT_LEASE_TTL, Settings};
pub use telemetry::{Exporter, Traces, exporter};
pub use webhooks::Webhooks;
