//! Comparing several sessions' work trees, each as one of its checkpoints:
//! what each changed since their common base, which files differ between
//! them, and the patch from one to another. The trees may live in different
//! repositories on this machine (a scratch session has its own): the first
//! is opened, and the others' objects are read through it, never copied.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository};

use super::{Context as _, DiffContext, DiffStat, Repo, Result, find_commit, open};

/// One work tree to compare: a checkpoint, and a folder of a repository
/// that holds it.
#[derive(Debug, Clone)]
pub struct Tree {
    /// A worktree (or repository) holding the checkpoint.
    pub dir: PathBuf,
    /// The checkpoint's commit, 40 hex digits.
    pub sha: String,
}

/// What [`compare`] found.
#[derive(Debug, Clone, Default)]
pub struct Comparison {
    /// The trees' common base: the newest commit all of them descend from;
    /// none when they share no history.
    pub base: Option<String>,
    /// Each tree's changes since the base, in the order given (empty
    /// without a base).
    pub stats: Vec<DiffStat>,
    /// The paths whose content is not the same in every tree, sorted.
    pub differing_files: Vec<String>,
}

impl Repo {
    /// The repository of `trees[0]`, reading the objects of the others'.
    fn reading(trees: &[Tree]) -> Result<Self> {
        let first = trees
            .first()
            .map(|tree| tree.dir.as_path())
            .unwrap_or_else(|| Path::new("."));
        let repo = Self::open(first)?;
        let own = repo.repo.commondir().to_path_buf();
        {
            // The repository's own object database: what is added stays with it.
            let odb = repo.repo.odb().context("opening the object database")?;
            for tree in &trees[1..] {
                let other = open(&tree.dir)?;
                if other.commondir() != own {
                    odb.add_disk_alternate(&other.commondir().join("objects").to_string_lossy())
                        .context(format!("reading the objects of {}", tree.dir.display()))?;
                }
            }
        }
        Ok(repo)
    }
}

/// Compares `trees` (at least one): their common base, each one's diffstat
/// against it (at most `max_files` files listed each), and the files that
/// differ between them.
pub fn compare(trees: &[Tree], max_files: usize) -> Result<Comparison> {
    if trees.is_empty() {
        return Ok(Comparison::default());
    }
    let repo = Repo::reading(trees)?;
    let oids = trees
        .iter()
        .map(|tree| find_commit(&repo.repo, &tree.sha).map(|commit| commit.id()))
        .collect::<Result<Vec<Oid>>>()?;
    // One tree has nothing to share a base with (and libgit2 wants two
    // commits at least).
    let base = match oids.as_slice() {
        [_] => None,
        _ => match repo.repo.merge_base_many(&oids) {
            Ok(base) => Some(base.to_string()),
            Err(error) if error.code() == git2::ErrorCode::NotFound => None,
            Err(error) => return Err(error).context("finding the common base"),
        },
    };
    let mut stats = Vec::new();
    if let Some(base) = &base {
        for tree in trees {
            stats.push(repo.diffstat(base, &tree.sha, max_files)?);
        }
    }
    let differing_files = differing(&repo.repo, &oids)?;
    Ok(Comparison {
        base,
        stats,
        differing_files,
    })
}

/// The unified patch from tree `a` to tree `b`, as `git diff -M` prints it.
pub fn diff_between(a: &Tree, b: &Tree, context: DiffContext) -> Result<String> {
    let trees = [a.clone(), b.clone()];
    Repo::reading(&trees)?.diff(&a.sha, &b.sha, context)
}

/// The paths whose blob (or absence) is not the same in every commit's tree.
fn differing(repo: &Repository, commits: &[Oid]) -> Result<Vec<String>> {
    let trees = commits
        .iter()
        .map(|oid| {
            repo.find_commit(*oid)
                .and_then(|commit| commit.tree())
                .context(format!("reading commit {oid}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let Some((first, others)) = trees.split_first() else {
        return Ok(Vec::new());
    };
    // A path differs somewhere exactly when it differs from the first tree.
    let mut paths = std::collections::BTreeSet::new();
    for other in others {
        let diff = repo
            .diff_tree_to_tree(Some(first), Some(other), None)
            .context("comparing two trees")?;
        for delta in diff.deltas() {
            for file in [delta.old_file(), delta.new_file()] {
                if let Some(path) = file.path() {
                    paths.insert(path.to_string_lossy().into_owned());
                }
            }
        }
    }
    Ok(paths.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::checkpoint::take;
    use crate::checkpoint::test_repo::*;

    #[test]
    fn two_trees_from_one_base_show_their_changes_and_where_they_differ() {
        let (_dir, root) = repo_with(&[("shared.txt", "base\n"), ("same.txt", "same\n")]);
        fs::write(root.join("shared.txt"), "left\n").unwrap();
        fs::write(root.join("left.txt"), "only left\n").unwrap();
        let left = take(&root, "refs/cinch/runs/a/tasks/1/end", "end").unwrap();
        fs::write(root.join("shared.txt"), "right\n").unwrap();
        fs::remove_file(root.join("left.txt")).unwrap();
        let right = take(&root, "refs/cinch/runs/b/tasks/1/end", "end").unwrap();
        let trees = [
            Tree {
                dir: root.clone(),
                sha: left.sha.clone(),
            },
            Tree {
                dir: root.clone(),
                sha: right.sha.clone(),
            },
        ];
        let compared = compare(&trees, 30).unwrap();
        assert!(compared.base.is_some());
        assert_eq!(compared.stats[0].total_files, 2);
        assert_eq!(compared.stats[1].total_files, 1);
        assert_eq!(compared.differing_files, ["left.txt", "shared.txt"]);
        let patch = diff_between(&trees[0], &trees[1], DiffContext::Hunks).unwrap();
        assert!(patch.contains("-left\n+right\n"), "{patch}");
        assert!(patch.contains("deleted file mode"), "{patch}");
    }
}
