//! cinch: runs coding-agent CLIs one turn at a time, with everything each
//! harness is particular about kept in a sandboxed WebAssembly driver.
//!
//! The driver runtime (wasmtime, the contract's versions) is the crate
//! `cinch_runtime`; hex, random ids and poison-tolerant locks are `cinch_base`.
//!
//! Modules, by job:
//! - [`drivers`]: which drivers there are (built-in and plugins).
//! - [`reading`]: reading a harness's output through its driver into
//!   progress lines and an outcome.
//! - [`engine`]: a turn's life and the bookkeeping of turns; [`supervisor`]:
//!   the detached process that owns a turn's CLI; [`helper`]: the processes
//!   cinch starts for supervisors and sandboxed commands; [`turn_dir`]: the turn's
//!   files the two share; [`checkpoint`]: git
//!   snapshots of the work tree around a turn; [`config`]: `config.toml`.
//! - [`probe`]: the harness CLIs installed on this machine.
//! - [`home`], [`redact`]: cinch's state directory; masking secrets;
//!   [`headline`]: the line of a failure's output that explains it;
//!   [`disk`]: the room left under the home.
//! - [`mcp`]: an environment's MCP servers as each harness takes them.
//! - [`webhooks`]: signed POSTs of an account's events, retried.
//! - [`store`]: persistence (SQLite); [`runs`]: what every service that
//!   runs turns shares (starting and following a turn, slots, live events);
//!   [`service`]: the services, tasks and sessions among them; [`api`]: the
//!   HTTP server on them.
//! - [`metrics`]: counters and latencies for `GET /metrics`; [`telemetry`]:
//!   traces exported over OpenTelemetry.
//! - [`web`]: the browser app, embedded.
//! - [`cli`]: the `cinch` command.

pub mod api;
pub mod approvals;
pub mod checkpoint;
pub mod cli;
pub mod clock;
pub mod config;
pub mod disk;
pub mod drivers;
pub mod engine;
pub mod exit;
pub mod harnesses;
pub mod headline;
pub mod helper;
pub mod home;
pub mod mcp;
pub mod metrics;
pub mod peers;
pub mod plugins;
pub mod probe;
pub mod reading;
pub mod redact;
pub mod runs;
pub mod sandbox;
pub mod sealing;
pub mod service;
pub mod store;
pub mod supervisor;
pub mod telemetry;
pub mod tools;
pub mod turn_dir;
pub mod web;
pub mod webhooks;
