//! Taking a checkpoint: the working tree staged into the repository's index
//! held in memory (never written back, so files whose stat data match their
//! index entry are not re-read), written as a tree and committed under a ref.

use std::path::Path;

use git2::{Commit, ErrorCode, Index, Repository, Signature};

use super::{CheckpointError, Context as _, Repo, Result, head_commit, scan};

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

/// Commits the working tree at `workdir` (a repository's root, or a linked
/// worktree's) and points `refname` at the commit, replacing what it pointed
/// at before.
///
/// `refname` is a full ref name such as
/// `refs/cinch/runs/<run>/tasks/<call>/start`. The commit's parent is HEAD's
/// commit, and there is none while HEAD is unborn. HEAD, the index file and
/// the working tree are left exactly as they were.
pub fn take(workdir: &Path, refname: &str, message: &str) -> Result<Checkpoint> {
    Repo::open(workdir)?.take(refname, message)
}

impl Repo {
    /// [`take`], in this repository.
    pub(crate) fn take(&self, refname: &str, message: &str) -> Result<Checkpoint> {
        let repo = &self.repo;
        if repo.is_bare() {
            return Err(CheckpointError::Bare(self.workdir.clone()));
        }

        // The handle's index is read from the index file once and lives in this
        // handle alone; nothing below writes it back.
        let mut index = repo.index().context("reading the index")?;
        stage_working_tree(repo, &mut index)?;
        let tree_id = index.write_tree().context("writing the tree")?;
        let tree = repo.find_tree(tree_id).context("reading the tree")?;

        let parent = head_commit(repo)?;
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
}

/// Brings `index` in line with the working tree, as `git add -A` would:
/// the tracked paths gone from the tree leave it first (a file may have
/// become a folder), then whatever [`scan::changes`] found new or possibly
/// changed is staged.
fn stage_working_tree(repo: &Repository, index: &mut Index) -> Result<()> {
    let changes = scan::changes(repo, index)?;
    for path in &changes.unstage {
        index
            .remove_path(path)
            .context(format!("unstaging {}", path.display()))?;
    }
    for path in &changes.stage {
        stage_path(index, path)?;
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

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::checkpoint::diffstat;
    use crate::checkpoint::test_repo::*;

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
}
