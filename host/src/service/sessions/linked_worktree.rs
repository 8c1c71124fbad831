//! Linking a new work tree to a repository in a time that does not grow with
//! the work trees it has. `git worktree add` reads every linked work tree of
//! the repository (its folder, HEAD and branch, several times over) before it
//! adds one: with 1,000 sessions in one repository an add made 64,000 system
//! calls and took 100-250 ms, one add at a time. Here the files that
//! gitrepository-layout(5) documents for a linked work tree are written
//! directly (`worktrees/<id>/{gitdir,commondir,HEAD,locked}` and the work
//! tree's `.git` file); git itself still makes the branch and checks it out.

use std::fs;
use std::io::ErrorKind;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};

/// The repository's own git folder, where its `worktrees/` are kept, when a
/// work tree can be linked to it here: a `.git` folder or a bare
/// repository. `None` otherwise (its `.git` is a file, or it keeps settings
/// per work tree, which `git worktree add` copies into a new one): those
/// are left to git.
pub fn common_dir(repository: &Path) -> Option<PathBuf> {
    let dot_git = repository.join(".git");
    let common = if dot_git.is_dir() {
        dot_git
    } else if repository.join("HEAD").is_file() && repository.join("objects").is_dir() {
        repository.to_path_buf()
    } else {
        return None;
    };
    let config = fs::read(common.join("config")).ok()?;
    let per_worktree = config
        .to_ascii_lowercase()
        .windows(b"worktreeconfig".len())
        .any(|window| window == b"worktreeconfig");
    (!per_worktree).then_some(common)
}

/// Links `dir`, an empty folder, as a work tree of the repository whose git
/// folder is `common` (see [`common_dir`]), its HEAD on `branch`, which
/// exists. No file is checked out.
pub fn link(common: &Path, dir: &Path, branch: &str) -> Result<()> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("finding {}", dir.display()))?;
    let worktrees = common
        .canonicalize()
        .with_context(|| format!("finding {}", common.display()))?
        .join("worktrees");
    fs::create_dir_all(&worktrees).with_context(|| format!("creating {}", worktrees.display()))?;
    let admin = reserve(&worktrees, &id_of(&dir))?;
    let written = write_link(&admin, &dir, branch);
    if written.is_err() {
        let _ = fs::remove_dir_all(&admin);
    }
    written.with_context(|| format!("linking the work tree {}", dir.display()))
}

/// The files of the link, locked while they are written as git does, so
/// that a `git worktree prune` meanwhile leaves them.
fn write_link(admin: &Path, dir: &Path, branch: &str) -> std::io::Result<()> {
    let locked = admin.join("locked");
    fs::write(&locked, "initializing")?;
    fs::write(admin.join("commondir"), "../..\n")?;
    fs::write(admin.join("HEAD"), format!("ref: refs/heads/{branch}\n"))?;
    fs::write(
        dir.join(".git"),
        line(&[b"gitdir: ", admin.as_os_str().as_bytes()]),
    )?;
    fs::write(
        admin.join("gitdir"),
        line(&[dir.join(".git").as_os_str().as_bytes()]),
    )?;
    fs::remove_file(locked)
}

/// `parts` joined, with a newline.
fn line(parts: &[&[u8]]) -> Vec<u8> {
    let mut bytes = parts.concat();
    bytes.push(b'\n');
    bytes
}

/// The work tree's id as git names it: its folder's name, with what a ref
/// name may not hold replaced.
fn id_of(dir: &Path) -> String {
    let name: String = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    if name.is_empty() {
        "worktree".to_owned()
    } else {
        name
    }
}

/// Makes the administrative folder `worktrees/<id>`, or `<id>1`, `<id>2`…
/// when taken (as git does), and returns it.
fn reserve(worktrees: &Path, id: &str) -> Result<PathBuf> {
    let mut taken = 0u32;
    loop {
        let name = match taken {
            0 => id.to_owned(),
            n => format!("{id}{n}"),
        };
        let admin = worktrees.join(name);
        match fs::create_dir(&admin) {
            Ok(()) => return Ok(admin),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => taken += 1,
            Err(error) => {
                return Err(error).with_context(|| format!("creating {}", admin.display()));
            }
        }
    }
}
