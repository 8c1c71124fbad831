//! Reading a turn's output through a driver, whatever runs the driver.
//!
//! The host normally runs drivers as sandboxed components; tests and
//! benchmarks also run the same driver crates natively. Both sit behind
//! [`TurnParser`], so a log goes through identical host logic either way.

use cinch_driver_sdk::{self as sdk, Fed, Outcome};
use cinch_runtime::{DriverFailure, DriverSession};

/// A driver's parser for one turn.
pub trait TurnParser {
    /// The lines to write to the CLI's stdin first (none for a driver that
    /// only reads).
    fn opening(&mut self) -> Result<Vec<String>, DriverFailure> {
        Ok(Vec::new())
    }

    /// Parses a batch of whole lines: their events, the lines to write back
    /// and whether the turn's answer has come.
    fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure>;

    /// The lines that ask the CLI to stop gracefully.
    fn stop(&mut self) -> Result<Vec<String>, DriverFailure> {
        Ok(Vec::new())
    }

    /// The CLI has exited: how did the turn end?
    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure>;
}

impl TurnParser for DriverSession {
    fn opening(&mut self) -> Result<Vec<String>, DriverFailure> {
        DriverSession::opening(self)
    }

    fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
        DriverSession::feed(self, lines)
    }

    fn stop(&mut self) -> Result<Vec<String>, DriverFailure> {
        DriverSession::stop(self)
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
    fn opening(&mut self) -> Result<Vec<String>, DriverFailure> {
        Ok(self.0.opening())
    }

    fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
        Ok(self.0.feed(lines))
    }

    fn stop(&mut self) -> Result<Vec<String>, DriverFailure> {
        Ok(self.0.stop())
    }

    fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<Outcome, DriverFailure> {
        Ok(self.0.finish(exit_code, stderr_tail))
    }
}

/// Forwards every call to the parser behind a pointer.
macro_rules! forward {
    ($($pointer:ty),*) => {$(
        impl<T: TurnParser + ?Sized> TurnParser for $pointer {
            fn opening(&mut self) -> Result<Vec<String>, DriverFailure> {
                (**self).opening()
            }

            fn feed(&mut self, lines: &[String]) -> Result<Fed, DriverFailure> {
                (**self).feed(lines)
            }

            fn stop(&mut self) -> Result<Vec<String>, DriverFailure> {
                (**self).stop()
            }

            fn finish(
                &mut self,
                exit_code: Option<i32>,
                stderr_tail: &str,
            ) -> Result<Outcome, DriverFailure> {
                (**self).finish(exit_code, stderr_tail)
            }
        }
    )*};
}

forward!(&mut T, Box<T>);
