//! A scriptable stand-in for a harness CLI in cinch's tests.
//!
//! The `fake-cli` binary pretends to be `claude`, `codex`, `gemini`,
//! `cursor-agent` or any other harness: install it on a `PATH` directory
//! under the harness's program name ([`install`]) and it does whatever the
//! JSON script named by the environment variable `FAKE_CLI_SCRIPT`
//! ([`SCRIPT_ENV`]) asks. The engine passes its environment through to the
//! harness, so one binary serves every test, each with its own script.
//!
//! ```no_run
//! use cinch_fake_cli::{install, Script};
//! # let dir = std::path::Path::new("/tmp/t");
//! let bin = dir.join("bin");
//! std::fs::create_dir_all(&bin).unwrap();
//! install(&bin, "claude");
//! let script = dir.join("script.json");
//! Script {
//!     replay: Some("tests/fixtures/recorded/claude/s1.jsonl".into()),
//!     line_delay_ms: 20,
//!     exit_code: 1,
//!     ..Script::default()
//! }
//! .write_to(&script)
//! .unwrap();
//! // Run the engine with PATH=<bin>:$PATH and FAKE_CLI_SCRIPT=<script>.
//! ```
//!
//! # The script
//!
//! A JSON object; every field is optional, and an unknown field is an error
//! (so a typo fails the test loudly instead of being ignored).
//! `FAKE_CLI_SCRIPT` holds the script's path or, when it starts with `{`, the
//! script itself.
//!
//! | field | type | default | what |
//! |---|---|---|---|
//! | `version` | string | `"fake-cli 1.2.3"` | printed on stdout, exit 0, when an argument is `--version` or `-v`, or the first is `version`; nothing else in the script runs |
//! | `read_stdin` | bool | `true` | read stdin to its end before anything else (the brief, for a harness that takes it on stdin) |
//! | `record` | path | none | write a [`Record`] there (argv, cwd, environment, stdin, pid, process group, session) |
//! | `ignore_sigterm` | bool | `false` | ignore SIGTERM, so only SIGKILL ends the process |
//! | `stderr` | string | none | written to stderr at the start, as is |
//! | `write_files` | object: path → text | `{}` | files written (parents created) relative to the working directory, as the harness editing the repository |
//! | `delete_files` | array of paths | `[]` | files removed relative to the working directory; one already missing is fine |
//! | `probes` | array of [`Probe`] | `[]` | attempts to reach things (read, list, write, signal, ptrace, connect to an abstract socket or a TCP port, an HTTP request through the proxy the environment names, a UDP datagram, a DNS query, read a variable, fork many), each printed as a `{"type":"probe",…}` line ([`ProbeOutcome`]) on stdout |
//! | `grandchild` | bool | `false` | spawn a copy of itself that ignores SIGTERM and sleeps forever, in the same process group |
//! | `grandchild_pid_file` | path | none | where the grandchild's pid goes (decimal, written atomically once it already ignores SIGTERM) |
//! | `grandchild_setsid` | bool | `false` | the grandchild starts its own session instead, escaping the process group |
//! | `grandchild_inherits_stdio` | bool | `false` | the grandchild keeps the harness's stdout and stderr open (otherwise they are `/dev/null`) |
//! | `replay` | path | none | a recorded JSONL log printed to stdout line by line, byte for byte |
//! | `lines` | array | `[]` | printed after the replay: a string as is, any other JSON value compactly |
//! | `line_delay_ms` | integer | `0` | the pause before each replayed or inline line but the first |
//! | `use_timestamps` | bool | `false` | between two lines that both carry a timestamp (`timestamp_ms` in milliseconds, as cursor's; `timestamp` as an ISO 8601 string, as gemini's), pause for the recorded gap instead |
//! | `max_gap_ms` | integer | `2000` | the cap on a recorded gap |
//! | `lines_per_second` | number | none | then print `{"type":"tick","n":N}` (N from 1) at this steady rate ... |
//! | `duration_ms` | integer | `0` | ... for this long (`lines_per_second × duration_ms / 1000` ticks) |
//! | `tick_line` | string | none | ... each tick printed as this text instead, with `{n}` replaced by N and `{now_us}` by the wall-clock time it is written, in microseconds since the Unix epoch (to measure how long a line takes to reach a follower) |
//! | `busy_ms` | integer | `0` | after the output, keep one CPU busy this long (as a CLI running a build) |
//! | `hang_ms` | integer | `0` | then sleep this long; `-1` (any negative) sleeps forever |
//! | `exit_code` | integer | `0` | the exit status |
//!
//! The steps run in the order of the table. stdout is flushed after every
//! line, so a follower sees each line when it is printed.
//!
//! Without `FAKE_CLI_SCRIPT`, or when the script cannot be read or parsed, or
//! on an I/O error, `fake-cli` prints one JSON line `{"fake_cli_error": ...}`
//! on stderr and exits with status 2.
//!
//! # Finding the binary from another crate's tests
//!
//! Cargo builds a package's binaries for that package's own integration
//! tests only (`CARGO_BIN_EXE_<name>`), so a test in another workspace crate
//! depends on `cinch-fake-cli` (a dev-dependency is enough) and calls
//! [`binary_path`] or [`install`]. [`binary_path`] builds `fake-cli` with
//! cargo into the target directory the running test executable belongs to,
//! once per test process, so it is never stale.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

mod net;
mod probe;
pub use probe::{Probe, ProbeOutcome};

/// The environment variable holding the script's path (or the script itself,
/// when it starts with `{`).
pub const SCRIPT_ENV: &str = "FAKE_CLI_SCRIPT";

/// The environment variable that, when set, names the `fake-cli` binary
/// [`binary_path`] returns, instead of building one.
pub const BIN_ENV: &str = "FAKE_CLI_BIN";

/// What `fake-cli` does; see the crate documentation for each field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Script {
    /// The version line printed for `--version`, `-v` or `version`.
    pub version: String,
    /// Read stdin to its end before anything else.
    pub read_stdin: bool,
    /// Where to write a [`Record`] of the invocation.
    pub record: Option<PathBuf>,
    /// Ignore SIGTERM, so only SIGKILL ends the process.
    pub ignore_sigterm: bool,
    /// Text written to stderr at the start.
    pub stderr: Option<String>,
    /// Files to write, by path relative to the working directory.
    pub write_files: BTreeMap<String, String>,
    /// Files to delete, relative to the working directory.
    pub delete_files: Vec<String>,
    /// Attempts to reach things, each reported on stdout.
    pub probes: Vec<Probe>,
    /// Spawn a grandchild that ignores SIGTERM and sleeps forever.
    pub grandchild: bool,
    /// Where to write the grandchild's pid.
    pub grandchild_pid_file: Option<PathBuf>,
    /// The grandchild escapes into a session (and process group) of its own.
    pub grandchild_setsid: bool,
    /// The grandchild keeps stdout and stderr open instead of `/dev/null`.
    pub grandchild_inherits_stdio: bool,
    /// A recorded JSONL log to print line by line.
    pub replay: Option<PathBuf>,
    /// Lines printed after the replay: strings as is, other values as JSON.
    pub lines: Vec<serde_json::Value>,
    /// The pause before each replayed or inline line but the first.
    pub line_delay_ms: u64,
    /// Pause for the recorded gap between two timestamped lines.
    pub use_timestamps: bool,
    /// The cap on a recorded gap.
    pub max_gap_ms: u64,
    /// The rate of generated `tick` lines; none means no ticks.
    pub lines_per_second: Option<f64>,
    /// How long the ticks go on.
    pub duration_ms: u64,
    /// The text of each tick, with `{n}` and `{now_us}` filled in; none
    /// means `{"type":"tick","n":N}`.
    pub tick_line: Option<String>,
    /// How long to keep a CPU busy after the output.
    pub busy_ms: u64,
    /// The sleep after the output; negative is forever.
    pub hang_ms: i64,
    /// The exit status.
    pub exit_code: i32,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            version: "fake-cli 1.2.3".to_owned(),
            read_stdin: true,
            record: None,
            ignore_sigterm: false,
            stderr: None,
            write_files: BTreeMap::new(),
            delete_files: Vec::new(),
            probes: Vec::new(),
            grandchild: false,
            grandchild_pid_file: None,
            grandchild_setsid: false,
            grandchild_inherits_stdio: false,
            replay: None,
            lines: Vec::new(),
            line_delay_ms: 0,
            use_timestamps: false,
            max_gap_ms: 2000,
            lines_per_second: None,
            duration_ms: 0,
            tick_line: None,
            busy_ms: 0,
            hang_ms: 0,
            exit_code: 0,
        }
    }
}

impl Script {
    /// Writes the script as JSON to `path`, for `FAKE_CLI_SCRIPT`.
    pub fn write_to(&self, path: &Path) -> io::Result<()> {
        fs::write(
            path,
            serde_json::to_vec_pretty(self).map_err(io::Error::other)?,
        )
    }

    /// Reads the script from `FAKE_CLI_SCRIPT`'s value: inline JSON or a path.
    pub fn load(spec: &str) -> Result<Script, String> {
        let text = if spec.trim_start().starts_with('{') {
            spec.to_owned()
        } else {
            fs::read_to_string(spec).map_err(|e| format!("reading script {spec}: {e}"))?
        };
        serde_json::from_str(&text).map_err(|e| format!("parsing script {spec}: {e}"))
    }
}

/// What `fake-cli` saw, written where the script's `record` says before it
/// prints anything.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The arguments, the program name first (lossy UTF-8).
    pub argv: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// The full environment (lossy UTF-8).
    pub env: BTreeMap<String, String>,
    /// Everything read from stdin (lossy UTF-8); empty when `read_stdin` is false.
    pub stdin: String,
    /// The process id.
    pub pid: u32,
    /// The process group id, to check the harness runs in a group of its own.
    pub pgid: i32,
    /// The session id, to check where the supervisor put the harness.
    pub sid: i32,
    /// Its autogroup (`/proc/self/autogroup`, as `/autogroup-N nice K`),
    /// where the kernel groups processes by session.
    pub autogroup: Option<String>,
}

impl Record {
    /// Reads a record written by `fake-cli`.
    pub fn read_from(path: &Path) -> io::Result<Record> {
        serde_json::from_slice(&fs::read(path)?).map_err(io::Error::other)
    }
}

/// The path of a fresh `fake-cli` binary.
///
/// `FAKE_CLI_BIN` ([`BIN_ENV`]) wins when set. Otherwise the binary is
/// `<target>/<profile>/fake-cli` next to the running test executable (which
/// cargo puts in `<target>/<profile>/deps/`), built there with
/// `cargo build -p cinch-fake-cli` the first time a test process asks, so an
/// edit to the fake CLI is never tested stale. If cargo cannot run (say the
/// tests were built elsewhere) an existing binary is used as is.
///
/// # Panics
///
/// When the binary is neither built nor already there.
pub fn binary_path() -> PathBuf {
    static PATH: OnceLock<PathBuf> = OnceLock::new();
    PATH.get_or_init(|| {
        if let Some(bin) = std::env::var_os(BIN_ENV) {
            return PathBuf::from(bin);
        }
        fresh_binary("fake-cli")
    })
    .clone()
}

/// The MCP server the tests hand to harnesses; see [`mcp`].
pub mod mcp {
    use std::path::PathBuf;
    use std::sync::OnceLock;

    /// The one tool `cinch-mcp-echo` offers.
    pub const TOOL: &str = "cinch_echo";

    /// What the tool's answer starts with; its `text` argument follows.
    pub const ANSWER_PREFIX: &str = "cinch-echo says: ";

    /// The variable naming a file the tool appends each call's text to.
    pub const MARKER_ENV: &str = "CINCH_MCP_MARKER";

    /// The path of a fresh `cinch-mcp-echo` binary, built like
    /// [`binary_path`](super::binary_path)'s.
    ///
    /// # Panics
    ///
    /// When the binary is neither built nor already there.
    pub fn server_path() -> PathBuf {
        static PATH: OnceLock<PathBuf> = OnceLock::new();
        PATH.get_or_init(|| super::fresh_binary("cinch-mcp-echo"))
            .clone()
    }
}

/// The fake ACP agent `cinch-fake-acp` and its script.
pub mod acp {
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    use serde::{Deserialize, Serialize};

    /// The variable holding the script's path (or the script itself, when it
    /// starts with `{`). Without it, the agent answers plainly.
    pub const SCRIPT_ENV: &str = "FAKE_ACP_SCRIPT";

    /// What `cinch-fake-acp` does.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    #[serde(default, deny_unknown_fields)]
    pub struct AcpScript {
        /// The text of its answer (a note on the permission follows it).
        pub answer: String,
        /// Ask permission (request id 0) before running its tool.
        pub ask_permission: bool,
        /// Before asking, wait until this file exists (a test's signal that
        /// the host is gone).
        pub permission_gate: Option<PathBuf>,
        /// Read but never answer anything, not even `initialize`.
        pub never_answer: bool,
        /// Write a line that is not JSON before its answer.
        pub malformed_line: bool,
        /// Leave the prompt unanswered until `session/cancel`.
        pub hang: bool,
        /// Ignore `session/cancel`.
        pub ignore_cancel: bool,
        /// Ignore SIGTERM, so only SIGKILL ends it.
        pub ignore_sigterm: bool,
        /// Keep running after stdin closes (like claude-agent-acp).
        pub outlive_stdin: bool,
        /// Append every line read here.
        pub record: Option<PathBuf>,
    }

    impl Default for AcpScript {
        fn default() -> Self {
            Self {
                answer: "done".to_owned(),
                ask_permission: false,
                permission_gate: None,
                never_answer: false,
                malformed_line: false,
                hang: false,
                ignore_cancel: false,
                ignore_sigterm: false,
                outlive_stdin: false,
                record: None,
            }
        }
    }

    impl AcpScript {
        /// Writes the script to `path`.
        pub fn write_to(&self, path: &Path) -> std::io::Result<()> {
            std::fs::write(
                path,
                serde_json::to_vec(self).map_err(std::io::Error::other)?,
            )
        }
    }

    /// The path of a fresh `cinch-fake-acp` binary, built like
    /// [`binary_path`](super::binary_path)'s.
    ///
    /// # Panics
    ///
    /// When the binary is neither built nor already there.
    pub fn agent_path() -> PathBuf {
        static PATH: OnceLock<PathBuf> = OnceLock::new();
        PATH.get_or_init(|| super::fresh_binary("cinch-fake-acp"))
            .clone()
    }

    /// Puts the agent into `bin_dir` as `as_name` (a symlink) and returns
    /// the link's path.
    ///
    /// # Panics
    ///
    /// When the binary cannot be found or built, or the link cannot be made.
    pub fn install(bin_dir: &Path, as_name: &str) -> PathBuf {
        let link = bin_dir.join(as_name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(agent_path(), &link)
            .unwrap_or_else(|e| panic!("linking {}: {e}", link.display()));
        link
    }
}

/// `<target>/<profile>/<name>` next to the running test executable, built
/// there first (an existing binary is used as is when cargo cannot build).
fn fresh_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test executable's path");
    let deps = exe.parent().expect("the test executable's directory");
    // Test executables live in <profile>/deps; a binary run directly
    // (say, a benchmark harness) may live in <profile> itself.
    let profile_dir = if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().expect("the profile directory")
    } else {
        deps
    };
    let bin = profile_dir.join(name);
    match build(profile_dir, name) {
        Ok(()) => bin,
        Err(why) if bin.exists() => {
            eprintln!("{name}: using {} as is: {why}", bin.display());
            bin
        }
        Err(why) => panic!("no {name} binary at {}: {why}", bin.display()),
    }
}

/// Builds the crate's binary `name` into `profile_dir` (`<target>/<profile>`) with cargo.
fn build(profile_dir: &Path, name: &str) -> Result<(), String> {
    let target = profile_dir.parent().ok_or("no target directory")?;
    let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
        Some("debug") => "dev",
        Some(other) => other,
        None => return Err("no profile directory name".to_owned()),
    };
    // The cargo that runs the tests sets CARGO; a test run by hand falls back
    // to the one on PATH.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
    let out = Command::new(cargo)
        .args(["build", "--quiet", "-p", "cinch-fake-cli", "--bin", name])
        .arg("--manifest-path")
        .arg(&manifest)
        .arg("--target-dir")
        .arg(target)
        .args(["--profile", profile])
        .output()
        .map_err(|e| format!("running cargo: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "cargo build -p cinch-fake-cli --bin {name} failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// Puts `fake-cli` into `bin_dir` under the harness's program name
/// (`claude`, `codex`, `gemini`, `cursor-agent`, ...) as a symlink, replacing
/// whatever was there, and returns the link's path. Put `bin_dir` first on
/// the harness's `PATH`.
///
/// # Panics
///
/// When the binary cannot be found or built, or the link cannot be made: a
/// test cannot go on without it.
pub fn install(bin_dir: &Path, as_name: &str) -> PathBuf {
    let link = bin_dir.join(as_name);
    match fs::remove_file(&link) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => panic!("removing {}: {e}", link.display()),
    }
    let bin = binary_path();
    std::os::unix::fs::symlink(&bin, &link)
        .unwrap_or_else(|e| panic!("linking {} to {}: {e}", link.display(), bin.display()));
    link
}
