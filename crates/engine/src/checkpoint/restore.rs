//! Going back to a checkpoint: the working tree made the checkpoint's again
//! (HEAD's branch moved back past commits made since), checkpointed before
//! and after so that the restore itself can be undone.

use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use git2::{Oid, Repository, Tree};

use super::{
    CheckpointError, Context as _, DiffStat, Result, commit_tree, diffstat, find_commit,
    head_commit, open, take,
};

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
    #[serde(flatten)]
    pub changes: DiffStat,
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
    let changes = diffstat(workdir, &before.sha, &after.sha, max_files)?;
    let head_after = head_commit(&repo)?.map(|commit| commit.id().to_string());
    Ok(Restored {
        start_checkpoint: before.sha,
        end_checkpoint: after.sha,
        changes,
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

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::checkpoint::test_repo::*;

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

    #[test]
    fn a_restore_reads_and_writes_the_json_it_always_did() {
        // As revert messages and `cinch revert --json` have it, field order
        // included.
        let json = concat!(
            r#"{"start_checkpoint":"s","end_checkpoint":"e","#,
            r#""files_changed":[{"path":"a.txt","insertions":1,"deletions":2,"binary":false}],"#,
            r#""total_files":3,"insertions":4,"deletions":5,"head_before":null,"head_after":"h","#,
            r#""commits_undone":[{"sha":"c","summary":"a commit"}],"commits_redone":[]}"#
        );

        let restored: Restored = serde_json::from_str(json).unwrap();

        assert_eq!(restored.changes.total_files, 3);
        assert_eq!(restored.changes.files_changed[0].path, "a.txt");
        assert_eq!(serde_json::to_string(&restored).unwrap(), json);
    }
}
