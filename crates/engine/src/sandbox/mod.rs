//! What a tenant's processes may reach: the harness of a turn, its
//! descendants, an environment's setup commands and the git cinch runs in a
//! workspace.
//!
//! A [`Policy`] names the paths a process may read and write, the TCP ports
//! it may connect to and its resource [`Limits`]. [`Policy::enforce`] applies
//! it to the calling process (Landlock, rlimits, cgroups) and is meant for a
//! freshly forked child right before `exec`: the supervisor calls it in the
//! CLI's child, and `cinch sandboxed` (the [`Launcher`]) calls it for commands
//! the multi-threaded server starts. Landlock scopes signals and abstract
//! unix sockets to the domain, so nothing inside can stop, trace or connect
//! to cinch itself or another turn.

mod cgroup;
pub mod egress;
pub(crate) mod namespace;
mod paths;
mod roots;
mod support;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, RestrictionStatus, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

use crate::config::SandboxConfig;

pub use cgroup::Cgroup;
pub use egress::Egress;
pub use paths::{cli_installation, git_dirs, system_read_only, system_read_write};
pub use roots::RepositoryRoots;
pub use support::{CgroupReport, Support, landlock_abi};

/// The newest Landlock ABI cinch asks for; older kernels get what they have.
const TARGET_ABI: ABI = ABI::V7;

/// The oldest ABI cinch accepts as a sandbox: it scopes signals and abstract
/// unix sockets, so a harness cannot stop or reach the server.
pub const MINIMUM_ABI: i32 = 6;

/// Whether tenants' processes run sandboxed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Every tenant process runs under a [`Policy`].
    Enforced,
    /// The operator chose `--no-sandbox`: processes run with cinch's own access.
    Disabled,
}

/// The helper's subcommand that applies a policy, then execs:
/// `sandboxed POLICY PROGRAM [ARGS…]`.
pub(crate) const SANDBOXED: &str = "sandboxed";

/// Resource limits for one turn (or one setup command) and its descendants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Processes and threads at once (a cgroup's `pids.max`, else `RLIMIT_NPROC`,
    /// which does not bind root).
    pub processes: u64,
    /// Open files per process (`RLIMIT_NOFILE`).
    pub open_files: u64,
    /// Memory of the whole group, when the machine delegates a memory cgroup.
    pub memory_bytes: Option<u64>,
}

impl Limits {
    /// The limits config.toml's `[sandbox]` gives, defaults where unset.
    pub fn from_config(config: &SandboxConfig) -> Self {
        let defaults = Self::default();
        Self {
            processes: config.max_processes.unwrap_or(defaults.processes),
            open_files: config.max_open_files.unwrap_or(defaults.open_files),
            memory_bytes: match config.memory_mb {
                Some(0) => None,
                Some(mb) => Some(mb << 20),
                None => defaults.memory_bytes,
            },
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            processes: 1024,
            open_files: 8192,
            memory_bytes: Some(8 << 30),
        }
    }
}

/// What one sandboxed process (and everything it starts) may reach.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// Read, write, create and delete beneath these (files or folders).
    pub read_write: Vec<PathBuf>,
    /// Read and execute beneath these.
    pub read_only: Vec<PathBuf>,
    /// When set, outbound TCP only to these ports; otherwise the network is open.
    pub tcp_ports: Option<Vec<u16>>,
    /// Resource limits.
    pub limits: Limits,
    /// `cgroup.procs` files the process joins before it is restricted.
    pub cgroups: Vec<PathBuf>,
    /// Added to the process's nice value: above 0, it yields the CPU to
    /// cinch's own work (and to turns) whenever both want it.
    #[serde(default)]
    pub niceness: i32,
    /// When set, the process gets a network of its own whose only way out
    /// is a proxy admitting these hosts (see [`egress`]).
    #[serde(default)]
    pub egress: Option<Egress>,
}

/// Why a policy could not be applied.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SandboxError {
    /// Landlock refused the ruleset.
    #[error("the sandbox could not be set up: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The kernel enforced nothing.
    #[error(
        "this kernel enforces no Landlock sandbox; start cinch with --no-sandbox to run unsandboxed"
    )]
    NotEnforced,
    /// A limit or cgroup could not be set.
    #[error("the sandbox's limits could not be set: {0}")]
    Limits(#[from] std::io::Error),
    /// The network of its own (the environment's `allowed_hosts`) could not be made.
    #[error("the network limited to the environment's allowed_hosts could not be set up: {0}")]
    Network(std::io::Error),
}

impl Policy {
    /// The base every tenant process gets: the system read-only, the
    /// devices tools need, and `read_write` (which must exist).
    pub fn with_system(read_write: impl IntoIterator<Item = PathBuf>) -> Self {
        let mut read_write: Vec<PathBuf> = read_write.into_iter().collect();
        read_write.extend(system_read_write());
        Self {
            read_write,
            read_only: system_read_only(),
            ..Self::default()
        }
    }

    /// What a tenant's process working in the folders `dirs` may reach:
    /// them, the git folders their worktrees write, `home`, the system, and
    /// what the operator added in `config.toml`'s `[sandbox]`.
    pub fn for_tenant(dirs: &[&Path], home: Option<&Path>, config: &SandboxConfig) -> Self {
        let mut read_only = Vec::new();
        let mut read_write = Vec::new();
        for dir in dirs {
            let (git_read, git_write) = git_dirs(dir);
            read_only.extend(git_read);
            read_write.extend(git_write);
            read_write.push(dir.to_path_buf());
        }
        read_write.extend(home.map(Path::to_path_buf));
        read_write.extend(config.read_write.iter().cloned());
        read_write.sort();
        read_write.dedup();
        let mut policy = Self::with_system(read_write);
        policy.read_only.extend(read_only);
        policy.read_only.extend(config.read_only.iter().cloned());
        policy.limits = Limits::from_config(config);
        policy
    }

    /// Applies the policy to this process and returns how much the kernel
    /// enforced. Call it in a child between fork and exec (or in a process
    /// about to exec): it cannot be undone.
    pub(crate) fn enforce(&self, proc_view: ProcView) -> Result<RestrictionStatus, SandboxError> {
        for procs in &self.cgroups {
            std::fs::write(procs, b"0")?;
        }
        cgroup::set_rlimits(&self.limits)?;
        if self.niceness != 0 {
            cgroup::lower_priority(self.niceness)?;
        }
        // Before Landlock: the proxy it starts stays outside the domain,
        // out of the confined process's reach.
        if let Some(egress) = &self.egress {
            egress::confine(egress).map_err(SandboxError::Network)?;
        }
        let all = AccessFs::from_all(TARGET_ABI);
        let mut ruleset = Ruleset::default()
            .handle_access(all)?
            .scope(Scope::AbstractUnixSocket | Scope::Signal)?;
        if self.tcp_ports.is_some() {
            // A port list is a promise: refuse to start rather than run open.
            ruleset = ruleset
                .set_compatibility(CompatLevel::HardRequirement)
                .handle_access(AccessNet::ConnectTcp)?
                .set_compatibility(CompatLevel::BestEffort);
        }
        // The rule for /proc/self binds this very process, which is what
        // execs next: its children do without (measured: bash, git, rg). A
        // namespace's own /proc is all the turn's, and holds none of the
        // host's files listed under /proc.
        let proc_rule = match proc_view {
            ProcView::OwnEntry => Path::new("/proc/self"),
            ProcView::Namespace => Path::new("/proc"),
        };
        let read_only = self
            .read_only
            .iter()
            .map(PathBuf::as_path)
            .filter(|path| proc_view == ProcView::OwnEntry || !path.starts_with("/proc"))
            .chain([proc_rule]);
        let mut created = ruleset
            .create()?
            .add_rules(path_beneath_rules(&self.read_write, all))?
            .add_rules(path_beneath_rules(
                read_only,
                AccessFs::from_read(TARGET_ABI),
            ))?;
        // Ports, when listed, hold on the confined network too: the proxy's is one.
        let proxy = self
            .tcp_ports
            .as_ref()
            .and(self.egress.as_ref())
            .map(|_| egress::PROXY_PORT);
        for port in self.tcp_ports.iter().flatten().chain(proxy.as_ref()) {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
        let status = created.restrict_self()?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(SandboxError::NotEnforced);
        }
        Ok(status)
    }
}

/// How much of /proc a confined process reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProcView {
    /// The host's /proc: the process's own entry, bound as it is when the
    /// policy is applied (its children get none).
    OwnEntry,
    /// All of a /proc of the process's own PID namespace (see [`namespace`]).
    Namespace,
}

/// Whether a process's error output tells of something refused to it (the
/// way libc, node and the sandbox's own setup report it).
pub(crate) fn mentions_denial(stderr: &str) -> bool {
    [
        "Permission denied",
        "EACCES",
        "Operation not permitted",
        "EPERM",
        "cinch sandbox:",
    ]
    .iter()
    .any(|sign| stderr.contains(sign))
}

/// Starts commands inside a policy from a process that may have threads:
/// through a helper process (see [`crate::helper`]), which applies the policy
/// and then execs.
#[derive(Debug, Clone)]
pub struct Launcher {
    program: PathBuf,
    mode: Mode,
}

impl Launcher {
    /// A launcher running `program sandboxed …` (a helper program, see
    /// [`crate::helper::program`]) when `mode` is enforced, and commands as
    /// they are otherwise.
    pub fn new(program: PathBuf, mode: Mode) -> Self {
        Self { program, mode }
    }

    /// Whether commands run sandboxed.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A command that runs `program` with `args` under `policy`.
    pub fn command(&self, policy: &Policy, program: &str, args: &[&str]) -> Command {
        match self.mode {
            Mode::Disabled => {
                let mut command = Command::new(program);
                command.args(args);
                command
            }
            Mode::Enforced => {
                let mut command = Command::new(&self.program);
                command
                    .arg(SANDBOXED)
                    .arg(serde_json::to_string(policy).expect("a policy is plain data"))
                    .arg(program)
                    .args(args);
                command
            }
        }
    }
}

/// `sandboxed POLICY PROGRAM [ARGS…]`: applies the policy, then execs the
/// program. Returns only on failure.
pub fn launch(policy_json: &OsStr, program: &OsStr, args: &[OsString]) -> anyhow::Error {
    use std::os::unix::process::CommandExt as _;
    let Some(policy_json) = policy_json.to_str() else {
        return anyhow::anyhow!("the sandbox policy is not UTF-8 JSON");
    };
    let policy: Policy = match serde_json::from_str(policy_json) {
        Ok(policy) => policy,
        Err(error) => return anyhow::anyhow!("reading the sandbox policy: {error}"),
    };
    if let Err(error) = policy.enforce(ProcView::OwnEntry) {
        return error.into();
    }
    let error = Command::new(program).args(args).exec();
    anyhow::anyhow!("starting {}: {error}", Path::new(program).display())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_survives_the_command_line() {
        let policy = Policy {
            tcp_ports: Some(vec![443]),
            ..Policy::with_system([PathBuf::from("/tmp/w")])
        };
        let launcher = Launcher::new(PathBuf::from("/bin/cinch"), Mode::Enforced);
        let command = launcher.command(&policy, "git", &["status"]);
        let args: Vec<_> = command.get_args().collect();
        assert_eq!(args[0], SANDBOXED);
        let back: Policy = serde_json::from_str(args[1].to_str().unwrap()).unwrap();
        assert_eq!(back, policy);
        assert_eq!(&args[2..], ["git", "status"]);
        let plain = Launcher::new(PathBuf::from("/bin/cinch"), Mode::Disabled).command(
            &policy,
            "git",
            &["status"],
        );
        assert_eq!(plain.get_program(), "git");
    }
}
