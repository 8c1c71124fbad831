//! The session state machine's decisions, apart from the I/O that carries
//! them out (`lifecycle.rs`), so that every case can be tested alone.

use super::Wake;
use cinch_engine::engine::result::{Status, TurnResult};
use cinch_store::{CloseReason, SessionStatus};

/// What a session is, as far as deciding its next step goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Facts {
    /// Its status as stored.
    pub status: SessionStatus,
    /// Whether its workspace has been made.
    pub has_workspace: bool,
    /// Whether messages wait for a turn.
    pub has_queued: bool,
    /// What moved it.
    pub wake: Wake,
}

/// The session's next step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Step {
    /// Nothing: a turn runs (its end moves the session on), or it stays
    /// closed.
    Stay,
    /// Make its workspace first, then decide again.
    Boot,
    /// Nothing to run: it waits for a message.
    Idle,
    /// Run its queued messages as a turn, once it has a slot.
    Run,
}

/// The step `facts` call for. A closed session stays closed, its queue
/// kept, until a message wakes it; a session whose workspace is missing
/// boots before anything else, a closed one included once a message came.
pub(super) fn next_step(facts: Facts) -> Step {
    let stays_closed =
        facts.status == SessionStatus::Closed && (!facts.has_queued || facts.wake != Wake::Message);
    if facts.status == SessionStatus::Running || stays_closed {
        Step::Stay
    } else if !facts.has_workspace {
        Step::Boot
    } else if !facts.has_queued {
        Step::Idle
    } else {
        Step::Run
    }
}

/// Where an open session goes when its turn ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AfterTurn {
    /// Idle, ready for the next message.
    Idle,
    /// Idle, saying why the last turn went wrong; a message tries again.
    IdleAfter(CloseReason, String),
    /// Closed: going on could lose work.
    Close(CloseReason, String),
}

/// Where a session goes after a turn that ended with `outcome` (an error:
/// cinch lost track of the turn). A turn whose end checkpoint failed after
/// its start checkpoint was taken closes the session: the next turn would
/// start from a workspace nobody snapshotted.
pub(super) fn after_turn(outcome: Result<&TurnResult, &str>) -> AfterTurn {
    let result = match outcome {
        Ok(result) => result,
        Err(_) => return interrupted(),
    };
    if result.start_checkpoint.is_some() && result.end_checkpoint.is_none() {
        return AfterTurn::Close(
            CloseReason::SnapshotFailure,
            format!(
                "cinch could not snapshot the workspace after the turn. {}",
                result.detail.as_deref().unwrap_or_default()
            ),
        );
    }
    let what = match result.status {
        Status::Completed | Status::Cancelled => return AfterTurn::Idle,
        Status::Interrupted => return interrupted(),
        Status::Failed => "failed",
        Status::TimedOut => "timed out",
    };
    AfterTurn::IdleAfter(
        CloseReason::TurnFailure,
        format!(
            "The last turn {what}: {}. The transcript is kept; send a message to try again.",
            result
                .detail
                .as_deref()
                .and_then(cinch_engine::headline::pick)
                .as_deref()
                .unwrap_or("no detail")
        ),
    )
}

/// What a node that starts does with a session of its own that was booting
/// or running when it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Follow its turn again: the turn's supervisor may still run it, or
    /// its end is on disk.
    Reattach(String),
    /// Save it idle and move it on: a boot that was cut off starts again
    /// with the next step, and its queue runs.
    Settle,
}

/// The recovery of a session found `status` with `current_turn`.
pub(super) fn recovery(status: SessionStatus, current_turn: Option<&str>) -> Recovery {
    match (status, current_turn) {
        (SessionStatus::Running, Some(turn)) => Recovery::Reattach(turn.to_owned()),
        _ => Recovery::Settle,
    }
}

fn interrupted() -> AfterTurn {
    AfterTurn::IdleAfter(
        CloseReason::TurnInterrupted,
        "The last turn was interrupted (cinch or the turn's supervisor stopped). The transcript is kept; send a message to carry on."
            .to_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATUSES: [SessionStatus; 5] = [
        SessionStatus::Booting,
        SessionStatus::Running,
        SessionStatus::Waiting,
        SessionStatus::Idle,
        SessionStatus::Closed,
    ];

    fn step(status: SessionStatus, has_workspace: bool, has_queued: bool, wake: Wake) -> Step {
        next_step(Facts {
            status,
            has_workspace,
            has_queued,
            wake,
        })
    }

    #[test]
    fn a_restarted_node_follows_a_running_turn_again_and_settles_the_rest() {
        assert_eq!(
            recovery(SessionStatus::Running, Some("turn_1")),
            Recovery::Reattach("turn_1".to_owned())
        );
        for status in STATUSES {
            if status != SessionStatus::Running {
                assert_eq!(
                    recovery(status, Some("turn_1")),
                    Recovery::Settle,
                    "{status:?}"
                );
            }
            assert_eq!(recovery(status, None), Recovery::Settle, "{status:?}");
        }
    }

    #[test]
    fn a_running_session_is_left_to_its_turn_whatever_wakes_it() {
        for has_workspace in [false, true] {
            for has_queued in [false, true] {
                for wake in [Wake::Progress, Wake::Message] {
                    assert_eq!(
                        step(SessionStatus::Running, has_workspace, has_queued, wake),
                        Step::Stay
                    );
                }
            }
        }
    }

    #[test]
    fn a_closed_session_stays_closed_until_a_message_comes_with_a_queue() {
        for has_workspace in [false, true] {
            assert_eq!(
                step(SessionStatus::Closed, has_workspace, true, Wake::Progress),
                Step::Stay
            );
            assert_eq!(
                step(SessionStatus::Closed, has_workspace, false, Wake::Message),
                Step::Stay
            );
        }
        assert_eq!(
            step(SessionStatus::Closed, true, true, Wake::Message),
            Step::Run
        );
        assert_eq!(
            step(SessionStatus::Closed, false, true, Wake::Message),
            Step::Boot
        );
    }

    #[test]
    fn a_session_without_its_workspace_boots_first() {
        for status in [
            SessionStatus::Booting,
            SessionStatus::Waiting,
            SessionStatus::Idle,
        ] {
            for has_queued in [false, true] {
                for wake in [Wake::Progress, Wake::Message] {
                    assert_eq!(step(status, false, has_queued, wake), Step::Boot);
                }
            }
        }
    }

    #[test]
    fn a_booted_session_runs_its_queue_or_idles() {
        for status in STATUSES {
            if matches!(status, SessionStatus::Running | SessionStatus::Closed) {
                continue;
            }
            for wake in [Wake::Progress, Wake::Message] {
                assert_eq!(step(status, true, true, wake), Step::Run);
                assert_eq!(step(status, true, false, wake), Step::Idle);
            }
        }
    }

    fn ended(status: Status, start: bool, end: bool) -> TurnResult {
        TurnResult {
            turn: "t1".to_owned(),
            status,
            harness: "claude".to_owned(),
            repository: "repo".to_owned(),
            session_id: None,
            duration_ms: 1,
            exit_code: Some(2),
            changes: Default::default(),
            detail: Some("exit code 2".to_owned()),
            final_message: None,
            start_checkpoint: start.then(|| "a".repeat(40)),
            end_checkpoint: end.then(|| "b".repeat(40)),
            log_path: String::new(),
            result_text: String::new(),
            model: None,
            usage: None,
            cli_version: None,
            cli_tested: None,
            cli_drift: None,
            unknown_events: Default::default(),
            not_json_lines: 0,
            driver: None,
        }
    }

    #[test]
    fn a_turn_that_ends_well_or_is_cancelled_leaves_the_session_idle() {
        for status in [Status::Completed, Status::Cancelled] {
            assert_eq!(after_turn(Ok(&ended(status, true, true))), AfterTurn::Idle);
            assert_eq!(
                after_turn(Ok(&ended(status, false, false))),
                AfterTurn::Idle
            );
        }
    }

    #[test]
    fn a_failed_or_timed_out_turn_leaves_it_idle_saying_so() {
        let AfterTurn::IdleAfter(CloseReason::TurnFailure, message) =
            after_turn(Ok(&ended(Status::TimedOut, true, true)))
        else {
            panic!("a timed-out turn is a turn failure");
        };
        assert!(
            message.starts_with("The last turn timed out: exit code 2."),
            "{message}"
        );
        let AfterTurn::IdleAfter(CloseReason::TurnFailure, message) =
            after_turn(Ok(&ended(Status::Failed, true, true)))
        else {
            panic!("a failed turn is a turn failure");
        };
        assert!(
            message.starts_with("The last turn failed: exit code 2."),
            "{message}"
        );
    }

    #[test]
    fn an_interrupted_or_lost_turn_is_an_interruption() {
        for after in [
            after_turn(Ok(&ended(Status::Interrupted, true, true))),
            after_turn(Err("the supervisor is gone")),
        ] {
            assert!(
                matches!(after, AfterTurn::IdleAfter(CloseReason::TurnInterrupted, _)),
                "{after:?}"
            );
        }
    }

    #[test]
    fn a_missing_end_checkpoint_closes_the_session_whatever_the_status() {
        for status in [Status::Completed, Status::Failed, Status::Cancelled] {
            let after = after_turn(Ok(&ended(status, true, false)));
            let AfterTurn::Close(CloseReason::SnapshotFailure, message) = after else {
                panic!("{status:?} without an end checkpoint: {after:?}");
            };
            assert!(
                message.ends_with("after the turn. exit code 2"),
                "{message}"
            );
        }
        // No start checkpoint: nothing was snapshotted, nothing to lose.
        assert_eq!(
            after_turn(Ok(&ended(Status::Completed, false, false))),
            AfterTurn::Idle
        );
    }
}
