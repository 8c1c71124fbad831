//! Resource limits: rlimits for each process, and a cgroup per turn for
//! what rlimits cannot bound (processes of the whole group, memory) where
//! the machine lets cinch make one: cgroup v2 with the controller enabled
//! for cinch's own cgroup, or a writable cgroup v1 hierarchy.

use std::path::{Path, PathBuf};

use super::Limits;

/// A controller cinch can put a turn's processes under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Controller {
    /// `pids.max`: processes and threads at once.
    Pids,
    /// `memory.max` (v2) or `memory.limit_in_bytes` (v1).
    Memory,
}

impl Controller {
    fn name(self) -> &'static str {
        match self {
            Controller::Pids => "pids",
            Controller::Memory => "memory",
        }
    }
}

/// Where a controller's cgroups for cinch are made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Hierarchy {
    /// The controller.
    pub controller: Controller,
    /// cinch's own cgroup in that hierarchy: turns get children of it.
    pub dir: PathBuf,
    /// Whether it is the unified (v2) hierarchy.
    pub unified: bool,
}

impl Hierarchy {
    fn limit_file(&self) -> &'static str {
        match (self.controller, self.unified) {
            (Controller::Pids, _) => "pids.max",
            (Controller::Memory, true) => "memory.max",
            (Controller::Memory, false) => "memory.limit_in_bytes",
        }
    }
}

/// The hierarchies in which this process may make child cgroups for the
/// controllers cinch uses.
pub(crate) fn hierarchies() -> Vec<Hierarchy> {
    let (Ok(mountinfo), Ok(own)) = (
        std::fs::read_to_string("/proc/self/mountinfo"),
        std::fs::read_to_string("/proc/self/cgroup"),
    ) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for controller in [Controller::Pids, Controller::Memory] {
        if let Some(hierarchy) = find(&mountinfo, &own, controller) {
            found.push(hierarchy);
        }
    }
    found
}

fn find(mountinfo: &str, own: &str, controller: Controller) -> Option<Hierarchy> {
    let name = controller.name();
    for line in mountinfo.lines() {
        let (mount, rest) = line.split_once(" - ")?;
        let mount_point = mount.split(' ').nth(4)?;
        let mut rest = rest.split(' ');
        let (fstype, options) = (rest.next()?, rest.nth(1).unwrap_or(""));
        let (own_path, unified) = match fstype {
            "cgroup" if options.split(',').any(|option| option == name) => (
                own.lines().find_map(|entry| {
                    let mut parts = entry.splitn(3, ':');
                    let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
                    controllers
                        .split(',')
                        .any(|c| c == name)
                        .then(|| path.to_owned())
                })?,
                false,
            ),
            "cgroup2" => (
                own.lines()
                    .find_map(|entry| entry.strip_prefix("0::").map(str::to_owned))?,
                true,
            ),
            _ => continue,
        };
        let dir = Path::new(mount_point).join(own_path.trim_start_matches('/'));
        if unified {
            let enabled = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                .is_ok_and(|list| list.split_whitespace().any(|c| c == name));
            if !enabled {
                continue;
            }
        }
        return Some(Hierarchy {
            controller,
            dir,
            unified,
        });
    }
    None
}

/// One turn's cgroups, one per hierarchy that took it; removed by
/// [`Cgroup::remove`] once the turn's processes are gone.
#[derive(Debug, Default)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
}

impl Cgroup {
    /// Makes `name` in every hierarchy that allows it, with `limits`.
    /// Hierarchies that refuse are skipped: `cinch check` says which apply.
    pub fn create(name: &str, limits: &Limits) -> Self {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for hierarchy in hierarchies() {
            let value = match hierarchy.controller {
                Controller::Pids => limits.processes,
                Controller::Memory => match limits.memory_bytes {
                    Some(bytes) => bytes,
                    None => continue,
                },
            };
            let dir = hierarchy.dir.join(name);
            let made = dirs.contains(&dir) || std::fs::create_dir(&dir).is_ok();
            if !made {
                continue;
            }
            if std::fs::write(dir.join(hierarchy.limit_file()), value.to_string()).is_err() {
                let _ = std::fs::remove_dir(&dir);
                continue;
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        Self { dirs }
    }

    /// The files a process writes `0` to, to join the cgroup.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs
            .iter()
            .map(|dir| dir.join("cgroup.procs"))
            .collect()
    }

    /// Removes the cgroups. One that still has processes (a service a setup
    /// command left running) stays until the machine restarts.
    pub fn remove(self) {
        for dir in self.dirs {
            if let Err(error) = std::fs::remove_dir(&dir) {
                tracing::debug!(cgroup = %dir.display(), %error, "a cgroup is still in use");
            }
        }
    }
}

/// Sets the per-process limits: no core dumps (they would hold the
/// harness's secrets), and at most `limits.open_files` open files.
pub(crate) fn set_rlimits(limits: &Limits) -> std::io::Result<()> {
    set_rlimit(libc::RLIMIT_CORE, 0)?;
    set_rlimit(libc::RLIMIT_NOFILE, limits.open_files)
}

/// Adds `niceness` to this process's nice value.
pub(crate) fn lower_priority(niceness: i32) -> std::io::Result<()> {
    // nice() may return -1 on success, so only errno tells of a failure.
    // SAFETY: errno is this thread's; nice changes only this process.
    unsafe {
        *libc::__errno_location() = 0;
        if libc::nice(niceness) == -1 && *libc::__errno_location() != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn set_rlimit(resource: libc::__rlimit_resource_t, wanted: u64) -> std::io::Result<()> {
    let mut current = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes into the struct we own.
    if unsafe { libc::getrlimit(resource, &mut current) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // Never raise a hard limit the operator set lower.
    let value = wanted.min(current.rlim_max);
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: setrlimit reads the struct we own.
    if unsafe { libc::setrlimit(resource, &limit) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
40 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 30 0:36 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
42 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";
    const OWN: &str = "8:pids:/\n4:memory:/jobs/j1\n0::/\n";

    #[test]
    fn v1_hierarchies_are_found_with_cinchs_own_place() {
        let pids = find(MOUNTINFO, OWN, Controller::Pids).unwrap();
        assert_eq!(pids.dir, Path::new("/sys/fs/cgroup/pids"));
        assert!(!pids.unified);
        assert_eq!(pids.limit_file(), "pids.max");
        let memory = find(MOUNTINFO, OWN, Controller::Memory).unwrap();
        assert_eq!(memory.dir, Path::new("/sys/fs/cgroup/memory/jobs/j1"));
        assert_eq!(memory.limit_file(), "memory.limit_in_bytes");
    }

    #[test]
    fn a_unified_hierarchy_counts_only_with_the_controller_delegated() {
        let mountinfo = "42 30 0:37 / /nonexistent/cgroup rw - cgroup2 cgroup2 rw\n";
        assert_eq!(find(mountinfo, "0::/\n", Controller::Pids), None);
    }
}
