//! The paths a sandboxed process is given, beyond its own workspace: the
//! system, the devices tools use, a CLI's installation and the parts of a
//! worktree's git directory it must write. The sets are the ones measured in
//! the project's notes on running the agent CLIs under Landlock.

use std::path::{Path, PathBuf};

/// Read-only for every tenant process: programs and libraries, the few
/// files of /etc that tools read (never all of /etc: it holds /etc/shadow),
/// and harmless machine facts of /proc and /sys. Not /proc as a whole: the
/// environment of every other process is readable there.
pub fn system_read_only() -> Vec<PathBuf> {
    [
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/libx32",
        "/opt",
        "/etc/alternatives",
        "/etc/ssl",
        "/etc/ca-certificates",
        "/etc/ca-certificates.conf",
        "/etc/pki",
        "/etc/resolv.conf",
        "/etc/hosts",
        "/etc/host.conf",
        "/etc/nsswitch.conf",
        "/etc/gai.conf",
        "/etc/services",
        "/etc/protocols",
        "/etc/passwd",
        "/etc/group",
        "/etc/localtime",
        "/etc/timezone",
        "/etc/os-release",
        "/etc/ld.so.cache",
        "/etc/ld.so.conf",
        "/etc/ld.so.conf.d",
        "/etc/bash.bashrc",
        "/etc/profile",
        "/etc/profile.d",
        "/etc/inputrc",
        "/etc/gitconfig",
        "/etc/mime.types",
        "/etc/terminfo",
        "/dev/urandom",
        "/dev/random",
        "/proc/cpuinfo",
        "/proc/meminfo",
        "/proc/stat",
        "/proc/version",
        "/proc/loadavg",
        "/proc/uptime",
        "/proc/filesystems",
        "/sys/devices/system/cpu",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// Devices every tool writes to: a shell redirects to /dev/null, and a
/// pseudo-terminal needs /dev/ptmx and /dev/pts.
pub fn system_read_write() -> Vec<PathBuf> {
    [
        "/dev/null",
        "/dev/zero",
        "/dev/full",
        "/dev/tty",
        "/dev/ptmx",
        "/dev/pts",
    ]
    .into_iter()
    .map(PathBuf::from)
    .collect()
}

/// What a CLI found at `program` needs to read to run: the folder it was
/// found in and the one its symlinks lead to, each widened to the outermost
/// `node_modules` above it, else to its install prefix when the folder is a
/// `bin` (npm puts the packages beside it, in `lib/`); and the same for the
/// interpreter its `#!` line names. Nothing
/// that holds `private` (cinch's home) is ever given: a CLI installed in
/// `~/bin` gets that folder, not the whole home.
pub fn cli_installation(program: &Path, search_path: &str, private: &Path) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    let mut add = |file: &Path| {
        for found in [Some(file.to_path_buf()), file.canonicalize().ok()]
            .into_iter()
            .flatten()
        {
            let Some(dir) = found.parent() else { continue };
            // An npm package runs its dependencies' files too (codex its
            // native binary, in a sibling package): the whole tree.
            let packages = found
                .ancestors()
                .filter(|ancestor| {
                    ancestor
                        .file_name()
                        .is_some_and(|name| name == "node_modules")
                })
                .last()
                .map(Path::to_path_buf);
            let candidates = packages
                .into_iter()
                .chain([install_prefix(dir), dir.to_path_buf()]);
            if let Some(safe) = candidates
                .into_iter()
                .find(|path| !private.starts_with(path))
            {
                paths.push(safe);
            }
        }
    };
    add(program);
    if let Some(interpreter) = interpreter(program, search_path) {
        add(&interpreter);
    }
    paths.sort();
    paths.dedup();
    paths
}

fn install_prefix(dir: &Path) -> PathBuf {
    match (dir.file_name(), dir.parent()) {
        (Some(name), Some(parent)) if name == "bin" && parent != Path::new("/") => {
            parent.to_path_buf()
        }
        _ => dir.to_path_buf(),
    }
}

/// The interpreter a script's `#!` line names, looked up on the search path
/// when it goes through `env`.
fn interpreter(program: &Path, search_path: &str) -> Option<PathBuf> {
    use std::io::Read as _;
    let mut head = [0u8; 256];
    let read = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..read].strip_prefix(b"#!")?;
    let line = std::str::from_utf8(line.split(|byte| *byte == b'\n').next()?).ok()?;
    let mut words = line.split_whitespace();
    let first = PathBuf::from(words.next()?);
    if first.file_name()? != "env" {
        return Some(first);
    }
    let name = words.find(|word| !word.starts_with('-'))?;
    std::env::split_paths(search_path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

/// The parts of a worktree's git folders a process in the worktree `workdir`
/// needs, as (read-only, read-write): the main repository's `.git` to read,
/// and to write only the worktree's own folder, the objects, the branches and
/// their logs (so commits work), never the main repository's config or hooks.
/// A plain repository's `.git` lies inside `workdir` already: nothing to add.
pub fn git_dirs(workdir: &Path) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let Ok(pointer) = std::fs::read_to_string(workdir.join(".git")) else {
        return (Vec::new(), Vec::new());
    };
    let Some(gitdir) = pointer.trim().strip_prefix("gitdir:") else {
        return (Vec::new(), Vec::new());
    };
    let gitdir = workdir.join(gitdir.trim());
    let Ok(common) = std::fs::read_to_string(gitdir.join("commondir")) else {
        return (Vec::new(), vec![gitdir]);
    };
    let common = gitdir.join(common.trim());
    let common = common.canonicalize().unwrap_or(common);
    let logs = common.join("logs/refs/heads");
    // Rules bind folders that exist when the sandbox is made.
    let _ = std::fs::create_dir_all(&logs);
    let writable = vec![
        gitdir,
        common.join("objects"),
        common.join("refs/heads"),
        logs,
    ];
    (vec![common], writable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_npm_cli_gets_its_prefix_and_its_interpreter() {
        let dir = tempfile::tempdir().unwrap();
        let prefix = dir.path().join("clis");
        let package = prefix.join("lib/node_modules/tool");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        let node_bin = dir.path().join("node/bin");
        std::fs::create_dir_all(&node_bin).unwrap();
        std::fs::write(node_bin.join("node"), "").unwrap();
        std::fs::write(package.join("cli.js"), "#!/usr/bin/env -S node --flag\n").unwrap();
        std::os::unix::fs::symlink(package.join("cli.js"), prefix.join("bin/tool")).unwrap();
        let search = format!("{}:/usr/bin", node_bin.display());
        let private = dir.path().join("cinch-home");
        let paths = cli_installation(&prefix.join("bin/tool"), &search, &private);
        let canonical = prefix.canonicalize().unwrap();
        assert!(paths.contains(&prefix), "{paths:?}");
        assert!(
            paths.contains(&canonical.join("lib/node_modules")),
            "{paths:?}"
        );
        assert!(paths.contains(&dir.path().join("node")), "{paths:?}");
        // Installed beside cinch's home: the bin folder only.
        let private = prefix.join("home");
        let paths = cli_installation(&prefix.join("bin/tool"), &search, &private);
        assert!(paths.contains(&prefix.join("bin")), "{paths:?}");
        assert!(
            !paths.iter().any(|path| private.starts_with(path)),
            "{paths:?}"
        );
    }

    #[test]
    fn a_worktree_writes_its_own_git_parts_only() {
        let dir = tempfile::tempdir().unwrap();
        let main = dir.path().join("main");
        let worktree = dir.path().join("wt");
        std::fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        std::fs::create_dir_all(&worktree).unwrap();
        std::fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(main.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        let (read, write) = git_dirs(&worktree);
        let common = main.join(".git").canonicalize().unwrap();
        assert_eq!(read, vec![common.clone()]);
        assert!(write.contains(&common.join("objects")));
        assert!(write.contains(&common.join("refs/heads")));
        assert!(common.join("logs/refs/heads").is_dir());
        assert!(!write.contains(&common));
        assert_eq!(git_dirs(&main), (Vec::new(), Vec::new()));
    }
}
