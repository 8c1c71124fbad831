//! The host's side of a conversation turn (an ACP agent): the driver's
//! opening lines written before the start, each reply it gives while reading
//! appended to the turn's `stdin.jsonl` (which the supervisor forwards to the
//! CLI), `close-stdin` once the turn's answer has arrived, and the driver's
//! graceful stop lines when the turn is cancelled.
//!
//! A host that restarts mid-turn reads the log again from the start through
//! a fresh driver session. Drivers are deterministic, so the replies come
//! again in the same order: the ones already in `stdin.jsonl` (counted past
//! the opening and the stop lines) are skipped, and only the new ones are
//! appended. Nothing reaches the CLI twice and nothing is lost.
//!
//! In a turn that asks (approvals), the driver reports each permission
//! request instead of answering it. The decision arrives as a file in the
//! turn's folder (see [`answer`]); the turn's thread hands it to the driver
//! and writes the driver's answer, recording it first in `answered.jsonl`
//! with its lines. A restarted host gives the recorded answers to its fresh
//! driver session again when the log comes back to their requests, writes
//! a recorded line that never reached `stdin.jsonl`, and asks nothing twice.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead as _, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use anyhow::Context as _;
use cinch_driver_sdk::{self as sdk, Event, Fed, Outcome};
use cinch_runtime::{Driver, DriverFailure, DriverSession};
use serde::{Deserialize, Serialize};

use crate::reading::parse::TurnParser;
use crate::turn_dir::{ConversationLaunch, Launch, TurnDir, read_json_if_present, write_private};

/// How long a cancelled conversation has to end after its stop lines went,
/// before it is stopped as any turn (SIGTERM, then SIGKILL).
pub(crate) const STOP_WAIT: Duration = Duration::from_secs(3);

/// The driver's turn for a conversation launched as `launch`; `brief` is the
/// brief's text (empty once the prompt file is gone: by then the CLI has
/// exited and the opening is only counted).
pub(crate) fn driver_turn(
    launch: &Launch,
    conversation: &ConversationLaunch,
    brief: String,
) -> sdk::Turn {
    sdk::Turn {
        prompt_file: launch.prompt.display().to_string(),
        workdir: launch.workdir.display().to_string(),
        model: conversation.model.clone(),
        effort: conversation.effort.clone(),
        session_id: launch.resumed_session.clone(),
        brief,
        harness: launch.harness.clone(),
        permissions: sdk::PermissionPolicy {
            default_allow: true,
            deny_tools: conversation.deny_tools.clone(),
        },
        ask: conversation.ask,
        fork: conversation.fork,
    }
}

/// The host's decision on one permission request of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answer {
    /// The request's key, as the driver reported it.
    pub key: String,
    /// Whether the tool may run.
    pub allow: bool,
    /// A note for the agent, when the decision has one.
    pub message: Option<String>,
}

/// An answer written to the agent, as `answered.jsonl` records it.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Answered {
    answer: Answer,
    /// The driver's lines for it, as appended to `stdin.jsonl`.
    lines: Vec<String>,
}

/// Leaves `answer` for the turn in `turn` (its follower answers the agent,
/// once; a second answer to the same request changes nothing).
pub fn answer(turn: &TurnDir, answer: &Answer) -> anyhow::Result<()> {
    let path = turn.answer(&answer.key);
    if path.exists() {
        return Ok(());
    }
    write_private(&path, &serde_json::to_vec(answer)?)
}

/// Writes the driver's opening lines for `turn` to a new `stdin.jsonl`.
pub(crate) fn write_opening(
    driver: &Driver,
    turn: &sdk::Turn,
    dir: &TurnDir,
) -> anyhow::Result<()> {
    let mut session = driver.session_for(turn)?;
    let opening = session.opening()?;
    let mut text = String::new();
    for line in &opening {
        text.push_str(line);
        text.push('\n');
    }
    write_private(&dir.stdin_lines(), text.as_bytes())
}

/// A conversation's driver session, shared by the turn's reader (which feeds
/// it) and the turn's thread (which asks it for stop lines).
#[derive(Clone)]
pub struct Conversation {
    inner: Arc<Mutex<Inner>>,
}

struct Inner {
    session: DriverSession,
    turn: TurnDir,
    /// Replies the driver gives again that are already in `stdin.jsonl`.
    skip: usize,
    done: bool,
    stop_sent: bool,
    /// Permission requests reported and not answered yet.
    waiting: BTreeSet<String>,
    /// Answers written before this session began, by request key: given to
    /// the driver again, silently, when the log reaches their request.
    answered: BTreeMap<String, Answer>,
}

impl Conversation {
    /// A fresh session for the conversation turn `turn` launched as
    /// `launch`, positioned after what `stdin.jsonl` already holds.
    pub fn resume(
        driver: &Driver,
        turn: &TurnDir,
        launch: &Launch,
        conversation: &ConversationLaunch,
    ) -> anyhow::Result<Self> {
        let brief = std::fs::read_to_string(&launch.prompt).unwrap_or_default();
        let mut session = driver.session_for(&driver_turn(launch, conversation, brief))?;
        let opening = session.opening()?.len();
        let answered = read_answered(turn)?;
        let written = count_lines(&turn.stdin_lines())?;
        let stop_lines = read_count(&turn.stop_lines_sent());
        let answer_lines: usize = answered.iter().map(|answered| answered.lines.len()).sum();
        let skip = written
            .saturating_sub(opening)
            .saturating_sub(stop_lines)
            .saturating_sub(answer_lines);
        Ok(Self {
            inner: Arc::new(Mutex::new(Inner {
                session,
                turn: turn.clone(),
                skip,
                done: turn.close_stdin().exists(),
                stop_sent: turn.stop_lines_sent().exists(),
                waiting: BTreeSet::new(),
                answered: answered
                    .into_iter()
                    .map(|answered| (answered.answer.key.clone(), answered.answer))
                    .collect(),
            })),
        })
    }

    /// Answers the requests whose decision has arrived (see [`answer`]):
    /// records each answer with the driver's lines, then writes the lines.
    pub(crate) fn apply_answers(&self) -> anyhow::Result<()> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.waiting.is_empty() {
            return Ok(());
        }
        for key in inner.waiting.clone() {
            let Some(answer) = read_json_if_present::<Answer>(&inner.turn.answer(&key))? else {
                continue;
            };
            if answer.key != key {
                continue;
            }
            let lines = inner
                .session
                .decide(&key, answer.allow, answer.message.as_deref())?;
            let record = Answered { answer, lines };
            append_line(&inner.turn.answered(), &serde_json::to_string(&record)?)?;
            append_stdin(&inner.turn, &record.lines)?;
            inner.waiting.remove(&key);
        }
        if inner.waiting.is_empty() {
            let _ = std::fs::remove_file(inner.turn.awaiting_approval());
        }
        Ok(())
    }

    /// The reader's side: a parser that writes the replies as it reads.
    pub fn parser(&self) -> ConversationParser {
        ConversationParser(self.clone())
    }

    /// Sends the driver's graceful stop lines (`session/cancel`) once.
    /// Returns whether the conversation is still open (its answer has not
    /// arrived), so that the stop request must follow if it does not end.
    pub(crate) fn send_stop_lines(&self) -> anyhow::Result<bool> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        if inner.done {
            return Ok(false);
        }
        if inner.stop_sent {
            return Ok(true);
        }
        let lines = inner.session.stop()?;
        // The count first: a host restarted in between must not take these
        // for replies it has yet to give.
        write_private(
            &inner.turn.stop_lines_sent(),
            lines.len().to_string().as_bytes(),
        )?;
        append_stdin(&inner.turn, &lines)?;
        inner.stop_sent = true;
        Ok(true)
    }
}

/// The conversation's session as the log reader's parser.
pub struct ConversationParser(Conversation);

impl TurnParser for ConversationParser {
    /// Feeds the driver and writes its replies: what it returns holds none.
    fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
        let mut inner = self.0.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let mut fed = inner.session.feed(lines)?;
        for event in &mut fed.events {
            let Event::PermissionRequest(request) = event else {
                continue;
            };
            let key = request.key.clone();
            match inner.answered.remove(&key) {
                // Answered before a restart: the driver learns the answer
                // again; its lines went to the agent then.
                Some(answer) => {
                    inner
                        .session
                        .decide(&key, answer.allow, answer.message.as_deref())?;
                    *event = Event::Other("permission answered".into());
                }
                None => {
                    if inner.waiting.insert(key) && inner.waiting.len() == 1 {
                        if let Err(error) = write_private(&inner.turn.awaiting_approval(), b"") {
                            tracing::warn!(
                                "could not mark the turn as awaiting approval: {error:#}"
                            );
                        }
                        inner.turn.wake_supervisor();
                    }
                }
            }
        }
        let skipped = fed.replies.len().min(inner.skip);
        inner.skip -= skipped;
        if let Err(error) = append_stdin(&inner.turn, &fed.replies[skipped..]) {
            tracing::warn!("could not write the driver's replies to the CLI: {error:#}");
        }
        if fed.done && !inner.done {
            inner.done = true;
            ask_to_end(&inner.turn);
        }
        Ok(Fed {
            replies: Vec::new(),
            ..fed
        })
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        let mut inner = self.0.inner.lock().unwrap_or_else(PoisonError::into_inner);
        inner.session.finish(exit_code, stderr_tail)
    }
}

/// Asks the turn's supervisor to end its CLI, whose answer is in: it closes
/// the CLI's stdin, when it holds it, and ends the CLI a little later.
pub(super) fn ask_to_end(turn: &TurnDir) {
    match write_private(&turn.close_stdin(), b"") {
        Ok(()) => turn.wake_supervisor(),
        Err(error) => tracing::warn!("could not ask the supervisor to end the CLI: {error:#}"),
    }
}

/// Appends `lines` to the turn's stdin lines, each in one write
/// (O_APPEND), so the supervisor never forwards half a line and a count of
/// lines is exact; then wakes the supervisor to forward them.
fn append_stdin(turn: &TurnDir, lines: &[String]) -> anyhow::Result<()> {
    if lines.is_empty() {
        return Ok(());
    }
    let path = turn.stdin_lines();
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(&path)
        .with_context(|| format!("opening {}", path.display()))?;
    for line in lines {
        // A driver's line is one JSON message: a newline inside would split it.
        let line = line.replace('\n', " ");
        file.write_all(format!("{line}\n").as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    turn.wake_supervisor();
    Ok(())
}

/// Appends one line to `path` in one write (O_APPEND), synced: the record
/// of an answer must be on disk before its lines go to the agent.
fn append_line(path: &Path, line: &str) -> anyhow::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))?;
    file.write_all(format!("{line}\n").as_bytes())
        .and_then(|()| file.sync_data())
        .with_context(|| format!("writing {}", path.display()))
}

/// The answers recorded in the turn's `answered.jsonl`; the lines of one
/// recorded but cut off before they reached `stdin.jsonl` are written now.
fn read_answered(turn: &TurnDir) -> anyhow::Result<Vec<Answered>> {
    let text = match std::fs::read_to_string(turn.answered()) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).context("reading answered.jsonl"),
    };
    let answered: Vec<Answered> = text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect();
    let written = std::fs::read_to_string(turn.stdin_lines()).unwrap_or_default();
    let written: BTreeSet<&str> = written.lines().collect();
    for record in &answered {
        let missing: Vec<String> = record
            .lines
            .iter()
            .filter(|line| !written.contains(line.replace('\n', " ").as_str()))
            .cloned()
            .collect();
        append_stdin(turn, &missing)?;
    }
    Ok(answered)
}

fn count_lines(path: &Path) -> anyhow::Result<usize> {
    match std::fs::File::open(path) {
        Ok(file) => Ok(std::io::BufReader::new(file).split(b'\n').count()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(0),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

fn read_count(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(0)
}
