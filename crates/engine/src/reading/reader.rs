//! Reads a harness's raw output through its driver, the same way whether
//! the output is a finished log (`cinch driver test`) or one still growing
//! (a live turn): bytes in, progress lines and the session id out.

use std::collections::BTreeMap;

use cinch_driver_sdk::{Event, Outcome, SkipReason};
use cinch_runtime::DriverFailure;

use super::lines::{Line, LineSplitter};
use super::parse::TurnParser;
use super::progress::ProgressRenderer;

/// Lines handed to the driver per call at most.
const BATCH_LINES: usize = 256;

/// What reading the output gave, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// A progress line, redacted and cut.
    Progress(String),
    /// A session id the harness reported for the first time.
    Session(String),
    /// A permission request waiting for the host's decision, its title and
    /// input masked of the turn's secrets.
    Approval(cinch_driver_sdk::PermissionRequest),
}

/// Counts of what was read.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Tally {
    /// Events the driver produced.
    pub events: usize,
    /// Lines that gave no event: not JSON, not UTF-8, too long, or unknown.
    pub unparsed: usize,
    /// Bytes read.
    pub bytes: u64,
    /// Valid JSON of a type the driver does not know, counted by type: a
    /// CLI release that changed its output shows here first.
    pub unknown: UnknownEvents,
    /// Lines that are not JSON (or not UTF-8, which JSON must be).
    pub not_json: u64,
}

/// The longest event type name kept; a longer one is cut (at a character).
pub(crate) const MAX_TYPE_CHARS: usize = 64;

/// Distinct unknown types counted per turn; the rest go under [`OTHER_TYPES`],
/// so that output full of made-up types cannot grow a turn's result (or the
/// server's seen-list) without bound.
pub(crate) const MAX_UNKNOWN_TYPES: usize = 32;

/// The name unknown events without a `type` are counted under.
pub(crate) const NO_TYPE: &str = "(no type)";

/// The name unknown events past [`MAX_UNKNOWN_TYPES`] distinct types are
/// counted under.
pub(crate) const OTHER_TYPES: &str = "(other types)";

/// Unknown events counted by type name.
pub type UnknownEvents = BTreeMap<String, u64>;

/// The name `kind` is counted under: a type name is the CLI's own word, so
/// only what looks like one is kept as it is; anything else (free text, a
/// very long value) would carry more than a type name into results and the
/// server-wide seen-list.
pub fn type_name(kind: Option<&str>) -> String {
    let Some(kind) = kind.filter(|kind| !kind.is_empty()) else {
        return NO_TYPE.to_owned();
    };
    kind.chars()
        .take(MAX_TYPE_CHARS)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | ':' | '@') {
                c
            } else {
                '?'
            }
        })
        .collect()
}

/// Counts one unknown event of type `kind` in `counts`, within the caps.
pub(crate) fn count_unknown(counts: &mut UnknownEvents, kind: Option<&str>, by: u64) {
    let name = type_name(kind);
    let name = if counts.contains_key(&name) || counts.len() < MAX_UNKNOWN_TYPES {
        name
    } else {
        OTHER_TYPES.to_owned()
    };
    *counts.entry(name).or_default() += by;
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
pub(crate) struct LogReader<P> {
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
    pub(crate) fn new(parser: P, renderer: ProgressRenderer) -> Self {
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
    pub(crate) fn push(&mut self, bytes: &[u8], out: &mut Vec<Output>) {
        self.tally.bytes += bytes.len() as u64;
        self.splitter.push(bytes, &mut self.lines);
        self.handle_lines(out);
    }

    /// The output has ended and the CLI exited: the outcome.
    pub(crate) fn finish(
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
                Line::TooLong(_) => self.tally.unparsed += 1,
                Line::NotUtf8 => {
                    self.tally.unparsed += 1;
                    self.tally.not_json += 1;
                }
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
            Ok(fed) => fed.events.iter().for_each(|event| self.record(event, out)),
            Err(failure) => {
                out.push(Output::Progress(format!("error: {failure}")));
                self.failure = Some(failure);
            }
        }
    }

    fn record(&mut self, event: &Event, out: &mut Vec<Output>) {
        if let Event::Skipped { reason, kind } = event {
            self.tally.unparsed += 1;
            match reason {
                SkipReason::NotJson => self.tally.not_json += 1,
                SkipReason::Unknown => {
                    count_unknown(&mut self.tally.unknown, kind.as_deref(), 1);
                }
            }
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
        if let Event::PermissionRequest(request) = event {
            out.push(Output::Approval(cinch_driver_sdk::PermissionRequest {
                title: self.renderer.redact(&request.title),
                input: request
                    .input
                    .as_deref()
                    .map(|input| self.renderer.redact(input)),
                ..request.clone()
            }));
        }
    }

    fn note_session(&mut self, id: &str, out: &mut Vec<Output>) {
        if self.session_id.as_deref() != Some(id) {
            self.session_id = Some(id.to_owned());
            out.push(Output::Session(id.to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::redact::Redactor;
    use cinch_driver_sdk::Fed;
    use cinch_runtime::DriverFailure;

    /// Reads lines as the SDK does: `{"type":"known"}` is an event, other
    /// JSON is unknown by its `type`, anything else is not JSON.
    struct Typed;

    impl TurnParser for Typed {
        fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
            Ok(Fed {
                events: lines
                    .iter()
                    .map(
                        |line| match serde_json::from_str::<serde_json::Value>(line) {
                            Ok(value) if value["type"] == "known" => Event::Other("known".into()),
                            Ok(value) => Event::Skipped {
                                reason: SkipReason::Unknown,
                                kind: value["type"].as_str().map(str::to_owned),
                            },
                            Err(_) => Event::Skipped {
                                reason: SkipReason::NotJson,
                                kind: None,
                            },
                        },
                    )
                    .collect(),
                ..Fed::default()
            })
        }

        fn finish(&mut self, _: Option<i32>, _: &str) -> Result<Outcome, DriverFailure> {
            Ok(Outcome::default())
        }
    }

    fn tally(log: &[u8]) -> Tally {
        let mut reader = LogReader::new(Typed, ProgressRenderer::new("X", Redactor::default()));
        let mut out = Vec::new();
        reader.push(log, &mut out);
        reader.finish(Some(0), "", &mut out).tally
    }

    /// Asks permission for each line, the line being the command.
    struct Asking;

    impl TurnParser for Asking {
        fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
            Ok(Fed {
                events: lines
                    .iter()
                    .map(|line| {
                        Event::PermissionRequest(cinch_driver_sdk::PermissionRequest {
                            key: "0".into(),
                            tool: "Bash".into(),
                            kind: "shell".into(),
                            title: format!("Run {line}"),
                            input: Some(line.clone()),
                            options: Vec::new(),
                        })
                    })
                    .collect(),
                ..Fed::default()
            })
        }

        fn finish(&mut self, _: Option<i32>, _: &str) -> Result<Outcome, DriverFailure> {
            Ok(Outcome::default())
        }
    }

    #[test]
    fn a_permission_request_comes_out_with_the_turns_secrets_masked() {
        let secret = "hunter2-hunter2-hunter2";
        let redactor = Redactor::new([secret.to_owned()]);
        let mut reader = LogReader::new(Asking, ProgressRenderer::new("X", redactor));
        let mut out = Vec::new();
        reader.push(
            format!("curl -H 'token: {secret}' x\n").as_bytes(),
            &mut out,
        );
        let approval = out
            .iter()
            .find_map(|output| match output {
                Output::Approval(request) => Some(request.clone()),
                _ => None,
            })
            .expect("an approval");
        let shown = format!("{} {}", approval.title, approval.input.unwrap_or_default());
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("token: "), "{shown}");
        assert!(
            out.iter()
                .all(|output| !format!("{output:?}").contains(secret)),
            "{out:?}"
        );
    }

    #[test]
    fn counts_unknown_events_by_type_and_non_json_lines_apart() {
        let tally = tally(
            b"{\"type\":\"known\"}\n{\"type\":\"brand_new\"}\n{\"type\":\"brand_new\"}\n\
              {\"type\":\"other new\"}\n{\"no\":\"type\"}\nnot json\n\xff\xfe\n",
        );
        assert_eq!(tally.events, 1);
        assert_eq!(
            tally.unknown,
            UnknownEvents::from([
                ("brand_new".to_owned(), 2),
                ("other?new".to_owned(), 1),
                (NO_TYPE.to_owned(), 1),
            ])
        );
        assert_eq!(tally.not_json, 2);
        assert_eq!(tally.unparsed, 6);
    }

    #[test]
    fn caps_the_distinct_types_and_their_length() {
        let mut log = String::new();
        for n in 0..MAX_UNKNOWN_TYPES + 5 {
            log.push_str(&format!("{{\"type\":\"t{n}\"}}\n"));
        }
        log.push_str(&format!(
            "{{\"type\":\"t0\"}}\n{{\"type\":\"{}\"}}\n",
            "x".repeat(500)
        ));
        let tally = tally(log.as_bytes());
        assert_eq!(tally.unknown.len(), MAX_UNKNOWN_TYPES + 1);
        assert_eq!(tally.unknown["t0"], 2);
        assert_eq!(tally.unknown[OTHER_TYPES], 6);
        assert!(
            tally
                .unknown
                .keys()
                .all(|name| name.len() <= MAX_TYPE_CHARS)
        );
    }
}
