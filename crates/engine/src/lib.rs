//! cinch-engine: a turn's life, from the brief to its result. It starts a
//! harness's CLI under a detached supervisor in the sandbox, keeps the
//! turn's files under the home, reads the output through the harness's
//! driver, snapshots the work tree around the turn and says what happened.
//!
//! It must never depend on a store (no sqlx, no rusqlite) nor on an HTTP
//! server (no axum, no hyper server): the host's sessions, services and API
//! sit on it, never the other way. Its types describe themselves to the
//! API's OpenAPI document only through the optional `openapi` feature
//! (utoipa's derives), which the host turns on.
//!
//! Modules, by job:
//! - [`drivers`]: which drivers there are (built-in and [`plugins`]);
//!   [`harnesses`]: the harness names turns use.
//! - [`reading`]: reading a harness's output through its driver into
//!   progress lines and an outcome.
//! - [`engine`]: a turn's life and the bookkeeping of turns; [`supervisor`]:
//!   the detached process that owns a turn's CLI; [`helper`]: the processes
//!   cinch starts for supervisors and sandboxed commands; [`sandbox`]: what
//!   confines them; [`turn_dir`]: the turn's files the two share;
//!   [`checkpoint`]: git snapshots of the work tree around a turn;
//!   [`config`]: `config.toml`; [`exit`]: how a process ended.
//! - [`probe`], [`tools`]: the harness CLIs on this machine and installing
//!   them.
//! - [`home`], [`redact`], [`sealing`]: cinch's state directory; masking
//!   secrets; sealing them under the secrets key; [`headline`]: the line of
//!   a failure's output that explains it; [`disk`]: the room left under the
//!   home; [`clock`]: wall-clock time as cinch writes it.
//! - [`mcp`]: an environment's MCP servers as each harness takes them.
//! - [`metrics`], [`telemetry`]: what a turn records for `GET /metrics` and
//!   the trace context its spans carry (exporting both is the host's).

pub mod checkpoint;
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
pub mod plugins;
pub mod probe;
pub mod reading;
pub mod redact;
pub mod sandbox;
pub mod sealing;
pub mod supervisor;
pub mod telemetry;
pub mod tools;
pub mod turn_dir;
