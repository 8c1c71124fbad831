//! A turn's life, from brief to result, and the bookkeeping of turns.
//!
//! [`Engine::start`] resolves the driver and the repository, finds the CLI
//! (its version is asked for beside the start, see `version`), writes the
//! brief, takes the start checkpoint and hands the CLI to a detached
//! supervisor; it returns at once with a [`Turn`] whose events
//! stream live. The engine's one watcher reads every turn's raw log as it
//! grows (woken by the file system, not by a timer); the turn's thread, once
//! the CLI has exited, takes the end checkpoint and writes the result. Another process can [`Engine::attach`]
//! to a turn still running; a turn whose supervisor is gone ends
//! `interrupted`. The engine knows nothing of HTTP.

mod answered;
pub mod brief;
mod check;
pub mod conversation;
pub mod credential;
mod credential_probe;
mod drivers_watch;
pub mod events;
mod finish;
mod follow;
pub mod harness;
pub mod log;
mod pinned;
mod refusal;
pub mod result;
pub mod server_credential;
mod spans;
mod start;
mod turns;
mod usage;
mod version;
mod watch;

pub use check::CheckReport;
pub use refusal::{Refusal, RefusalCode, StartError};
pub use turns::{ListedStatus, LogError, TurnSummary};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use cinch_runtime::Runtime;

use crate::config::Config;
use crate::drivers::Registry;
use crate::harnesses::Harness;
use crate::home::Home;
use crate::reading::parse::TurnParser;
use crate::reading::progress::ProgressRenderer;
use crate::reading::reader::LogReader;
use crate::redact::Redactor;
use crate::sandbox;
use crate::turn_dir::{FollowedRun, Launch, SecretsSeal, TurnDir, read_json};
use brief::Note;
use conversation::Conversation;
use events::{EventLog, Listener, Subscription};
use finish::{Finisher, unreadable_result};
use follow::Follower;
use result::TurnResult;
use version::{KnownVersions, VersionProbe};
use watch::{Followed, Signal, Watcher};

/// The longest timeout a turn may have.
pub(crate) const MAX_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How long a harness may write nothing before the watchdog stops it, when
/// neither the turn nor cinch's config says otherwise.
pub(crate) const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10 * 60);

/// At most this many changed files are listed.
pub const FILES_LISTED: usize = 30;

/// One turn to run.
#[derive(Debug, Clone)]
pub struct TurnRequest {
    /// The driver's name.
    pub harness: String,
    /// The repository (a git work tree).
    pub repo: PathBuf,
    /// The task.
    pub brief: String,
    /// Notes appended to the brief.
    pub notes: Vec<Note>,
    /// The model, when not the harness's default.
    pub model: Option<String>,
    /// The effort, when not the harness's default.
    pub effort: Option<String>,
    /// The harness session to resume.
    pub session_id: Option<String>,
    /// How long the turn may run: at most 60 minutes (the command line and
    /// the API take whole minutes, 1 to 60).
    pub timeout: Duration,
    /// How long the harness may write nothing before it is stopped (the
    /// turn ends `timed_out`); none: the engine's watchdog (see
    /// [`Engine::with_watchdog`]). At most 60 minutes.
    pub idle_limit: Option<Duration>,
    /// The run it belongs to; a new turn's own id when none.
    pub run: Option<String>,
    /// Variables set for the harness on top of cinch's own environment
    /// (`HOME`, an environment's variables and secrets); never written to disk.
    pub env: BTreeMap<String, String>,
    /// Values masked in everything the turn shows, besides the configured
    /// secrets and the harness's credentials.
    pub secrets: Vec<String>,
    /// When set, the harness may open outbound TCP connections only to these
    /// ports (an environment's restriction); otherwise the network is open.
    pub tcp_ports: Option<Vec<u16>>,
    /// When set, the harness gets a network of its own whose only way out
    /// is a proxy admitting these hosts (an environment's restriction; see
    /// [`crate::sandbox::egress`]); otherwise the network is open.
    pub allowed_hosts: Option<Vec<String>>,
    /// The agent whose run it is: the raw logs of each agent's most recent
    /// runs are kept. None for a turn of nobody's (`cinch run`).
    pub agent: Option<String>,
    /// MCP servers the harness gets (an environment's), rendered for it by
    /// [`crate::mcp::deliver`]; a harness that cannot take them is refused.
    pub mcp_servers: Vec<crate::mcp::McpServer>,
    /// The host decides the agent's permission requests: each one is
    /// published as [`events::TurnEventKind::Approval`] and waits for
    /// [`Engine::answer`] (conversation drivers of contract 0.3.0 on).
    pub ask: bool,
    /// The W3C `traceparent` of the span the turn belongs under (the
    /// request that asked for it), when traces are exported; the turn's
    /// span starts a trace of its own without one.
    pub trace_parent: Option<String>,
    /// Start a new harness session forked from `session_id` (the host has
    /// put that session where the harness finds it from `repo`), in `repo`
    /// rather than where `session_id` started.
    pub fork: bool,
}

/// cinch's engine: drivers, configuration and the turns under its home.
pub struct Engine {
    home: Home,
    config: Config,
    /// The drivers in force: replaced whole when the plugins change (see
    /// [`Engine::reload_drivers`]); a turn keeps the driver it started with.
    registry: std::sync::RwLock<Arc<Registry>>,
    /// What loads drivers again when the plugins change.
    runtime: Runtime,
    /// Held while a plugin change made through the engine reads and writes
    /// drivers.lock.
    plugin_changes: std::sync::Mutex<()>,
    supervisor_program: PathBuf,
    env: BTreeMap<String, String>,
    sandbox: sandbox::Mode,
    watchdog: Duration,
    /// The file-system watcher of every turn this engine follows, started
    /// with the first (none when it could not be).
    watcher: std::sync::Mutex<Option<Watcher>>,
    /// The versions its turns' CLIs have answered.
    versions: KnownVersions,
    /// What seals the values a running turn's output is masked with while
    /// they wait on disk; in clear without one.
    secrets_seal: Option<SecretsSeal>,
}

/// A running turn.
pub struct Turn {
    id: String,
    harness: String,
    dir: TurnDir,
    events: EventLog,
    cancel: Arc<AtomicBool>,
    wake: Arc<Signal>,
    thread: JoinHandle<TurnResult>,
}

impl Turn {
    /// The turn's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Its driver's name.
    pub fn harness(&self) -> &str {
        &self.harness
    }

    /// The raw log's path.
    pub fn log_path(&self) -> &Path {
        self.dir.log()
    }

    /// A subscriber to the turn's events from the start (the first
    /// subscriber or listener; a later one from the oldest still kept).
    pub fn subscribe(&self) -> Subscription {
        self.events.subscribe(0)
    }

    /// Hands `listener` the turn's events from the start (the first
    /// subscriber or listener; a later one from the oldest still kept),
    /// then each as it is published (see [`Listener`]).
    pub fn listen(&self, listener: Listener) {
        self.events.listen(0, listener);
    }

    /// Stops the turn; it ends `cancelled`.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.wake.raise();
    }

    /// Waits for the result. A turn always has one: one whose result could
    /// not be read ends `interrupted` and says so.
    pub fn wait(self) -> TurnResult {
        match self.thread.join() {
            Ok(result) => result,
            Err(_) => {
                tracing::error!(turn = %self.id, "the thread following the turn panicked");
                let launch: Option<Launch> = read_json(&self.dir.launch()).ok();
                match launch {
                    Some(launch) => unreadable_result(
                        &self.dir,
                        &launch,
                        &launch.harness,
                        result::UNREADABLE_DETAIL,
                    ),
                    None => TurnResult::unreadable(
                        self.id.clone(),
                        self.dir.log().display().to_string(),
                    ),
                }
            }
        }
    }
}

impl Engine {
    /// The engine of the home, with its config and drivers. Supervisors are
    /// started by running `supervisor_program supervise TURN_DIR`, sandboxed
    /// commands by `supervisor_program sandboxed …` (see [`crate::helper`]);
    /// harnesses are found on, and run with, `env` (cinch's
    /// own environment, normally) plus the configured secrets. Turns run in
    /// the sandbox unless [`Engine::with_sandbox`] turns it off.
    pub fn new(
        home: Home,
        runtime: &Runtime,
        supervisor_program: PathBuf,
        env: BTreeMap<String, String>,
    ) -> anyhow::Result<Self> {
        let config = crate::tools::load_config(&home.root().join("config.toml"))?;
        let registry = load_registry(runtime, &home, &config)?;
        let watchdog = config.serve.watchdog()?.unwrap_or(DEFAULT_WATCHDOG);
        Ok(Self {
            home,
            config,
            registry: std::sync::RwLock::new(Arc::new(registry)),
            runtime: runtime.clone(),
            plugin_changes: std::sync::Mutex::default(),
            supervisor_program,
            env,
            sandbox: sandbox::Mode::Enforced,
            watchdog,
            watcher: std::sync::Mutex::default(),
            versions: KnownVersions::default(),
            secrets_seal: None,
        })
    }

    /// This engine stopping a turn whose harness writes nothing for
    /// `idle_limit`, unless the turn sets its own (by default cinch's config
    /// says, else [`DEFAULT_WATCHDOG`]).
    pub fn with_watchdog(mut self, idle_limit: Duration) -> Self {
        self.watchdog = idle_limit;
        self
    }

    /// This engine sealing with `seal` the values a running turn's output is
    /// masked with, which wait on disk until the turn ends.
    pub fn with_secrets_seal(mut self, seal: SecretsSeal) -> Self {
        self.secrets_seal = Some(seal);
        self
    }

    /// This engine running turns in `mode`.
    pub fn with_sandbox(mut self, mode: sandbox::Mode) -> Self {
        self.sandbox = mode;
        self
    }

    /// Whether turns run sandboxed.
    pub fn sandbox(&self) -> sandbox::Mode {
        self.sandbox
    }

    /// Starts the processes cinch runs for a tenant outside turns (setup
    /// commands, git in workspaces) in the same sandbox as its turns.
    pub fn launcher(&self) -> sandbox::Launcher {
        sandbox::Launcher::new(self.supervisor_program.clone(), self.sandbox)
    }

    /// cinch's home, where turns keep their files.
    pub fn home(&self) -> &Home {
        &self.home
    }

    /// The configuration in the home's `config.toml`.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The drivers in force now.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Loads the drivers again from the home's plugins and drivers.lock and
    /// puts them in force for the turns that start from now on; turns
    /// already running keep the driver they started with.
    pub(crate) fn reload_drivers(&self) -> anyhow::Result<()> {
        let registry = load_registry(&self.runtime, &self.home, &self.config)?;
        *self
            .registry
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::new(registry);
        Ok(())
    }

    /// The program supervisors and sandboxed commands start from (see
    /// [`crate::helper::program`]).
    pub fn helper(&self) -> &Path {
        &self.supervisor_program
    }

    /// cinch's environment with the configured secrets.
    fn base_env(&self) -> BTreeMap<String, String> {
        let mut env = self.env.clone();
        env.extend(self.config.secrets.clone());
        env
    }

    fn search_path(&self) -> &str {
        self.env.get("PATH").map_or("", String::as_str)
    }

    /// The engine's watcher, started now if it is not running yet.
    fn watcher(&self) -> Option<Watcher> {
        let mut watcher = cinch_base::sync::lock(&self.watcher);
        if watcher.is_none() {
            match Watcher::start() {
                Ok(started) => *watcher = Some(started),
                Err(error) => tracing::warn!(
                    "cannot watch turns' files, so turns are followed on a timer: {error}"
                ),
            }
        }
        watcher.clone()
    }

    fn follow(
        &self,
        turn: TurnDir,
        launch: Launch,
        harness: &Harness<'_>,
        redactor: Redactor,
        version: Option<VersionProbe>,
        span: tracing::Span,
    ) -> anyhow::Result<Turn> {
        let info = &harness.info;
        let conversation = match &launch.conversation {
            Some(conversation) => Some(Conversation::resume(
                harness.driver,
                &turn,
                &launch,
                conversation,
            )?),
            None => None,
        };
        let parser: Box<dyn TurnParser + Send> = match &conversation {
            Some(conversation) => Box::new(conversation.parser()),
            None => Box::new(answered::OneWay::new(
                harness.driver.session()?,
                turn.clone(),
            )),
        };
        let renderer = ProgressRenderer::new(&info.display_name, redactor.clone());
        let events = EventLog::new();
        let refusals = launch
            .sandbox
            .as_ref()
            .and_then(|policy| policy.egress.as_ref()?.refusals.as_deref())
            .map(|path| follow::Refusals {
                feed: crate::sandbox::egress::RefusalFeed::new(path),
                redactor: redactor.clone(),
                harness: info.name.clone(),
            });
        // One span for all of the driver's parsing, with its sums.
        let parsing = tracing::info_span!(
            target: crate::telemetry::TARGET,
            parent: &span,
            "cinch.parse",
            otel.name = "driver parse",
            cinch.parse.bytes = tracing::field::Empty,
            cinch.parse.reads = tracing::field::Empty,
            cinch.parse.busy_ns = tracing::field::Empty,
        );
        let follower = Follower::new(
            turn.clone(),
            LogReader::new(parser, renderer),
            events.clone(),
            refusals,
            parsing,
        );
        let wake = Arc::new(Signal::default());
        let followed = Followed::new(
            follower,
            turn.log(),
            turn.dir(),
            self.watcher(),
            wake.clone(),
        );
        let cancel = Arc::new(AtomicBool::new(false));
        let context = Finisher {
            home: self.home.clone(),
            turn: turn.clone(),
            launch,
            version,
            display_name: info.display_name.clone(),
            program: info.program.clone(),
            conversation,
            redactor,
            events: events.clone(),
            span,
            _followed_run: FollowedRun::of(&turn),
        };
        let flag = cancel.clone();
        let thread = std::thread::Builder::new()
            .name(format!("turn-{}", context.launch.turn))
            .spawn(move || {
                lower_own_priority();
                context.run(followed, &flag)
            })?;
        Ok(Turn {
            id: turn
                .dir()
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            harness: info.name.clone(),
            dir: turn,
            events,
            cancel,
            wake,
            thread,
        })
    }
}

/// The drivers of `home`: the built-in ones and its plugins, signatures
/// checked as `config` says, with its configured harnesses.
fn load_registry(runtime: &Runtime, home: &Home, config: &Config) -> anyhow::Result<Registry> {
    Registry::load_with(
        runtime,
        Some(&home.plugins_dir()),
        &crate::plugins::SignaturePolicy::from_config(&config.drivers)?,
    )?
    .with_configured(&config.harness)
}

/// Letters, digits and `_ . : -`, at most 200 characters.
pub(crate) fn is_valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 200
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// A session id that is also a plain file name: valid, and not `.`, `..`
/// or hidden.
pub(crate) fn is_plain_session_id(id: &str) -> bool {
    is_valid_session_id(id) && !id.starts_with('.')
}

fn checkpoint_ref(run: &str, turn: &str, which: &str) -> String {
    format!("refs/cinch/runs/{run}/tasks/{turn}/{which}")
}

/// How much less a turn's own thread weighs with the scheduler than the
/// engine's others (a nice value; 10 weighs about a tenth).
const TURN_THREAD_NICE: libc::c_int = 10;

/// Lowers the calling thread's priority to [`TURN_THREAD_NICE`]: a turn's
/// thread does the work of its start and end (checkpoints, the result,
/// pruning), which can wait a few milliseconds; the watcher's threads moving
/// every turn's lines should not, and when many turns end together their
/// threads outnumber them.
fn lower_own_priority() {
    // SAFETY: plain system calls on the calling thread's own id; raising
    // one's own nice value needs no privilege.
    let lowered = unsafe {
        let thread = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, thread as libc::id_t, TURN_THREAD_NICE)
    };
    if lowered != 0 {
        tracing::debug!(
            "could not lower a turn thread's priority: {}",
            std::io::Error::last_os_error()
        );
    }
}
