//! Why a call into a driver failed, named from its trap, the store's state
//! and what the guest left on its stderr.

use std::time::Duration;

use wasmtime::{Store, Trap};

use super::{Limits, Sandbox};

/// Why a call into a driver failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailureCause {
    /// The driver panicked, with its message when it printed one.
    Panic(Option<String>),
    /// The call ran past its deadline.
    Timeout(Duration),
    /// The driver asked for more memory than its cap.
    OutOfMemory(usize),
    /// Any other trap.
    Trap(String),
    /// An earlier call of this turn failed, so the instance is gone.
    AlreadyFailed,
}

/// A call into a driver that failed. The turn goes on without the driver.
#[derive(Debug, Clone, thiserror::Error)]
#[error("driver `{driver}` failed in {call}: {}", describe(.cause))]
pub struct DriverFailure {
    /// The driver's name.
    pub driver: String,
    /// The contract function that was called.
    pub call: &'static str,
    /// What went wrong.
    pub cause: FailureCause,
}

fn describe(cause: &FailureCause) -> String {
    match cause {
        FailureCause::Panic(Some(message)) => format!("it panicked: {message}"),
        FailureCause::Panic(None) => "it panicked".into(),
        FailureCause::Timeout(limit) => format!("it ran past its {} ms limit", limit.as_millis()),
        FailureCause::OutOfMemory(limit) => {
            format!("it ran out of its {} MiB of memory", limit >> 20)
        }
        FailureCause::Trap(trap) => format!("it trapped: {trap}"),
        FailureCause::AlreadyFailed => "an earlier call of this turn failed".into(),
    }
}

/// Names the cause of a failed call from the trap and what the guest left behind.
pub(super) fn classify(
    store: &Store<Sandbox>,
    error: &wasmtime::Error,
    limits: Limits,
) -> FailureCause {
    let sandbox = store.data();
    if sandbox.memory.refused_growth() {
        return FailureCause::OutOfMemory(limits.memory_bytes);
    }
    if let Some(Trap::Interrupt) = error.downcast_ref::<Trap>() {
        return FailureCause::Timeout(limits.call_timeout);
    }
    let stderr = sandbox.stderr.contents();
    if let Some(message) = panic_message(&stderr) {
        return FailureCause::Panic(Some(message));
    }
    match error.downcast_ref::<Trap>() {
        Some(Trap::UnreachableCodeReached) => FailureCause::Panic(None),
        _ => FailureCause::Trap(root_cause(error)),
    }
}

/// The message of a Rust panic as the standard library prints it:
/// `thread '…' panicked at src/lib.rs:1:2:\n<message>\nnote: …`.
fn panic_message(stderr: &str) -> Option<String> {
    let after = &stderr[stderr.find("panicked at")?..];
    let body = after.split_once('\n').map(|(_, rest)| rest).unwrap_or("");
    let message: Vec<&str> = body
        .lines()
        .take_while(|line| !line.starts_with("note:"))
        .collect();
    let message = message.join("\n").trim().to_owned();
    Some(if message.is_empty() {
        after.lines().next().unwrap_or(after).trim().to_owned()
    } else {
        message
    })
}

pub(super) fn root_cause(error: &wasmtime::Error) -> String {
    error.root_cause().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_panic_message_on_stderr() {
        let stderr = "thread '<unnamed>' panicked at src/lib.rs:10:5:\nboom: bad line\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(panic_message(stderr).as_deref(), Some("boom: bad line"));
        assert_eq!(panic_message("nothing here"), None);
    }
}
