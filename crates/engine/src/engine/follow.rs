//! Follows a turn's raw log as it grows, through the reader, publishing
//! progress lines and the session id the moment they are known, and what
//! the turn's egress proxy refused, as warnings.

use std::fs::{File, OpenOptions};
use std::io::Read as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::time::{Duration, Instant};

use super::events::{EventLog, TurnEventKind};
use crate::reading::parse::TurnParser;
use crate::reading::reader::{Finished, LogReader, Output};
use crate::redact::Redactor;
use crate::sandbox::egress::RefusalFeed;
use crate::turn_dir::{TurnDir, record_private};

/// Bytes read from the log per read.
const READ_CHUNK: usize = 256 << 10;

/// Reads one turn's log as it grows.
pub(super) struct Follower {
    reader: LogReader<Box<dyn TurnParser + Send>>,
    turn: TurnDir,
    log: Option<File>,
    events: EventLog,
    buffer: Vec<u8>,
    output: Vec<Output>,
    refusals: Option<Refusals>,
    /// The span of all of the driver's parsing, from the first read to the
    /// outcome; it is never entered (a read is too short a step for that
    /// to be cheap), and records the sums.
    parsing: tracing::Span,
    /// Bytes and reads parsed, and the time the driver took on them: kept
    /// only while the span is recorded.
    bytes: u64,
    reads: u64,
    busy: Duration,
}

/// What the turn's egress proxy refuses, as the user reads it.
pub(super) struct Refusals {
    /// The proxy's refusals file.
    pub feed: RefusalFeed,
    /// Masks secrets in a host name (a secret sent out as one).
    pub redactor: Redactor,
    /// The harness, the counter's label.
    pub harness: String,
}

impl Refusals {
    /// Warnings for the refusals added since the last call, each counted.
    fn lines(&mut self) -> Vec<TurnEventKind> {
        self.feed
            .next_refusals()
            .into_iter()
            .map(|refusal| {
                crate::metrics::egress_refused(&self.harness);
                TurnEventKind::Progress {
                    line: crate::reading::progress::cut(
                        self.redactor.redact(refusal.line()),
                        crate::reading::progress::MAX_CHARS,
                    ),
                }
            })
            .collect()
    }
}

impl Follower {
    /// A follower of `turn`'s log that publishes to `events`, its parsing
    /// recorded in `parsing`.
    pub(super) fn new(
        turn: TurnDir,
        reader: LogReader<Box<dyn TurnParser + Send>>,
        events: EventLog,
        refusals: Option<Refusals>,
        parsing: tracing::Span,
    ) -> Self {
        Self {
            reader,
            turn,
            log: None,
            events,
            buffer: vec![0; READ_CHUNK],
            output: Vec::new(),
            refusals,
            parsing,
            bytes: 0,
            reads: 0,
            busy: Duration::ZERO,
        }
    }

    /// Reads what the log has gained since the last call and publishes what
    /// it gave. Returns whether anything was read.
    ///
    /// A read shorter than the buffer is taken as the end for now: whatever
    /// is written after it raises a new change event, which pumps again.
    pub(super) fn pump(&mut self) -> anyhow::Result<bool> {
        // A refused request is read with the next output of the harness,
        // which tells of it (an error, a retry) soon after.
        if let Some(refusals) = self.refusals.as_mut() {
            self.events.publish_all(refusals.lines());
        }
        if self.log.is_none() {
            match open_log(self.turn.log()) {
                Ok(file) => self.log = Some(file),
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(false),
                Err(error) => return Err(error.into()),
            }
        }
        let mut any = false;
        loop {
            let log = self.log.as_mut().expect("opened above");
            let read = log.read(&mut self.buffer)?;
            if read == 0 {
                break;
            }
            any = true;
            self.parse(read);
            self.publish();
            if read < self.buffer.len() {
                break;
            }
        }
        Ok(any)
    }

    /// The CLI has exited: reads the log through and returns the outcome.
    pub(super) fn finish(
        mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> anyhow::Result<Finished> {
        while self.pump()? {}
        if let Some(refusals) = self.refusals.as_mut() {
            self.events.publish_all(refusals.lines());
        }
        let began = (!self.parsing.is_disabled()).then(Instant::now);
        let finished = self.reader.finish(exit_code, stderr_tail, &mut self.output);
        if let Some(began) = began {
            self.busy += began.elapsed();
            let integer = crate::telemetry::integer;
            self.parsing
                .record("cinch.parse.bytes", integer(self.bytes));
            self.parsing
                .record("cinch.parse.reads", integer(self.reads));
            let busy = integer(self.busy.as_nanos().try_into().unwrap_or(u64::MAX));
            self.parsing.record("cinch.parse.busy_ns", busy);
        }
        let (turn, events, output) = (self.turn, self.events, std::mem::take(&mut self.output));
        publish(&turn, &events, output);
        Ok(finished)
    }

    /// Feeds the driver the `read` bytes just read.
    fn parse(&mut self, read: usize) {
        if self.parsing.is_disabled() {
            self.reader.push(&self.buffer[..read], &mut self.output);
            return;
        }
        let began = Instant::now();
        self.reader.push(&self.buffer[..read], &mut self.output);
        self.busy += began.elapsed();
        self.bytes += read as u64;
        self.reads += 1;
    }

    fn publish(&mut self) {
        publish(&self.turn, &self.events, std::mem::take(&mut self.output));
    }
}

/// Opens a raw log for reading without touching its access time: the log
/// grows between reads, so each read would otherwise write the file's inode
/// (relatime updates an access time older than the last change). A file of
/// another owner cannot be opened so, and is opened plainly.
fn open_log(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    match options.clone().custom_flags(libc::O_NOATIME).open(path) {
        Err(error) if error.raw_os_error() == Some(libc::EPERM) => options.open(path),
        opened => opened,
    }
}

/// Publishes what one read gave together, so that listeners and
/// subscribers take it in one go.
fn publish(turn: &TurnDir, events: &EventLog, output: Vec<Output>) {
    let kinds: Vec<TurnEventKind> = output
        .into_iter()
        .map(|item| match item {
            Output::Progress(line) => TurnEventKind::Progress { line },
            Output::Session(session_id) => {
                // Recorded at once, so a turn that ends without a result still names its session.
                if let Err(error) = record_private(&turn.session(), session_id.as_bytes()) {
                    tracing::warn!("could not record the session id: {error:#}");
                }
                TurnEventKind::Session { session_id }
            }
            Output::Approval(request) => TurnEventKind::Approval { request },
        })
        .collect();
    events.publish_all(kinds);
}
