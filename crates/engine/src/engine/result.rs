//! How a turn ended: its status, the detail that explains it, and the
//! result text in the spec's format.

use serde::{Deserialize, Serialize};

use crate::checkpoint::DiffStat;

/// The result text is cut to this size; the final message gives way first.
pub(crate) const RESULT_MAX_BYTES: usize = 24 << 10;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The CLI exited 0 and its turn did not end in error.
    Completed,
    /// The CLI exited otherwise, or its turn ended in error.
    Failed,
    /// The timeout passed and the harness was stopped.
    TimedOut,
    /// The turn was cancelled.
    Cancelled,
    /// The harness's supervisor vanished, or its result could not be read.
    Interrupted,
}

impl Status {
    /// The status as it is written: `completed`, `timed_out`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
        }
    }
}

/// A file the turn changed, as its checkpoints' diff lists it.
pub use crate::checkpoint::ChangedFile;

/// Where a turn's cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The harness reported it (Claude Code's `total_cost_usd`: the CLI's
    /// own estimate, not a bill).
    Reported,
    /// cinch estimated it from the token counts and its price table.
    Estimated,
}

/// A turn's token counts and cost, as far as its harness reports them:
/// this turn's own share, also for a harness that reports a running total
/// for its whole session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnUsage {
    /// Prompt tokens, cached ones included.
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote.
    pub output_tokens: Option<u64>,
    /// Prompt tokens read from the provider's cache.
    pub cached_input_tokens: Option<u64>,
    /// What the turn cost, in US dollars, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where the cost comes from; absent with the cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_source: Option<CostSource>,
}

/// A turn's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnResult {
    /// The turn's id.
    pub turn: String,
    /// How it ended.
    pub status: Status,
    /// The driver's name.
    pub harness: String,
    /// The repository.
    pub repository: String,
    /// The harness session, to resume.
    pub session_id: Option<String>,
    /// From start to end.
    pub duration_ms: u64,
    /// The CLI's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// What the turn changed: at most 30 files listed, all counted.
    #[serde(flatten)]
    pub changes: DiffStat,
    /// What explains the status, when something does.
    pub detail: Option<String>,
    /// The harness's final message (redacted).
    pub final_message: Option<String>,
    /// The commit before the turn.
    pub start_checkpoint: Option<String>,
    /// The commit after the turn.
    pub end_checkpoint: Option<String>,
    /// The raw harness log.
    pub log_path: String,
    /// The whole result as text, in the spec's format.
    pub result_text: String,
    /// The model the turn ran on: as the harness reported it, else as asked.
    #[serde(default)]
    pub model: Option<String>,
    /// Tokens and cost; none when the harness reported no usage.
    #[serde(default)]
    pub usage: Option<TurnUsage>,
    /// The CLI's version, as its version command told it when the turn
    /// started; none when it did not say.
    #[serde(default)]
    pub cli_version: Option<String>,
    /// The CLI versions its driver was tested with (a semver range); none
    /// when it says none.
    #[serde(default)]
    pub cli_tested: Option<String>,
    /// Whether `cli_version` lies in `cli_tested`: a turn on an untested
    /// CLI runs, and says so here.
    #[serde(default)]
    pub cli_drift: Option<crate::tools::CliDrift>,
    /// Lines of valid JSON of a type the driver does not know, counted by
    /// type (see [`crate::reading::reader::type_name`]): not failures, but the sign
    /// that the CLI's output has changed.
    #[serde(default)]
    pub unknown_events: crate::reading::reader::UnknownEvents,
    /// Lines of the output that were not JSON.
    #[serde(default)]
    pub not_json_lines: u64,
    /// The driver component the turn ran on; none when unknown (a turn of
    /// an older cinch).
    #[serde(default)]
    pub driver: Option<crate::turn_dir::DriverUsed>,
}

impl TurnResult {
    /// An `interrupted` turn whose result could not be read and of which
    /// nothing else is known: its id and where its log is.
    pub(crate) fn unreadable(turn: String, log_path: String) -> Self {
        Self::interrupted(turn, log_path, UNREADABLE_DETAIL)
    }

    /// An `interrupted` turn of which nothing is known but its id, where its
    /// log is, and `detail`: why.
    pub fn interrupted(turn: String, log_path: String, detail: &str) -> Self {
        Self {
            turn,
            status: Status::Interrupted,
            harness: String::new(),
            repository: String::new(),
            session_id: None,
            duration_ms: 0,
            exit_code: None,
            changes: DiffStat::default(),
            detail: Some(detail.to_owned()),
            final_message: None,
            start_checkpoint: None,
            end_checkpoint: None,
            log_path,
            result_text: detail.to_owned(),
            model: None,
            usage: None,
            cli_version: None,
            cli_tested: None,
            cli_drift: None,
            // The log was not read to its end: nothing is counted.
            unknown_events: Default::default(),
            not_json_lines: 0,
            driver: None,
        }
    }
}

/// The detail text of a timeout of `timeout_ms`.
pub(crate) fn timed_out_detail(timeout_ms: u64) -> String {
    format!(
        "Stopped after {}. Resume the session to continue.",
        minutes_or_seconds(timeout_ms)
    )
}

/// The detail text of a turn the watchdog stopped, after `idle_limit_ms`
/// without output.
pub(crate) fn no_output_detail(idle_limit_ms: u64) -> String {
    format!(
        "No output for {}; stopped.",
        minutes_or_seconds(idle_limit_ms)
    )
}

/// `ms` in whole minutes, or in seconds when it is not whole minutes (a
/// limit tests set in seconds, such as `[serve] watchdog_seconds`).
pub fn minutes_or_seconds(ms: u64) -> String {
    match ms {
        60_000 => "1 minute".to_owned(),
        ms if ms % 60_000 == 0 => format!("{} minutes", ms / 60_000),
        1_000 => "1 second".to_owned(),
        ms => format!("{} seconds", ms.div_ceil(1000)),
    }
}

/// The detail text of a cancel.
pub(crate) const CANCELLED_DETAIL: &str = "Stopped: the turn was cancelled.";

/// The detail text of a turn whose supervisor is gone.
pub(crate) const GONE_DETAIL: &str = "The harness's state is gone: the machine restarted or its supervisor was killed. Resume the session to continue.";

/// The detail text of a turn whose result could not be read.
pub(crate) const UNREADABLE_DETAIL: &str = "The harness exited, and its result could not be read.";

/// The detail text of a turn whose result could not be saved: cinch's home
/// is out of room.
pub(crate) const DISK_FULL_DETAIL: &str = "The harness exited, but cinch could not save its result: no space left on device in cinch's home. Free some space, then send a message to carry on.";

/// The detail text of a turn whose result could not be read or saved
/// because of `error`: a full disk is said plainly, with what to do; other
/// causes (which name the server's files) stay in the server's log.
pub(crate) fn unreadable_detail(error: &anyhow::Error) -> &'static str {
    if crate::disk::is_full(error) {
        DISK_FULL_DETAIL
    } else {
        UNREADABLE_DETAIL
    }
}

/// The detail text of a turn whose CLI did not stop.
pub(crate) fn not_stopped_detail(log: &str) -> String {
    format!("The harness did not stop and may still be running; its log is {log}.")
}

/// `ms` as people read a duration: `850ms`, `42s`, `3m 07s`, `1h 02m`.
pub fn human_duration(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0 => format!("{ms}ms"),
        1..=59 => format!("{seconds}s"),
        60..=3599 => format!("{}m {:02}s", seconds / 60, seconds % 60),
        _ => format!("{}h {:02}m", seconds / 3600, seconds / 60 % 60),
    }
}

/// The parts of a result text.
pub(crate) struct ResultText<'a> {
    /// The status.
    pub status: Status,
    /// The harness as people know it.
    pub harness: &'a str,
    /// The repository.
    pub repository: &'a str,
    /// The session, when there is one.
    pub session_id: Option<&'a str>,
    /// The duration.
    pub duration_ms: u64,
    /// The diffstat lines.
    pub diffstat: &'a str,
    /// The detail.
    pub detail: Option<&'a str>,
    /// The final message.
    pub final_message: Option<&'a str>,
    /// The log's path.
    pub log: &'a str,
}

impl ResultText<'_> {
    /// The text, at most `max_bytes` long: the final message gives way from
    /// its start (where least is lost: questions and summaries come last).
    pub(crate) fn render(&self, max_bytes: usize) -> String {
        let header = format!(
            "{} · {} · {} · session {} · {}\n{}\n{}",
            self.status.as_str(),
            self.harness,
            self.repository,
            self.session_id.unwrap_or("none"),
            human_duration(self.duration_ms),
            self.diffstat.trim_end(),
            self.detail
                .map(|detail| format!("{detail}\n"))
                .unwrap_or_default(),
        );
        let footer = format!("\n\nlog: {}", self.log);
        let message = match self
            .final_message
            .filter(|message| !message.trim().is_empty())
        {
            Some(message) => message.trim_end(),
            None => "(no final message)",
        };
        let room = max_bytes.saturating_sub(header.len() + footer.len() + 1);
        let body = if message.len() <= room {
            message.to_owned()
        } else {
            let marker_room = 64;
            let keep = room.saturating_sub(marker_room);
            let mut cut = message.len() - keep;
            while !message.is_char_boundary(cut) {
                cut += 1;
            }
            format!("[… {cut} bytes cut from the start]\n{}", &message[cut..])
        };
        format!("{header}\n{body}{footer}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdogs_detail_counts_whole_minutes_as_minutes() {
        assert_eq!(
            no_output_detail(10 * 60_000),
            "No output for 10 minutes; stopped."
        );
        assert_eq!(no_output_detail(60_000), "No output for 1 minute; stopped.");
        assert_eq!(no_output_detail(3_000), "No output for 3 seconds; stopped.");
    }

    fn text<'a>(message: Option<&'a str>, detail: Option<&'a str>) -> ResultText<'a> {
        ResultText {
            status: Status::Completed,
            harness: "Claude Code",
            repository: "repo",
            session_id: Some("s-1"),
            duration_ms: 65_000,
            diffstat: "1 file changed, +1 −0\nout.txt (+1 −0)",
            detail,
            final_message: message,
            log: "runs/r/t.harness.jsonl",
        }
    }

    #[test]
    fn renders_the_spec_format() {
        assert_eq!(
            text(Some("Done: wrote out.txt."), None).render(RESULT_MAX_BYTES),
            "completed · Claude Code · repo · session s-1 · 1m 05s\n1 file changed, +1 −0\nout.txt (+1 −0)\n\nDone: wrote out.txt.\n\nlog: runs/r/t.harness.jsonl"
        );
        let rendered =
            text(None, Some("Stopped: the turn was cancelled.")).render(RESULT_MAX_BYTES);
        assert!(rendered.contains(
            "out.txt (+1 −0)\nStopped: the turn was cancelled.\n\n(no final message)\n\nlog:"
        ));
    }

    #[test]
    fn a_long_final_message_gives_way_from_its_start() {
        let message = format!("{}THE END", "é".repeat(20_000));
        let rendered = text(Some(&message), None).render(2_000);
        assert!(rendered.len() <= 2_000, "{}", rendered.len());
        assert!(rendered.contains("bytes cut from the start]\n"));
        assert!(rendered.ends_with("THE END\n\nlog: runs/r/t.harness.jsonl"));
        assert!(rendered.starts_with("completed · Claude Code"));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human_duration(850), "850ms");
        assert_eq!(human_duration(42_000), "42s");
        assert_eq!(human_duration(187_000), "3m 07s");
        assert_eq!(human_duration(3_720_000), "1h 02m");
    }
}
