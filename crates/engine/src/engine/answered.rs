//! A one-way turn (its brief on stdin or in its arguments) whose driver says
//! the turn's answer is in while the CLI still runs: Claude Code refused its
//! credential and would retry for minutes with no way to succeed. The host
//! asks the turn's supervisor to end the CLI, as it does once a
//! conversation's answer is in; the driver's outcome then says how it went.

use cinch_driver_sdk::{Fed, Outcome};
use cinch_runtime::{DriverFailure, DriverSession};

use super::conversation::ask_to_end;
use crate::reading::parse::TurnParser;
use crate::turn_dir::TurnDir;

/// A one-way turn's driver session, ending the CLI when it is done.
pub(crate) struct OneWay {
    session: DriverSession,
    turn: TurnDir,
    /// Whether the supervisor was asked already (by this host, or by one
    /// before a restart).
    asked: bool,
}

impl OneWay {
    /// `session` reading `turn`.
    pub(super) fn new(session: DriverSession, turn: TurnDir) -> Self {
        let asked = turn.close_stdin().exists();
        Self {
            session,
            turn,
            asked,
        }
    }
}

impl TurnParser for OneWay {
    fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
        let fed = self.session.feed(lines)?;
        if fed.done && !self.asked {
            self.asked = true;
            ask_to_end(&self.turn);
        }
        Ok(fed)
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        self.session.finish(exit_code, stderr_tail)
    }
}
