//! The SDK for cinch drivers.
//!
//! A driver teaches cinch one harness CLI: how to start it for a turn and how
//! to read its JSONL output, and for a CLI that holds a conversation on its
//! stdin (ACP), what to write to it. Implement [`Driver`] (and a [`Parser`]
//! for its output), then export it as a WebAssembly component with
//! [`export_driver!`]:
//!
//! ```ignore
//! use cinch_driver_sdk::{export_driver, Driver, Parser};
//!
//! #[derive(Default)]
//! pub struct MyParser { /* per-turn state */ }
//! impl Parser for MyParser { /* event() and finish() */ }
//!
//! pub struct MyDriver;
//! impl Driver for MyDriver { type Parser = MyParser; /* info() and command() */ }
//!
//! export_driver!(MyDriver);
//! ```
//!
//! The same crate builds natively (as an `rlib`), so tests and benchmarks can
//! run the driver without wasm; for `wasm32-wasip2` it is a component of the
//! `cinch:driver` contract version [`CONTRACT_VERSION`].

#[cfg(any(target_arch = "wasm32", test))]
mod heap;
mod types;
mod value;

pub mod calls;
pub mod json;
pub mod loose;
pub mod session;
pub mod testing;
pub mod text;

#[cfg(target_arch = "wasm32")]
#[doc(hidden)]
pub mod guest;

pub use serde_json;
pub use types::*;
pub use value::{Number, Object, Value};

/// The version of the WIT contract this SDK exports.
pub const CONTRACT_VERSION: &str = "0.3.0";

/// A harness CLI, as cinch needs to know it.
pub trait Driver {
    /// Reads one turn's output.
    type Parser: Parser + Default;

    /// Static facts about the harness.
    fn info() -> Info;

    /// The CLI's version from the output of its version command.
    fn parse_version(output: &str) -> Option<String> {
        text::find_version(output)
    }

    /// The command that starts one turn.
    fn command(turn: &Turn) -> Command;

    /// The parser for one turn. A driver that only reads output needs nothing
    /// of the turn; a conversation driver takes what it sends from it.
    fn parser(_turn: &Turn) -> Self::Parser {
        Self::Parser::default()
    }
}

/// Reads one turn's output, line by line, into [`Event`]s.
///
/// Implement [`Parser::event`] for JSON lines and [`Parser::finish`]; the
/// defaults take care of blank and non-JSON lines. A parser that reads each
/// line into its own structs (see [`loose`]) implements [`Parser::line`]
/// instead of [`Parser::event`]. A conversation driver
/// (see [`BriefDelivery::Conversation`]) also implements
/// [`Parser::opening`], [`Parser::stop`] and its own [`Parser::feed`], whose
/// [`Fed::replies`] the host writes to the CLI's stdin.
pub trait Parser {
    /// One line that parsed as JSON; `value` borrows from the line. Unless
    /// implemented, every such line is of an unknown type.
    fn event(&mut self, value: &Value, out: &mut Vec<Event>) {
        out.push(unknown(value));
    }

    /// The CLI has exited; `exit_code` is `None` when a signal ended it.
    fn finish(&mut self, exit_code: Option<i32>, stderr_tail: &str) -> Outcome;

    /// One raw line. Blank lines give nothing; other lines that are not JSON
    /// give a [`Event::Skipped`].
    fn line(&mut self, line: &str, out: &mut Vec<Event>) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        match Value::parse(line) {
            Ok(value) => self.event(&value, out),
            Err(_) => out.push(Event::Skipped {
                reason: SkipReason::NotJson,
                kind: None,
            }),
        }
    }

    /// A batch of lines: their events, and for a conversation the lines to
    /// write back. A driver that only reads never replies, and is done only
    /// when its CLI carries on with no way to succeed (a refused API key it
    /// would retry for minutes): the host then ends the CLI. Otherwise the
    /// CLI's exit ends its turn.
    fn feed(&mut self, lines: &[String]) -> Fed {
        let mut events = Vec::with_capacity(lines.len());
        for line in lines {
            self.line(line, &mut events);
        }
        Fed {
            events,
            ..Fed::default()
        }
    }

    /// The lines to write to the CLI's stdin before anything else.
    fn opening(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// The lines that ask the CLI to stop gracefully.
    fn stop(&mut self) -> Vec<String> {
        Vec::new()
    }

    /// The host's decision on the permission request `key` (see
    /// [`Turn::ask`]): the lines that answer the agent. Nothing for an
    /// unknown or already decided key.
    fn decide(&mut self, _key: &str, _allow: bool, _message: Option<&str>) -> Vec<String> {
        Vec::new()
    }
}

/// An event of a type the driver does not know, named by its `type` field.
pub fn unknown(value: &Value) -> Event {
    Event::Skipped {
        reason: SkipReason::Unknown,
        kind: json::kind(value).map(str::to_owned),
    }
}

/// Exports a [`Driver`] as the `cinch:driver` component. On targets other
/// than wasm32 it expands to nothing, so the crate also builds natively.
#[macro_export]
macro_rules! export_driver {
    ($driver:ty) => {
        #[cfg(target_arch = "wasm32")]
        const _: () = {
            type CinchDriverComponent = $crate::guest::Component<$driver>;
            $crate::guest::bindings::export_wit_bindings!(CinchDriverComponent with_types_in $crate::guest::bindings);
        };
    };
}
