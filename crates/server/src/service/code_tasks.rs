//! Code tasks: a turn in one of the account's environments, started,
//! followed, cancelled and read back as a call of a run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::ServiceError;
use crate::peers::{CallPart, PeerAnswer};
use crate::runs::Runner;
use crate::runs::launch::{Launch, LaunchError, Started, call_ref};
use crate::runs::live::LiveState;
use crate::runs::slots::Full;
use cinch_engine::engine::brief::Note;
use cinch_engine::engine::log::LogView;
use cinch_engine::engine::result::TurnResult;
use cinch_engine::engine::{Engine, LogError, StartError};
use cinch_store::{AccountId, AgentId, Call, Environment, EnvironmentId, Store, TokenOwner};

/// The rule for a run id, as answers state it.
pub(crate) const RUN_ID_RULE: &str = "a run id is 1 to 100 letters, digits and _ . -, starting with a letter, digit or _, \
     without .., not ending in . or .lock";

/// A code task to start.
#[derive(Debug)]
pub(crate) struct NewTask {
    /// The whole task.
    pub brief: String,
    /// The environment's name; none picks the account's only one.
    pub repo: Option<String>,
    /// The harness.
    pub harness: String,
    /// The model, when not the harness's default.
    pub model: Option<String>,
    /// The effort, when not the harness's default.
    pub effort: Option<String>,
    /// The harness session to resume.
    pub session_id: Option<String>,
    /// Texts appended to the brief.
    pub notes: Vec<Note>,
    /// How long the harness may run.
    pub timeout: Duration,
}

/// A code task as it stands: its call, its turn's live state and the name
/// of the environment it runs in (its repository's path once that is gone).
#[derive(Debug, Clone)]
pub(crate) struct TaskView {
    /// The call of the run.
    pub call: Call,
    /// Running, or the result.
    pub state: LiveState,
    /// The environment's name, as `repo` takes it.
    pub repository: String,
}

/// The code-task service.
#[derive(Clone)]
pub(crate) struct CodeTasks {
    store: Store,
    engine: Arc<Engine>,
    runner: Arc<Runner>,
}

impl CodeTasks {
    /// Code tasks on `store` and `engine`, started and followed by
    /// `runner`, counted against its cap on turns at once as sessions are.
    pub(crate) fn new(store: Store, engine: Arc<Engine>, runner: Arc<Runner>) -> Self {
        Self {
            store,
            engine,
            runner,
        }
    }

    /// A run id is one account's: a valid one another account uses is not
    /// found.
    pub(crate) async fn check_run(
        &self,
        account_id: &AccountId,
        run: &str,
    ) -> Result<(), ServiceError> {
        if !is_valid_run_id(run) {
            return Err(ServiceError::invalid_field("run", RUN_ID_RULE));
        }
        if self.store.run_taken_by_other(account_id, run).await? {
            return Err(ServiceError::NotFound("no such run".to_owned()));
        }
        Ok(())
    }

    /// Checks `run` as [`Self::check_run`] does, and that the account has
    /// started a call in it: a run is known once it has one, and an unknown
    /// one is not found like another account's.
    pub(crate) async fn check_run_started(
        &self,
        account_id: &AccountId,
        run: &str,
    ) -> Result<(), ServiceError> {
        self.check_run(account_id, run).await?;
        if !self.store.run_exists(account_id, run).await? {
            return Err(ServiceError::NotFound("no such run".to_owned()));
        }
        Ok(())
    }

    /// Starts `task` in run `run` for the caller; with `wait`, answers once
    /// the turn has ended (the turn carries on if the caller goes away).
    pub(crate) async fn start(
        &self,
        account_id: &AccountId,
        caller: &TokenOwner,
        run: String,
        task: NewTask,
        wait: bool,
    ) -> Result<TaskView, ServiceError> {
        self.check_run(account_id, &run).await?;
        let environment = self
            .resolve_environment(account_id, task.repo.as_deref())
            .await?;
        let agent_id = self.acting_agent(account_id, caller).await?;
        let repo = PathBuf::from(&environment.repository);
        if !repo.is_absolute() {
            return Err(ServiceError::invalid_field(
                "repo",
                format!(
                    "environment {}'s repository is not a local path; code tasks run in a local repository",
                    environment.name
                ),
            ));
        }
        // A code task's turn counts against the cap on turns at once, as a session's does.
        static CODE_TASKS: AtomicU64 = AtomicU64::new(0);
        let slot = format!(
            "code-task:{}:{}",
            self.runner.node_id(),
            CODE_TASKS.fetch_add(1, Ordering::Relaxed)
        );
        let slots = self.runner.slots();
        match slots.take(account_id, &slot).await {
            Ok(Ok(())) => {}
            Ok(Err(Full::Node)) => {
                return Err(ServiceError::CapacityFull {
                    max_turns: slots.max_turns(),
                });
            }
            Ok(Err(Full::Account)) => {
                return Err(ServiceError::AccountCapacityFull {
                    max_turns_per_account: slots.max_turns_per_account().unwrap_or_default(),
                });
            }
            Err(error) => return Err(ServiceError::internal(error)),
        }
        let launch = Launch {
            account_id,
            run: &run,
            agent_id: &agent_id,
            environment: Some(&environment),
            harness: task.harness,
            repo,
            brief: task.brief,
            notes: task.notes,
            model: task.model,
            effort: task.effort,
            session_id: task.session_id,
            fork: false,
            timeout: task.timeout,
            ask: false,
            // The request's span: the turn belongs under it.
            trace_parent: cinch_engine::telemetry::traceparent(&tracing::Span::current()),
        };
        let Started { turn, call } = match self.runner.start(launch).await {
            Ok(started) => started,
            Err(error) => {
                slots.release(&slot);
                return Err(match error {
                    LaunchError::Start(error) => start_error(error),
                    LaunchError::Call(error) => error.into(),
                });
            }
        };
        tracing::info!(call = %call.call_id, turn = %turn.id(), run = %run, "code task started");
        let mut live = self
            .runner
            .follow(call_ref(&call), turn)
            .await
            .map_err(ServiceError::internal)?;
        let runner = self.runner.clone();
        let mut ended = live.clone();
        tokio::spawn(async move {
            let _ = ended.wait_for(|state| state.outcome.is_some()).await;
            runner.slots().release(&slot);
        });
        if wait {
            live.wait_for(|state| state.outcome.is_some())
                .await
                .map_err(ServiceError::internal)?;
        }
        let state = live.borrow().clone();
        Ok(TaskView {
            call,
            state,
            repository: environment.name,
        })
    }

    /// The caller's task `call` of run `run`, as it stands.
    pub(crate) async fn get(
        &self,
        account_id: &AccountId,
        run: &str,
        call: &str,
    ) -> Result<TaskView, ServiceError> {
        let call = self.find_call(account_id, run, call).await?;
        let state = self.live_state(&call).await?;
        self.view(call, state).await
    }

    /// Stops a running task: SIGTERM to the harness, SIGKILL 10 s later.
    pub(crate) async fn cancel(
        &self,
        account_id: &AccountId,
        run: &str,
        call: &str,
    ) -> Result<TaskView, ServiceError> {
        let call = self.find_call(account_id, run, call).await?;
        let state = self.live_state(&call).await?;
        if state.outcome.is_some() {
            return Err(ServiceError::Conflict(
                "that task has already ended".to_owned(),
            ));
        }
        let engine = self.engine.clone();
        let turn_id = call.turn_id.clone();
        blocking(move || engine.stop(&turn_id))
            .await?
            .map_err(|error| ServiceError::Conflict(format!("{error:#}")))?;
        self.view(call, state).await
    }

    /// The unified diff of what an ended task changed, from its start
    /// checkpoint to its end checkpoint.
    pub(crate) async fn diff(
        &self,
        account_id: &AccountId,
        run: &str,
        call: &str,
        context: cinch_engine::checkpoint::DiffContext,
        forward_as: Option<&str>,
    ) -> Result<String, ServiceError> {
        let call = self.find_call(account_id, run, call).await?;
        let result = self.ended(&call).await?;
        let (Some(start), Some(end)) = (
            result.start_checkpoint.clone(),
            result.end_checkpoint.clone(),
        ) else {
            return Err(ServiceError::Conflict(
                "that task has no start and end checkpoints".to_owned(),
            ));
        };
        let repository = PathBuf::from(&result.repository);
        let local = blocking(move || {
            Ok(cinch_engine::checkpoint::diff(
                &repository,
                &start,
                &end,
                context,
            )?)
        })
        .await?;
        match local {
            Ok(diff) => Ok(diff),
            // Its repository (or the checkpoints in it) is on the node that ran it.
            Err(error) => match self
                .ask_its_node(&call, CallPart::Diff(context), forward_as)
                .await
            {
                Some(Ok(PeerAnswer::Found(diff))) => Ok(diff),
                _ => Err(ServiceError::Internal(error)),
            },
        }
    }

    /// The task's kept harness log, read through its driver. A task that
    /// ran on another node is read from that node, as the caller whose
    /// bearer token is `forward_as` (none: the request was itself
    /// forwarded, and goes no further).
    pub(crate) async fn log(
        &self,
        account_id: &AccountId,
        run: &str,
        call: &str,
        forward_as: Option<&str>,
    ) -> Result<LogView, ServiceError> {
        let call = self
            .store
            .call(account_id, run, call)
            .await?
            .ok_or(ServiceError::NotFound(
                "that call has no harness log".to_owned(),
            ))?;
        // A result names its log in the home of the node that ran it.
        let ran_here = call.result()?.is_some_and(|result| {
            self.runner
                .is_in_home(std::path::Path::new(&result.log_path))
        });
        let engine = self.engine.clone();
        let turn_id = call.turn_id.clone();
        let read = tokio::task::spawn_blocking(move || engine.log(&turn_id))
            .await
            .map_err(ServiceError::internal)?;
        match read {
            Ok(view) => Ok(view),
            Err(LogError::NoSuchTurn(_)) if self.store.is_shared() && !ran_here => {
                self.log_from_its_node(&call, forward_as).await
            }
            // The call exists, so its turn had a log: it went with its run.
            Err(LogError::NoSuchTurn(_) | LogError::Pruned) => {
                Err(ServiceError::LogPruned(LogError::Pruned))
            }
            Err(LogError::Unreadable(error)) => Err(ServiceError::internal(error)),
        }
    }

    /// The log of a call another node ran, from that node.
    async fn log_from_its_node(
        &self,
        call: &Call,
        forward_as: Option<&str>,
    ) -> Result<LogView, ServiceError> {
        if call.node_id.as_deref() == Some(self.runner.node_id()) {
            return Err(ServiceError::LogPruned(LogError::Pruned));
        }
        let answer = self.ask_its_node(call, CallPart::Log, forward_as).await;
        match answer {
            Some(Ok(PeerAnswer::Found(body))) => {
                serde_json::from_str(&body).map_err(ServiceError::internal)
            }
            Some(Ok(PeerAnswer::Gone)) => Err(ServiceError::LogPruned(LogError::Pruned)),
            Some(Err(_)) | None => Err(ServiceError::LogOnAnotherNode),
        }
    }

    /// `part` of a call another node ran, asked of that node as the caller
    /// whose token is `forward_as`; none when there is no node to ask (the
    /// call ran here, its node said no address, or the request was itself
    /// forwarded).
    async fn ask_its_node(
        &self,
        call: &Call,
        part: CallPart,
        forward_as: Option<&str>,
    ) -> Option<anyhow::Result<PeerAnswer<String>>> {
        let (Some(node), Some(bearer)) = (&call.node_id, forward_as) else {
            return None;
        };
        if node == self.runner.node_id() {
            return None;
        }
        let base = match self.store.node_url(node).await {
            Ok(Some(base)) => base,
            Ok(None) => return None,
            Err(error) => return Some(Err(error.into())),
        };
        let (run, call_id, bearer) = (call.run_id.clone(), call.call_id.clone(), bearer.to_owned());
        let asked = tokio::task::spawn_blocking(move || {
            crate::peers::fetch(&base, &run, &call_id, part, &bearer)
        })
        .await
        .map_err(anyhow::Error::from)
        .and_then(|fetched| fetched);
        if let Err(error) = &asked {
            tracing::warn!(%node, call = %call.call_id, ?part, "asking the node that ran the call: {error:#}");
        }
        Some(asked)
    }

    async fn view(&self, call: Call, state: LiveState) -> Result<TaskView, ServiceError> {
        let repository = self.repository_name(&call, &state).await?;
        Ok(TaskView {
            call,
            state,
            repository,
        })
    }

    /// The agent a code task runs as: the caller when it is an agent, else
    /// the account's connected agent.
    async fn acting_agent(
        &self,
        account_id: &AccountId,
        caller: &TokenOwner,
    ) -> Result<AgentId, ServiceError> {
        if let TokenOwner::Agent(agent_id) = caller {
            return Ok(agent_id.clone());
        }
        let agents = self.store.agents(account_id, None, 200).await?.items;
        agents
            .into_iter()
            .find(|agent| agent.connected && agent.enabled)
            .map(|agent| agent.id)
            .ok_or(ServiceError::NoAgent)
    }

    /// The environment a task runs in: the one named, or the account's only one.
    async fn resolve_environment(
        &self,
        account_id: &AccountId,
        repo: Option<&str>,
    ) -> Result<Environment, ServiceError> {
        let environments = self.store.environment_names(account_id).await?;
        let names = || {
            environments
                .iter()
                .map(|(_, name)| name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let invalid = |rule: String| ServiceError::invalid_field("repo", rule);
        let id = match (repo, environments.as_slice()) {
            (_, []) => {
                return Err(invalid(
                    "the account has no environments: create one with POST /v1/accounts/{account}/environments"
                        .to_owned(),
                ));
            }
            (None, [(id, _)]) => id.clone(),
            (None, _) => {
                return Err(invalid(format!(
                    "required with several environments: one of {}",
                    names()
                )));
            }
            (Some(name), _) => match environments.iter().find(|(_, known)| known == name) {
                Some((id, _)) => id.clone(),
                None => {
                    return Err(invalid(format!(
                        "no environment is named {name}; there are {}",
                        names()
                    )));
                }
            },
        };
        self.store
            .environment(account_id, &id)
            .await?
            .ok_or(ServiceError::NotFound(
                "that environment was just deleted".to_owned(),
            ))
    }

    /// The name of the environment a call ran in, as `repo` takes it; its
    /// repository's path once the environment is gone.
    async fn repository_name(
        &self,
        call: &Call,
        state: &LiveState,
    ) -> Result<String, ServiceError> {
        if let Some(environment) = self
            .store
            .environment(
                &call.account_id,
                &EnvironmentId::from(call.environment_id.clone()),
            )
            .await?
        {
            return Ok(environment.name);
        }
        Ok(match &state.outcome {
            Some(Ok(result)) => result.repository.clone(),
            _ => String::new(),
        })
    }

    /// The account's call `call` of run `run`.
    async fn find_call(
        &self,
        account_id: &AccountId,
        run: &str,
        call: &str,
    ) -> Result<Call, ServiceError> {
        self.store
            .call(account_id, run, call)
            .await?
            .ok_or(ServiceError::NotFound("no such task".to_owned()))
    }

    /// The live state of a call's turn; an ended one's result comes from the
    /// database, and a turn this server does not follow yet (after a
    /// restart) is attached to.
    async fn live_state(&self, call: &Call) -> Result<LiveState, ServiceError> {
        if let Some(live) = self.runner.live().watch(&call.turn_id) {
            return Ok(live.borrow().clone());
        }
        if let Some(result) = call.result()? {
            return Ok(LiveState {
                session_id: result.session_id.clone(),
                outcome: Some(Ok(Arc::new(result))),
                result_stored: true,
            });
        }
        let engine = self.engine.clone();
        let turn_id = call.turn_id.clone();
        let turn = match blocking(move || engine.attach(&turn_id, &[])).await? {
            Ok(turn) => turn,
            // Nodes sharing the database each have their own home: a turn
            // without a result that this one lacks runs on another node.
            Err(_) if self.store.is_shared() => return Ok(LiveState::default()),
            Err(_) => {
                return Err(ServiceError::NotFound(
                    "that task's turn is gone from cinch's home".to_owned(),
                ));
            }
        };
        let mut live = self
            .runner
            .follow(call_ref(call), turn)
            .await
            .map_err(ServiceError::internal)?;
        // A finished turn's result is read back at once; a running one answers as running.
        let _ = tokio::time::timeout(
            Duration::from_secs(2),
            live.wait_for(|state| state.outcome.is_some()),
        )
        .await;
        let state = live.borrow().clone();
        Ok(state)
    }

    /// The ended turn's result; a conflict while it runs.
    async fn ended(&self, call: &Call) -> Result<Arc<TurnResult>, ServiceError> {
        match self.live_state(call).await?.outcome {
            Some(Ok(result)) => Ok(result),
            _ => Err(ServiceError::Conflict(
                "that task is still running".to_owned(),
            )),
        }
    }
}

/// Whether `run` may name a run: it names a folder of the home and a
/// component of the git refs of its checkpoints, so it is what both accept.
fn is_valid_run_id(run: &str) -> bool {
    run.len() <= 100
        && run
            .chars()
            .next()
            .is_some_and(|first| first.is_ascii_alphanumeric() || first == '_')
        && run
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !run.contains("..")
        && !run.ends_with('.')
        && !run.ends_with(".lock")
}

/// An engine refusal stays one; anything else is the server's fault.
fn start_error(error: StartError) -> ServiceError {
    match error {
        StartError::Refused(refusal) => ServiceError::Refused(refusal),
        StartError::Failed(error) => ServiceError::Internal(error),
        checkpoint @ StartError::CheckpointFailed(_) => ServiceError::internal(checkpoint),
    }
}

/// Runs a blocking engine call off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> anyhow::Result<T> + Send + 'static,
) -> Result<anyhow::Result<T>, ServiceError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(ServiceError::internal)
}
