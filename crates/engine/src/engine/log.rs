//! Reading a kept harness log back: every event as a progress line, the
//! counts, and the raw JSONL as whole lines from the start, all redacted.

use std::io::Read as _;

use serde::{Deserialize, Serialize};

use crate::reading::parse::TurnParser;
use crate::reading::progress::ProgressRenderer;
use crate::reading::reader::{LogReader, Output};
use crate::redact::Redactor;
use crate::sandbox::egress::Refusal;

/// At most this many progress lines are returned.
pub(crate) const MAX_LINES: usize = 2000;

/// The raw JSONL returned is at most this many bytes, in whole lines.
pub(crate) const MAX_RAW_BYTES: usize = 256 << 10;

/// A kept log, as people read it: the API's `HarnessLog`. Its field
/// comments are the API document's descriptions, so they spell out
/// [`MAX_LINES`] and [`MAX_RAW_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(as = HarnessLog, description = "A harness log as the spec returns it."))]
pub struct LogView {
    /// The log's events as progress lines, at most 2000, redacted, each cut at 240 characters.
    pub lines: Vec<String>,
    /// Whether there were more lines.
    pub lines_truncated: bool,
    /// The raw JSONL, whole lines from the start within 256 KiB, redacted.
    pub raw: String,
    /// Whether the raw log goes on past `raw`.
    pub raw_truncated: bool,
    /// The whole log's size in bytes.
    pub bytes: u64,
    /// Events the driver read from it.
    pub events: usize,
    /// Lines that gave no event.
    pub unparsed: usize,
    /// The driver component the turn ran on (the log is read with the one in
    /// force now); null for a turn of an older cinch.
    #[serde(default)]
    pub driver: Option<crate::turn_dir::DriverUsed>,
}

/// Reads the log at `path` through `parser`.
pub fn read(
    path: &std::path::Path,
    parser: impl TurnParser,
    display_name: &str,
    redactor: &Redactor,
) -> std::io::Result<LogView> {
    let mut file = std::fs::File::open(path)?;
    let mut reader = LogReader::new(
        parser,
        ProgressRenderer::new(display_name, redactor.clone()),
    );
    let mut lines = Vec::new();
    let mut lines_truncated = false;
    let mut raw = Vec::new();
    let mut raw_truncated = false;
    let mut output = Vec::new();
    let mut chunk = vec![0; 256 << 10];
    loop {
        let read = file.read(&mut chunk)?;
        if read == 0 {
            break;
        }
        if !raw_truncated {
            let room = MAX_RAW_BYTES - raw.len();
            if read <= room {
                raw.extend_from_slice(&chunk[..read]);
            } else {
                raw.extend_from_slice(&chunk[..room]);
                raw_truncated = true;
            }
        }
        reader.push(&chunk[..read], &mut output);
        collect(&mut output, &mut lines, &mut lines_truncated);
    }
    let finished = reader.finish(Some(0), "", &mut output);
    collect(&mut output, &mut lines, &mut lines_truncated);
    if raw_truncated {
        // Whole lines only: drop the cut one.
        let end = raw
            .iter()
            .rposition(|byte| *byte == b'\n')
            .map_or(0, |at| at + 1);
        raw.truncate(end);
    }
    Ok(LogView {
        lines,
        lines_truncated,
        raw: redactor.redact(String::from_utf8_lossy(&raw)),
        raw_truncated,
        driver: None,
        bytes: finished.tally.bytes,
        events: finished.tally.events,
        unparsed: finished.tally.unparsed,
    })
}

/// Adds what the turn's egress proxy refused, as warnings after the
/// harness's own lines (the raw log does not say where they fell in it).
pub(crate) fn add_refusals(view: &mut LogView, refused: &[Refusal], redactor: &Redactor) {
    for refusal in refused {
        if view.lines.len() >= MAX_LINES {
            view.lines_truncated = true;
            return;
        }
        view.lines.push(crate::reading::progress::cut(
            redactor.redact(refusal.line()),
            crate::reading::progress::MAX_CHARS,
        ));
    }
}

fn collect(output: &mut Vec<Output>, lines: &mut Vec<String>, truncated: &mut bool) {
    for item in output.drain(..) {
        if let Output::Progress(line) = item {
            if lines.len() < MAX_LINES {
                lines.push(line);
            } else {
                *truncated = true;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reading::parse::TurnParser;
    use cinch_driver_sdk::{Event, Fed, Outcome};
    use cinch_runtime::DriverFailure;

    /// Every line is an assistant message of itself.
    struct Echo;

    impl TurnParser for Echo {
        fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
            Ok(Fed {
                events: lines
                    .iter()
                    .map(|line| Event::AssistantMessage(line.clone()))
                    .collect(),
                ..Fed::default()
            })
        }

        fn finish(&mut self, _: Option<i32>, _: &str) -> Result<Outcome, DriverFailure> {
            Ok(Outcome::default())
        }
    }

    #[test]
    fn caps_lines_and_raw_bytes_and_redacts_both() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        let line = format!("secret-value-42 {}\n", "x".repeat(200));
        std::fs::write(&path, line.repeat(3000)).unwrap();
        let redactor = Redactor::new(["secret-value-42".to_owned()]);
        let view = read(&path, Echo, "X", &redactor).unwrap();
        assert_eq!(view.lines.len(), MAX_LINES);
        assert!(view.lines_truncated);
        assert!(view.lines[0].starts_with("[redacted] xxx"));
        assert_eq!(view.bytes, (line.len() * 3000) as u64);
        assert!(view.raw_truncated);
        assert!(view.raw.ends_with('\n') && !view.raw.contains("secret-value-42"));
        assert_eq!(view.raw.lines().count(), MAX_RAW_BYTES / line.len());
        assert_eq!(view.events, 3000);
    }

    // The API's `HarnessLog` before it became `LogView`, kept to prove that
    // the document did not change but for the driver a turn records since.
    /// A harness log as the spec returns it.
    #[cfg(feature = "openapi")]
    #[derive(serde::Serialize, utoipa::ToSchema)]
    #[allow(dead_code)]
    struct HarnessLog {
        /// The log's events as progress lines, at most 2000, redacted, each cut at 240 characters.
        lines: Vec<String>,
        /// Whether there were more lines.
        lines_truncated: bool,
        /// The raw JSONL, whole lines from the start within 256 KiB, redacted.
        raw: String,
        /// Whether the raw log goes on past `raw`.
        raw_truncated: bool,
        /// The whole log's size in bytes.
        bytes: u64,
        /// Events the driver read from it.
        events: usize,
        /// Lines that gave no event.
        unparsed: usize,
        /// The driver component the turn ran on (the log is read with the one in
        /// force now); null for a turn of an older cinch.
        #[serde(default)]
        driver: Option<crate::turn_dir::DriverUsed>,
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn the_api_document_describes_it_as_its_harness_log_copy_did() {
        use utoipa::{PartialSchema as _, ToSchema as _};
        assert_eq!(LogView::name(), "HarnessLog");
        assert_eq!(
            serde_json::to_value(LogView::schema()).unwrap(),
            serde_json::to_value(HarnessLog::schema()).unwrap()
        );
        assert_eq!(MAX_LINES, 2000);
        assert_eq!(MAX_RAW_BYTES, 256 << 10);
    }
}
