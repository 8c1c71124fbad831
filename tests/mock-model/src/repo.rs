//! The git repositories the CLIs' turns run in.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use crate::run::run_with_timeout;

/// Runs git in `repo` and returns its stdout; panics, with git's stderr,
/// when it fails.
pub fn git(repo: &Path, args: &[&str]) -> String {
    let out = run_with_timeout(
        Command::new("git").args(args).current_dir(repo),
        Duration::from_secs(30),
    )
    .expect("running git");
    assert!(out.success(), "git {args:?}: {}", out.stderr);
    out.stdout
}

/// A fresh git repository `parent/name` with one commit of a README.
pub fn new_repo(parent: &Path, name: &str) -> PathBuf {
    let repo = parent.join(name);
    fs::create_dir_all(&repo).expect("creating the repository");
    let readme = repo.join("README.md");
    fs::write(&readme, "test repo\n").expect("writing README.md");
    // An entry as new as the index is "racily clean": the first `git status` a CLI runs
    // would hash it again and rewrite the index, which a check of git's state after a turn
    // must not mistake for cinch touching it.
    fs::File::options()
        .write(true)
        .open(&readme)
        .and_then(|file| file.set_modified(SystemTime::now() - Duration::from_secs(60)))
        .expect("backdating README.md");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "."]);
    git(
        &repo,
        &[
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "user.name=t",
            "commit",
            "-q",
            "-m",
            "init",
        ],
    );
    repo
}
