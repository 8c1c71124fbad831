//! How to run each real CLI against a [`MockServer`]: where it is installed, the environment
//! and configuration files that point it at the mock and make it fail fast, and its command
//! line. See `../shared/realcli/README.md` for why each setting is there.

use std::env;
use std::ffi::OsString;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Value, json};

use crate::MockServer;
use crate::run::run_with_timeout;

/// A cold `npm install` of the three CLIs took about 17 s; this leaves room for a slow mirror.
const INSTALL_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// An agent CLI these tests can drive.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cli {
    /// Claude Code (`claude`), on the Anthropic Messages API.
    Claude,
    /// Codex (`codex exec`), on the OpenAI Responses API.
    Codex,
    /// Gemini CLI (`gemini`), on the Gemini API.
    Gemini,
}

impl Cli {
    /// Every CLI.
    pub const ALL: [Cli; 3] = [Cli::Claude, Cli::Codex, Cli::Gemini];

    /// The program name, which is also the driver's name.
    pub fn name(self) -> &'static str {
        match self {
            Cli::Claude => "claude",
            Cli::Codex => "codex",
            Cli::Gemini => "gemini",
        }
    }

    /// The installed program: [`cli_bin_dir`]`/<name>`.
    pub fn program(self) -> PathBuf {
        cli_bin_dir().join(self.name())
    }
}

impl fmt::Display for Cli {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Cli {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Cli::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("no such CLI: {s:?} (known: claude, codex, gemini)"))
    }
}

/// The directory holding `claude`, `codex` and `gemini`, at the versions `tests/install-clis.sh`
/// pins: `$CINCH_CLI_BIN` when set, else whatever that script prints after installing them
/// (into a cache outside the clone; the first run takes a few tens of seconds and needs the npm
/// registry). Worked out once per process.
///
/// # Panics
/// When the script fails; its output is in the message.
pub fn cli_bin_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(dir) = env::var_os("CINCH_CLI_BIN").filter(|d| !d.is_empty()) {
            return PathBuf::from(dir);
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../install-clis.sh");
        let out = run_with_timeout(Command::new("bash").arg(&script), INSTALL_TIMEOUT)
            .unwrap_or_else(|e| panic!("running {}: {e}", script.display()));
        assert!(
            out.success(),
            "{} failed ({:?}, timed out: {}):\n{}{}",
            script.display(),
            out.status,
            out.timed_out,
            out.stdout,
            out.stderr
        );
        let dir = out.stdout.lines().rfind(|l| !l.trim().is_empty());
        PathBuf::from(dir.unwrap_or_else(|| panic!("{} printed no directory", script.display())))
    })
    .clone()
}

/// The complete environment to run `cli` in (start from an empty one: `env_clear`), pointed
/// at `scenario` on `server`, with `home` as HOME:
/// - PATH: [`cli_bin_dir`], the directory of the `node` on the current PATH (codex and gemini
///   are node scripts), then the system directories;
/// - HOME, TMPDIR (`<home>/tmp`, made by [`write_cli_config`]), `TERM=dumb`, `LANG=C.UTF-8`;
/// - the CLI's API key and base URL, its switches against telemetry, updates and other
///   traffic, and the settings that make it fail at once rather than retry for minutes.
///
/// Codex takes its base URL from the file [`write_cli_config`] writes instead.
pub fn cli_env(
    cli: Cli,
    server: &MockServer,
    scenario: &str,
    home: &Path,
) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = vec![
        ("PATH".into(), search_path()),
        ("HOME".into(), home.display().to_string()),
        ("TMPDIR".into(), home.join("tmp").display().to_string()),
        ("TERM".into(), "dumb".into()),
        ("LANG".into(), "C.UTF-8".into()),
    ];
    let url = server.scenario_url(scenario);
    let specific: &[(&str, &str)] = match cli {
        Cli::Claude => &[
            ("ANTHROPIC_BASE_URL", &url),
            ("ANTHROPIC_API_KEY", "sk-ant-mock"),
            // Tests run as root, where --dangerously-skip-permissions is refused without it.
            ("IS_SANDBOX", "1"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            // By default a 401 or 500 is retried 10 times, for about three minutes.
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ],
        // The variable that config.toml's env_key names.
        Cli::Codex => &[("MOCK_API_KEY", "sk-mock")],
        Cli::Gemini => &[
            ("GEMINI_API_KEY", "mock-key"),
            ("GOOGLE_GEMINI_BASE_URL", &url),
            // Without it, a headless run in an untrusted directory exits 55.
            ("GEMINI_CLI_TRUST_WORKSPACE", "true"),
        ],
    };
    env.extend(specific.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    env
}

/// The PATH for a CLI: its install, node, the system.
fn search_path() -> String {
    let node_dir = env::var_os("PATH")
        .map(|p| env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .find(|d| d.join("node").is_file());
    let mut dirs: Vec<PathBuf> = vec![cli_bin_dir()];
    dirs.extend(node_dir);
    dirs.extend(["/usr/local/bin", "/usr/bin", "/bin"].map(PathBuf::from));
    let mut unique: Vec<PathBuf> = Vec::new();
    for d in dirs {
        if !unique.contains(&d) {
            unique.push(d);
        }
    }
    env::join_paths(unique)
        .unwrap_or_else(|_| OsString::from("/usr/local/bin:/usr/bin:/bin"))
        .to_string_lossy()
        .into_owned()
}

/// Writes what `cli` needs under `home` to talk to `scenario` on `server`, and creates
/// `<home>/tmp` for TMPDIR. Call it before each run: a later run may name another scenario.
/// - codex: `~/.codex/config.toml` with a `mock` provider at the scenario's URL, on the
///   Responses API, with no retries;
/// - gemini: `~/.gemini/settings.json` selecting API-key auth (required once a base URL is
///   set), one attempt per call, updates and telemetry off;
/// - claude: nothing (it creates `~/.claude.json` and `~/.claude/` itself).
pub fn write_cli_config(
    cli: Cli,
    server: &MockServer,
    scenario: &str,
    home: &Path,
) -> io::Result<()> {
    fs::create_dir_all(home.join("tmp"))?;
    match cli {
        Cli::Claude => Ok(()),
        Cli::Codex => {
            let dir = home.join(".codex");
            fs::create_dir_all(&dir)?;
            // gpt-5.5 is in codex's bundled model catalog; an unknown name adds a warning item.
            let config = format!(
                r#"model = "gpt-5.5"
model_provider = "mock"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.mock]
name = "mock"
base_url = "{}/v1"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
"#,
                server.scenario_url(scenario)
            );
            fs::write(dir.join("config.toml"), config)
        }
        Cli::Gemini => {
            let dir = home.join(".gemini");
            fs::create_dir_all(&dir)?;
            let settings = json!({
                "security": { "auth": { "selectedType": "gemini-api-key" } },
                "general": {
                    "enableAutoUpdate": false,
                    "enableAutoUpdateNotification": false,
                    "maxAttempts": 1,
                },
                "privacy": { "usageStatisticsEnabled": false },
                "telemetry": { "enabled": false },
            });
            fs::write(dir.join("settings.json"), format!("{settings:#}\n"))
        }
    }
}

/// The arguments (after the program) for one headless turn of `cli` on `prompt`, printing
/// JSON lines, with every tool allowed; with `resume`, continuing that session.
pub fn cli_args(cli: Cli, prompt: &str, resume: Option<&str>) -> Vec<String> {
    let mut args: Vec<&str> = match cli {
        Cli::Claude => vec![
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            "--model",
            "claude-sonnet-4-5",
        ],
        Cli::Codex => {
            let mut a = vec!["exec"];
            a.extend(resume.map(|_| "resume"));
            a.extend(["--json", "--dangerously-bypass-approvals-and-sandbox"]);
            a.extend(resume);
            a.push(prompt);
            a
        }
        Cli::Gemini => vec![
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--yolo",
            "-m",
            "gemini-2.5-flash",
        ],
    };
    if let (Cli::Claude | Cli::Gemini, Some(id)) = (cli, resume) {
        args.extend(["--resume", id]);
    }
    args.into_iter().map(str::to_string).collect()
}

/// The session id in a run's standard output: claude's `session_id` (on every line), codex's
/// `thread.started` `thread_id`, gemini's `init` `session_id`.
pub fn session_id(cli: Cli, stdout: &str) -> Option<String> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|ev| {
            let id = match (cli, ev["type"].as_str()) {
                (Cli::Claude, _) => &ev["session_id"],
                (Cli::Codex, Some("thread.started")) => &ev["thread_id"],
                (Cli::Gemini, Some("init")) => &ev["session_id"],
                _ => &Value::Null,
            };
            id.as_str().map(str::to_string)
        })
}
