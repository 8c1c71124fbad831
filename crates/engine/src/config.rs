//! cinch's configuration: `config.toml` in its home.
//!
//! ```toml
//! [harness.cursor]
//! enabled = false          # turns of this harness fail with harness.off
//!
//! [harness.my-agent]       # a harness of its own: any ACP agent, by config alone
//! driver = "acp"
//! program = "my-agent"     # looked up on PATH
//! args = ["--acp"]
//! display_name = "My Agent"
//! secret_env = ["MY_AGENT_KEY"]
//! env = { MY_AGENT_TELEMETRY = "0" }
//! deny_tools = ["fetch"]   # permission requests for these tools are refused
//! package = "npm:my-agent" # where `cinch harness install` gets it (or "pypi:…")
//! tested = ">=1.4.0, <1.5.0" # the versions it was tested with; others report drift
//!
//! [harness.claude]
//! version = "2.1.197"      # pinned: installed under <home>/tools on first use, run instead of PATH's
//!
//! [secrets]
//! OPENAI_API_KEY = "sk-…"  # given to every harness, masked wherever cinch shows text
//!
//! [serve]                  # `cinch serve`; its flags and CINCH_* variables win
//! listen = "127.0.0.1:7700"
//! max_turns = 4
//! max_turns_per_account = 2  # on all nodes together; none by default
//! watchdog_minutes = 10    # a turn whose harness writes nothing this long is stopped
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Deserialize;

/// The parsed configuration; every part is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per-harness settings, by driver name.
    #[serde(default)]
    pub harness: BTreeMap<String, HarnessConfig>,
    /// Secrets set in every harness's environment and masked in output.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// `cinch serve`'s settings.
    #[serde(default)]
    pub serve: ServeConfig,
    /// What sandboxed processes may reach beyond their own folders.
    #[serde(default)]
    pub sandbox: SandboxConfig,
    /// What plugin drivers must be to load.
    #[serde(default)]
    pub drivers: DriversConfig,
}

/// `[drivers]`: the keys plugin signatures are trusted from, and whether
/// an unsigned plugin loads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriversConfig {
    /// OpenSSH public key lines (`ssh-ed25519 AAAA… comment`) whose
    /// signatures (namespace `cinch-driver`) are trusted.
    #[serde(default)]
    pub trusted_keys: Vec<String>,
    /// Refuse a plugin with no trusted signature.
    #[serde(default)]
    pub require_signature: bool,
}

/// Widening and limits of the sandbox, for every turn and setup command.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxConfig {
    /// Extra paths readable (and executable) by every tenant process.
    #[serde(default)]
    pub read_only: Vec<PathBuf>,
    /// Extra paths readable and writable by every tenant process.
    #[serde(default)]
    pub read_write: Vec<PathBuf>,
    /// Processes and threads one turn may have at once.
    pub max_processes: Option<u64>,
    /// Open files per process.
    pub max_open_files: Option<u64>,
    /// Memory of one turn, in MiB; 0 sets no cap.
    pub memory_mb: Option<u64>,
}

/// `cinch serve`'s settings in the file; each is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// The address to listen on.
    pub listen: Option<String>,
    /// The database: a SQLite file's path or `sqlite:` URL.
    pub database: Option<String>,
    /// The largest request body, in bytes.
    pub body_limit: Option<usize>,
    /// Turns running at once on this node, at most.
    pub max_turns: Option<usize>,
    /// Turns one account runs at once on all nodes together, at most.
    pub max_turns_per_account: Option<usize>,
    /// Seconds between a waiting session's attempts to get a slot.
    pub retry_seconds: Option<u64>,
    /// Minutes a session waits for a slot before it is closed.
    pub wait_limit_minutes: Option<u64>,
    /// For tests only: the wait limit in seconds, so that a test need not
    /// wait minutes; wins over `wait_limit_minutes` (and its flag).
    pub wait_limit_seconds: Option<u64>,
    /// Minutes one turn may run, 1 to 60.
    pub turn_timeout_minutes: Option<u64>,
    /// Minutes a harness may write nothing before its turn is stopped, 1 to
    /// 60, unless its environment says otherwise; also `cinch run`'s default.
    pub watchdog_minutes: Option<u64>,
    /// For tests only: the watchdog in seconds (1 to 3600), so that a test
    /// need not wait minutes; wins over `watchdog_minutes`.
    pub watchdog_seconds: Option<u64>,
    /// cinch's own environment variables given to harnesses and setup
    /// commands (besides PATH and the locale); none else is passed on.
    #[serde(default)]
    pub pass_env: Vec<String>,
    /// Folders under which an environment's local repository may lie.
    #[serde(default)]
    pub repository_roots: Vec<PathBuf>,
    /// Mebibytes of message pages kept as clients last read them (on SQLite;
    /// default 64); 0 reads every page from the database.
    pub page_cache_mib: Option<usize>,
    /// This node's id among the nodes sharing a database.
    pub node_id: Option<String>,
    /// Seconds a session's lease lasts unless its node renews it.
    pub lease_ttl: Option<u64>,
    /// Seconds running turns get to finish on SIGTERM.
    pub drain_grace: Option<u64>,
    /// Where checkpoints are pushed for every node to reach.
    pub checkpoint_remote: Option<String>,
    /// Where the other nodes reach this one.
    pub advertise_url: Option<String>,
    /// Seconds a client has to send a request's head (and, on a kept-alive
    /// connection, its next request's).
    pub header_timeout_seconds: Option<u64>,
    /// Seconds an answer waits for its client to read before the
    /// connection is closed.
    pub idle_timeout_seconds: Option<u64>,
    /// Connections served at once, at most.
    pub max_connections: Option<usize>,
    /// Free space in cinch's home, in MiB, below which `/healthz` says the
    /// disk is low.
    pub min_free_disk_mib: Option<u64>,
}

impl ServeConfig {
    /// The watchdog's limit these settings give, if any.
    pub fn watchdog(&self) -> anyhow::Result<Option<std::time::Duration>> {
        use std::time::Duration;
        if let Some(seconds) = self.watchdog_seconds {
            anyhow::ensure!(
                (1..=3600).contains(&seconds),
                "[serve] watchdog_seconds in config.toml: 1 to 3600, not {seconds}"
            );
            return Ok(Some(Duration::from_secs(seconds)));
        }
        self.watchdog_minutes
            .map(|minutes| {
                anyhow::ensure!(
                    (1..=60).contains(&minutes),
                    "[serve] watchdog_minutes in config.toml: 1 to 60, not {minutes}"
                );
                Ok(Duration::from_secs(minutes * 60))
            })
            .transpose()
    }
}

/// Settings of one harness. With `driver`, it declares a harness of its own:
/// a named profile on that driver (the program and arguments to run, its
/// credential variables and environment).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfig {
    /// Whether turns of this harness may start.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
    /// The driver that reads the harness's output (declares a harness).
    pub driver: Option<String>,
    /// The program to run, looked up on PATH (required with `driver`).
    pub program: Option<String>,
    /// Its arguments, before the driver's own.
    #[serde(default)]
    pub args: Vec<String>,
    /// The name shown to people; the harness's name when unset.
    pub display_name: Option<String>,
    /// Variables that carry its credential, in order of preference; masked
    /// wherever cinch shows text.
    #[serde(default)]
    pub secret_env: Vec<String>,
    /// Variables set for it on every turn.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Tools its permission requests are refused for (a conversation
    /// harness's, such as an ACP agent's): a tool whose kind, title or name
    /// contains one of these, case-insensitive. Every other tool is allowed.
    #[serde(default)]
    pub deny_tools: Vec<String>,
    /// The CLI's version this harness runs: installed under
    /// `<home>/tools/NAME/VERSION` on first use, run rather than PATH's.
    pub version: Option<String>,
    /// Where its CLI is published: `npm:PACKAGE` or `pypi:PACKAGE` (a
    /// built-in harness's is known).
    pub package: Option<String>,
    /// The CLI versions its driver was tested with, a semver range
    /// (`">=2.1.0, <2.2.0"`); a turn on another version reports the drift.
    pub tested: Option<String>,
}

fn enabled_by_default() -> bool {
    true
}

impl Config {
    /// The configuration at `path`, as written; an absent file is the
    /// default. Values that only another module understands (the harness
    /// pins) are checked by that module once the file is read.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                toml::from_str(&text).with_context(|| format!("reading {}", path.display()))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// The versions config.toml pins harnesses' CLIs to, by harness.
    pub fn pinned_versions(&self) -> BTreeMap<String, String> {
        self.harness
            .iter()
            .filter_map(|(name, harness)| Some((name.clone(), harness.version.clone()?)))
            .collect()
    }

    /// The tools the harness `name`'s permission requests are refused for.
    pub fn deny_tools(&self, name: &str) -> Vec<String> {
        self.harness
            .get(name)
            .map(|harness| harness.deny_tools.clone())
            .unwrap_or_default()
    }

    /// Whether the harness `name` may run.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.harness.get(name).is_none_or(|harness| harness.enabled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_harness_switches_and_secrets() {
        let config: Config = toml::from_str(
            "[harness.cursor]\nenabled = false\n[harness.claude]\n[secrets]\nTOKEN = \"abcdefgh\"\n",
        )
        .unwrap();
        assert!(!config.is_enabled("cursor"));
        assert!(config.is_enabled("claude"));
        assert!(config.is_enabled("codex"));
        assert_eq!(config.secrets["TOKEN"], "abcdefgh");
        assert!(toml::from_str::<Config>("[harness.x]\nenabld = true\n").is_err());
    }

    #[test]
    fn parses_a_declared_harness() {
        let config: Config = toml::from_str(
            "[harness.my-agent]\ndriver = \"acp\"\nprogram = \"my-agent\"\nargs = [\"--acp\"]\n\
             secret_env = [\"MY_KEY\"]\nenv = { A = \"1\" }\n",
        )
        .unwrap();
        let declared = &config.harness["my-agent"];
        assert_eq!(declared.driver.as_deref(), Some("acp"));
        assert_eq!(declared.args, ["--acp"]);
        assert_eq!(declared.env["A"], "1");
        assert!(config.is_enabled("my-agent"));
    }
}
