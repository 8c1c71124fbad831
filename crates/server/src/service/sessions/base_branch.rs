//! Whether a session's base branch exists, asked of the environment's
//! repository before the session is created, read-only: a branch that is not
//! there would only fail the session's boot later.

use std::path::Path;

/// What a repository says about a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BaseBranch {
    /// A local branch or `origin/<branch>` has that name.
    Found,
    /// The repository has neither.
    Missing,
    /// The repository cannot be read yet (a URL not cloned so far): the boot finds out.
    Unknown,
}

/// Looks `branch` up in the repository at `repository` (a local path) or, for
/// a git URL, in its clone at `clone_dir`.
pub(super) fn look_up(repository: &str, clone_dir: &Path, branch: &str) -> BaseBranch {
    let dir = if crate::runs::repository::is_url(repository) {
        clone_dir
    } else {
        Path::new(repository)
    };
    let Ok(repository) = git2::Repository::open(dir) else {
        return BaseBranch::Unknown;
    };
    let found = [
        format!("refs/heads/{branch}"),
        format!("refs/remotes/origin/{branch}"),
    ]
    .iter()
    .any(|name| repository.find_reference(name).is_ok());
    if found {
        BaseBranch::Found
    } else {
        BaseBranch::Missing
    }
}
