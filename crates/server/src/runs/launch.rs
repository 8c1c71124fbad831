//! Starting a turn as a call of a run, and following it: one way for
//! sessions and code tasks alike.

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;

use super::Runner;
use super::live::{CallRef, LiveState};
use super::turn_env::TurnEnv;
use cinch_engine::engine::brief::Note;
use cinch_engine::engine::{StartError, Turn, TurnRequest};
use cinch_store::{AccountId, AgentId, Call, Environment, StoreError};

/// A turn to start: what its service chose; its agent and environment give
/// the rest ([`TurnEnv`]).
#[derive(Debug)]
pub struct Launch<'a> {
    /// The account it runs for.
    pub account_id: &'a AccountId,
    /// The run it is a call of.
    pub run: &'a str,
    /// The agent it runs as.
    pub agent_id: &'a AgentId,
    /// Its environment; none for a scratch workspace.
    pub environment: Option<&'a Environment>,
    /// The harness.
    pub harness: String,
    /// The working tree it runs in.
    pub repo: PathBuf,
    /// What the harness is told.
    pub brief: String,
    /// Texts appended to the brief.
    pub notes: Vec<Note>,
    /// The model, when not the harness's default.
    pub model: Option<String>,
    /// The effort, when not the harness's default.
    pub effort: Option<String>,
    /// The harness session to resume (or fork, with `fork`).
    pub session_id: Option<String>,
    /// Whether `session_id` is forked into a new harness session.
    pub fork: bool,
    /// How long the harness may run.
    pub timeout: Duration,
    /// Whether the harness asks before it acts (an approval policy).
    pub ask: bool,
    /// The trace the turn belongs under.
    pub trace_parent: Option<String>,
}

/// A started turn and its call.
pub struct Started {
    /// The running turn, to follow.
    pub turn: Turn,
    /// Its call of the run.
    pub call: Call,
}

/// Why a turn did not start.
#[derive(Debug, thiserror::Error)]
pub enum LaunchError {
    /// The engine did not start it.
    #[error(transparent)]
    Start(#[from] StartError),
    /// Its call could not be recorded, so it was stopped.
    #[error(transparent)]
    Call(#[from] StoreError),
}

impl Runner {
    /// Starts `launch`'s turn (its agent's home made first) and records it
    /// as a call of its run on this node. A turn whose call could not be
    /// recorded is cancelled: nobody could find it.
    pub async fn start(&self, launch: Launch<'_>) -> Result<Started, LaunchError> {
        let agent_home = self.agent_home(launch.agent_id);
        let turn_env = TurnEnv::new(&agent_home, launch.environment);
        let request = TurnRequest {
            harness: launch.harness,
            repo: launch.repo,
            brief: launch.brief,
            notes: launch.notes,
            model: launch.model,
            effort: launch.effort,
            session_id: launch.session_id,
            timeout: launch.timeout,
            run: Some(launch.run.to_owned()),
            env: turn_env.env,
            secrets: turn_env.secrets,
            tcp_ports: turn_env.tcp_ports,
            allowed_hosts: turn_env.allowed_hosts,
            idle_limit: turn_env.idle_limit,
            agent: Some(launch.agent_id.to_string()),
            mcp_servers: turn_env.mcp_servers,
            ask: launch.ask,
            trace_parent: launch.trace_parent,
            fork: launch.fork,
        };
        let engine = self.engine.clone();
        let turn = tokio::task::spawn_blocking(move || {
            cinch_engine::home::create_private_dir(&agent_home)?;
            engine.start(request)
        })
        .await
        .map_err(|error| StartError::Failed(error.into()))??;
        match self
            .store
            .create_call(
                launch.account_id,
                launch.run,
                turn.id(),
                launch.environment.map(|environment| &environment.id),
                &self.node_id,
            )
            .await
        {
            Ok(call) => Ok(Started { turn, call }),
            Err(error) => {
                turn.cancel();
                Err(error.into())
            }
        }
    }

    /// Follows `turn`, the call `call` names: its progress becomes its
    /// run's live events, and the state returned says when it ended.
    pub async fn follow(
        &self,
        call: CallRef,
        turn: Turn,
    ) -> anyhow::Result<watch::Receiver<LiveState>> {
        self.live.follow(call, turn).await
    }
}

/// Where a call's events go.
pub(crate) fn call_ref(call: &Call) -> CallRef {
    CallRef {
        account_id: call.account_id.clone(),
        run_id: call.run_id.clone(),
        call_id: call.call_id.clone(),
    }
}
