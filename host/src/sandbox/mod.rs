//! What a tenant's processes may reach: the harness of a turn, its
//! descendants, an environment's setup commands and the git cinch runs in a
//! workspace.
//!
//! A [`Policy`] names the paths a process may read and write, the TCP ports
//! it may connect to and its resource [`Limits`]. [`Policy::prepare`] builds
//! what the kernel needs (the Landlock ruleset, the cgroup files' names) in
//! the parent; [`Prepared::apply`] then applies it to a freshly forked child
//! right before `exec`, making system calls only, so that even a child of
//! the multi-threaded server may run it (the [`Launcher`]). The supervisor
//! does both in the CLI's child ([`Policy::enforce`]). Landlock scopes
//! signals and abstract unix sockets to the domain, so nothing inside can
//! stop, trace or connect to cinch itself or another turn.

mod cgroup;
mod paths;
mod roots;
mod support;

use std::ffi::CString;
use std::os::fd::{FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, NetPort, PathBeneath,
    RestrictionStatus, Ruleset, RulesetAttr, RulesetCreated, RulesetCreatedAttr, RulesetStatus,
    Scope, path_beneath_rules,
};
use serde::{Deserialize, Serialize};

use crate::config::SandboxConfig;

pub use cgroup::Cgroup;
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
}

/// Why a policy could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
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
        policy.limits = config.limits();
        policy
    }

    /// Applies the policy to this process and returns how much the kernel
    /// enforced. Call it in a child between fork and exec (or in a process
    /// about to exec): it cannot be undone.
    pub fn enforce(&self) -> Result<RestrictionStatus, SandboxError> {
        self.prepare()?.apply()
    }

    /// Builds the policy's ruleset and everything else that allocates or
    /// looks up paths, for [`Prepared::apply`] in a child.
    pub fn prepare(&self) -> Result<Prepared, SandboxError> {
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
        let mut created = ruleset
            .create()?
            .add_rules(path_beneath_rules(&self.read_write, all))?
            .add_rules(path_beneath_rules(
                &self.read_only,
                AccessFs::from_read(TARGET_ABI),
            ))?;
        for port in self.tcp_ports.iter().flatten() {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp))?;
        }
        let cgroup_procs = self
            .cgroups
            .iter()
            .map(|path| CString::new(path.as_os_str().as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        Ok(Prepared {
            ruleset: Some(created),
            cgroup_procs,
            limits: self.limits,
        })
    }
}

/// A [`Policy`] ready to apply between fork and exec.
#[derive(Debug)]
pub struct Prepared {
    /// Taken by the (one) apply; a command spawned again forks from the
    /// parent's copy, which still has it.
    ruleset: Option<RulesetCreated>,
    cgroup_procs: Vec<CString>,
    limits: Limits,
}

impl Prepared {
    /// Applies the policy to this process and returns how much the kernel
    /// enforced; it cannot be undone. Makes system calls only and neither
    /// allocates nor frees, so it is safe in the child of a multi-threaded
    /// process, whose other threads may have held the allocator's locks at
    /// the fork.
    pub fn apply(&mut self) -> Result<RestrictionStatus, SandboxError> {
        for procs in &self.cgroup_procs {
            join_cgroup(procs)?;
        }
        cgroup::set_rlimits(&self.limits)?;
        let Some(ruleset) = self.ruleset.take() else {
            return Err(SandboxError::NotEnforced);
        };
        // /proc/self names the process that opens it: opened here, in the
        // process about to exec, it is what runs next (its children do
        // without; measured: bash, git, rg).
        // SAFETY: a NUL-terminated literal; the descriptor is checked and owned at once.
        let proc_self =
            unsafe { libc::open(c"/proc/self".as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
        if proc_self < 0 {
            return Err(std::io::Error::last_os_error().into());
        }
        // SAFETY: a descriptor just returned to us, owned by nothing else.
        let proc_self = unsafe { OwnedFd::from_raw_fd(proc_self) };
        let status = ruleset
            .add_rule(PathBeneath::new(proc_self, AccessFs::from_read(TARGET_ABI)))?
            .restrict_self()?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(SandboxError::NotEnforced);
        }
        Ok(status)
    }
}

/// Moves this process into the cgroup whose `cgroup.procs` file is `procs`.
fn join_cgroup(procs: &CString) -> std::io::Result<()> {
    // SAFETY: a NUL-terminated path; the descriptor is checked and closed here.
    let fd = unsafe { libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: writes one byte from a literal to the descriptor opened above.
    let written = unsafe { libc::write(fd, c"0".as_ptr().cast(), 1) };
    let error = std::io::Error::last_os_error();
    // SAFETY: closes the descriptor opened above, once.
    unsafe { libc::close(fd) };
    if written == 1 { Ok(()) } else { Err(error) }
}

/// Whether a process's error output tells of something refused to it (the
/// way libc, node and the sandbox's own setup report it).
pub fn mentions_denial(stderr: &str) -> bool {
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
/// the policy is prepared in the parent and applied in the child.
#[derive(Debug, Clone, Copy)]
pub struct Launcher {
    mode: Mode,
}

impl Launcher {
    /// A launcher running commands sandboxed when `mode` is enforced, and
    /// as they are otherwise.
    pub fn new(mode: Mode) -> Self {
        Self { mode }
    }

    /// Whether commands run sandboxed.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// A command that runs `program` with `args` under `policy`.
    pub fn command(
        &self,
        policy: &Policy,
        program: &str,
        args: &[&str],
    ) -> Result<Command, SandboxError> {
        let mut command = Command::new(program);
        command.args(args);
        if self.mode == Mode::Enforced {
            let mut prepared = policy.prepare()?;
            // SAFETY: `apply` makes system calls only (see there); the
            // failure path writes a literal to stderr, also a system call.
            unsafe {
                command.pre_exec(move || {
                    prepared.apply().map(drop).map_err(|_| {
                        let message = c"cinch sandbox: the policy could not be applied\n";
                        libc::write(2, message.as_ptr().cast(), message.count_bytes());
                        std::io::Error::from_raw_os_error(libc::EPERM)
                    })
                });
            }
        }
        Ok(command)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_command_runs_its_own_program() {
        let policy = Policy::with_system([PathBuf::from("/tmp")]);
        for mode in [Mode::Enforced, Mode::Disabled] {
            let command = Launcher::new(mode)
                .command(&policy, "git", &["status"])
                .unwrap();
            assert_eq!(command.get_program(), "git");
            assert_eq!(command.get_args().collect::<Vec<_>>(), ["status"]);
        }
    }
}
