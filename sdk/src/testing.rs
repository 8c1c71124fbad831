//! Helpers for a driver's tests: a log through the driver's parser, and the
//! events to expect of it.
//!
//! ```ignore
//! use cinch_driver_sdk::testing::{run, tool};
//!
//! let (events, outcome) = run::<MyDriver>(log, Some(0), "");
//! assert_eq!(events[1], tool("call_1", "shell", Some("ls"), ToolPhase::Started));
//! ```

use crate::{Driver, Event, Outcome, Parser, ToolPhase, ToolUse};

/// Feeds `log` (the CLI's output, one line of it a line) to a fresh parser of
/// driver `D` and finishes it with `exit_code` and `stderr`: the events of
/// the whole log and the outcome.
pub fn run<D: Driver>(log: &str, exit_code: Option<i32>, stderr: &str) -> (Vec<Event>, Outcome) {
    let mut parser = D::Parser::default();
    let lines: Vec<String> = log.lines().map(str::to_owned).collect();
    let events = parser.feed(&lines).events;
    let outcome = parser.finish(exit_code, stderr);
    (events, outcome)
}

/// The event of a tool call with the id `id`.
pub fn tool(id: &str, name: &str, detail: Option<&str>, phase: ToolPhase) -> Event {
    Event::ToolUse(ToolUse {
        id: Some(id.to_owned()),
        name: name.to_owned(),
        detail: detail.map(str::to_owned),
        phase,
    })
}
