//! Checkpoints: commits of a repository's working tree kept under refs of
//! cinch's own, and the diffs between two of them.
//!
//! A checkpoint records what `git add -A && git commit` would (tracked files,
//! untracked files git does not ignore, deletions), without touching anything
//! the user sees: HEAD, the index file and the working tree stay as they were.
//! It stages into the repository's index held in memory and never written
//! back, so files whose stat data match their index entry are not re-read.

pub mod remote;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use git2::{
    Commit, Diff, DiffFindOptions, DiffFormat, DiffOptions, ErrorCode, Index,
    IndexEntryExtendedFlag, IndexEntryFlag, Oid, Patch, Repository, Signature, Tree,
};

/// The author and committer of every checkpoint, so taking one needs no git
/// identity configured.
const SIGNATURE_NAME: &str = "cinch";
const SIGNATURE_EMAIL: &str = "cinch@localhost";

/// A commit of a working tree, taken by [`take`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// The commit's id, 40 hex digits.
    pub sha: String,
    /// The id of the commit's tree, 40 hex digits.
    pub tree: String,
}

/// What changed between two checkpoints, as [`diffstat`] counts it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DiffStat {
    /// The changed files in path order, at most the `max_files` asked for.
    pub files: Vec<FileStat>,
    /// How many files changed, listed or not.
    pub total_files: usize,
    /// Lines added across all changed files, listed or not.
    pub insertions: usize,
    /// Lines removed across all changed files, listed or not.
    pub deletions: usize,
}

/// One changed file in a [`DiffStat`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStat {
    /// The file's path in the repository; a renamed file's new path.
    pub path: String,
    /// Lines added; 0 for a binary file.
    pub insertions: usize,
    /// Lines removed; 0 for a binary file.
    pub deletions: usize,
    /// Whether git takes either side of the change for binary, which has no
    /// line counts.
    pub binary: bool,
}

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

/// Commits the working tree at `workdir` (a repository's root, or a linked
/// worktree's) and points `refname` at the commit, replacing what it pointed
/// at before.
///
/// `refname` is a full ref name such as
/// `refs/cinch/runs/<run>/tasks/<call>/start`. The commit's parent is HEAD's
/// commit, and there is none while HEAD is unborn. HEAD, the index file and
/// the working tree are left exactly as they were.
pub fn take(workdir: &Path, refname: &str, message: &str) -> Result<Checkpoint> {
    let repo = open(workdir)?;
    if repo.is_bare() {
        return Err(CheckpointError::Bare(workdir.to_path_buf()));
    }

    // The handle's index is read from the index file once and lives in this
    // handle alone; nothing below writes it back.
    let mut index = repo.index().context("reading the index")?;
    stage_working_tree(&repo, &mut index)?;
    let tree_id = index.write_tree().context("writing the tree")?;
    let tree = repo.find_tree(tree_id).context("reading the tree")?;

    let parent = head_commit(&repo)?;
    let parents: Vec<&Commit> = parent.iter().collect();
    let signature =
        Signature::now(SIGNATURE_NAME, SIGNATURE_EMAIL).context("making the signature")?;
    let commit = repo
        .commit(None, &signature, &signature, message, &tree, &parents)
        .context("writing the commit")?;
    repo.reference(refname, commit, true, message)
        .context(format!("setting {refname}"))?;

    Ok(Checkpoint {
        sha: commit.to_string(),
        tree: tree_id.to_string(),
    })
}

/// Counts what changed from commit `start_sha` to commit `end_sha` (full ids,
/// as [`Checkpoint::sha`] has them), listing at most `max_files` files; a
/// renamed file counts once, under its new path.
pub fn diffstat(repo: &Path, start_sha: &str, end_sha: &str, max_files: usize) -> Result<DiffStat> {
    let repo = open(repo)?;
    let diff = diff_commits(&repo, start_sha, end_sha)?;

    let mut stat = DiffStat::default();
    for idx in 0..diff.deltas().len() {
        // A patch loads both sides, which is what tells a binary file. There
        // is none for a delta the diff skips (an unmodified file, say), which
        // a diff of two trees does not have.
        let Some(patch) = Patch::from_diff(&diff, idx).context("reading a change")? else {
            continue;
        };
        stat.total_files += 1;
        let (_, insertions, deletions) = patch.line_stats().context("counting lines")?;
        stat.insertions += insertions;
        stat.deletions += deletions;
        if stat.files.len() < max_files {
            let delta = patch.delta();
            let path = delta.new_file().path().or(delta.old_file().path());
            stat.files.push(FileStat {
                path: path.map_or_else(String::new, |p| p.to_string_lossy().into_owned()),
                insertions,
                deletions,
                binary: delta.flags().is_binary(),
            });
        }
    }
    Ok(stat)
}

/// The unified patch from commit `start_sha` to commit `end_sha`, as
/// `git diff -M <start> <end>` prints it. Bytes that are not UTF-8 become
/// U+FFFD.
pub fn diff(repo: &Path, start_sha: &str, end_sha: &str) -> Result<String> {
    let repo = open(repo)?;
    let diff = diff_commits(&repo, start_sha, end_sha)?;

    let mut text = Vec::new();
    diff.print(DiffFormat::Patch, |_, _, line| {
        // Headers carry their whole text; a line's content lacks its marker.
        if matches!(line.origin(), '+' | '-' | ' ') {
            text.push(line.origin() as u8);
        }
        text.extend_from_slice(line.content());
        true
    })
    .context("printing the diff")?;
    Ok(String::from_utf8_lossy(&text).into_owned())
}

/// The diffstat lines of a code task's result, without a trailing newline:
/// `<n> files changed, +<a> −<d>` (or `no files changed`), one
/// `<path> (+<a> −<d>)` or `<path> (binary)` line per listed file, and
/// `… <n> more files` when some were not listed.
pub fn render_diffstat(stat: &DiffStat) -> String {
    if stat.total_files == 0 {
        return "no files changed".to_owned();
    }
    let plural = if stat.total_files == 1 { "" } else { "s" };
    let mut lines = vec![format!(
        "{} file{plural} changed, +{} \u{2212}{}",
        stat.total_files, stat.insertions, stat.deletions
    )];
    for file in &stat.files {
        lines.push(if file.binary {
            format!("{} (binary)", file.path)
        } else {
            format!(
                "{} (+{} \u{2212}{})",
                file.path, file.insertions, file.deletions
            )
        });
    }
    let unlisted = stat.total_files.saturating_sub(stat.files.len());
    if unlisted > 0 {
        let plural = if unlisted == 1 { "" } else { "s" };
        lines.push(format!("\u{2026} {unlisted} more file{plural}"));
    }
    lines.join("\n")
}

/// A commit named in a [`Restored`]: its id and its subject line.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CommitSummary {
    /// The commit's id, 40 hex digits.
    pub sha: String,
    /// The first line of its message.
    pub summary: String,
}

/// What [`restore`] did: the working tree before and after, as checkpoints
/// (restoring to `before` undoes the restore), what changed, and where HEAD
/// went.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Restored {
    /// The working tree as it was, committed at the `before` ref.
    pub start_checkpoint: String,
    /// The working tree as restored, committed at the `after` ref.
    pub end_checkpoint: String,
    /// What the restore changed, as a turn's result counts it.
    pub files_changed: Vec<FileStatView>,
    /// How many files changed, listed or not.
    pub total_files: usize,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// HEAD's commit before, when it had one.
    pub head_before: Option<String>,
    /// HEAD's commit after: the target checkpoint's parent when commits
    /// were made (or undone) since it was taken, else as before.
    pub head_after: Option<String>,
    /// Commits HEAD had before and no longer has: made since the target
    /// checkpoint. They stay reachable from `start_checkpoint`.
    pub commits_undone: Vec<CommitSummary>,
    /// Commits HEAD has again (a restore undone).
    pub commits_redone: Vec<CommitSummary>,
}

/// A changed file as results list it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStatView {
    /// Its path.
    pub path: String,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// Whether it is binary.
    pub binary: bool,
}

/// Restores the working tree at `workdir` to checkpoint `target_sha`: its
/// files (tracked and untracked-not-ignored; ignored files are left alone)
/// become the checkpoint's. HEAD stays where it is unless commits were made
/// since the checkpoint was taken (HEAD is not its parent any more): then
/// HEAD's branch (or a detached HEAD) goes back to that parent and the index
/// with it, and the commits are named. The tree is checkpointed first at
/// `before_ref` and after at `after_ref`, so restoring to the first undoes
/// this.
pub fn restore(
    workdir: &Path,
    target_sha: &str,
    before_ref: &str,
    after_ref: &str,
    max_files: usize,
) -> Result<Restored> {
    let before = take(workdir, before_ref, "cinch: before a revert")?;
    let repo = open(workdir)?;
    let target = find_commit(&repo, target_sha)?;
    let target_tree = target.tree().context("reading the checkpoint's tree")?;
    let before_tree = commit_tree(&repo, &before.sha)?;

    let head_before = head_commit(&repo)?.map(|commit| commit.id());
    let head_target = target.parent_ids().next();
    let (mut commits_undone, mut commits_redone) = (Vec::new(), Vec::new());
    if let (Some(now), Some(then)) = (head_before, head_target)
        && now != then
    {
        commits_undone = commits_between(&repo, now, then)?;
        commits_redone = commits_between(&repo, then, now)?;
        let then = repo
            .find_object(then, None)
            .context("reading the checkpoint's parent")?;
        // Moves HEAD's branch (or a detached HEAD) and the index; no file.
        repo.reset(&then, git2::ResetType::Mixed, None)
            .context("moving HEAD back")?;
    }

    write_tree_changes(&repo, workdir, &before_tree, &target_tree)?;

    let after = take(workdir, after_ref, "cinch: after a revert")?;
    let stat = diffstat(workdir, &before.sha, &after.sha, max_files)?;
    let head_after = head_commit(&repo)?.map(|commit| commit.id().to_string());
    Ok(Restored {
        start_checkpoint: before.sha,
        end_checkpoint: after.sha,
        files_changed: stat
            .files
            .into_iter()
            .map(|file| FileStatView {
                path: file.path,
                insertions: file.insertions,
                deletions: file.deletions,
                binary: file.binary,
            })
            .collect(),
        total_files: stat.total_files,
        insertions: stat.insertions,
        deletions: stat.deletions,
        head_before: head_before.map(|id| id.to_string()),
        head_after,
        commits_undone,
        commits_redone,
    })
}

/// Makes the files of the working tree, which `from` holds, `to`'s: the
/// files `from` has and `to` has not are removed, the others written.
/// Nothing is written through a symbolic link: one where a folder must be
/// goes first.
fn write_tree_changes(repo: &Repository, workdir: &Path, from: &Tree, to: &Tree) -> Result<()> {
    let diff = repo
        .diff_tree_to_tree(Some(from), Some(to), None)
        .context("comparing the trees")?;
    let mut removed = Vec::new();
    let mut written = Vec::new();
    for delta in diff.deltas() {
        if let Some(path) = delta.old_file().path()
            && delta.old_file().id() != Oid::zero()
        {
            removed.push(path.to_path_buf());
        }
        if let Some(path) = delta.new_file().path()
            && delta.new_file().id() != Oid::zero()
        {
            written.push((
                path.to_path_buf(),
                delta.new_file().id(),
                delta.new_file().mode(),
            ));
        }
    }
    for path in &removed {
        let path = inside(workdir, path)?;
        remove_entry(&path)?;
        // Folders the removal emptied go too, as git's would.
        let mut parent = path.parent();
        while let Some(dir) = parent.filter(|dir| *dir != workdir) {
            if std::fs::remove_dir(dir).is_err() {
                break;
            }
            parent = dir.parent();
        }
    }
    for (path, id, mode) in written {
        let full = inside(workdir, &path)?;
        make_parents(workdir, &full)?;
        remove_entry(&full)?;
        let io = |error: std::io::Error| CheckpointError::Io {
            what: format!("writing {}", path.display()),
            source: error,
        };
        match mode {
            git2::FileMode::Commit => continue,
            git2::FileMode::Link => {
                let blob = repo.find_blob(id).context("reading a link")?;
                let target = Path::new(std::ffi::OsStr::from_bytes(blob.content()));
                std::os::unix::fs::symlink(target, &full).map_err(io)?;
            }
            _ => {
                use std::os::unix::fs::PermissionsExt as _;
                let blob = repo.find_blob(id).context("reading a file")?;
                // Made with the umask's mode, as git checks files out.
                std::fs::write(&full, blob.content()).map_err(io)?;
                if mode == git2::FileMode::BlobExecutable {
                    let mut permissions = std::fs::metadata(&full).map_err(io)?.permissions();
                    // Executable by whoever may read it.
                    permissions.set_mode(permissions.mode() | (permissions.mode() & 0o444) >> 2);
                    std::fs::set_permissions(&full, permissions).map_err(io)?;
                }
            }
        }
    }
    Ok(())
}

/// `relative` under `workdir`; a path that would leave it is refused.
fn inside(workdir: &Path, relative: &Path) -> Result<PathBuf> {
    if relative
        .components()
        .all(|part| matches!(part, std::path::Component::Normal(_)))
    {
        Ok(workdir.join(relative))
    } else {
        Err(CheckpointError::Io {
            what: format!("restoring {}", relative.display()),
            source: std::io::Error::other("the path leaves the working tree"),
        })
    }
}

/// Removes the file, link or folder at `path`, when there is one.
fn remove_entry(path: &Path) -> Result<()> {
    let removed = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error),
    };
    removed.map_err(|source| CheckpointError::Io {
        what: format!("removing {}", path.display()),
        source,
    })
}

/// Makes the folders above `path` under `workdir`, replacing whatever else
/// (a file, a symbolic link) stands where one must be.
fn make_parents(workdir: &Path, path: &Path) -> Result<()> {
    let Some(parent) = path.parent() else {
        return Ok(());
    };
    let relative = parent.strip_prefix(workdir).unwrap_or(Path::new(""));
    let mut dir = workdir.to_path_buf();
    for part in relative.components() {
        dir.push(part);
        let is_dir = std::fs::symlink_metadata(&dir).is_ok_and(|meta| meta.is_dir());
        if !is_dir {
            remove_entry(&dir)?;
            std::fs::create_dir(&dir).map_err(|source| CheckpointError::Io {
                what: format!("making {}", dir.display()),
                source,
            })?;
        }
    }
    Ok(())
}

/// The commits reachable from `from` and not from `hide`, newest first.
fn commits_between(repo: &Repository, from: Oid, hide: Oid) -> Result<Vec<CommitSummary>> {
    let mut walk = repo.revwalk().context("walking the history")?;
    walk.push(from).context("walking the history")?;
    walk.hide(hide).context("walking the history")?;
    walk.map(|id| {
        let id = id.context("walking the history")?;
        let commit = repo.find_commit(id).context("reading a commit")?;
        Ok(CommitSummary {
            sha: id.to_string(),
            summary: commit.summary().unwrap_or("").to_owned(),
        })
    })
    .collect()
}

/// Opens the repository whose root (or worktree root) is `path`, without
/// searching parent directories or reading `GIT_DIR` and the like from the
/// environment, which belong to whatever cinch runs, not to cinch.
fn open(path: &Path) -> Result<Repository> {
    Repository::open(path).map_err(|source| CheckpointError::NotARepository {
        path: path.to_path_buf(),
        source,
    })
}

/// Brings `index` in line with the working tree, as `git add -A` would.
///
/// Only the paths that differ from their entry are visited: the diff trusts
/// an entry whose stat data match the file, as git does.
fn stage_working_tree(repo: &Repository, index: &mut Index) -> Result<()> {
    let mut options = DiffOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_typechange(true);
    let diff = repo
        .diff_index_to_workdir(Some(index), Some(&mut options))
        .context("reading the working tree")?;
    let changed: Vec<(PathBuf, bool)> = diff
        .deltas()
        .filter_map(|delta| {
            let file = delta.new_file();
            // An untracked repository comes as `nested/`; staging wants no
            // trailing slash.
            let path = file.path()?.components().collect();
            Some((path, file.exists()))
        })
        .collect();
    drop(diff);

    for (path, exists) in changed {
        if exists {
            stage_path(index, &path)?;
        } else if !kept_out_of_worktree(index, &path) {
            index
                .remove_path(&path)
                .context(format!("unstaging {}", path.display()))?;
        }
    }
    Ok(())
}

/// Stages the file (or repository, as a gitlink) at `path`, which existed
/// when the working tree was read.
fn stage_path(index: &mut Index, path: &Path) -> Result<()> {
    match index.add_path(path) {
        Ok(()) => Ok(()),
        // Removed since the working tree was read: it is gone, as the
        // checkpoint records it.
        Err(e) if e.code() == ErrorCode::NotFound => index
            .remove_path(path)
            .context(format!("unstaging {}", path.display())),
        // A repository inside the tree with no commit yet: a gitlink has
        // nothing to point at, so it is left out, as `git add` leaves it.
        Err(e) if e.code() == ErrorCode::UnbornBranch => Ok(()),
        Err(e) => Err(e).context(format!("staging {}", path.display())),
    }
}

/// Whether git is told not to look for `path` in the working tree (the
/// skip-worktree bit of a sparse checkout, or assume-unchanged), so that its
/// absence there is no deletion.
fn kept_out_of_worktree(index: &Index, path: &Path) -> bool {
    index.get_path(path, 0).is_some_and(|entry| {
        entry.flags & IndexEntryFlag::VALID.bits() != 0
            || entry.flags_extended & IndexEntryExtendedFlag::SKIP_WORKTREE.bits() != 0
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

/// The changes from one commit's tree to another's, renames found.
fn diff_commits<'r>(repo: &'r Repository, start_sha: &str, end_sha: &str) -> Result<Diff<'r>> {
    let start = commit_tree(repo, start_sha)?;
    let end = commit_tree(repo, end_sha)?;
    let mut diff = repo
        .diff_tree_to_tree(Some(&start), Some(&end), None)
        .context("comparing the checkpoints")?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .context("finding renames")?;
    Ok(diff)
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::fs;
    use std::process::Command;

    use tempfile::TempDir;

    use super::*;

    const START: &str = "refs/cinch/runs/r1/tasks/c1/start";
    const END: &str = "refs/cinch/runs/r1/tasks/c1/end";

    /// git in `dir`, with no user or system configuration.
    fn git_command(dir: &Path, args: &[&str]) -> Command {
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
    fn git(dir: &Path, args: &[&str]) -> String {
        let output = git_command(dir, args).output().expect("running git");
        assert!(
            output.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).expect("git prints UTF-8")
    }

    /// A fresh repository on branch main, with nothing committed.
    fn empty_repo() -> (TempDir, PathBuf) {
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
    fn repo_with(files: &[(&str, &str)]) -> (TempDir, PathBuf) {
        let (dir, root) = empty_repo();
        for (path, contents) in files {
            write(&root, path, contents);
        }
        commit_all(&root, "initial");
        (dir, root)
    }

    fn commit_all(root: &Path, message: &str) {
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", message]);
    }

    fn write(root: &Path, path: &str, contents: impl AsRef<[u8]>) {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, contents).unwrap();
    }

    /// Everything a checkpoint must leave alone: the index file's bytes,
    /// what git status says (HEAD's branch and commit included), and every
    /// file's contents and mtime.
    fn snapshot(root: &Path, index_file: &Path) -> (Option<Vec<u8>>, String, String) {
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

    fn files_at(root: &Path, sha: &str) -> Vec<String> {
        git(root, &["ls-tree", "-r", "--name-only", sha])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    fn show(root: &Path, sha: &str, path: &str) -> String {
        git(root, &["show", &format!("{sha}:{path}")])
    }

    fn rev_parse(root: &Path, rev: &str) -> String {
        git(root, &["rev-parse", rev]).trim().to_owned()
    }

    #[test]
    fn take_commits_the_working_tree_and_leaves_head_index_and_files_alone() {
        let (_dir, root) = repo_with(&[
            ("a.txt", "a\n"),
            ("staged-gone.txt", "b\n"),
            ("dir/gone.txt", "c\n"),
            ("dir/same.txt", "d\n"),
        ]);
        // A change staged and changed again, a staged and an unstaged
        // deletion, a new file.
        write(&root, "a.txt", "a2\n");
        git(&root, &["add", "a.txt"]);
        write(&root, "a.txt", "a3\n");
        git(&root, &["rm", "-q", "staged-gone.txt"]);
        fs::remove_file(root.join("dir/gone.txt")).unwrap();
        write(&root, "dir/new.txt", "e\n");
        let index_file = root.join(".git/index");
        let before = snapshot(&root, &index_file);

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(snapshot(&root, &index_file), before);
        assert_eq!(rev_parse(&root, START), checkpoint.sha);
        assert_eq!(
            rev_parse(&root, &format!("{}^{{tree}}", checkpoint.sha)),
            checkpoint.tree
        );
        assert_eq!(
            files_at(&root, &checkpoint.sha),
            ["a.txt", "dir/new.txt", "dir/same.txt"]
        );
        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), "a3\n");
        assert_eq!(show(&root, &checkpoint.sha, "dir/new.txt"), "e\n");
        assert_eq!(
            rev_parse(&root, &format!("{}^", checkpoint.sha)),
            rev_parse(&root, "HEAD")
        );
        assert_eq!(
            git(
                &root,
                &["log", "-1", "--format=%an <%ae>|%cn <%ce>|%s", START]
            ),
            "cinch <cinch@localhost>|cinch <cinch@localhost>|start\n"
        );
    }

    #[test]
    fn ignored_files_are_left_out_and_tracked_ones_kept() {
        let (dir, root) = repo_with(&[("tracked.log", "kept though ignored\n")]);
        write(&root, ".gitignore", "*.log\nbuild/\n");
        write(&root, ".git/info/exclude", "secret.txt\n");
        let excludes = dir.path().join("excludes");
        write(dir.path(), "excludes", "*.tmp\n");
        git(
            &root,
            &["config", "core.excludesFile", excludes.to_str().unwrap()],
        );
        for path in [
            "keep.txt",
            "x.log",
            "build/out.o",
            "secret.txt",
            "y.tmp",
            "sub/deep/new.rs",
        ] {
            write(&root, path, path);
        }

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(
            files_at(&root, &checkpoint.sha),
            [".gitignore", "keep.txt", "sub/deep/new.rs", "tracked.log"]
        );
    }

    #[test]
    fn unborn_head_gives_a_root_commit_and_stays_unborn() {
        let (_dir, root) = empty_repo();
        write(&root, "a.txt", "a\n");
        let index_file = root.join(".git/index");
        let before = snapshot(&root, &index_file);

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(snapshot(&root, &index_file), before);
        assert!(!index_file.exists());
        assert_eq!(
            git(&root, &["rev-list", "--parents", "-n1", &checkpoint.sha]).trim(),
            checkpoint.sha
        );
        assert_eq!(files_at(&root, &checkpoint.sha), ["a.txt"]);
        assert_eq!(git(&root, &["branch", "--list"]), "");
    }

    #[test]
    fn taking_again_moves_the_ref() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n")]);
        let first = take(&root, START, "start").unwrap();
        write(&root, "a.txt", "changed\n");

        let second = take(&root, START, "start").unwrap();

        assert_ne!(first.sha, second.sha);
        assert_eq!(rev_parse(&root, START), second.sha);
    }

    #[test]
    fn works_in_a_worktree() {
        let (dir, root) = repo_with(&[("a.txt", "a\n")]);
        let tree = dir.path().join("wt");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "feature",
                tree.to_str().unwrap(),
            ],
        );
        write(&tree, "a.txt", "in the worktree\n");
        write(&tree, "new.txt", "new\n");
        git(&tree, &["commit", "-q", "-am", "on feature"]);
        write(&tree, "a.txt", "uncommitted\n");
        let main_before = snapshot(&root, &root.join(".git/index"));
        let tree_index = root.join(".git/worktrees/wt/index");
        let tree_before = snapshot(&tree, &tree_index);

        let checkpoint = take(&tree, START, "start").unwrap();

        assert_eq!(snapshot(&root, &root.join(".git/index")), main_before);
        assert_eq!(snapshot(&tree, &tree_index), tree_before);
        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), "uncommitted\n");
        assert_eq!(files_at(&root, &checkpoint.sha), ["a.txt", "new.txt"]);
        assert_eq!(
            rev_parse(&root, &format!("{}^", checkpoint.sha)),
            rev_parse(&root, "feature")
        );
        assert_eq!(rev_parse(&root, START), checkpoint.sha);
    }

    #[test]
    fn symlinks_are_recorded_as_links() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n")]);
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        std::os::unix::fs::symlink("nowhere", root.join("dangling")).unwrap();

        let checkpoint = take(&root, START, "start").unwrap();

        let listing = git(&root, &["ls-tree", &checkpoint.sha, "link", "dangling"]);
        let modes: Vec<&str> = listing.lines().map(|l| &l[..6]).collect();
        assert_eq!(modes, ["120000", "120000"]);
        assert_eq!(show(&root, &checkpoint.sha, "link"), "a.txt");
        assert_eq!(show(&root, &checkpoint.sha, "dangling"), "nowhere");
    }

    #[test]
    fn submodules_and_nested_repositories_are_recorded_as_gitlinks() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n")]);
        let (_lib_dir, lib) = repo_with(&[("lib.txt", "lib\n")]);
        git(
            &root,
            &[
                "-c",
                "protocol.file.allow=always",
                "submodule",
                "add",
                "-q",
                lib.to_str().unwrap(),
                "sub",
            ],
        );
        git(&root, &["commit", "-q", "-m", "submodule"]);
        // The submodule moves to a new commit of its own.
        write(&root.join("sub"), "lib.txt", "changed\n");
        git(&root.join("sub"), &["commit", "-q", "-am", "moved"]);
        // A repository the harness made, with a commit, and one without.
        let nested = root.join("nested");
        fs::create_dir(&nested).unwrap();
        git(&nested, &["init", "-q"]);
        write(&nested, "n.txt", "n\n");
        commit_all(&nested, "nested");
        let empty = root.join("empty");
        fs::create_dir(&empty).unwrap();
        git(&empty, &["init", "-q"]);

        let checkpoint = take(&root, START, "start").unwrap();

        let gitlink = |path: &str| {
            let line = git(&root, &["ls-tree", &checkpoint.sha, path]);
            let fields: Vec<&str> = line.split_whitespace().collect();
            (fields[0].to_owned(), fields[2].to_owned())
        };
        let sub_head = rev_parse(&root.join("sub"), "HEAD");
        assert_eq!(gitlink("sub"), ("160000".to_owned(), sub_head));
        let nested_head = rev_parse(&nested, "HEAD");
        assert_eq!(gitlink("nested"), ("160000".to_owned(), nested_head));
        assert_eq!(
            files_at(&root, &checkpoint.sha),
            [".gitmodules", "a.txt", "nested", "sub"]
        );
    }

    #[test]
    fn files_left_out_of_a_sparse_checkout_are_kept() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
        git(&root, &["update-index", "--skip-worktree", "b.txt"]);
        fs::remove_file(root.join("b.txt")).unwrap();

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(show(&root, &checkpoint.sha, "b.txt"), "b\n");
    }

    #[test]
    fn a_merge_conflict_is_recorded_as_the_working_tree_has_it() {
        let (_dir, root) = repo_with(&[("a.txt", "base\n"), ("b.txt", "base\n")]);
        git(&root, &["checkout", "-q", "-b", "other"]);
        write(&root, "a.txt", "other\n");
        write(&root, "b.txt", "other\n");
        commit_all(&root, "other");
        git(&root, &["checkout", "-q", "main"]);
        write(&root, "a.txt", "main\n");
        fs::remove_file(root.join("b.txt")).unwrap();
        commit_all(&root, "main");
        let merge = git_command(&root, &["merge", "-q", "other"])
            .output()
            .unwrap();
        assert!(!merge.status.success(), "the merge conflicts");
        let index_file = root.join(".git/index");
        let before = snapshot(&root, &index_file);

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(snapshot(&root, &index_file), before);
        let conflicted = fs::read_to_string(root.join("a.txt")).unwrap();
        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), conflicted);
        assert_eq!(show(&root, &checkpoint.sha, "b.txt"), "other\n");
    }

    #[test]
    fn a_file_gone_before_it_is_staged_is_recorded_as_gone() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
        let repo = Repository::open(&root).unwrap();
        let mut index = repo.index().unwrap();
        fs::remove_file(root.join("a.txt")).unwrap();

        stage_path(&mut index, Path::new("a.txt")).unwrap();
        stage_path(&mut index, Path::new("never-there.txt")).unwrap();

        let paths: Vec<_> = index.iter().map(|e| e.path).collect();
        assert_eq!(paths, [b"b.txt".to_vec()]);
    }

    #[test]
    fn errors_name_what_is_wrong() {
        let (dir, root) = repo_with(&[("a.txt", "a\n")]);
        assert!(matches!(
            take(dir.path(), START, "start"),
            Err(CheckpointError::NotARepository { .. })
        ));
        git(dir.path(), &["init", "-q", "--bare", "bare.git"]);
        assert!(matches!(
            take(&dir.path().join("bare.git"), START, "start"),
            Err(CheckpointError::Bare(_))
        ));
        let head = rev_parse(&root, "HEAD");
        assert!(matches!(
            diffstat(&root, &head[..7], &head, 30),
            Err(CheckpointError::InvalidSha(_))
        ));
    }

    /// A start checkpoint, the changes `change` makes, and an end checkpoint.
    fn start_and_end(root: &Path, change: impl FnOnce(&Path)) -> (String, String) {
        let start = take(root, START, "start").unwrap();
        change(root);
        let end = take(root, END, "end").unwrap();
        (start.sha, end.sha)
    }

    #[test]
    fn diffstat_counts_lines_marks_binaries_and_follows_renames() {
        let long: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let (_dir, root) = repo_with(&[
            ("a.txt", "one\ntwo\nthree\n"),
            ("old.txt", &long),
            ("gone.txt", "x\ny\n"),
        ]);
        write(&root, "image.bin", [0u8, 1, 2, 3]);
        let (start, end) = start_and_end(&root, |root| {
            write(root, "a.txt", "one\n2\nthree\nfour\n");
            fs::rename(root.join("old.txt"), root.join("renamed.txt")).unwrap();
            write(root, "image.bin", [0u8, 9, 9]);
            write(root, "c.txt", "c\nc\n");
            fs::remove_file(root.join("gone.txt")).unwrap();
        });

        let stat = diffstat(&root, &start, &end, 30).unwrap();

        let file = |path: &str, insertions, deletions, binary| FileStat {
            path: path.to_owned(),
            insertions,
            deletions,
            binary,
        };
        assert_eq!(
            stat,
            DiffStat {
                files: vec![
                    file("a.txt", 2, 1, false),
                    file("c.txt", 2, 0, false),
                    file("gone.txt", 0, 2, false),
                    file("image.bin", 0, 0, true),
                    file("renamed.txt", 0, 0, false),
                ],
                total_files: 5,
                insertions: 4,
                deletions: 3,
            }
        );
        assert_eq!(
            render_diffstat(&stat),
            "5 files changed, +4 −3\n\
             a.txt (+2 −1)\n\
             c.txt (+2 −0)\n\
             gone.txt (+0 −2)\n\
             image.bin (binary)\n\
             renamed.txt (+0 −0)"
        );
    }

    #[test]
    fn diffstat_lists_at_most_max_files_and_counts_them_all() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n")]);
        let (start, end) = start_and_end(&root, |root| {
            for n in 0..35 {
                write(root, &format!("f{n:02}.txt"), "x\n");
            }
        });

        let stat = diffstat(&root, &start, &end, 30).unwrap();

        assert_eq!(stat.files.len(), 30);
        assert_eq!(stat.files[29].path, "f29.txt");
        assert_eq!((stat.total_files, stat.insertions), (35, 35));
        let text = render_diffstat(&stat);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 32);
        assert_eq!(lines[0], "35 files changed, +35 −0");
        assert_eq!(lines[1], "f00.txt (+1 −0)");
        assert_eq!(lines[31], "… 5 more files");
    }

    #[test]
    fn unchanged_tree_has_an_empty_diffstat() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n")]);
        let (start, end) = start_and_end(&root, |_| {});

        let stat = diffstat(&root, &start, &end, 30).unwrap();

        assert_eq!(stat, DiffStat::default());
        assert_eq!(render_diffstat(&stat), "no files changed");
        assert_eq!(diff(&root, &start, &end).unwrap(), "");
    }

    #[test]
    fn render_diffstat_says_one_file_in_the_singular() {
        let lib = FileStat {
            path: "src/lib.rs".to_owned(),
            insertions: 3,
            deletions: 1,
            binary: false,
        };
        let one = DiffStat {
            files: vec![lib.clone()],
            total_files: 1,
            insertions: 3,
            deletions: 1,
        };
        assert_eq!(
            render_diffstat(&one),
            "1 file changed, +3 −1
src/lib.rs (+3 −1)"
        );
        let one_unlisted = DiffStat {
            files: vec![lib],
            total_files: 2,
            insertions: 5,
            deletions: 1,
        };
        assert_eq!(
            render_diffstat(&one_unlisted),
            "2 files changed, +5 −1
src/lib.rs (+3 −1)
… 1 more file"
        );
    }

    #[test]
    fn diff_is_the_patch_git_diff_prints() {
        let long: String = (1..=20).map(|n| format!("line {n}\n")).collect();
        let (_dir, root) = repo_with(&[
            ("a.txt", "one\ntwo\nthree\n"),
            ("old.txt", &long),
            ("gone.txt", "x\n"),
            ("no-eol.txt", "last"),
        ]);
        write(&root, "image.bin", [0u8, 1, 2]);
        let (start, end) = start_and_end(&root, |root| {
            write(root, "a.txt", "one\n2\nthree\n");
            fs::rename(root.join("old.txt"), root.join("renamed.txt")).unwrap();
            write(root, "image.bin", [0u8, 9]);
            write(root, "new.txt", "new\n");
            write(root, "no-eol.txt", "still last");
            fs::remove_file(root.join("gone.txt")).unwrap();
        });

        let patch = diff(&root, &start, &end).unwrap();

        assert_eq!(patch, git(&root, &["diff", "-M", &start, &end]));
    }

    #[test]
    fn restore_brings_back_the_files_and_the_branch_and_can_be_undone() {
        let (_dir, root) = repo_with(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
        write(&root, ".gitignore", "*.log\n");
        write(&root, "run.sh", "#!/bin/sh\n");
        {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(root.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        write(&root, "wip.txt", "uncommitted before the turn\n");
        let head_at_start = rev_parse(&root, "HEAD");
        let start = take(&root, START, "start").unwrap();
        // The turn: edits, deletes, adds, commits some of it.
        write(&root, "a.txt", "a by the turn\n");
        fs::remove_file(root.join("b.txt")).unwrap();
        fs::remove_file(root.join("run.sh")).unwrap();
        fs::remove_file(root.join("link")).unwrap();
        write(&root, "dir/new.txt", "new\n");
        commit_all(&root, "the turn's commit");
        write(&root, "late.txt", "not committed\n");
        write(&root, "build.log", "ignored\n");
        let turn_commit = rev_parse(&root, "HEAD");

        let restored = restore(
            &root,
            &start.sha,
            "refs/cinch/r/before",
            "refs/cinch/r/after",
            30,
        )
        .unwrap();

        assert_eq!(fs::read_to_string(root.join("a.txt")).unwrap(), "a\n");
        assert_eq!(fs::read_to_string(root.join("b.txt")).unwrap(), "b\n");
        assert!(!root.join("dir/new.txt").exists() && !root.join("late.txt").exists());
        assert_eq!(
            fs::read_to_string(root.join("wip.txt")).unwrap(),
            "uncommitted before the turn\n"
        );
        assert_eq!(
            fs::read_to_string(root.join("build.log")).unwrap(),
            "ignored\n"
        );
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(root.join("run.sh"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o111, 0o111, "run.sh is executable again: {mode:o}");
        }
        assert_eq!(
            fs::read_link(root.join("link")).unwrap(),
            Path::new("a.txt")
        );
        assert_eq!(rev_parse(&root, "HEAD"), head_at_start);
        assert_eq!(git(&root, &["branch", "--show-current"]).trim(), "main");
        assert_eq!(restored.head_before.as_deref(), Some(turn_commit.as_str()));
        assert_eq!(
            restored.commits_undone,
            [CommitSummary {
                sha: turn_commit.clone(),
                summary: "the turn's commit".into()
            }]
        );
        assert_eq!(
            git(&root, &["status", "--porcelain", "-uall"]),
            "?? .gitignore\n?? link\n?? run.sh\n?? wip.txt\n"
        );
        assert_eq!(
            files_at(&root, &restored.end_checkpoint),
            files_at(&root, &start.sha)
        );

        // Restoring to the first checkpoint undoes it: files and commit back.
        let undone = restore(
            &root,
            &restored.start_checkpoint,
            "refs/cinch/r2/before",
            "refs/cinch/r2/after",
            30,
        )
        .unwrap();
        assert_eq!(rev_parse(&root, "HEAD"), turn_commit);
        assert_eq!(undone.commits_redone.len(), 1);
        assert_eq!(
            fs::read_to_string(root.join("a.txt")).unwrap(),
            "a by the turn\n"
        );
        assert!(!root.join("b.txt").exists());
        assert_eq!(
            fs::read_to_string(root.join("late.txt")).unwrap(),
            "not committed\n"
        );
        // The turn's commit took .gitignore and wip.txt with it.
        assert_eq!(
            git(&root, &["status", "--porcelain", "-uall"]),
            "?? late.txt\n"
        );
    }

    #[test]
    fn restore_writes_nothing_through_a_symbolic_link() {
        let (dir, root) = repo_with(&[("conf/settings", "mine\n")]);
        let start = take(&root, START, "start").unwrap();
        // The turn swaps the folder for a link to somewhere outside, which it
        // has git ignore.
        let outside = dir.path().join("outside");
        fs::create_dir(&outside).unwrap();
        write(&outside, "settings", "outside\n");
        fs::remove_dir_all(root.join("conf")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("conf")).unwrap();
        write(&root, ".gitignore", "conf\n");

        restore(
            &root,
            &start.sha,
            "refs/cinch/r/before",
            "refs/cinch/r/after",
            30,
        )
        .unwrap();

        assert_eq!(
            fs::read_to_string(outside.join("settings")).unwrap(),
            "outside\n"
        );
        assert!(fs::symlink_metadata(root.join("conf")).unwrap().is_dir());
        assert_eq!(
            fs::read_to_string(root.join("conf/settings")).unwrap(),
            "mine\n"
        );
        assert!(!root.join(".gitignore").exists());
    }
}
