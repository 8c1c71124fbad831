//! Checkpoints: commits of a repository's working tree kept under refs of
//! cinch's own, the diffs between two of them, and going back to one.
//!
//! A checkpoint records what `git add -A && git commit` would (tracked files,
//! untracked files git does not ignore, deletions), without touching anything
//! the user sees: HEAD, the index file and the working tree stay as they were.
//!
//! - [`take`] (module `take`): committing the working tree under a ref.
//! - [`diffstat`], [`diff`], [`render_diffstat`] (module `diff`): what
//!   changed between two checkpoints.
//! - [`restore`] (module `restore`): making the working tree a checkpoint's
//!   again, undoably.
//! - [`Repo`]: one opened repository for several of these (a turn's end).
//!
//! This module holds what they share: the error type and the repository
//! look-ups.

use std::path::{Path, PathBuf};

use git2::{Commit, ErrorCode, Oid, Repository, Tree};

pub mod compare;
mod diff;
mod fork;
pub mod remote;
mod restore;
mod scan;
mod take;
#[cfg(test)]
mod test_repo;

pub use diff::{ChangedFile, DiffContext, DiffStat, diff, diffstat, render_diffstat};
pub use fork::fork_worktree;
pub use restore::{CommitSummary, Restored, restore};
pub use take::{Checkpoint, take};

/// Why a checkpoint or a diff could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// The path is not the root of a git repository or worktree.
    #[error("{} is not a git repository: {source}", path.display())]
    NotARepository {
        /// The path given.
        path: PathBuf,
        /// What git said.
        source: git2::Error,
    },
    /// The repository has no working tree to checkpoint.
    #[error("{} is a bare repository, with no working tree to checkpoint", .0.display())]
    Bare(PathBuf),
    /// A commit id is not 40 hex digits.
    #[error("{0:?} is not a commit id")]
    InvalidSha(String),
    /// A file of the working tree could not be written or removed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// What the system said.
        source: std::io::Error,
    },
    /// A git operation failed.
    #[error("{what}: {source}")]
    Git {
        /// What was being done, such as "staging src/main.rs".
        what: String,
        /// What git said.
        source: git2::Error,
    },
}

type Result<T, E = CheckpointError> = std::result::Result<T, E>;

/// Names what a failing git call was doing.
trait Context<T> {
    fn context(self, what: impl Into<String>) -> Result<T>;
}

impl<T> Context<T> for Result<T, git2::Error> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|source| CheckpointError::Git {
            what: what.into(),
            source,
        })
    }
}

/// A repository opened once for several checkpoint operations: a turn's end
/// takes its checkpoint and counts what changed since its start with one
/// (opening a repository reads its configuration files).
pub(crate) struct Repo {
    repo: Repository,
    workdir: PathBuf,
}

impl Repo {
    /// Opens the repository whose root (or worktree root) is `workdir`.
    pub(crate) fn open(workdir: &Path) -> Result<Self> {
        Ok(Self {
            repo: open(workdir)?,
            workdir: workdir.to_path_buf(),
        })
    }
}

/// Opens the repository whose root (or worktree root) is `path`, without
/// searching parent directories or reading `GIT_DIR` and the like from the
/// environment, which belong to whatever cinch runs, not to cinch.
fn open(path: &Path) -> Result<Repository> {
    static UNCHECKED_CREATION: std::sync::Once = std::sync::Once::new();
    // A checkpoint's objects point only at objects it has just written or
    // read (its tree, HEAD's commit), so libgit2 reading each back to check
    // that it exists, before writing the commit and the ref, is work
    // for nothing at every turn's start and end. No other code in cinch
    // creates git objects.
    UNCHECKED_CREATION.call_once(|| git2::opts::strict_object_creation(false));
    Repository::open(path).map_err(|source| CheckpointError::NotARepository {
        path: path.to_path_buf(),
        source,
    })
}

/// HEAD's commit; none while HEAD names a branch with no commit yet.
fn head_commit(repo: &Repository) -> Result<Option<Commit<'_>>> {
    match repo.head() {
        Ok(head) => head
            .peel_to_commit()
            .map(Some)
            .context("reading HEAD's commit"),
        Err(e) if matches!(e.code(), ErrorCode::UnbornBranch | ErrorCode::NotFound) => Ok(None),
        Err(e) => Err(e).context("reading HEAD"),
    }
}

/// The tree of the commit whose full id is `sha`.
fn commit_tree<'r>(repo: &'r Repository, sha: &str) -> Result<Tree<'r>> {
    find_commit(repo, sha)?
        .tree()
        .context(format!("reading commit {sha}"))
}

/// The commit whose full id is `sha`.
fn find_commit<'r>(repo: &'r Repository, sha: &str) -> Result<Commit<'r>> {
    let oid = Oid::from_str(sha)
        .ok()
        .filter(|_| sha.len() == 40)
        .ok_or_else(|| CheckpointError::InvalidSha(sha.to_owned()))?;
    repo.find_commit(oid)
        .context(format!("reading commit {sha}"))
}
