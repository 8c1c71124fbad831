//! Runs a whole recorded log through a driver: what `cinch driver test`
//! shows, and what the golden tests compare.

use cinch_driver_sdk::Outcome;
use serde::Serialize;

use super::parse::TurnParser;
use super::progress::ProgressRenderer;
use super::reader::{LogReader, Output};
use crate::redact::Redactor;

/// What a driver made of one log.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The driver's name.
    pub driver: String,
    /// The progress lines, as a person watching the turn would have seen them.
    pub progress: Vec<String>,
    /// How the turn ended.
    pub outcome: Outcome,
    /// Events the driver produced.
    pub events: usize,
    /// Lines that gave no event: not JSON, not UTF-8, too long, or unknown.
    pub unparsed: usize,
    /// Valid JSON of a type the driver does not know, counted by type.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub unknown_events: super::reader::UnknownEvents,
    /// Lines that were not JSON.
    #[serde(skip_serializing_if = "is_zero")]
    pub not_json_lines: u64,
    /// How the driver failed, when it did (the replay stopped there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_failure: Option<String>,
}

/// Whether a count is zero: left out of reports, so that golden files of
/// logs without such lines stay as they were.
fn is_zero(count: &u64) -> bool {
    *count == 0
}

/// How the CLI ended, as recorded beside its log.
#[derive(Debug, Clone, Default)]
pub struct Exit {
    /// The exit code; `None` when a signal ended the CLI.
    pub code: Option<i32>,
    /// The end of its standard error.
    pub stderr_tail: String,
}

/// Feeds `log` to `parser` and collects the report.
pub fn replay(
    driver: &str,
    display_name: &str,
    parser: &mut dyn TurnParser,
    log: &[u8],
    exit: &Exit,
    redactor: &Redactor,
) -> Report {
    let mut reader = LogReader::new(
        parser,
        ProgressRenderer::new(display_name, redactor.clone()),
    );
    let mut output = Vec::new();
    reader.push(log, &mut output);
    let finished = reader.finish(exit.code, &exit.stderr_tail, &mut output);
    let progress = output
        .into_iter()
        .filter_map(|output| match output {
            Output::Progress(line) => Some(line),
            Output::Session(_) | Output::Approval(_) => None,
        })
        .collect();
    Report {
        driver: driver.to_owned(),
        progress,
        outcome: redact_outcome(finished.outcome, redactor),
        events: finished.tally.events,
        unparsed: finished.tally.unparsed,
        unknown_events: finished.tally.unknown,
        not_json_lines: finished.tally.not_json,
        driver_failure: finished.failure.map(|failure| failure.to_string()),
    }
}

/// The outcome with secrets masked in everything a person reads.
pub(crate) fn redact_outcome(outcome: Outcome, redactor: &Redactor) -> Outcome {
    Outcome {
        final_message: outcome.final_message.map(|text| redactor.redact(&text)),
        error: outcome.error.map(|text| redactor.redact(&text)),
        ..outcome
    }
}
