//! cinch: runs coding-agent CLIs one turn at a time, with everything each
//! harness is particular about kept in a sandboxed WebAssembly driver.
//!
//! Modules, by job:
//! - [`runtime`]: the wasmtime engine; loads, caches and sandboxes drivers.
//! - [`drivers`]: which drivers there are (built-in and plugins).
//! - [`lines`], [`parse`], [`progress`], [`replay`]: reading a harness's
//!   output through its driver into events, progress lines and an outcome.
//! - [`probe`]: the harness CLIs installed on this machine.
//! - [`home`], [`redact`]: cinch's state directory; masking secrets.
//! - [`cli`]: the `cinch` command.

pub mod cli;
pub mod drivers;
pub mod home;
pub mod lines;
pub mod parse;
pub mod probe;
pub mod progress;
pub mod redact;
pub mod replay;
pub mod runtime;
