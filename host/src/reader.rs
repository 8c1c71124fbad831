//! Reads a harness's raw output through its driver, the same way whether
//! the output is a finished log (`cinch driver test`) or one still growing
//! (a live turn): bytes in, progress lines and the session id out.

use cinch_driver_sdk::{Event, Outcome};

use crate::lines::{Line, LineSplitter};
use crate::parse::TurnParser;
use crate::progress::ProgressRenderer;
use crate::runtime::DriverFailure;

/// Lines handed to the driver per call at most.
const BATCH_LINES: usize = 256;

/// What reading the output gave, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A progress line, redacted and cut.
    Progress(String),
    /// A session id the harness reported for the first time.
    Session(String),
}

/// Counts of what was read.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    /// Events the driver produced.
    pub events: usize,
    /// Lines that gave no event: not JSON, not UTF-8, too long, or unknown.
    pub unparsed: usize,
    /// Bytes read.
    pub bytes: u64,
}

/// How reading ended.
#[derive(Debug)]
pub struct Finished {
    /// The driver's outcome; an error naming the failure when the driver failed.
    pub outcome: Outcome,
    /// The last session id reported, by an event or by the outcome.
    pub session_id: Option<String>,
    /// The model the harness said it runs, when it said.
    pub model: Option<String>,
    /// Counts.
    pub tally: Tally,
    /// How the driver failed, when it did. Reading stops there.
    pub failure: Option<DriverFailure>,
}

/// A driver's parser, with the host's line handling and progress rendering.
pub struct LogReader<P> {
    parser: P,
    renderer: ProgressRenderer,
    splitter: LineSplitter,
    lines: Vec<Line>,
    session_id: Option<String>,
    model: Option<String>,
    tally: Tally,
    failure: Option<DriverFailure>,
}

impl<P: TurnParser> LogReader<P> {
    /// A reader that feeds `parser` and renders with `renderer`.
    pub fn new(parser: P, renderer: ProgressRenderer) -> Self {
        Self {
            parser,
            renderer,
            splitter: LineSplitter::default(),
            lines: Vec::new(),
            session_id: None,
            model: None,
            tally: Tally::default(),
            failure: None,
        }
    }

    /// Takes the next bytes of output; appends what they gave to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Output>) {
        self.tally.bytes += bytes.len() as u64;
        self.splitter.push(bytes, &mut self.lines);
        self.handle_lines(out);
    }

    /// The output has ended and the CLI exited: the outcome.
    pub fn finish(
        mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
        out: &mut Vec<Output>,
    ) -> Finished {
        self.lines.extend(self.splitter.finish());
        self.handle_lines(out);
        let outcome = match self.failure.clone() {
            Some(failure) => Err(failure),
            None => self.parser.finish(exit_code, stderr_tail),
        };
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(failure) => {
                let outcome = Outcome {
                    is_error: true,
                    error: Some(failure.to_string()),
                    ..Outcome::default()
                };
                self.failure = Some(failure);
                outcome
            }
        };
        if let Some(id) = &outcome.session_id {
            self.note_session(id, out);
        }
        Finished {
            outcome,
            session_id: self.session_id,
            model: self.model,
            tally: self.tally,
            failure: self.failure,
        }
    }

    /// Feeds the whole lines gathered so far, in batches.
    fn handle_lines(&mut self, out: &mut Vec<Output>) {
        let mut batch = Vec::with_capacity(self.lines.len().min(BATCH_LINES));
        for line in std::mem::take(&mut self.lines) {
            match line {
                Line::Text(text) => batch.push(text),
                Line::TooLong(_) | Line::NotUtf8 => self.tally.unparsed += 1,
            }
            if batch.len() == BATCH_LINES {
                self.feed(&batch, out);
                batch.clear();
            }
        }
        self.feed(&batch, out);
    }

    fn feed(&mut self, batch: &[String], out: &mut Vec<Output>) {
        if batch.is_empty() || self.failure.is_some() {
            return;
        }
        match self.parser.feed(batch) {
            Ok(events) => events.iter().for_each(|event| self.record(event, out)),
            Err(failure) => {
                out.push(Output::Progress(format!("error: {failure}")));
                self.failure = Some(failure);
            }
        }
    }

    fn record(&mut self, event: &Event, out: &mut Vec<Output>) {
        if matches!(event, Event::Skipped { .. }) {
            self.tally.unparsed += 1;
            return;
        }
        self.tally.events += 1;
        if let Event::Started {
            model: Some(model), ..
        } = event
        {
            self.model = Some(model.clone());
        }
        if let Event::Started {
            session_id: Some(id),
            ..
        }
        | Event::Session(id) = event
        {
            self.note_session(id, out);
        }
        out.extend(self.renderer.render(event).map(Output::Progress));
    }

    fn note_session(&mut self, id: &str, out: &mut Vec<Output>) {
        if self.session_id.as_deref() != Some(id) {
            self.session_id = Some(id.to_owned());
            out.push(Output::Session(id.to_owned()));
        }
    }
}
