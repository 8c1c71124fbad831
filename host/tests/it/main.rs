//! The host's integration tests, one binary: each module is one former test
//! file, and `support`, `real` and `otlp` are the harness they share. One
//! binary links the `cinch` crate once instead of once per file. Select a
//! file's tests by its module: `cargo test -p cinch --test it -- serve::`.
//!
//! `supervisor_wake.rs` beside this folder stays a binary of its own: it
//! takes every inotify instance its user has left, which every cinch
//! process started by a test here would need meanwhile.

mod otlp;
mod real;
mod support;

mod acp_edge;
mod app;
mod boots;
mod cli;
mod harness_profiles;
mod mcp_servers;
mod nodes;
mod operations;
mod plugins;
mod promises_api;
mod promises_engine;
mod promises_sessions;
mod real_acp;
mod real_clis;
mod sandbox;
mod scaffold;
mod serve;
mod sessions;
mod supervisor_channel;
mod turns;
mod unknown_events;
mod usage_revert;
mod webhooks;
