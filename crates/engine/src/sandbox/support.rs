//! What this machine's kernel lets the sandbox enforce, for `cinch check`,
//! `cinch serve`'s start and the `/v1/server` view.

use std::path::PathBuf;

use serde::Serialize;

use super::cgroup::{Cgroup, Controller, hierarchies};
use super::{Limits, MINIMUM_ABI};

/// How a limit that needs a cgroup is enforced here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CgroupReport {
    /// Each turn gets a cgroup under this one.
    Cgroup {
        /// cinch's own cgroup for the controller.
        path: PathBuf,
        /// cgroup v2 (else a v1 hierarchy).
        unified: bool,
    },
    /// The machine does not delegate the controller to cinch.
    Unavailable,
}

/// What the sandbox can enforce on this machine.
#[derive(Debug, Clone, Serialize)]
pub struct Support {
    /// The kernel's Landlock ABI; 0 when Landlock is off or absent.
    pub landlock_abi: i32,
    /// Files: each tenant process reaches only what its policy names (ABI 1).
    pub filesystem: bool,
    /// Outbound TCP limited to listed ports, when an environment asks (ABI 4).
    pub tcp_ports: bool,
    /// No signals to, and no abstract unix sockets of, processes outside (ABI 6).
    pub scoped_signals_and_sockets: bool,
    /// A network of its own whose only way out is the egress proxy, when an
    /// environment lists `allowed_hosts` (network, or user, namespaces).
    pub allowed_hosts: bool,
    /// A PID namespace and /proc of each turn's own, where the turn's
    /// processes read each other's entries (`ps`).
    pub own_proc: bool,
    /// Processes per turn (`pids.max`).
    pub processes: CgroupReport,
    /// Memory per turn.
    pub memory: CgroupReport,
}

impl Support {
    /// Looks at the running kernel and cgroups.
    pub fn detect() -> Self {
        let abi = landlock_abi();
        let hierarchies = hierarchies();
        let report = |controller: Controller| {
            let Some(hierarchy) = hierarchies.iter().find(|h| h.controller == controller) else {
                return CgroupReport::Unavailable;
            };
            // Making one is the only way to know the hierarchy is ours to use.
            let probe = Cgroup::create(
                &format!("cinch-probe-{}", std::process::id()),
                &Limits::default(),
            );
            let usable = probe
                .procs_files()
                .iter()
                .any(|procs| procs.starts_with(&hierarchy.dir));
            probe.remove();
            if usable {
                CgroupReport::Cgroup {
                    path: hierarchy.dir.clone(),
                    unified: hierarchy.unified,
                }
            } else {
                CgroupReport::Unavailable
            }
        };
        Self {
            landlock_abi: abi,
            filesystem: abi >= 1,
            tcp_ports: abi >= 4,
            scoped_signals_and_sockets: abi >= 6,
            allowed_hosts: super::egress::netns::available(),
            own_proc: super::namespace::available(),
            processes: report(Controller::Pids),
            memory: report(Controller::Memory),
        }
    }

    /// Whether the kernel can hold a harness in: files, signals and sockets.
    pub fn is_sufficient(&self) -> bool {
        self.landlock_abi >= MINIMUM_ABI
    }

    /// One line per guarantee, as `cinch check` prints them.
    pub fn lines(&self) -> Vec<String> {
        let yes_no = |on: bool| if on { "enforced" } else { "NOT enforced" };
        let cgroup = |report: &CgroupReport, what: &str| match report {
            CgroupReport::Cgroup { path, unified } => format!(
                "{what}: enforced (cgroup {} under {})",
                if *unified { "v2" } else { "v1" },
                path.display()
            ),
            CgroupReport::Unavailable => {
                format!("{what}: NOT enforced (the machine delegates no cgroup for it to cinch)")
            }
        };
        vec![
            if self.landlock_abi > 0 {
                format!("landlock: ABI {}", self.landlock_abi)
            } else {
                "landlock: not available in this kernel".to_owned()
            },
            format!("files: {}", yes_no(self.filesystem)),
            format!(
                "signals and abstract unix sockets scoped: {}",
                yes_no(self.scoped_signals_and_sockets)
            ),
            format!(
                "outbound TCP ports (when an environment lists them): {}",
                yes_no(self.tcp_ports)
            ),
            if self.allowed_hosts {
                "outbound hosts (when an environment lists them): enforced (a network namespace and cinch's proxy)".to_owned()
            } else {
                "outbound hosts (when an environment lists them): NOT enforced (this kernel lets cinch make no network namespace; turns of such an environment fail to start)".to_owned()
            },
            if self.own_proc {
                "a /proc of each turn's own processes: yes (a PID namespace; `ps` works in a turn)"
                    .to_owned()
            } else {
                "a /proc of each turn's own processes: NO (cinch may make no PID namespace or mount no /proc in one here: a turn's commands read nothing of /proc, and droid kills each command that runs longer than a few milliseconds)".to_owned()
            },
            "open files and core dumps: enforced (rlimits)".to_owned(),
            cgroup(&self.processes, "processes per turn"),
            cgroup(&self.memory, "memory per turn"),
        ]
    }
}

/// The running kernel's Landlock ABI version, 0 without Landlock.
pub fn landlock_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: the version query takes no ruleset and writes nothing.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    i32::try_from(version).unwrap_or(0).max(0)
}
