//! Runs a whole recorded log through a driver: what `cinch driver test`
//! shows, and what the golden tests compare.

use cinch_driver_sdk::{Event, Outcome};
use serde::Serialize;

use crate::lines::{Line, LineSplitter};
use crate::parse::TurnParser;
use crate::progress::ProgressRenderer;
use crate::redact::Redactor;

/// Lines handed to a driver per call.
const BATCH_LINES: usize = 256;

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
    /// How the driver failed, when it did (the replay stopped there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_failure: Option<String>,
}

/// How the CLI ended, as recorded beside its log.
#[derive(Debug, Clone, Default)]
pub struct Exit {
    /// The exit code; `None` when a signal ended the CLI.
    pub code: Option<i32>,
    /// The end of its standard error.
    pub stderr_tail: String,
}

/// Feeds `log` to `parser` in batches and collects the report. A driver that
/// fails stops the replay: the outcome is then an error naming the failure.
pub fn replay(
    driver: &str,
    display_name: &str,
    parser: &mut dyn TurnParser,
    log: &[u8],
    exit: &Exit,
    redactor: &Redactor,
) -> Report {
    let mut tally = Tally::new(display_name, redactor.clone());
    let mut splitter = LineSplitter::default();
    let mut lines = Vec::new();
    splitter.push(log, &mut lines);
    lines.extend(splitter.finish());

    let mut batch = Vec::with_capacity(BATCH_LINES);
    let mut failure = None;
    for line in lines {
        match line {
            Line::Text(text) => batch.push(text),
            Line::TooLong(_) | Line::NotUtf8 => tally.unparsed += 1,
        }
        if batch.len() == BATCH_LINES
            && let Err(error) = feed(parser, &mut batch, &mut tally)
        {
            failure = Some(error);
            break;
        }
    }
    if failure.is_none() {
        failure = feed(parser, &mut batch, &mut tally).err();
    }
    let outcome = match failure {
        None => parser.finish(exit.code, &exit.stderr_tail),
        Some(error) => Err(error),
    };
    let (outcome, driver_failure) = match outcome {
        Ok(outcome) => (outcome, None),
        Err(error) => {
            let failure = error.to_string();
            let outcome = Outcome {
                is_error: true,
                error: Some(failure.clone()),
                ..Outcome::default()
            };
            (outcome, Some(failure))
        }
    };
    Report {
        driver: driver.to_owned(),
        progress: tally.progress,
        outcome: redact_outcome(outcome, redactor),
        events: tally.events,
        unparsed: tally.unparsed,
        driver_failure,
    }
}

fn feed(
    parser: &mut dyn TurnParser,
    batch: &mut Vec<String>,
    tally: &mut Tally,
) -> Result<(), crate::runtime::DriverFailure> {
    if batch.is_empty() {
        return Ok(());
    }
    let events = parser.feed(batch)?;
    batch.clear();
    for event in &events {
        tally.record(event);
    }
    Ok(())
}

/// Counts and renders events as they come.
struct Tally {
    renderer: ProgressRenderer,
    progress: Vec<String>,
    events: usize,
    unparsed: usize,
}

impl Tally {
    fn new(display_name: &str, redactor: Redactor) -> Self {
        Self {
            renderer: ProgressRenderer::new(display_name, redactor),
            progress: Vec::new(),
            events: 0,
            unparsed: 0,
        }
    }

    fn record(&mut self, event: &Event) {
        if matches!(event, Event::Skipped { .. }) {
            self.unparsed += 1;
            return;
        }
        self.events += 1;
        self.progress.extend(self.renderer.render(event));
    }
}

/// The outcome with secrets masked in everything a person reads.
pub fn redact_outcome(outcome: Outcome, redactor: &Redactor) -> Outcome {
    Outcome {
        final_message: outcome.final_message.map(|text| redactor.redact(&text)),
        error: outcome.error.map(|text| redactor.redact(&text)),
        ..outcome
    }
}
