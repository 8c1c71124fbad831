//! What changed between two checkpoints: counted per file, as a patch, and
//! as the diffstat lines of a turn's result text.

use std::path::Path;

use git2::{Diff, DiffFindOptions, DiffFormat, DiffOptions, Patch, Repository};

use super::{Context as _, Repo, Result, commit_tree};

/// What changed between two checkpoints, as [`diffstat`] counts it: the one
/// view of a change that turn results, restores and the API all carry, its
/// fields inline in theirs.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct DiffStat {
    /// The changed files in path order, at most the `max_files` asked for.
    pub files_changed: Vec<ChangedFile>,
    /// How many files changed, listed or not.
    pub total_files: usize,
    /// Lines added across all changed files, listed or not.
    pub insertions: usize,
    /// Lines removed across all changed files, listed or not.
    pub deletions: usize,
}

/// One changed file in a [`DiffStat`], as turn results, restores and the
/// API list it: a renamed file under its new path; a binary one (git takes
/// either side of the change for binary) with no lines counted.
///
/// Its field comments are the API document's descriptions.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(description = "A changed file."))]
pub struct ChangedFile {
    /// Its path in the repository.
    pub path: String,
    /// Lines added.
    pub insertions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// Whether it is binary.
    pub binary: bool,
}

/// Counts what changed from commit `start_sha` to commit `end_sha` (full ids,
/// as [`Checkpoint::sha`] has them), listing at most `max_files` files; a
/// renamed file counts once, under its new path.
pub fn diffstat(repo: &Path, start_sha: &str, end_sha: &str, max_files: usize) -> Result<DiffStat> {
    Repo::open(repo)?.diffstat(start_sha, end_sha, max_files)
}

impl Repo {
    /// [`diffstat`], in this repository.
    pub(crate) fn diffstat(
        &self,
        start_sha: &str,
        end_sha: &str,
        max_files: usize,
    ) -> Result<DiffStat> {
        let diff = diff_commits(&self.repo, start_sha, end_sha)?;

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
            if stat.files_changed.len() < max_files {
                let delta = patch.delta();
                let path = delta.new_file().path().or(delta.old_file().path());
                stat.files_changed.push(ChangedFile {
                    path: path.map_or_else(String::new, |p| p.to_string_lossy().into_owned()),
                    insertions,
                    deletions,
                    binary: delta.flags().is_binary(),
                });
            }
        }
        Ok(stat)
    }
}

/// How much of the unchanged text around a change a diff shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiffContext {
    /// Three lines each side of a change, as `git diff` shows them.
    #[default]
    Hunks,
    /// Every line of each changed file: one hunk per file, the whole file.
    WholeFiles,
}

impl DiffContext {
    /// Its name in a query string.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hunks => "hunks",
            Self::WholeFiles => "whole_files",
        }
    }
}

/// More lines than any text file cinch diffs: a hunk that spans the file.
const WHOLE_FILE_LINES: u32 = 1 << 30;

/// The unified patch from commit `start_sha` to commit `end_sha`, as
/// `git diff -M <start> <end>` prints it (with `-U<huge>` for
/// [`DiffContext::WholeFiles`]). Bytes that are not UTF-8 become U+FFFD.
pub fn diff(repo: &Path, start_sha: &str, end_sha: &str, context: DiffContext) -> Result<String> {
    Repo::open(repo)?.diff(start_sha, end_sha, context)
}

impl Repo {
    /// [`diff`], in this repository.
    pub(crate) fn diff(
        &self,
        start_sha: &str,
        end_sha: &str,
        context: DiffContext,
    ) -> Result<String> {
        patch_text(&self.repo, start_sha, end_sha, context)
    }
}

fn patch_text(
    repo: &Repository,
    start_sha: &str,
    end_sha: &str,
    context: DiffContext,
) -> Result<String> {
    let mut options = DiffOptions::new();
    if context == DiffContext::WholeFiles {
        options.context_lines(WHOLE_FILE_LINES);
    }
    let diff = diff_commits_with(repo, start_sha, end_sha, &mut options)?;

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
    for file in &stat.files_changed {
        lines.push(if file.binary {
            format!("{} (binary)", file.path)
        } else {
            format!(
                "{} (+{} \u{2212}{})",
                file.path, file.insertions, file.deletions
            )
        });
    }
    let unlisted = stat.total_files.saturating_sub(stat.files_changed.len());
    if unlisted > 0 {
        let plural = if unlisted == 1 { "" } else { "s" };
        lines.push(format!("\u{2026} {unlisted} more file{plural}"));
    }
    lines.join("\n")
}

/// The changes from one commit's tree to another's, renames found.
fn diff_commits<'r>(repo: &'r Repository, start_sha: &str, end_sha: &str) -> Result<Diff<'r>> {
    diff_commits_with(repo, start_sha, end_sha, &mut DiffOptions::new())
}

/// [`diff_commits`] with `options` (how much context).
fn diff_commits_with<'r>(
    repo: &'r Repository,
    start_sha: &str,
    end_sha: &str,
    options: &mut DiffOptions,
) -> Result<Diff<'r>> {
    let start = commit_tree(repo, start_sha)?;
    let end = commit_tree(repo, end_sha)?;
    let mut diff = repo
        .diff_tree_to_tree(Some(&start), Some(&end), Some(options))
        .context("comparing the checkpoints")?;
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .context("finding renames")?;
    Ok(diff)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::checkpoint::take;
    use crate::checkpoint::test_repo::*;

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

        let file = |path: &str, insertions, deletions, binary| ChangedFile {
            path: path.to_owned(),
            insertions,
            deletions,
            binary,
        };
        assert_eq!(
            stat,
            DiffStat {
                files_changed: vec![
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

        assert_eq!(stat.files_changed.len(), 30);
        assert_eq!(stat.files_changed[29].path, "f29.txt");
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
        assert_eq!(diff(&root, &start, &end, DiffContext::Hunks).unwrap(), "");
    }

    #[test]
    fn render_diffstat_says_one_file_in_the_singular() {
        let lib = ChangedFile {
            path: "src/lib.rs".to_owned(),
            insertions: 3,
            deletions: 1,
            binary: false,
        };
        let one = DiffStat {
            files_changed: vec![lib.clone()],
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
            files_changed: vec![lib],
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

        let patch = diff(&root, &start, &end, DiffContext::Hunks).unwrap();

        assert_eq!(patch, git(&root, &["diff", "-M", &start, &end]));
    }

    #[test]
    fn whole_files_is_git_diff_with_every_line_as_context() {
        let long: String = (1..=30).map(|n| format!("line {n}\n")).collect();
        let (_dir, root) = repo_with(&[("long.txt", &long), ("short.txt", "a\nb\n")]);
        let (start, end) = start_and_end(&root, |root| {
            write(root, "long.txt", long.replace("line 20\n", "line twenty\n"));
            write(root, "short.txt", "a\nB\n");
            write(root, "new.txt", "new\n");
        });

        let whole = diff(&root, &start, &end, DiffContext::WholeFiles).unwrap();

        assert_eq!(whole, git(&root, &["diff", "-M", "-U100000", &start, &end]));
        assert!(whole.contains("@@ -1,30 +1,30 @@\n line 1\n"), "{whole}");
        let hunks = diff(&root, &start, &end, DiffContext::Hunks).unwrap();
        assert!(!hunks.contains(" line 1\n"), "{hunks}");
    }

    // The API's `ChangedFile` before it became this one, kept to prove that
    // the document did not change.
    #[cfg(feature = "openapi")]
    mod api {
        /// A changed file.
        #[derive(serde::Serialize, utoipa::ToSchema)]
        #[allow(dead_code)]
        pub struct ChangedFile {
            /// Its path in the repository.
            path: String,
            /// Lines added.
            insertions: usize,
            /// Lines removed.
            deletions: usize,
            /// Whether it is binary.
            binary: bool,
        }
    }

    #[test]
    fn a_changed_file_reads_and_writes_as_before() {
        let file = r#"{"path":"src/a.rs","insertions":3,"deletions":1,"binary":false}"#;
        let parsed: ChangedFile = serde_json::from_str(file).unwrap();
        assert_eq!(serde_json::to_string(&parsed).unwrap(), file);
    }

    #[cfg(feature = "openapi")]
    #[test]
    fn a_changed_file_is_described_as_before() {
        use utoipa::{PartialSchema as _, ToSchema as _};
        assert_eq!(ChangedFile::name(), api::ChangedFile::name());
        assert_eq!(
            serde_json::to_value(ChangedFile::schema()).unwrap(),
            serde_json::to_value(api::ChangedFile::schema()).unwrap()
        );
    }
}
