//! Starting a turn: the request checked, the working tree cleared, the
//! harness's command, environment and sandbox made, the start checkpoint
//! taken and the CLI handed to a detached supervisor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cinch_driver_sdk::{BriefDelivery, ResumeScope};
use tracing::Span;

use super::credential::{self, Credential};
use super::credential::{needs_credential, no_credential};
use super::harness;
use super::spans;
use super::version::VersionProbe;
use super::{
    Engine, MAX_TIMEOUT, Refusal, RefusalCode, StartError, Turn, TurnRequest, brief,
    checkpoint_ref, conversation, credential_probe, is_valid_session_id, server_credential,
};
use crate::checkpoint;
use crate::redact::Redactor;
use crate::sandbox;
use crate::telemetry::{self, TARGET};
use crate::turn_dir::{
    self, ConversationLaunch, FileLock, Launch, TurnDir, now_ms, record_json, record_private,
    worktrees, write_private,
};

impl Engine {
    /// Starts a turn and returns once its supervisor is running. A working
    /// tree runs one turn at a time: while another runs there, the start is
    /// refused ([`RefusalCode::WorktreeBusy`]).
    pub fn start(&self, request: TurnRequest) -> Result<Turn, StartError> {
        let span = spans::turn(&request.harness, request.trace_parent.as_deref());
        let started = span.in_scope(|| self.start_in(request, &span));
        if let Err(error) = &started {
            spans::not_started(&span, error);
        }
        started
    }

    /// [`Engine::start`] in the turn's `span`.
    fn start_in(&self, request: TurnRequest, span: &Span) -> Result<Turn, StartError> {
        let registry = self.registry();
        let harness = registry.harness(&request.harness)?;
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
        let (workdir, _worktree) =
            tracing::info_span!(target: TARGET, "cinch.worktree", otel.name = "worktree")
                .in_scope(|| -> Result<_, StartError> {
                    // A fork runs in its own work tree, where the host put
                    // the session it forks from.
                    let resumed = request.session_id.as_deref().filter(|_| !request.fork);
                    let workdir = self.resume_dir(&info.name, info.resume, resumed, &repo);
                    // Held until the supervisor runs (it holds its own lock by
                    // then), so that a second start in this working tree finds
                    // the first one.
                    let lock = turn_dir::WorktreeLock::take(&self.home, &workdir)?;
                    self.clear_the_way(&workdir)?;
                    Ok((workdir, lock))
                })?;

        let tool = crate::tools::Tool::of(&info.name, &info.program, &self.config)?;
        let Some(program) = self.program_for(&tool)? else {
            return Err(Refusal::new(
                RefusalCode::CliMissing,
                format!("{} ({}) is not on PATH", info.program, info.display_name),
            )
            .into());
        };
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
        record_private(&turn.prompt(), brief_text.as_bytes())?;

        let effort = known_or_default(request.effort.as_deref(), &info.efforts, "effort");
        let deny_tools = self.config.deny_tools(&info.name);
        let driver_turn = cinch_driver_sdk::Turn {
            prompt_file: turn.prompt().display().to_string(),
            workdir: workdir.display().to_string(),
            model: model.clone(),
            effort: effort.clone(),
            session_id: request.session_id.clone(),
            brief: brief_text,
            harness: info.name.clone(),
            permissions: cinch_driver_sdk::PermissionPolicy {
                default_allow: true,
                deny_tools: deny_tools.clone(),
            },
            ask: request.ask,
            fork: request.fork && request.session_id.is_some(),
        };
        let command = driver.command(&driver_turn).map_err(anyhow::Error::from)?;
        // A stream driver's turn that asks may be a conversation (claude's
        // control protocol): the command says.
        let conversation = (info.brief == BriefDelivery::Conversation
            || command.brief == BriefDelivery::Conversation)
            .then_some(ConversationLaunch {
                model,
                effort,
                deny_tools,
                ask: request.ask,
                fork: driver_turn.fork,
            });
        let mcp = crate::mcp::deliver(&info.name, &request.mcp_servers, turn.dir()).map_err(
            |unsupported| Refusal::new(RefusalCode::McpUnsupported, unsupported.to_string()),
        )?;
        for (path, content) in &mcp.files {
            record_private(path, content.as_bytes())
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
        let mut env = harness::environment(base_env, &self.config, &run, &turn_id, &command);
        let egress = request
            .allowed_hosts
            .clone()
            .filter(|_| self.sandbox == sandbox::Mode::Enforced)
            .map(|allowed_hosts| sandbox::Egress {
                allowed_hosts,
                refusals: Some(turn.egress_refusals()),
            });
        if egress.is_some() {
            let (set, removed) = sandbox::egress::proxy_env();
            env.extend(set);
            for name in removed {
                env.remove(name);
            }
        }
        // A CLI that speaks OpenTelemetry joins the turn's trace.
        if let Some(traceparent) = telemetry::traceparent(span) {
            env.insert("TRACEPARENT".to_owned(), traceparent);
        }
        let home_dir = env.get("HOME").map(PathBuf::from);
        if let (Some(profile), Some(home)) = (harness.profile, home_dir.as_deref()) {
            write_home_files(home, &profile.home_files)?;
        }
        if credential::credential(info, &env, home_dir.as_deref()) == Credential::None
            && needs_credential(info)
        {
            // A server's turn (an agent's) gets only what cinch gives it.
            let detail = match &request.agent {
                Some(_) => server_credential::no_credential(info),
                None => no_credential(info, home_dir.as_deref()),
            };
            return Err(Refusal::new(RefusalCode::NoCredential, detail).into());
        }
        // Asked for beside the rest of the start, which needs no version.
        let version = VersionProbe::start(driver.clone(), info, program.clone(), &self.versions)?;
        let secrets = self.turn_secrets(info, &env, home_dir.as_deref(), &request.secrets);
        let kept = turn_dir::KeptSecrets::keep(
            &self.home,
            self.secrets_seal.as_ref(),
            &turn_id,
            &secrets,
        )?;
        let redactor = Redactor::new(secrets);
        spans::started(span, &turn_id, &run, model_run.as_deref(), || {
            redactor.redact(driver_turn.brief.as_str())
        });
        let start = tracing::info_span!(
            target: TARGET,
            "cinch.checkpoint",
            otel.name = "checkpoint start",
            cinch.checkpoint = "start",
        )
        .in_scope(|| {
            checkpoint::take(
                &workdir,
                &checkpoint_ref(&run, &turn_id, "start"),
                "cinch: start of turn",
            )
        })
        .map_err(|error| StartError::CheckpointFailed(error.into()))?;
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
            // The CLIs cinch installed: a pinned one runs from there.
            if tool.pinned.is_some() {
                policy.read_only.push(self.tools_root());
            }
            policy.read_only.push(turn.prompt());
            // The harness reads its MCP configuration; it may not change it.
            policy
                .read_only
                .extend(mcp.files.iter().map(|(path, _)| path.clone()));
            policy.tcp_ports = request.tcp_ports.clone();
            policy.egress = egress;
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
            cli_version: version.known().map(str::to_owned),
            cli_tested: tool.tested.clone(),
            sandbox,
            tmpdir: Some(tmpdir),
            agent: request.agent.clone(),
            model: model_run,
            conversation,
            driver: Some(registry.driver_used(driver)),
        };
        record_json(&turn.launch(), &launch)?;
        version.record_in(turn.clone(), launch.clone());
        worktrees::record(&self.home, &launch.workdir, &launch.turn)?;
        if launch.conversation.is_some() {
            conversation::write_opening(driver, &driver_turn, &turn)?;
        }
        tracing::info_span!(
            target: TARGET,
            "cinch.spawn",
            otel.name = "spawn",
            cinch.sandboxed = launch.sandbox.is_some(),
        )
        .in_scope(|| self.spawn_supervisor(&turn, &env))?;
        // The supervisor holds its own lock by now.
        drop(starting);
        kept.until_the_turn_ends();
        let turn = self.follow(
            turn,
            launch,
            &harness,
            redactor,
            Some(version),
            span.clone(),
        )?;
        Ok(turn)
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

    /// Makes sure no other turn runs in `workdir`. A turn there whose CLI
    /// has exited but whose result nobody is writing (its follower died) is
    /// finished now, so that its end checkpoint holds only its own work.
    fn clear_the_way(&self, workdir: &Path) -> Result<(), StartError> {
        for (turn, launch) in worktrees::unfinished_in(&self.home, workdir)? {
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

    fn spawn_supervisor(
        &self,
        turn: &TurnDir,
        env: &BTreeMap<String, String>,
    ) -> anyhow::Result<()> {
        let status = std::process::Command::new(&self.supervisor_program)
            .arg(crate::helper::SUPERVISE)
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

/// A new turn id: time-ordered and unique enough for one home.
fn new_id() -> String {
    // Without the system's randomness the time alone still orders turns.
    let random = cinch_base::hex::random(4).unwrap_or_else(|_| "0".repeat(8));
    format!("t{}-{random}", now_ms())
}

/// Writes a harness's settings files under `home` (paths relative to it;
/// anything that would leave it is refused), each only where no file is yet:
/// the user's own settings stay as they are.
fn write_home_files(home: &Path, files: &[(String, String)]) -> anyhow::Result<()> {
    for (relative, contents) in files {
        let path = join_inside(
            home,
            relative,
            "the harness named a settings file outside HOME",
        )?;
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
        let path = join_inside(
            workdir,
            relative,
            "the driver named a managed configuration path outside the work tree",
        )?;
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

/// `relative` under `base`, refused (`outside`, and the path) when it is
/// not plainly below it: absolute, or with `..` or `.` in it.
fn join_inside(base: &Path, relative: &str, outside: &str) -> anyhow::Result<PathBuf> {
    let relative = Path::new(relative);
    anyhow::ensure!(
        relative
            .components()
            .all(|part| matches!(part, std::path::Component::Normal(_))),
        "{outside}: {}",
        relative.display()
    );
    Ok(base.join(relative))
}
