//! Seeing a turn through on its thread: watching the supervisor, then
//! reading the turn's end into its result, with secrets hidden.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::conversation::{self, Conversation};
use super::events::{EventLog, TurnEventKind};
use super::follow::Follower;
use super::result::{self, ResultText, Status, TurnResult};
use super::version::VersionProbe;
use super::watch::Followed;
use super::{FILES_LISTED, checkpoint_ref, is_plain_session_id, spans, usage};
use crate::checkpoint;
use crate::home::Home;
use crate::redact::Redactor;
use crate::sandbox;
use crate::turn_dir::{
    self, ExitRecord, FileLock, FollowedRun, Launch, StopReason, TurnDir, now_ms, read_json,
    read_json_if_present, worktrees, write_json, write_private,
};

/// How much of the CLI's stderr the driver and the result see.
const STDERR_TAIL_BYTES: u64 = 8 << 10;

/// Everything the turn's thread needs to see it through.
pub(super) struct Finisher {
    pub(super) home: Home,
    pub(super) turn: TurnDir,
    pub(super) launch: Launch,
    /// The CLI's version while its command still runs (a turn this engine
    /// started); the launch record has it once known.
    pub(super) version: Option<VersionProbe>,
    pub(super) display_name: String,
    pub(super) program: String,
    pub(super) redactor: Redactor,
    pub(super) events: EventLog,
    /// The driver session of a conversation turn (an ACP agent).
    pub(super) conversation: Option<Conversation>,
    /// The turn's span (see [`super::spans`]), entered while this runs.
    pub(super) span: tracing::Span,
    /// Keeps prunes off the turn's run until this is dropped, with the
    /// result written.
    pub(super) _followed_run: FollowedRun,
}

/// How the supervisor's watch ended.
pub(super) enum Ending {
    Exited(ExitRecord),
    SupervisorGone,
}

impl Finisher {
    pub(super) fn run(mut self, followed: Followed, cancel: &AtomicBool) -> TurnResult {
        let span = self.span.clone();
        let _in_turn = span.enter();
        let ending = self.watch(&followed, cancel);
        if let Some(version) = self.version.take() {
            self.launch.cli_version = version.version();
        }
        let result = ending
            .and_then(|ending| self.finish(followed.into_follower(), ending))
            .unwrap_or_else(|error| {
                let detail = result::unreadable_detail(&error);
                let error = self.redactor.redact(format!("{error:#}"));
                tracing::error!(turn = %self.launch.turn, "could not read the turn's result: {error}");
                let result =
                    unreadable_result(&self.turn, &self.launch, &self.display_name, detail);
                if let Err(error) = write_json(&self.turn.result(), &result) {
                    tracing::warn!(turn = %self.launch.turn, "could not write the result either: {error:#}");
                }
                self.hide_secrets();
                result
            });
        // A result not written leaves the turn to be finished by the next
        // start in its working tree, which must find it.
        if self.turn.result().exists() {
            worktrees::forget(&self.home, &self.launch.workdir, &self.launch.turn);
        }
        spans::ended(&span, &result);
        self.events.publish(TurnEventKind::Ended {
            status: result.status,
        });
        self.events.close();
        result
    }

    /// Masks the turn's secrets in its raw log and its stderr, which the CLI
    /// wrote as they came, and forgets them: nothing of the turn holds one
    /// once it has ended.
    fn hide_secrets(&self) {
        for path in [self.turn.log(), &self.turn.stderr()] {
            if let Err(error) = turn_dir::redact_file(path, &self.redactor) {
                tracing::warn!(
                    "could not mask the secrets in {}: {error:#}",
                    path.display()
                );
                return;
            }
        }
        turn_dir::forget_secrets(&self.home, &self.launch.turn);
    }

    /// Follows the log until the CLI has exited or its supervisor is gone.
    /// The engine's watcher reads the log as it grows; this thread wakes
    /// when the supervisor records the exit or lets go of its lock, when the
    /// turn is cancelled, and now and then in case an event was lost.
    fn watch(&self, followed: &Followed, cancel: &AtomicBool) -> anyhow::Result<Ending> {
        let supervisor = SupervisorProbe::open(&self.turn.supervisor_lock());
        // When the stop lines of a cancelled conversation went.
        let mut stop_lines_sent: Option<std::time::Instant> = None;
        loop {
            followed.pump()?;
            if let Some(conversation) = &self.conversation
                && let Err(error) = conversation.apply_answers()
            {
                tracing::warn!(turn = %self.launch.turn, "could not answer the agent's permission request: {error:#}");
            }
            if let Ok(Some(record)) = read_json_if_present::<ExitRecord>(&self.turn.exit()) {
                return Ok(Ending::Exited(record));
            }
            let cancelled = cancel.load(Ordering::SeqCst) || self.turn.cancel_request().exists();
            if cancelled && !self.turn.stop().exists() {
                match &self.conversation {
                    // First the agent is asked to cancel; if its turn does not
                    // end, it is stopped as any other.
                    Some(conversation) => match stop_lines_sent {
                        None => {
                            if !self.turn.cancel_request().exists() {
                                write_private(&self.turn.cancel_request(), b"")?;
                            }
                            let open = conversation.send_stop_lines().unwrap_or_else(|error| {
                                tracing::warn!(turn = %self.launch.turn, "the driver gave no stop lines: {error:#}");
                                true
                            });
                            let now = std::time::Instant::now();
                            stop_lines_sent = Some(if open {
                                now
                            } else {
                                // Its answer is in: the CLI is on its way out.
                                now.checked_sub(conversation::STOP_WAIT).unwrap_or(now)
                            });
                        }
                        Some(at) if at.elapsed() >= conversation::STOP_WAIT => {
                            self.turn.request_stop(StopReason::Cancelled)?;
                        }
                        Some(_) => {}
                    },
                    None => self.turn.request_stop(StopReason::Cancelled)?,
                }
            }
            if !supervisor.is_alive() {
                // The supervisor writes its exit record before it lets go of the lock.
                return Ok(
                    match read_json_if_present::<ExitRecord>(&self.turn.exit()) {
                        Ok(Some(record)) => Ending::Exited(record),
                        Ok(None) | Err(_) => Ending::SupervisorGone,
                    },
                );
            }
            // A cancelled conversation is stopped when its agent's time to
            // answer the cancel is up, not at the watcher's next backstop.
            let stop_due = stop_lines_sent
                .filter(|_| !self.turn.stop().exists())
                .map(|at| at + conversation::STOP_WAIT);
            followed.wait(stop_due);
        }
    }

    /// Writes the result, unless another process already has.
    fn finish(&self, follower: Follower, ending: Ending) -> anyhow::Result<TurnResult> {
        let _lock = loop {
            if let Ok(Some(existing)) = read_json_if_present::<TurnResult>(&self.turn.result()) {
                return Ok(existing);
            }
            match FileLock::try_take(&self.turn.finish_lock())? {
                Some(lock) => break lock,
                None => std::thread::sleep(Duration::from_millis(50)),
            }
        };
        if let Ok(Some(existing)) = read_json_if_present::<TurnResult>(&self.turn.result()) {
            return Ok(existing);
        }
        let launch = &self.launch;
        let stderr_tail = read_tail(&self.turn.stderr(), STDERR_TAIL_BYTES);
        let (exit_code, ended_at_ms, record) = match &ending {
            Ending::Exited(record) => (record.code, record.ended_at_ms, Some(record)),
            Ending::SupervisorGone => {
                kill_leftovers(&self.turn);
                (None, now_ms(), None)
            }
        };
        let finished = follower.finish(exit_code, &stderr_tail)?;
        if finished.failure.is_some() {
            crate::metrics::driver_failed(&launch.harness);
        }
        let stop = self
            .turn
            .stop_reason()
            // A conversation asked to cancel may end by itself, with no stop.
            .or_else(|| {
                (launch.conversation.is_some() && self.turn.cancel_request().exists())
                    .then_some(StopReason::Cancelled)
            });
        // A conversation whose answer arrived was ended by the host: its
        // outcome, not its exit status, says how it went.
        let answered = launch.conversation.is_some() && self.turn.close_stdin().exists();

        let end_span = tracing::info_span!(
            target: crate::telemetry::TARGET,
            "cinch.checkpoint",
            otel.name = "checkpoint end",
            cinch.checkpoint = "end",
        );
        let end = end_span.in_scope(|| {
            checkpoint::Repo::open(&launch.workdir).and_then(|repo| {
                let end = repo.take(
                    &checkpoint_ref(&launch.run, &launch.turn, "end"),
                    "cinch: end of turn",
                )?;
                let stat = launch
                    .start_checkpoint
                    .as_deref()
                    .and_then(|start| repo.diffstat(start, &end.sha, FILES_LISTED).ok());
                Ok((end.sha, stat))
            })
        });
        let (end_sha, stat) = match end {
            Ok((sha, stat)) => (Some(sha), stat),
            Err(error) => {
                tracing::warn!("could not take the end checkpoint: {error:#}");
                (None, None)
            }
        };

        let outcome = &finished.outcome;
        let (status, detail) = match (&ending, stop, record) {
            (Ending::SupervisorGone, _, _) => {
                (Status::Interrupted, Some(result::GONE_DETAIL.to_owned()))
            }
            (_, _, Some(record)) if !record.survivors.is_empty() => (
                Status::Interrupted,
                Some(result::not_stopped_detail(
                    &launch.log.display().to_string(),
                )),
            ),
            (_, Some(StopReason::TimedOut), _) => (
                Status::TimedOut,
                Some(result::timed_out_detail(launch.timeout_ms)),
            ),
            (_, Some(StopReason::NoOutput), _) => (
                Status::TimedOut,
                Some(result::no_output_detail(
                    launch.idle_limit_ms.unwrap_or_default(),
                )),
            ),
            (_, Some(StopReason::Cancelled), _) => {
                (Status::Cancelled, Some(result::CANCELLED_DETAIL.to_owned()))
            }
            (_, None, Some(record)) => match &record.spawn_error {
                Some(error) => (Status::Failed, Some(error.clone())),
                None if (record.code == Some(0) || answered) && !outcome.is_error => {
                    (Status::Completed, None)
                }
                None => (
                    Status::Failed,
                    Some(self.failure_detail(&finished, record, &stderr_tail)),
                ),
            },
            (Ending::Exited(_), None, None) => unreachable!("an exit always has its record"),
        };
        let detail = detail.map(|detail| self.redactor.redact(&detail));
        let final_message = outcome
            .final_message
            .as_ref()
            .map(|message| self.redactor.redact(message));
        let session_id = finished.session_id.clone();
        let model = finished.model.clone().or_else(|| launch.model.clone());
        let usage = usage::of_turn(
            &self.home,
            &launch.harness,
            model.as_deref(),
            launch.resumed_session.as_deref(),
            session_id.as_deref(),
            outcome.usage,
        );
        let diffstat_text = stat
            .as_ref()
            .map(checkpoint::render_diffstat)
            .unwrap_or_else(|| "no files changed".into());
        let duration_ms = ended_at_ms.saturating_sub(launch.started_at_ms);
        let log_path = launch.log.display().to_string();
        let result_text = ResultText {
            status,
            harness: &self.display_name,
            repository: &launch.repository,
            session_id: session_id.as_deref(),
            duration_ms,
            diffstat: &diffstat_text,
            detail: detail.as_deref(),
            final_message: final_message.as_deref(),
            log: &log_path,
        }
        .render(result::RESULT_MAX_BYTES);
        let result = TurnResult {
            turn: launch.turn.clone(),
            status,
            harness: launch.harness.clone(),
            repository: launch.repository.clone(),
            session_id: session_id.clone(),
            duration_ms,
            exit_code,
            changes: stat.clone().unwrap_or_default(),
            detail,
            final_message,
            start_checkpoint: launch.start_checkpoint.clone(),
            end_checkpoint: end_sha,
            log_path,
            result_text,
            model,
            usage,
            cli_version: launch.cli_version.clone(),
            cli_tested: launch.cli_tested.clone(),
            cli_drift: crate::tools::drift(
                launch.cli_tested.as_deref(),
                launch.cli_version.as_deref(),
            ),
            unknown_events: finished.tally.unknown.clone(),
            not_json_lines: finished.tally.not_json,
            driver: launch.driver.clone(),
        };
        if !result.unknown_events.is_empty() {
            tracing::info!(
                turn = %launch.turn,
                harness = %launch.harness,
                cli_version = launch.cli_version.as_deref().unwrap_or("unknown"),
                unknown = ?result.unknown_events,
                "the harness wrote events its driver does not know"
            );
        }
        write_json(&self.turn.result(), &result)?;
        self.hide_secrets();
        // The harness's output names the session: only a plain file name
        // may become a path under cinch's home.
        if let Some(session) = session_id.as_deref().filter(|id| is_plain_session_id(id)) {
            let record = self.home.root().join("sessions").join(&launch.harness);
            crate::home::create_private_dir(&record)?;
            write_private(
                &record.join(session),
                launch.workdir.display().to_string().as_bytes(),
            )?;
        }
        if let Err(error) =
            turn_dir::prune_runs_unless_pruning(&self.home, launch.agent.as_deref(), &launch.run)
        {
            tracing::warn!("could not prune old runs: {error:#}");
        }
        Ok(result)
    }

    /// Why a CLI that exited failed; when it ran sandboxed and its stderr
    /// tells of a refusal, saying so, so that a denial is no mystery.
    fn failure_detail(
        &self,
        finished: &crate::reading::reader::Finished,
        record: &ExitRecord,
        stderr: &str,
    ) -> String {
        let detail = self.failure_reason(finished, record, stderr);
        if self.launch.sandbox.is_some() && sandbox::mentions_denial(stderr) {
            format!(
                "{detail} (it ran in cinch's sandbox, which refused it something: its stderr tail says what)"
            )
        } else {
            detail
        }
    }

    /// Why a CLI that exited failed, in the spec's order of preference.
    fn failure_reason(
        &self,
        finished: &crate::reading::reader::Finished,
        record: &ExitRecord,
        stderr: &str,
    ) -> String {
        use cinch_driver_sdk::text::{first_line, last_lines};
        if let Some(failure) = &finished.failure {
            return format!("{failure}; the raw log is kept");
        }
        if finished.tally.events == 0 && finished.tally.bytes > 0 {
            return format!(
                "The {} driver could not read any of the output of {} {}.",
                self.launch.harness,
                self.program,
                self.launch
                    .cli_version
                    .as_deref()
                    .unwrap_or("(version unknown)")
            );
        }
        if finished.tally.events == 0 {
            let tail = last_lines(stderr, 5);
            if !tail.is_empty() {
                return tail;
            }
        }
        if let Some(line) = finished.outcome.error.as_deref().and_then(first_line) {
            return line.to_owned();
        }
        if let Some(line) = first_line(&last_lines(stderr, 1)) {
            return line.to_owned();
        }
        match (record.code, record.signal) {
            (Some(code), _) => format!("The harness exited with code {code}."),
            (None, Some(signal)) => format!("The harness was killed by signal {signal}."),
            (None, None) => "The harness ended without an exit code.".to_owned(),
        }
    }
}

/// After a supervisor vanished, kills whatever of its CLI is left, by the
/// process group it recorded.
pub(super) fn kill_leftovers(turn: &TurnDir) {
    let Some(group) = std::fs::read_to_string(turn.pid())
        .ok()
        .and_then(|pid| pid.trim().parse::<i32>().ok())
    else {
        return;
    };
    if group > 1 {
        // SAFETY: signalling a process group by id.
        unsafe { libc::kill(-group, libc::SIGKILL) };
    }
}

/// The last `max` bytes of a file, as text.
pub(super) fn read_tail(path: &Path, max: u64) -> String {
    use std::io::{Read as _, Seek as _, SeekFrom};
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let length = file.metadata().map(|meta| meta.len()).unwrap_or(0);
    let _ = file.seek(SeekFrom::Start(length.saturating_sub(max)));
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The result of a turn whose result could not be read: `interrupted`,
/// saying why (`detail`), with what its files still tell (its session, its
/// exit code).
pub(super) fn unreadable_result(
    turn: &TurnDir,
    launch: &Launch,
    display_name: &str,
    detail: &str,
) -> TurnResult {
    let session_id = std::fs::read_to_string(turn.session())
        .ok()
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    let exit: Option<ExitRecord> = read_json(&turn.exit()).ok();
    let ended_at_ms = exit.as_ref().map_or_else(now_ms, |exit| exit.ended_at_ms);
    let duration_ms = ended_at_ms.saturating_sub(launch.started_at_ms);
    let log_path = launch.log.display().to_string();
    let result_text = ResultText {
        status: Status::Interrupted,
        harness: display_name,
        repository: &launch.repository,
        session_id: session_id.as_deref(),
        duration_ms,
        diffstat: "no files changed",
        detail: Some(detail),
        final_message: None,
        log: &log_path,
    }
    .render(result::RESULT_MAX_BYTES);
    TurnResult {
        harness: launch.harness.clone(),
        repository: launch.repository.clone(),
        session_id,
        duration_ms,
        exit_code: exit.and_then(|exit| exit.code),
        start_checkpoint: launch.start_checkpoint.clone(),
        result_text,
        model: launch.model.clone(),
        cli_version: launch.cli_version.clone(),
        cli_tested: launch.cli_tested.clone(),
        cli_drift: crate::tools::drift(launch.cli_tested.as_deref(), launch.cli_version.as_deref()),
        driver: launch.driver.clone(),
        ..TurnResult::interrupted(launch.turn.clone(), log_path, detail)
    }
}

/// Tells whether a turn's supervisor still holds its lock, through a
/// descriptor opened once, read-only: asking opens and closes nothing, so it
/// raises no file-system event (the supervisor's own close of its lock, when
/// it exits or dies, is what wakes the turn).
struct SupervisorProbe {
    lock: Option<std::fs::File>,
}

impl SupervisorProbe {
    fn open(path: &Path) -> Self {
        Self {
            lock: std::fs::File::open(path).ok(),
        }
    }

    fn is_alive(&self) -> bool {
        use std::os::fd::AsRawFd as _;
        let Some(lock) = &self.lock else {
            return false;
        };
        let fd = lock.as_raw_fd();
        // SAFETY: flock on a descriptor we own. A shared lock is refused only
        // while someone holds the exclusive one; ours is let go at once.
        if unsafe { libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) } == 0 {
            // SAFETY: as above.
            unsafe { libc::flock(fd, libc::LOCK_UN) };
            return false;
        }
        true
    }
}
