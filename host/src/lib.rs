//! cinch: runs coding-agent CLIs one turn at a time, with everything each
//! harness is particular about kept in a sandboxed WebAssembly driver.
//!
//! This crate is the layers above a turn and its store: sessions, services,
//! the HTTP server and the `cinch` command. Persistence (SQLite or
//! PostgreSQL) is the crate `cinch_store`; a turn's life (supervisor, sandbox,
//! turn files, checkpoints, the reading pipeline, drivers, config and home)
//! is the crate `cinch_engine`; the driver runtime (wasmtime, the contract's
//! versions) is `cinch_runtime`; hex, random ids and poison-tolerant locks
//! are `cinch_base`.
//!
//! Modules, by job:
//! - [`approvals`]: which harnesses can ask for approvals, and an approval
//!   as the API shows it (the policy is `cinch_store::approval_policy`).
//! - [`runs`]: what every service that runs turns shares: the launcher that
//!   starts and follows a turn, turn slots, the harness environment, live
//!   events; [`service`]: the services, tasks and sessions among them;
//!   [`api`]: the HTTP server on them; [`web`]: the browser app, embedded.
//! - [`webhooks`]: signed POSTs of an account's events, retried;
//!   [`peers`]: requests between the nodes sharing one database.
//! - [`metrics`]: counters and latencies for `GET /metrics`; [`telemetry`]:
//!   traces exported over OpenTelemetry.
//! - [`cli`]: the `cinch` command.

pub mod api;
pub mod approvals;
pub mod cli;
pub mod metrics;
pub mod peers;
pub mod runs;
pub mod service;
pub mod telemetry;
pub mod web;
pub mod webhooks;
