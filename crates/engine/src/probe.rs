//! Looks for a harness's CLI on this machine: is it on PATH, which version.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use cinch_runtime::Driver;

/// How long a version command may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// What was found of a harness's CLI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CliStatus {
    /// Not on PATH.
    Missing,
    /// On PATH; its version when the version command gave one.
    Found {
        /// Where it is.
        path: PathBuf,
        /// Its version, when the version command gave one.
        version: Option<String>,
        /// Why its version could not be read, when it could not.
        problem: Option<String>,
    },
}

/// The executable `program` names: itself when it has a slash, else the
/// first match on `search_path` (a PATH value).
pub fn find_program(program: &str, search_path: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return is_executable(Path::new(program)).then(|| PathBuf::from(program));
    }
    std::env::split_paths(search_path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    path.metadata()
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// Finds the CLI of the harness `info` describes (run by `driver`) on
/// `search_path` (a PATH value) and asks it for its version.
pub fn probe(driver: &Driver, info: &cinch_driver_sdk::Info, search_path: &str) -> CliStatus {
    let Some(path) = find_program(&info.program, search_path) else {
        return CliStatus::Missing;
    };
    let (version, problem) = match read_version(driver, &path, &info.version_args) {
        // Many ACP agents answer a version command with nothing a driver
        // reads: they run all the same, so that is no problem.
        Ok(version) => (version, None),
        Err(problem) => (None, Some(problem)),
    };
    CliStatus::Found {
        path,
        version,
        problem,
    }
}

/// Runs the CLI at `path` with `version_args` and has `driver` read its
/// version from what it printed (`None` when it printed none); else says
/// why the command failed.
pub(crate) fn read_version(
    driver: &Driver,
    path: &Path,
    version_args: &[String],
) -> Result<Option<String>, String> {
    let output = run_version(path, version_args)?;
    driver
        .parse_version(&output)
        .map_err(|failure| failure.to_string())
}

/// Runs the version command and returns what it printed on stdout and
/// stderr. Both go to one pipe, read as they come on a thread of its own (a
/// command printing more than a pipe holds would otherwise stall until the
/// timeout), while this thread sleeps until the command exits.
fn run_version(path: &Path, args: &[String]) -> Result<String, String> {
    let could_not_run = |error: std::io::Error| format!("could not run it: {error}");
    let (mut output, sink) = std::io::pipe().map_err(could_not_run)?;
    let spawned = {
        let sink_for_stderr = sink.try_clone().map_err(could_not_run)?;
        Command::new(path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(sink)
            .stderr(sink_for_stderr)
            .spawn()
        // The command, holding the pipe's write ends, is dropped here: the
        // output then ends when the version command's does.
    };
    let mut child = spawned.map_err(could_not_run)?;
    let reading = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = output.read_to_end(&mut bytes);
        bytes
    });
    let status = match crate::exit::wait_for(&mut child, VERSION_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!(
                "its version command ran past {} s",
                VERSION_TIMEOUT.as_secs()
            ));
        }
        Err(error) => return Err(format!("waiting for it: {error}")),
    };
    let output = String::from_utf8_lossy(&reading.join().unwrap_or_default()).into_owned();
    if !status.success() && output.trim().is_empty() {
        return Err(format!("its version command failed ({status})"));
    }
    Ok(output)
}
