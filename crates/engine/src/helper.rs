//! The jobs cinch starts a process of its own for: applying a sandbox
//! policy, then exec-ing a command (`sandboxed`), and supervising a turn's
//! CLI (`supervise`).
//!
//! Both run in `cinch-helper`, a small binary installed beside `cinch`: a
//! process that links only this much starts in a fraction of the time the
//! whole server takes to load, and every setup command, workspace git
//! command and turn starts one. `cinch` itself runs them too, for when the
//! helper is not there (`cargo run` builds only the binary it runs).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Output, Stdio};
use std::time::Duration;

/// The helper binary's file name.
pub(crate) const HELPER_BINARY: &str = "cinch-helper";

/// The subcommand that supervises a turn: `supervise TURN_DIR`.
pub(crate) const SUPERVISE: &str = "supervise";

/// The subcommand that runs a confined network's proxy (see
/// [`crate::sandbox::egress::netns`]): `egress-proxy EGRESS_JSON PARENT_PID`.
pub use crate::sandbox::egress::EGRESS_PROXY;

/// The flag the helper prints its version for: cinch uses a helper only of
/// its own version, since an older one would read a policy written for a
/// newer cinch without the parts it does not know.
pub const VERSION_FLAG: &str = "--version";

/// The version of cinch this helper belongs to.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// A job for a helper process.
#[derive(Debug)]
pub enum Job {
    /// Apply the policy (JSON), then exec the program with its arguments.
    Sandboxed {
        /// The policy, as JSON.
        policy: OsString,
        /// The program.
        program: OsString,
        /// Its arguments.
        args: Vec<OsString>,
    },
    /// Supervise the turn in this folder.
    Supervise(PathBuf),
    /// Run the egress proxy of a confined network (its settings, as JSON)
    /// on the listening socket it was handed.
    EgressProxy {
        /// Its settings, as JSON.
        config: OsString,
        /// The process it serves, whose end ends it.
        parent: OsString,
    },
}

/// The job the process's arguments (the program name left out) ask for, or
/// `None` when they ask for none, or for one with the wrong arguments.
pub fn job(mut args: impl Iterator<Item = OsString>) -> Option<Job> {
    let subcommand = args.next()?;
    if subcommand == crate::sandbox::SANDBOXED {
        let policy = args.next()?;
        let program = args.next()?;
        let args = args.collect();
        Some(Job::Sandboxed {
            policy,
            program,
            args,
        })
    } else if subcommand == SUPERVISE {
        let turn_dir = args.next()?;
        args.next()
            .is_none()
            .then(|| Job::Supervise(turn_dir.into()))
    } else if subcommand == EGRESS_PROXY {
        let config = args.next()?;
        let parent = args.next()?;
        args.next()
            .is_none()
            .then_some(Job::EgressProxy { config, parent })
    } else {
        None
    }
}

/// Runs `job` in this process, which must have no other thread yet (the
/// supervisor forks). Returns the exit code when the job failed or is done;
/// a `sandboxed` job that succeeds never returns.
pub fn run(job: Job) -> ExitCode {
    match job {
        Job::Sandboxed {
            policy,
            program,
            args,
        } => {
            let error = crate::sandbox::launch(&policy, &program, &args);
            eprintln!("cinch sandbox: {error:#}");
            ExitCode::from(126)
        }
        Job::EgressProxy { config, parent } => {
            let error = crate::sandbox::egress::run_proxy(&config, &parent);
            eprintln!("cinch egress proxy: {error:#}");
            ExitCode::FAILURE
        }
        Job::Supervise(turn_dir) => match crate::supervisor::run(&turn_dir) {
            Ok(()) => ExitCode::SUCCESS,
            Err(error) => {
                eprintln!("cinch supervise: {error:#}");
                ExitCode::FAILURE
            }
        },
    }
}

/// The program to start helper processes with: `cinch-helper` beside the
/// `cinch` binary at `cinch` when it is there and of this version, else
/// `cinch` itself.
pub fn program(cinch: &Path) -> PathBuf {
    let helper = cinch.with_file_name(HELPER_BINARY);
    if !helper.is_file() {
        return cinch.to_path_buf();
    }
    match version_of(&helper) {
        Ok(Some(output))
            if output.status.success() && output.stdout.trim_ascii() == VERSION.as_bytes() =>
        {
            helper
        }
        Ok(Some(output)) => {
            tracing::warn!(
                helper = %helper.display(),
                said = %String::from_utf8_lossy(&output.stdout).trim(),
                "not using a cinch-helper of another version than cinch {VERSION}: install both from one build"
            );
            cinch.to_path_buf()
        }
        Ok(None) => {
            tracing::warn!(
                helper = %helper.display(),
                "not using a cinch-helper that did not say its version within {} s",
                VERSION_TIMEOUT.as_secs()
            );
            cinch.to_path_buf()
        }
        Err(error) => {
            tracing::warn!(helper = %helper.display(), "not using a cinch-helper that did not start: {error}");
            cinch.to_path_buf()
        }
    }
}

/// What the program [`program`] chose is, in a line for the operator
/// (`cinch check`, the server's log).
pub fn describe(program: &Path) -> String {
    if program.file_name() == Some(HELPER_BINARY.as_ref()) {
        format!("{} {VERSION}", program.display())
    } else {
        format!(
            "{} itself, with no {HELPER_BINARY} of its version beside it: sandboxed commands and supervisors start slower (`cargo build --release` builds both)",
            program.display()
        )
    }
}

/// How long a helper may take to print its version: it answers in
/// milliseconds, and one that hangs must not hang every cinch command.
const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// What `helper --version` printed, or `None` when it had not finished
/// within [`VERSION_TIMEOUT`] (it is killed then).
fn version_of(helper: &Path) -> std::io::Result<Option<Output>> {
    let mut child = Command::new(helper)
        .arg(VERSION_FLAG)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    // Read once it has exited: a version fits in the pipe's buffer, so the
    // helper never waits for its output to be read before it exits.
    if crate::exit::wait_for(&mut child, VERSION_TIMEOUT)?.is_none() {
        let _ = child.kill();
        child.wait()?;
        return Ok(None);
    }
    child.wait_with_output().map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> impl Iterator<Item = OsString> {
        words
            .iter()
            .map(OsString::from)
            .collect::<Vec<_>>()
            .into_iter()
    }

    #[test]
    fn only_a_job_with_its_arguments_is_taken() {
        let Some(Job::Sandboxed {
            policy,
            program,
            args: rest,
        }) = job(args(&["sandboxed", "{}", "git", "-C", "x", "status"]))
        else {
            panic!("not a sandboxed job");
        };
        assert_eq!(
            (policy.as_os_str(), program.as_os_str()),
            ("{}".as_ref(), "git".as_ref())
        );
        assert_eq!(rest, ["-C", "x", "status"]);
        assert!(matches!(
            job(args(&["supervise", "/t/1"])),
            Some(Job::Supervise(dir)) if dir == Path::new("/t/1")
        ));
        for refused in [
            &["sandboxed", "{}"][..],
            &["supervise"],
            &["supervise", "/t/1", "more"],
            &["serve"],
            &[],
        ] {
            assert!(job(args(refused)).is_none(), "{refused:?}");
        }
    }
}
