//! The reading pipeline: a harness's raw output, read through its driver,
//! into progress lines and a result, the same way for a live turn, a kept log
//! and `cinch driver test`.
//!
//! From the bottom up:
//! - [`lines`]: raw output → whole lines (a line too long, or not UTF-8, is
//!   counted and skipped);
//! - [`parse`]: a driver's parser for one turn, as a component or natively;
//! - [`progress`]: driver events → the progress lines people watch;
//! - [`reader`]: bytes in, progress lines, the session id and the outcome out;
//! - [`replay`]: a whole recorded log through a driver, as `cinch driver
//!   test` shows it and the golden tests compare it.

pub mod lines;
pub mod parse;
pub mod progress;
pub mod reader;
pub mod replay;
