//! A turn's life, from brief to result, and the bookkeeping of turns.
//!
//! [`Engine::start`] resolves the driver and the repository, checks the CLI,
//! writes the brief, takes the start checkpoint and hands the CLI to a
//! detached supervisor; it returns at once with a [`Turn`] whose events
//! stream live. The engine's one watcher reads every turn's raw log as it
//! grows (woken by the file system, not by a timer); the turn's thread, once
//! the CLI has exited, takes the end checkpoint and writes the result. Another process can [`Engine::attach`]
//! to a turn still running; a turn whose supervisor is gone ends
//! `interrupted`. The engine knows nothing of HTTP.

pub mod brief;
pub mod conversation;
mod credential_probe;
pub mod events;
mod finish;
mod follow;
pub mod harness;
pub mod log;
mod refusal;
pub mod result;
pub mod state;
mod usage;
mod watch;

pub use refusal::{Refusal, RefusalCode, StartCheckpointFailed};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use anyhow::{Context as _, bail};
use cinch_driver_sdk::{BriefDelivery, ResumeScope};
use serde::{Deserialize, Serialize};

use crate::checkpoint;
use crate::config::Config;
use crate::drivers::Registry;
use crate::harnesses::Harness;
use crate::home::Home;
use crate::parse::TurnParser;
use crate::probe::{CliStatus, probe};
use crate::progress::ProgressRenderer;
use crate::reader::LogReader;
use crate::redact::Redactor;
use crate::runtime::Runtime;
use crate::sandbox;
use brief::Note;
use conversation::Conversation;
use events::{EventLog, Subscription, TurnEventKind};
use finish::Finisher;
use follow::Follower;
use harness::Credential;
use result::{ResultText, Status, TurnResult};
use state::{
    ConversationLaunch, ExitRecord, FileLock, Launch, StopReason, TurnDir, now_ms, read_json,
    write_json, write_private,
};
use watch::{Followed, Signal, Watcher};

/// The timeout when a turn names none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30 * 60);

/// The longest timeout a turn may have.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// How long a harness may write nothing before the watchdog stops it, when
/// neither the turn nor cinch's config says otherwise.
pub const DEFAULT_WATCHDOG: Duration = Duration::from_secs(10 * 60);

/// At most this many changed files are listed.
pub const FILES_LISTED: usize = 30;

/// How much of the CLI's stderr the driver and the result see.
const STDERR_TAIL_BYTES: u64 = 8 << 10;

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
    /// The agent whose run it is: the raw logs of each agent's most recent
    /// runs are kept. None for a turn of nobody's (`cinch run`).
    pub agent: Option<String>,
    /// MCP servers the harness gets (an environment's), rendered for it by
    /// [`crate::mcp::deliver`]; a harness that cannot take them is refused.
    pub mcp_servers: Vec<crate::mcp::McpServer>,
}

/// Why a turn's kept log cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// No turn has that id under the home.
    #[error("no turn `{0}` (see `cinch turns`)")]
    NoSuchTurn(String),
    /// The log was pruned with its run.
    #[error(
        "that turn's harness log is gone: cinch keeps the raw logs of each agent's {} most recent runs",
        state::RUNS_KEPT
    )]
    Pruned,
    /// The log is there but could not be read.
    #[error("reading the harness log: {0}")]
    Unreadable(#[source] std::io::Error),
}

/// What `cinch check` reports of one harness.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The driver's name.
    pub harness: String,
    /// Whether cinch's config lets it run.
    pub enabled: bool,
    /// The CLI's path, when installed.
    pub path: Option<PathBuf>,
    /// The CLI's version, when it said.
    pub version: Option<String>,
    /// The credential it would run on.
    pub credential: Credential,
    /// What keeps it from running, if anything.
    pub problem: Option<String>,
}

/// A turn as `cinch turns` lists it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TurnSummary {
    /// The turn's id.
    pub turn: String,
    /// The driver.
    pub harness: String,
    /// The repository.
    pub repository: String,
    /// When it started, milliseconds since the epoch.
    pub started_at_ms: u64,
    /// `running`, or how it ended.
    pub status: String,
    /// Its session, when known.
    pub session_id: Option<String>,
    /// Its tokens and cost, once it has ended, when its harness reported usage.
    #[serde(default)]
    pub usage: Option<result::TurnUsage>,
    /// Events of types its driver does not know, by type, once it has ended.
    #[serde(default)]
    pub unknown_events: crate::reader::UnknownEvents,
}

/// cinch's engine: drivers, configuration and the turns under its home.
pub struct Engine {
    home: Home,
    config: Config,
    registry: Registry,
    supervisor_program: PathBuf,
    env: BTreeMap<String, String>,
    sandbox: sandbox::Mode,
    watchdog: Duration,
    /// The file-system watcher of every turn this engine follows, started
    /// with the first (none when it could not be).
    watcher: std::sync::Mutex<Option<Watcher>>,
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

    /// A subscriber to the turn's events from the start.
    pub fn subscribe(&self) -> Subscription {
        self.events.subscribe(0)
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
                    Some(launch) => unreadable_result(&self.dir, &launch, &launch.harness),
                    None => TurnResult {
                        turn: self.id.clone(),
                        status: Status::Interrupted,
                        harness: String::new(),
                        repository: String::new(),
                        session_id: None,
                        duration_ms: 0,
                        exit_code: None,
                        files_changed: Vec::new(),
                        total_files: 0,
                        insertions: 0,
                        deletions: 0,
                        detail: Some(result::UNREADABLE_DETAIL.to_owned()),
                        final_message: None,
                        start_checkpoint: None,
                        end_checkpoint: None,
                        log_path: self.dir.log().display().to_string(),
                        result_text: result::UNREADABLE_DETAIL.to_owned(),
                        model: None,
                        usage: None,
                        cli_version: None,
                        unknown_events: Default::default(),
                        not_json_lines: 0,
                    },
                }
            }
        }
    }
}

impl Engine {
    /// The engine of the home, with its config and drivers. Supervisors are
    /// started by running `supervisor_program supervise TURN_DIR` (the cinch
    /// binary itself); harnesses are found on, and run with, `env` (cinch's
    /// own environment, normally) plus the configured secrets. Turns run in
    /// the sandbox unless [`Engine::with_sandbox`] turns it off.
    pub fn new(
        home: Home,
        runtime: &Runtime,
        supervisor_program: PathBuf,
        env: BTreeMap<String, String>,
    ) -> anyhow::Result<Self> {
        let config = Config::load(&home.root().join("config.toml"))?;
        let registry =
            Registry::load(runtime, Some(&home.plugins_dir()))?.with_configured(&config.harness)?;
        let watchdog = config.serve.watchdog()?.unwrap_or(DEFAULT_WATCHDOG);
        Ok(Self {
            home,
            config,
            registry,
            supervisor_program,
            env,
            sandbox: sandbox::Mode::Enforced,
            watchdog,
            watcher: std::sync::Mutex::default(),
        })
    }

    /// This engine stopping a turn whose harness writes nothing for
    /// `idle_limit`, unless the turn sets its own (by default cinch's config
    /// says, else [`DEFAULT_WATCHDOG`]).
    pub fn with_watchdog(mut self, idle_limit: Duration) -> Self {
        self.watchdog = idle_limit;
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

    /// The configuration in the home's `config.toml`.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The drivers.
    pub fn registry(&self) -> &Registry {
        &self.registry
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

    /// Whether `name`'s CLI is installed, its version and its credential.
    pub fn check(&self, name: &str) -> anyhow::Result<CheckReport> {
        let harness = self.registry.harness(name)?;
        let info = &harness.info;
        let env = self.base_env();
        let home_dir = env.get("HOME").map(PathBuf::from);
        let credential = harness::credential(info, &env, home_dir.as_deref());
        let (path, version, mut problem) = match probe(harness.driver, info, self.search_path()) {
            CliStatus::Missing => (None, None, Some(format!("{} is not on PATH", info.program))),
            CliStatus::Found {
                path,
                version,
                problem,
            } => (Some(path), version, problem),
        };
        if problem.is_none() && credential == Credential::None && needs_credential(info) {
            problem = Some(no_credential(info, home_dir.as_deref()));
        }
        let enabled = self.config.is_enabled(name);
        if !enabled {
            problem = Some(format!(
                "harness.off: {name} is turned off in cinch's config"
            ));
        }
        Ok(CheckReport {
            harness: name.to_owned(),
            enabled,
            path,
            version,
            credential,
            problem,
        })
    }

    /// Starts a turn and returns once its supervisor is running. A working
    /// tree runs one turn at a time: while another runs there, the start is
    /// refused ([`RefusalCode::WorktreeBusy`]).
    pub fn start(&self, request: TurnRequest) -> anyhow::Result<Turn> {
        let harness = self.registry.harness(&request.harness)?;
        let driver = harness.driver;
        let info = &harness.info;
        if !self.config.is_enabled(&info.name) {
            return Err(Refusal::new(
                RefusalCode::HarnessOff,
                format!("{} is turned off in cinch's config", info.name),
            )
            .into());
        }
        // Checked before anything is set up; the files come once the turn's folder exists.
        if let Err(unsupported) =
            crate::mcp::deliver(&info.name, &request.mcp_servers, Path::new("/"))
        {
            return Err(Refusal::new(RefusalCode::McpUnsupported, unsupported.to_string()).into());
        }
        if let Some(session) = &request.session_id
            && !is_valid_session_id(session)
        {
            return Err(Refusal::new(
                RefusalCode::SessionInvalid,
                "a session id is letters, digits and `_ . : -`, at most 200 characters",
            )
            .into());
        }
        if request.timeout.is_zero() || request.timeout > MAX_TIMEOUT {
            return Err(Refusal::new(
                RefusalCode::TimeoutInvalid,
                "the timeout is at most 60 minutes",
            )
            .into());
        }
        let idle_limit = request.idle_limit.unwrap_or(self.watchdog);
        if idle_limit.is_zero() || idle_limit > MAX_TIMEOUT {
            return Err(Refusal::new(
                RefusalCode::WatchdogInvalid,
                "the watchdog's limit is more than nothing and at most 60 minutes",
            )
            .into());
        }
        let repo = request.repo.canonicalize().map_err(|error| {
            Refusal::new(
                RefusalCode::RepoInvalid,
                format!("{} does not exist ({error})", request.repo.display()),
            )
        })?;
        if !repo.join(".git").exists() {
            return Err(Refusal::new(
                RefusalCode::RepoInvalid,
                format!("{} is not the top of a git work tree", repo.display()),
            )
            .into());
        }
        let workdir = self.resume_dir(
            &info.name,
            info.resume,
            request.session_id.as_deref(),
            &repo,
        );
        // Held until the supervisor runs (it holds its own lock by then), so
        // that a second start in this working tree finds the first one.
        let _worktree = state::WorktreeLock::take(&self.home, &workdir)?;
        self.clear_the_way(&workdir)?;

        let program = match probe(driver, info, self.search_path()) {
            CliStatus::Missing => {
                return Err(Refusal::new(
                    RefusalCode::CliMissing,
                    format!("{} ({}) is not on PATH", info.program, info.display_name),
                )
                .into());
            }
            CliStatus::Found { path, version, .. } => (path, version),
        };
        let (program, cli_version) = program;
        let config_home = request
            .env
            .get("HOME")
            .or_else(|| self.env.get("HOME"))
            .map(PathBuf::from);
        let own_provider = credential_probe::runs_on_own_provider(info, config_home.as_deref());
        let model = if own_provider {
            // Its config names the model its provider serves.
            None
        } else {
            known_or_default(request.model.as_deref(), &info.models, "model")
        };
        let model_run = model.clone().or_else(|| {
            (!own_provider)
                .then(|| info.default_model.clone())
                .flatten()
        });

        if self.sandbox == sandbox::Mode::Enforced && sandbox::landlock_abi() < sandbox::MINIMUM_ABI
        {
            return Err(Refusal::new(
                RefusalCode::SandboxUnavailable,
                format!(
                    "turns run in a Landlock sandbox, which needs ABI {} (Linux 6.12); this kernel offers {}. Run with --no-sandbox to run turns with cinch's own access.",
                    sandbox::MINIMUM_ABI,
                    sandbox::landlock_abi()
                ),
            )
            .into());
        }

        let turn_id = new_id();
        let run = request.run.clone().unwrap_or_else(|| turn_id.clone());
        let turn = TurnDir::new(&self.home, &run, &turn_id)?;
        let starting = turn.create(request.agent.as_deref())?;
        let tmpdir = turn.tmp();
        crate::home::create_private_dir(&tmpdir)?;
        let brief_text = brief::compose(&request.brief, &request.notes);
        write_private(&turn.prompt(), brief_text.as_bytes())?;

        let effort = known_or_default(request.effort.as_deref(), &info.efforts, "effort");
        let deny_tools = self.config.deny_tools(&info.name);
        let conversation =
            (info.brief == BriefDelivery::Conversation).then(|| ConversationLaunch {
                model: model.clone(),
                effort: effort.clone(),
                deny_tools: deny_tools.clone(),
            });
        let driver_turn = cinch_driver_sdk::Turn {
            prompt_file: turn.prompt().display().to_string(),
            workdir: workdir.display().to_string(),
            model,
            effort,
            session_id: request.session_id.clone(),
            brief: brief_text,
            harness: info.name.clone(),
            permissions: cinch_driver_sdk::PermissionPolicy {
                default_allow: true,
                deny_tools,
            },
        };
        let command = driver.command(&driver_turn)?;
        let mcp = crate::mcp::deliver(&info.name, &request.mcp_servers, turn.dir()).map_err(
            |unsupported| Refusal::new(RefusalCode::McpUnsupported, unsupported.to_string()),
        )?;
        for (path, content) in &mcp.files {
            write_private(path, content.as_bytes())
                .with_context(|| format!("writing the MCP configuration {}", path.display()))?;
        }
        let mut command = command;
        command.args = harness
            .args()
            .iter()
            .chain(&mcp.args_before)
            .chain(&command.args)
            .chain(&mcp.args_after)
            .cloned()
            .collect();
        command.set_env.extend(mcp.env.iter().cloned());
        if let Some(profile) = harness.profile {
            command.set_env.extend(profile.env.iter().cloned());
        }
        let mut base_env = self.base_env();
        base_env.extend(request.env.clone());
        base_env.insert("TMPDIR".to_owned(), tmpdir.display().to_string());
        // Claude Code (as claude-agent-acp bundles it) runs its shell tool in
        // this folder, else in /tmp, which the sandbox keeps it out of.
        base_env.insert(
            "CLAUDE_CODE_TMPDIR".to_owned(),
            tmpdir.display().to_string(),
        );
        let env = harness::environment(base_env, &self.config, &run, &turn_id, &command);
        let home_dir = env.get("HOME").map(PathBuf::from);
        if let (Some(profile), Some(home)) = (harness.profile, home_dir.as_deref()) {
            write_home_files(home, &profile.home_files)?;
        }
        if harness::credential(info, &env, home_dir.as_deref()) == Credential::None
            && needs_credential(info)
        {
            return Err(Refusal::new(
                RefusalCode::NoCredential,
                no_credential(info, home_dir.as_deref()),
            )
            .into());
        }
        let secrets = self.turn_secrets(info, &env, home_dir.as_deref(), &request.secrets);
        let kept = state::KeptSecrets::keep(&self.home, &turn_id, &secrets)?;
        let start = checkpoint::take(
            &workdir,
            &checkpoint_ref(&run, &turn_id, "start"),
            "cinch: start of turn",
        )
        .map_err(|error| StartCheckpointFailed(error.into()))?;
        remove_managed_config(&workdir, &info.managed_config)?;
        let sandbox = (self.sandbox == sandbox::Mode::Enforced).then(|| {
            let home = env.get("HOME").map(PathBuf::from);
            let dirs = [workdir.as_path(), repo.as_path(), tmpdir.as_path()];
            let mut policy =
                sandbox::Policy::for_tenant(&dirs, home.as_deref(), &self.config.sandbox);
            policy.read_only.extend(sandbox::cli_installation(
                &program,
                self.search_path(),
                self.home.root(),
            ));
            policy.read_only.push(turn.prompt());
            // The harness reads its MCP configuration; it may not change it.
            policy
                .read_only
                .extend(mcp.files.iter().map(|(path, _)| path.clone()));
            policy.tcp_ports = request.tcp_ports.clone();
            policy
        });
        let launch = Launch {
            turn: turn_id.clone(),
            run,
            harness: info.name.clone(),
            repository: request.repo.display().to_string(),
            workdir: workdir.clone(),
            program,
            args: command.args.clone(),
            stdin: (command.brief == BriefDelivery::Stdin).then(|| turn.prompt()),
            log: turn.log().to_path_buf(),
            prompt: turn.prompt(),
            started_at_ms: now_ms(),
            timeout_ms: request.timeout.as_millis() as u64,
            idle_limit_ms: Some(idle_limit.as_millis() as u64),
            resumed_session: request.session_id.clone(),
            start_checkpoint: Some(start.sha),
            cli_version,
            sandbox,
            tmpdir: Some(tmpdir),
            agent: request.agent.clone(),
            model: model_run,
            conversation,
        };
        write_json(&turn.launch(), &launch)?;
        if launch.conversation.is_some() {
            conversation::write_opening(driver, &driver_turn, &turn)?;
        }
        self.spawn_supervisor(&turn, &env)?;
        // The supervisor holds its own lock by now.
        drop(starting);
        kept.until_the_turn_ends();
        self.follow(turn, launch, &harness, Redactor::new(secrets))
    }

    /// Every value to mask in what a turn run with `env` shows: the
    /// configured secrets, the harness's credentials (its secret variables
    /// and its model provider's key), and `more`.
    fn turn_secrets(
        &self,
        info: &cinch_driver_sdk::Info,
        env: &BTreeMap<String, String>,
        home: Option<&Path>,
        more: &[String],
    ) -> Vec<String> {
        let provider_key = credential_probe::provider_key(info, home);
        let credentials = info
            .secret_env
            .iter()
            .chain(provider_key.as_ref())
            .filter_map(|name| env.get(name).cloned());
        self.config
            .secrets
            .values()
            .cloned()
            .chain(credentials)
            .chain(more.iter().cloned())
            .collect()
    }

    /// What a turn shows is masked with: the values kept at its start, the
    /// configured secrets and credentials in cinch's environment, and `more`.
    fn redactor_of(&self, info: &cinch_driver_sdk::Info, turn: &str, more: &[String]) -> Redactor {
        harness::redactor(info, &self.config, &self.base_env())
            .with(&state::kept_secrets(&self.home, turn))
            .with(more)
    }

    /// Makes sure no other turn runs in `workdir`. A turn there whose CLI
    /// has exited but whose result nobody is writing (its follower died) is
    /// finished now, so that its end checkpoint holds only its own work.
    fn clear_the_way(&self, workdir: &Path) -> anyhow::Result<()> {
        for (turn, launch) in state::unfinished_in(&self.home, workdir) {
            let abandoned = !FileLock::is_held(&turn.supervisor_lock())
                && !FileLock::is_held(&turn.finish_lock());
            if abandoned {
                tracing::info!(turn = %launch.turn, "finishing an abandoned turn before the next one in its working tree");
                self.attach(&launch.turn, &[])?.wait();
                continue;
            }
            return Err(Refusal::new(
                RefusalCode::WorktreeBusy,
                format!(
                    "turn {} ({}) is still running in {}; one turn runs at a time in a working tree: wait for it to end, or cancel it",
                    launch.turn,
                    launch.harness,
                    workdir.display()
                ),
            )
            .into());
        }
        Ok(())
    }

    /// Follows a turn that is running (or has ended) from another process,
    /// masking `secrets` besides those kept for it and the configured ones.
    pub fn attach(&self, turn_id: &str, secrets: &[String]) -> anyhow::Result<Turn> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)?;
        let harness = self.registry.harness(&launch.harness)?;
        let redactor = self.redactor_of(&harness.info, turn_id, secrets);
        self.follow(turn, launch, &harness, redactor)
    }

    /// The turn's kept log, read through its driver and redacted.
    pub fn log(&self, turn_id: &str) -> Result<log::LogView, LogError> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)
            .map_err(|_| LogError::NoSuchTurn(turn_id.to_owned()))?;
        let harness = self
            .registry
            .harness(&launch.harness)
            .map_err(|error| LogError::Unreadable(std::io::Error::other(format!("{error:#}"))))?;
        let redactor = self.redactor_of(&harness.info, turn_id, &[]);
        let parser = harness
            .driver
            .session()
            .map_err(|error| LogError::Unreadable(std::io::Error::other(format!("{error:#}"))))?;
        log::read(turn.log(), parser, &harness.info.display_name, &redactor).map_err(|error| {
            match error.kind() {
                std::io::ErrorKind::NotFound => LogError::Pruned,
                _ => LogError::Unreadable(error),
            }
        })
    }

    /// Asks a running turn to stop; it ends `cancelled`.
    pub fn stop(&self, turn_id: &str) -> anyhow::Result<()> {
        let (turn, launch) = TurnDir::find(&self.home, turn_id)?;
        if turn.result().exists() {
            bail!("turn {turn_id} has already ended");
        }
        if launch.conversation.is_some() {
            // The turn's follower sends the driver's stop lines and stops the
            // CLI if it does not end. With no follower to do it, this does.
            write_private(&turn.cancel_request(), b"")?;
            let asked = std::time::Instant::now();
            while asked.elapsed() < conversation::STOP_WAIT {
                if turn.stop_lines_sent().exists() || turn.exit().exists() {
                    return Ok(());
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        crate::supervisor::request_stop(&turn, StopReason::Cancelled)
    }

    /// Every turn under the home, newest first.
    pub fn list(&self) -> anyhow::Result<Vec<TurnSummary>> {
        let Ok(listing) = std::fs::read_dir(state::turns_dir(&self.home)) else {
            return Ok(Vec::new());
        };
        let mut turns: Vec<TurnSummary> = listing
            .filter_map(Result::ok)
            .filter_map(|entry| TurnDir::open(&entry.path()).ok())
            .map(|(turn, launch)| {
                let result: Option<TurnResult> = read_json(&turn.result()).ok();
                let status = match &result {
                    Some(result) => result.status.as_str().to_owned(),
                    None if FileLock::is_held(&turn.supervisor_lock()) => "running".to_owned(),
                    None if turn.is_starting() => "starting".to_owned(),
                    None if turn.exit().exists() => {
                        "exited (no result yet: attach to finish it)".to_owned()
                    }
                    None => "interrupted (attach to finish it)".to_owned(),
                };
                TurnSummary {
                    usage: result.as_ref().and_then(|result| result.usage),
                    unknown_events: result
                        .as_ref()
                        .map(|result| result.unknown_events.clone())
                        .unwrap_or_default(),
                    turn: launch.turn,
                    harness: launch.harness,
                    repository: launch.repository,
                    started_at_ms: launch.started_at_ms,
                    status,
                    session_id: result
                        .and_then(|result| result.session_id)
                        .or_else(|| std::fs::read_to_string(turn.session()).ok()),
                }
            })
            .collect();
        turns.sort_by_key(|turn| std::cmp::Reverse(turn.started_at_ms));
        Ok(turns)
    }

    /// Where to run: a harness bound to its session's directory resumes where
    /// the session started.
    fn resume_dir(
        &self,
        harness: &str,
        scope: ResumeScope,
        session: Option<&str>,
        repo: &Path,
    ) -> PathBuf {
        let Some(session) = session else {
            return repo.to_path_buf();
        };
        if scope == ResumeScope::Anywhere {
            return repo.to_path_buf();
        }
        std::fs::read_to_string(self.session_record(harness, session))
            .ok()
            .map(|dir| PathBuf::from(dir.trim()))
            .filter(|dir| dir.is_dir())
            .unwrap_or_else(|| repo.to_path_buf())
    }

    fn session_record(&self, harness: &str, session: &str) -> PathBuf {
        self.home
            .root()
            .join("sessions")
            .join(harness)
            .join(session)
    }

    /// The engine's watcher, started now if it is not running yet.
    fn watcher(&self) -> Option<Watcher> {
        let mut watcher = crate::sync::lock(&self.watcher);
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

    fn spawn_supervisor(
        &self,
        turn: &TurnDir,
        env: &BTreeMap<String, String>,
    ) -> anyhow::Result<()> {
        let status = std::process::Command::new(&self.supervisor_program)
            .arg("supervise")
            .arg(turn.dir())
            .env_clear()
            .envs(env)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .with_context(|| {
                format!(
                    "starting the supervisor {}",
                    self.supervisor_program.display()
                )
            })?;
        anyhow::ensure!(status.success(), "the supervisor did not start ({status})");
        Ok(())
    }

    fn follow(
        &self,
        turn: TurnDir,
        launch: Launch,
        harness: &Harness<'_>,
        redactor: Redactor,
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
            None => Box::new(harness.driver.session()?),
        };
        let renderer = ProgressRenderer::new(&info.display_name, redactor.clone());
        let events = EventLog::new();
        let follower = Follower::new(
            turn.clone(),
            LogReader::new(parser, renderer),
            events.clone(),
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
            display_name: info.display_name.clone(),
            program: info.program.clone(),
            conversation,
            redactor,
            events: events.clone(),
        };
        let flag = cancel.clone();
        let thread = std::thread::Builder::new()
            .name(format!("turn-{}", context.launch.turn))
            .spawn(move || context.run(followed, &flag))?;
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

/// Whether the harness names any credential to look for: one declared in
/// config.toml with neither variables nor login files runs on its own
/// settings.
fn needs_credential(info: &cinch_driver_sdk::Info) -> bool {
    !info.secret_env.is_empty() || !info.login_files.is_empty()
}

fn no_credential(info: &cinch_driver_sdk::Info, home: Option<&Path>) -> String {
    if let Some(missing) = credential_probe::missing_key(info, home) {
        return missing;
    }
    let secrets = info.secret_env.join(" or ");
    let logins: Vec<String> = info
        .login_files
        .iter()
        .map(|probe| format!("~/{}", probe.path))
        .collect();
    match (secrets.is_empty(), logins.is_empty()) {
        (false, false) => format!(
            "{} has no credential: set {secrets}, or log in with `{}` (it writes {})",
            info.display_name,
            info.program,
            logins.join(" or ")
        ),
        (false, true) => format!("{} has no credential: set {secrets}", info.display_name),
        (true, _) => format!(
            "{} has no credential: log in with `{}`",
            info.display_name, info.program
        ),
    }
}

/// The result of a turn whose result could not be read: `interrupted`, with
/// what its files still tell (its session, its exit code).
fn unreadable_result(turn: &TurnDir, launch: &Launch, display_name: &str) -> TurnResult {
    let session_id = std::fs::read_to_string(turn.session())
        .ok()
        .map(|id| id.trim().to_owned())
        .filter(|id| !id.is_empty());
    let exit: Option<ExitRecord> = read_json(&turn.exit()).ok();
    let ended_at_ms = exit.as_ref().map_or_else(now_ms, |exit| exit.ended_at_ms);
    let duration_ms = ended_at_ms.saturating_sub(launch.started_at_ms);
    let log_path = launch.log.display().to_string();
    let result_text = ResultText {
        status: Status::Interrupted,
        harness: display_name,
        repository: &launch.repository,
        session_id: session_id.as_deref(),
        duration_ms,
        diffstat: "no files changed",
        detail: Some(result::UNREADABLE_DETAIL),
        final_message: None,
        log: &log_path,
    }
    .render(result::RESULT_MAX_BYTES);
    TurnResult {
        turn: launch.turn.clone(),
        status: Status::Interrupted,
        harness: launch.harness.clone(),
        repository: launch.repository.clone(),
        session_id,
        duration_ms,
        exit_code: exit.and_then(|exit| exit.code),
        files_changed: Vec::new(),
        total_files: 0,
        insertions: 0,
        deletions: 0,
        detail: Some(result::UNREADABLE_DETAIL.to_owned()),
        final_message: None,
        start_checkpoint: launch.start_checkpoint.clone(),
        end_checkpoint: None,
        log_path,
        result_text,
        model: launch.model.clone(),
        usage: None,
        cli_version: launch.cli_version.clone(),
        // The log was not read to its end: nothing is counted.
        unknown_events: Default::default(),
        not_json_lines: 0,
    }
}

/// `asked` when `known` lists it (or lists nothing: any value goes), else
/// none: the CLI's own default.
fn known_or_default(asked: Option<&str>, known: &[String], what: &str) -> Option<String> {
    let asked = asked?;
    if known.is_empty() || known.iter().any(|value| value == asked) {
        return Some(asked.to_owned());
    }
    tracing::warn!(
        "the harness has no {what} `{asked}`, so it runs on its default (one of {})",
        known.join(", ")
    );
    None
}

/// Letters, digits and `_ . : -`, at most 200 characters.
pub fn is_valid_session_id(id: &str) -> bool {
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

/// The detail of a turn the watchdog stopped, after `idle_limit_ms` without
/// output: in minutes, or in seconds when the limit is not whole minutes
/// (`[serve] watchdog_seconds`, for tests).
fn no_output_detail(idle_limit_ms: u64) -> String {
    let quiet = match idle_limit_ms {
        60_000 => "1 minute".to_owned(),
        ms if ms % 60_000 == 0 => format!("{} minutes", ms / 60_000),
        1_000 => "1 second".to_owned(),
        ms => format!("{} seconds", ms.div_ceil(1000)),
    };
    format!("No output for {quiet}; stopped.")
}

fn checkpoint_ref(run: &str, turn: &str, which: &str) -> String {
    format!("refs/cinch/runs/{run}/tasks/{turn}/{which}")
}

/// A new turn id: time-ordered and unique enough for one home.
fn new_id() -> String {
    // Without the system's randomness the time alone still orders turns.
    let random = crate::hex::random(4).unwrap_or_else(|_| "0".repeat(8));
    format!("t{}-{random}", now_ms())
}

/// Writes a harness's settings files under `home` (paths relative to it;
/// anything that would leave it is refused), each only where no file is yet:
/// the user's own settings stay as they are.
fn write_home_files(home: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    for (relative, contents) in files {
        let relative = Path::new(relative);
        anyhow::ensure!(
            relative
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_))),
            "the harness named a settings file outside HOME: {}",
            relative.display()
        );
        let path = home.join(relative);
        if path.exists() {
            continue;
        }
        if let Some(folder) = path.parent() {
            std::fs::create_dir_all(folder)
                .with_context(|| format!("creating {}", folder.display()))?;
        }
        write_private(&path, contents.as_bytes())
            .with_context(|| format!("writing the harness's settings {}", path.display()))?;
    }
    Ok(())
}

/// Removes the harness's local configuration (paths relative to the work
/// tree; anything that would leave it is refused).
fn remove_managed_config(workdir: &Path, paths: &[String]) -> anyhow::Result<()> {
    for relative in paths {
        let relative = Path::new(relative);
        anyhow::ensure!(
            relative
                .components()
                .all(|part| matches!(part, std::path::Component::Normal(_))),
            "the driver named a managed configuration path outside the work tree: {}",
            relative.display()
        );
        let path = workdir.join(relative);
        match std::fs::remove_file(&path) {
            Ok(()) => {
                tracing::info!(path = %path.display(), "removed the harness's local configuration")
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(error).with_context(|| format!("removing {}", path.display()));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdogs_detail_counts_whole_minutes_as_minutes() {
        assert_eq!(
            no_output_detail(10 * 60_000),
            "No output for 10 minutes; stopped."
        );
        assert_eq!(no_output_detail(60_000), "No output for 1 minute; stopped.");
        assert_eq!(no_output_detail(3_000), "No output for 3 seconds; stopped.");
    }
}
