//! cinch: runs coding-agent CLIs one turn at a time, with everything each
//! harness is particular about kept in a sandboxed WebAssembly driver.
//!
//! Modules, by job:
//! - [`runtime`]: the wasmtime engine; loads, caches and sandboxes drivers.
//! - [`drivers`]: which drivers there are (built-in and plugins).
//! - [`lines`], [`parse`], [`reader`], [`progress`], [`replay`]: reading a
//!   harness's output through its driver into progress lines and an outcome.
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
//! - [`hex`], [`sync`]: lowercase hex; locks that outlive a panic.
//! - [`store`]: persistence (SQLite); [`sessions`]: tasks and sessions on
//!   the engine (workspaces, capacity, live events); [`service`]: code tasks
//!   and what sessions and code tasks share; [`api`]: the HTTP server on
//!   them.
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
pub mod hex;
pub mod home;
pub mod lines;
pub mod mcp;
pub mod metrics;
pub mod parse;
pub mod peers;
pub mod plugins;
pub mod probe;
pub mod progress;
pub mod reader;
pub mod redact;
pub mod replay;
pub mod runtime;
pub mod sandbox;
pub mod sealing;
pub mod service;
pub mod sessions;
pub mod store;
pub mod supervisor;
pub mod sync;
pub mod telemetry;
pub mod tools;
pub mod turn_dir;
pub mod web;
pub mod webhooks;
