//! Scratch repositories for the checkpoint tests, made and read with the
//! git command, with no user or system configuration.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;

/// The ref the tests take a start checkpoint at.
pub(crate) const START: &str = "refs/cinch/runs/r1/tasks/c1/start";
/// The ref of the end checkpoint.
pub const END: &str = "refs/cinch/runs/r1/tasks/c1/end";

/// git in `dir`, with no user or system configuration.
pub(crate) fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new("git");
    command
        .current_dir(dir)
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("XDG_CONFIG_HOME", "/nonexistent")
        .env("GIT_AUTHOR_NAME", "test")
        .env("GIT_AUTHOR_EMAIL", "test@example.com")
        .env("GIT_COMMITTER_NAME", "test")
        .env("GIT_COMMITTER_EMAIL", "test@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE");
    command
}

/// Runs git in `dir` and returns its stdout; it must succeed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = git_command(dir, args).output().expect("running git");
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("git prints UTF-8")
}

/// A fresh repository on branch main, with nothing committed.
pub(crate) fn empty_repo() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    fs::create_dir(&root).unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    // libgit2 reads the user's configuration, which git_command keeps
    // from git: a global ignore file must not hide the files tests make.
    let none = dir.path().join("none");
    for key in ["core.excludesFile", "core.attributesFile"] {
        git(&root, &["config", key, none.to_str().unwrap()]);
    }
    (dir, root)
}

/// A repository whose one commit holds `files`.
pub(crate) fn repo_with(files: &[(&str, &str)]) -> (TempDir, PathBuf) {
    let (dir, root) = empty_repo();
    for (path, contents) in files {
        write(&root, path, contents);
    }
    commit_all(&root, "initial");
    (dir, root)
}

pub(crate) fn commit_all(root: &Path, message: &str) {
    git(root, &["add", "-A"]);
    git(root, &["commit", "-q", "-m", message]);
}

pub fn write(root: &Path, path: &str, contents: impl AsRef<[u8]>) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, contents).unwrap();
}

/// Everything a checkpoint must leave alone: the index file's bytes,
/// what git status says (HEAD's branch and commit included), and every
/// file's contents and mtime.
pub fn snapshot(root: &Path, index_file: &Path) -> (Option<Vec<u8>>, String, String) {
    fn walk(dir: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.file_name().unwrap() == ".git" {
                continue;
            }
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(&path, out);
            }
            let contents = if meta.is_file() {
                format!("{:?}", fs::read(&path).unwrap())
            } else if meta.is_symlink() {
                format!("-> {:?}", fs::read_link(&path).unwrap())
            } else {
                String::new()
            };
            out.insert(path, format!("{:?} {contents}", meta.modified().unwrap()));
        }
    }
    let index = fs::read(index_file).ok();
    // --no-optional-locks: a plain status may refresh the index file.
    let status = git(
        root,
        &[
            "--no-optional-locks",
            "status",
            "--porcelain=v2",
            "--branch",
            "-uall",
            "--ignored",
        ],
    );
    let mut files = BTreeMap::new();
    walk(root, &mut files);
    (index, status, format!("{files:?}"))
}

pub(crate) fn files_at(root: &Path, sha: &str) -> Vec<String> {
    git(root, &["ls-tree", "-r", "--name-only", sha])
        .lines()
        .map(str::to_owned)
        .collect()
}

pub fn show(root: &Path, sha: &str, path: &str) -> String {
    git(root, &["show", &format!("{sha}:{path}")])
}

pub(crate) fn rev_parse(root: &Path, rev: &str) -> String {
    git(root, &["rev-parse", rev]).trim().to_owned()
}
