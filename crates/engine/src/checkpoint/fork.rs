//! Forking a work tree at a checkpoint: a new worktree of the same
//! repository on a new branch, its files the checkpoint's.

use std::path::Path;

use git2::build::CheckoutBuilder;
use git2::{Repository, ResetType, WorktreeAddOptions};

use super::{CheckpointError, Context as _, Result, find_commit, open};

/// Adds a worktree at `dir` (which must not exist) of the repository whose
/// work tree is `workdir`, on a new branch `branch` made at the parent of
/// `checkpoint` (HEAD when the checkpoint was taken), with the checkpoint's
/// files and the index at HEAD: what was uncommitted then is uncommitted
/// there. The source work tree is not touched.
pub fn fork_worktree(workdir: &Path, checkpoint: &str, dir: &Path, branch: &str) -> Result<()> {
    let repo = open(workdir)?;
    let commit = find_commit(&repo, checkpoint)?;
    let parent = commit.parent(0).context(format!(
        "checkpoint {checkpoint} has no parent commit to branch from"
    ))?;
    let name = dir
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .ok_or_else(|| CheckpointError::Io {
            what: format!("{} names no folder", dir.display()),
            source: std::io::ErrorKind::InvalidInput.into(),
        })?;
    let made = repo
        .branch(branch, &parent, false)
        .context(format!("creating branch {branch}"))?;
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(made.get()));
    let added = repo.worktree(&name, dir, Some(&options));
    let worktree = match added {
        Ok(worktree) => worktree,
        Err(error) => {
            // The branch was made for this worktree alone.
            let _ = repo
                .find_branch(branch, git2::BranchType::Local)
                .and_then(|mut made| made.delete());
            return Err(error).context(format!("adding the worktree {}", dir.display()));
        }
    };
    let fork = Repository::open_from_worktree(&worktree)
        .context(format!("opening the worktree {}", dir.display()))?;
    let tree = fork
        .find_tree(commit.tree_id())
        .context(format!("reading commit {checkpoint}"))?;
    fork.checkout_tree(tree.as_object(), Some(CheckoutBuilder::new().force()))
        .context(format!("writing the files of {checkpoint}"))?;
    let head = fork
        .find_commit(parent.id())
        .context("reading the branch's commit")?;
    fork.reset(head.as_object(), ResetType::Mixed, None)
        .context("setting the index back to the branch's commit")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::checkpoint::take;
    use crate::checkpoint::test_repo::*;

    #[test]
    fn a_fork_has_the_checkpoints_files_uncommitted_and_the_source_stays() {
        let (dir, root) = repo_with(&[("kept.txt", "base\n"), ("gone.txt", "base\n")]);
        fs::write(root.join("kept.txt"), "changed\n").unwrap();
        fs::remove_file(root.join("gone.txt")).unwrap();
        fs::write(root.join("new.txt"), "new\n").unwrap();
        let end = take(&root, "refs/cinch/runs/r/tasks/t/end", "end").unwrap();
        fs::write(root.join("later.txt"), "later\n").unwrap();

        let fork = dir.path().join("fork");
        fork_worktree(&root, &end.sha, &fork, "cinch/fork-t").unwrap();
        assert_eq!(
            fs::read_to_string(fork.join("kept.txt")).unwrap(),
            "changed\n"
        );
        assert_eq!(fs::read_to_string(fork.join("new.txt")).unwrap(), "new\n");
        assert!(!fork.join("gone.txt").exists() && !fork.join("later.txt").exists());
        let forked = Repository::open(&fork).unwrap();
        assert_eq!(forked.head().unwrap().shorthand(), Some("cinch/fork-t"));
        let statuses = forked.statuses(None).unwrap();
        assert_eq!(statuses.len(), 3, "the turn's changes are uncommitted");
        assert!(root.join("later.txt").exists(), "the source is untouched");

        let again = fork_worktree(&root, &end.sha, &dir.path().join("fork2"), "cinch/fork-t");
        assert!(again.unwrap_err().to_string().contains("cinch/fork-t"));
    }
}
