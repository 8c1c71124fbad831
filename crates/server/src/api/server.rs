//! `GET /v1/server`: what this server is and how it contains what it runs.

use std::sync::OnceLock;

use axum::extract::State;
use serde::Serialize;

use super::extract::Caller;
use super::problem::Problem;
use super::{AppState, Envelope};
use cinch_engine::sandbox::Support;

/// The server.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct ServerView {
    /// cinch's version.
    pub version: String,
    /// How turns and setup commands are contained.
    pub sandbox: SandboxView,
    /// The CLI versions config.toml pins, by harness (`[harness.NAME]
    /// version`): installed under cinch's home and run instead of PATH's.
    pub pinned_clis: std::collections::BTreeMap<String, String>,
}

/// How tenants' processes are contained.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct SandboxView {
    /// Whether they run sandboxed; false only under `--no-sandbox`.
    pub enforced: bool,
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: i32,
    /// Files beyond the workspace, agent home and TMPDIR are out of reach.
    pub filesystem: bool,
    /// Signals to and abstract sockets of processes outside are refused.
    pub scoped_signals_and_sockets: bool,
    /// Environments may limit outbound TCP to listed ports.
    pub tcp_ports: bool,
    /// Environments may limit the network to listed hosts (`allowed_hosts`).
    pub allowed_hosts: bool,
    /// Processes per turn are capped by a cgroup.
    pub process_limit: bool,
    /// Memory per turn is capped by a cgroup.
    pub memory_limit: bool,
    /// Each turn runs in a PID namespace with a /proc of its own processes,
    /// so `ps` works inside a turn (droid needs it to run commands).
    pub own_proc: bool,
}

/// The server's version and sandbox.
#[utoipa::path(
    get,
    path = "/v1/server",
    responses(
        (status = 200, body = Envelope<ServerView>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "server"
)]
pub(super) async fn get_server(
    State(app): State<AppState>,
    _caller: Caller,
) -> axum::Json<Envelope<ServerView>> {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    let support = SUPPORT.get_or_init(Support::detect);
    let enforced = app.probes.sandbox_enforced();
    let limited = |report: &cinch_engine::sandbox::CgroupReport| {
        enforced && matches!(report, cinch_engine::sandbox::CgroupReport::Cgroup { .. })
    };
    Envelope::of(ServerView {
        version: env!("CARGO_PKG_VERSION").to_owned(),
        sandbox: SandboxView {
            enforced,
            landlock_abi: support.landlock_abi,
            filesystem: enforced && support.filesystem,
            scoped_signals_and_sockets: enforced && support.scoped_signals_and_sockets,
            tcp_ports: enforced && support.tcp_ports,
            allowed_hosts: enforced && support.allowed_hosts,
            process_limit: limited(&support.processes),
            memory_limit: limited(&support.memory),
            own_proc: enforced && support.own_proc,
        },
        pinned_clis: app.drivers.pinned_versions(),
    })
}
