//! Reading a turn's output through a driver, whatever runs the driver.
//!
//! The host normally runs drivers as sandboxed components; tests and
//! benchmarks also run the same driver crates natively. Both sit behind
//! [`TurnParser`], so a log goes through identical host logic either way.

use cinch_driver_sdk::{self as sdk, Event, Outcome};

use crate::runtime::{DriverFailure, DriverSession};

/// A driver's parser for one turn.
pub trait TurnParser {
    /// Parses a batch of whole lines.
    fn feed(&mut self, lines: &[String]) -> Result<Vec<Event>, DriverFailure>;

    /// The CLI has exited: how did the turn end?
    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure>;
}

impl TurnParser for DriverSession {
    fn feed(&mut self, lines: &[String]) -> Result<Vec<Event>, DriverFailure> {
        DriverSession::feed(self, lines)
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        DriverSession::finish(self, exit_code, stderr_tail)
    }
}

/// A driver crate's parser run natively, without wasm.
#[derive(Default)]
pub struct Native<P>(pub P);

impl<P: sdk::Parser> TurnParser for Native<P> {
    fn feed(&mut self, lines: &[String]) -> Result<Vec<Event>, DriverFailure> {
        Ok(self.0.feed(lines))
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        Ok(self.0.finish(exit_code, stderr_tail))
    }
}

impl<T: TurnParser + ?Sized> TurnParser for &mut T {
    fn feed(&mut self, lines: &[String]) -> Result<Vec<Event>, DriverFailure> {
        (**self).feed(lines)
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        (**self).finish(exit_code, stderr_tail)
    }
}

impl<T: TurnParser + ?Sized> TurnParser for Box<T> {
    fn feed(&mut self, lines: &[String]) -> Result<Vec<Event>, DriverFailure> {
        (**self).feed(lines)
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        (**self).finish(exit_code, stderr_tail)
    }
}
