//! What an environment gives a harness for a turn, built one way for
//! sessions and code tasks alike.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use cinch_engine::mcp::McpServer;
use cinch_store::Environment;

/// The parts of a turn that come from its agent and environment.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnEnv {
    /// Variables set for the harness: the environment's variables and
    /// secrets, then `HOME`, the agent's home, which nothing overrides (the
    /// sandbox grants that folder and no other home).
    pub env: BTreeMap<String, String>,
    /// The environment's secret values, masked in everything the turn shows.
    pub secrets: Vec<String>,
    /// The ports outbound TCP is limited to, when the environment limits it.
    pub tcp_ports: Option<Vec<u16>>,
    /// The hosts the network is limited to, when the environment limits it.
    pub allowed_hosts: Option<Vec<String>>,
    /// The environment's watchdog, when it sets its own.
    pub idle_limit: Option<Duration>,
    /// The environment's MCP servers.
    pub mcp_servers: Vec<McpServer>,
}

impl TurnEnv {
    /// What a turn of the agent whose home is `agent_home` gets in
    /// `environment` (none: a scratch workspace, only `HOME`).
    pub(crate) fn new(agent_home: &Path, environment: Option<&Environment>) -> Self {
        let mut turn_env = Self::default();
        if let Some(environment) = environment {
            turn_env.env.extend(environment.env.clone());
            turn_env.env.extend(environment.secrets.clone());
            turn_env.secrets = environment.secrets.values().cloned().collect();
            turn_env.tcp_ports = environment.allowed_tcp_ports.clone();
            turn_env.allowed_hosts = environment.allowed_hosts.clone();
            turn_env.idle_limit = environment
                .watchdog_minutes
                .map(|minutes| Duration::from_secs(u64::from(minutes) * 60));
            turn_env.mcp_servers = environment.mcp_servers.clone();
        }
        turn_env
            .env
            .insert("HOME".to_owned(), agent_home.display().to_string());
        turn_env
    }
}
