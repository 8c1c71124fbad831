//! Finding what `git add -A` would stage: the working tree compared with the
//! index by stat data, folder by folder on several threads, as git's
//! preloaded index does (libgit2's own diff stats one file at a time).
//!
//! A tracked file whose stat data match its entry is trusted unread, as git
//! trusts it, unless the entry is racily clean: its mtime is not older than
//! the index file's, so the file may have changed within the same timestamp
//! after it was stat'ed. Anything in doubt is a candidate; staging it reads
//! the file and finds whether it really changed.

use std::fs::{DirEntry, Metadata};
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::{Index, IndexEntry, IndexEntryExtendedFlag, IndexEntryFlag, Repository};

use super::{CheckpointError, Context as _, Result};

/// Below this many index entries one thread walks the tree: threads would
/// cost more than they save.
const PARALLEL_FROM: usize = 2_000;

/// At most this many threads stat files.
const MAX_THREADS: usize = 8;

/// What differs between the index and the working tree.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Changes {
    /// Paths to stage: new, or possibly changed since their entry.
    pub stage: Vec<PathBuf>,
    /// Tracked paths the working tree no longer has there.
    pub unstage: Vec<PathBuf>,
}

/// The bits of an entry's mode that give its kind, and the kinds.
const MODE_TYPE: u32 = 0o170_000;
const MODE_FILE: u32 = 0o100_000;
const MODE_LINK: u32 = 0o120_000;
const MODE_GITLINK: u32 = 0o160_000;

/// How far the configuration lets stat data be trusted.
#[derive(Debug, Clone, Copy)]
struct Trust {
    /// `core.filemode`: whether the executable bit means anything.
    file_mode: bool,
    /// `core.trustctime`.
    ctime: bool,
    /// The index file's mtime (seconds, nanoseconds): an entry stat'ed at or
    /// after it is racily clean. None when there is no index file.
    index_mtime: Option<(i64, i64)>,
}

/// A folder to read: its path from the root, slash-separated with no
/// trailing slash (empty for the root), and the index entries under it.
struct Folder {
    path: Vec<u8>,
    entries: std::ops::Range<usize>,
}

/// What reading one folder found.
#[derive(Default)]
struct Found {
    /// Index positions of the entries whose file is where they say.
    seen: Vec<usize>,
    /// Tracked paths to stage again.
    stage: Vec<Vec<u8>>,
    /// Paths of no entry, and whether each is a folder.
    untracked: Vec<(Vec<u8>, bool)>,
    /// Folders holding tracked files, to read next.
    folders: Vec<Folder>,
}

/// Compares the working tree at `repo`'s workdir with `index`.
pub(super) fn changes(repo: &Repository, index: &Index) -> Result<Changes> {
    let workdir = repo
        .workdir()
        .ok_or_else(|| CheckpointError::Bare(repo.path().to_path_buf()))?;
    let config = repo.config().context("reading the configuration")?;
    let index_mtime = index
        .path()
        .and_then(|path| std::fs::metadata(path).ok())
        .map(|meta| (meta.mtime(), meta.mtime_nsec()));
    let trust = Trust {
        file_mode: config.get_bool("core.filemode").unwrap_or(true),
        ctime: config.get_bool("core.trustctime").unwrap_or(true),
        index_mtime,
    };
    let mut entries: Vec<IndexEntry> = index.iter().collect();
    // The walk finds names by binary search in byte order, which is the
    // index's own unless `core.ignorecase` sorts it otherwise.
    if !entries.is_sorted_by(|a, b| a.path <= b.path) {
        entries.sort_by(|a, b| a.path.cmp(&b.path));
    }
    let found = walk(workdir, &entries, trust)?;

    let mut seen = vec![false; entries.len()];
    let mut changes = Changes::default();
    for found in &found {
        for position in &found.seen {
            seen[*position] = true;
        }
        changes
            .stage
            .extend(found.stage.iter().map(|path| path_of(path)));
    }
    let mut last_unstaged: Option<&[u8]> = None;
    for (entry, seen) in entries.iter().zip(seen) {
        // A conflict's stages share one path; it goes once.
        if seen || kept_out(entry) || last_unstaged == Some(entry.path.as_slice()) {
            continue;
        }
        last_unstaged = Some(&entry.path);
        changes.unstage.push(path_of(&entry.path));
    }
    for (path, is_folder) in found.iter().flat_map(|found| &found.untracked) {
        untracked(
            repo,
            workdir,
            &path_of(path),
            *is_folder,
            &mut changes.stage,
        )?;
    }
    Ok(changes)
}

/// Reads every folder that holds tracked files, a level at a time, the
/// folders of a level shared among threads.
fn walk(workdir: &Path, entries: &[IndexEntry], trust: Trust) -> Result<Vec<Found>> {
    static CPUS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let threads = if entries.len() < PARALLEL_FROM {
        1
    } else {
        *CPUS.get_or_init(|| {
            std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
        })
    };
    let mut level = vec![Folder {
        path: Vec::new(),
        entries: 0..entries.len(),
    }];
    let mut all = Vec::new();
    while !level.is_empty() {
        let next = AtomicUsize::new(0);
        let results = Mutex::new(Vec::with_capacity(level.len()));
        let work = || -> Result<()> {
            loop {
                let at = next.fetch_add(1, Ordering::Relaxed);
                let Some(folder) = level.get(at) else {
                    return Ok(());
                };
                let found = read_folder(workdir, folder, entries, trust)?;
                cinch_base::sync::lock(&results).push(found);
            }
        };
        if threads == 1 || level.len() == 1 {
            work()?;
        } else {
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..threads.min(level.len()))
                    .map(|_| scope.spawn(work))
                    .collect();
                let mine = work();
                helpers
                    .into_iter()
                    .map(|helper| helper.join().expect("a stat thread panicked"))
                    .chain([mine])
                    .collect::<Result<()>>()
            })?;
        }
        let mut results = results
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        level = results
            .iter_mut()
            .flat_map(|found| std::mem::take(&mut found.folders))
            .collect();
        all.append(&mut results);
    }
    Ok(all)
}

/// Reads one folder: each name is matched with its index entry (the folder's
/// entries are sorted by path, so a binary search finds it) and its stat data
/// compared, read relative to the open folder.
fn read_folder(
    workdir: &Path,
    folder: &Folder,
    entries: &[IndexEntry],
    trust: Trust,
) -> Result<Found> {
    let mut found = Found::default();
    let dir = workdir.join(path_of(&folder.path));
    let listing = match std::fs::read_dir(&dir) {
        Ok(listing) => listing,
        // Gone or replaced since its parent was read: its entries are unseen,
        // so deleted.
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Ok(found);
        }
        Err(error) => return Err(io_error(&dir, error)),
    };
    let under = &entries[folder.entries.clone()];
    let mut path = folder.path.clone();
    if !path.is_empty() {
        path.push(b'/');
    }
    let prefix_len = path.len();
    for item in listing {
        let item = item.map_err(|error| io_error(&dir, error))?;
        let name = item.file_name();
        if name.as_bytes() == b".git" {
            continue;
        }
        path.truncate(prefix_len);
        path.extend_from_slice(name.as_bytes());
        let Ok(kind) = item.file_type() else {
            continue; // gone since the folder was read
        };
        let at = under.partition_point(|entry| entry.path.as_slice() < path.as_slice());
        let tracked = under[at..]
            .iter()
            .take_while(|entry| entry.path == path)
            .count();
        if tracked > 0 {
            let position = folder.entries.start + at;
            if tracked > 1 || stage_of(&under[at]) != 0 {
                // A conflict: whatever the tree holds resolves it.
                if kind.is_dir() {
                    found.untracked.push((path.clone(), true));
                } else {
                    found.seen.push(position);
                    found.stage.push(path.clone());
                }
                continue;
            }
            let entry = &under[at];
            if kept_out(entry) {
                found.seen.push(position);
            } else if entry.mode & MODE_TYPE == MODE_GITLINK {
                if kind.is_dir() {
                    found.seen.push(position);
                    // Its HEAD may have moved; only an initialised one has one.
                    if std::fs::symlink_metadata(item.path().join(".git")).is_ok() {
                        found.stage.push(path.clone());
                    }
                } else {
                    found.seen.push(position);
                    found.stage.push(path.clone());
                }
            } else if kind.is_dir() {
                // A file become a folder: the entry goes, the folder is new.
                found.untracked.push((path.clone(), true));
            } else {
                found.seen.push(position);
                if !matches_stat(entry, &item, trust) {
                    found.stage.push(path.clone());
                }
            }
            continue;
        }
        if kind.is_dir() {
            path.push(b'/');
            let start =
                at + under[at..].partition_point(|entry| entry.path.as_slice() < path.as_slice());
            let count = under[start..]
                .iter()
                .take_while(|entry| entry.path.starts_with(&path))
                .count();
            path.pop();
            if count > 0 {
                let start = folder.entries.start + start;
                found.folders.push(Folder {
                    path: path.clone(),
                    entries: start..start + count,
                });
                continue;
            }
        }
        found.untracked.push((path.clone(), kind.is_dir()));
    }
    Ok(found)
}

/// Whether the file's stat data are its entry's, and the entry not racily
/// clean.
fn matches_stat(entry: &IndexEntry, item: &DirEntry, trust: Trust) -> bool {
    let Ok(meta) = item.metadata() else {
        return false;
    };
    stat_matches(entry, &meta, trust)
}

/// The comparison git's `ie_match_stat` makes, with `trust`'s settings.
/// Values are compared as the index stores them, cut to 32 bits.
fn stat_matches(entry: &IndexEntry, meta: &Metadata, trust: Trust) -> bool {
    let kind = meta.file_type();
    let mode_matches = if kind.is_symlink() {
        entry.mode == MODE_LINK
    } else if kind.is_file() {
        let executable = meta.mode() & 0o100 != 0;
        let mode = MODE_FILE | if executable { 0o755 } else { 0o644 };
        entry.mode == mode || (!trust.file_mode && entry.mode & MODE_TYPE == MODE_FILE)
    } else {
        false
    };
    let racy = trust.index_mtime.is_none_or(|index| {
        (
            i64::from(entry.mtime.seconds()),
            i64::from(entry.mtime.nanoseconds()),
        ) >= index
    });
    mode_matches
        && !racy
        && entry.file_size == meta.size() as u32
        && entry.mtime.seconds() == meta.mtime() as i32
        && entry.mtime.nanoseconds() == meta.mtime_nsec() as u32
        && (!trust.ctime
            || (entry.ctime.seconds() == meta.ctime() as i32
                && entry.ctime.nanoseconds() == meta.ctime_nsec() as u32))
        && entry.ino == meta.ino() as u32
        && entry.uid == meta.uid()
        && entry.gid == meta.gid()
}

/// Adds to `stage` what `git add -A` takes of the untracked `path`: nothing
/// when it is ignored, else the file, the nested repository (as a gitlink),
/// or the folder's files.
fn untracked(
    repo: &Repository,
    workdir: &Path,
    path: &Path,
    is_folder: bool,
    stage: &mut Vec<PathBuf>,
) -> Result<()> {
    if repo
        .is_path_ignored(path)
        .context(format!("reading the ignore rules for {}", path.display()))?
    {
        return Ok(());
    }
    let full = workdir.join(path);
    if !is_folder || std::fs::symlink_metadata(full.join(".git")).is_ok() {
        stage.push(path.to_path_buf());
        return Ok(());
    }
    let listing = match std::fs::read_dir(&full) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io_error(&full, error)),
    };
    let mut children = Vec::new();
    for item in listing {
        let item = item.map_err(|error| io_error(&full, error))?;
        if item.file_name().as_bytes() == b".git" {
            continue;
        }
        let Ok(kind) = item.file_type() else {
            continue;
        };
        children.push((path.join(item.file_name()), kind.is_dir()));
    }
    children.sort();
    for (child, is_folder) in children {
        untracked(repo, workdir, &child, is_folder, stage)?;
    }
    Ok(())
}

/// Whether git is told not to look for the entry's file in the working tree
/// (the skip-worktree bit of a sparse checkout, or assume-unchanged): it is
/// neither re-read nor, when absent, deleted.
pub(super) fn kept_out(entry: &IndexEntry) -> bool {
    entry.flags & IndexEntryFlag::VALID.bits() != 0
        || entry.flags_extended & IndexEntryExtendedFlag::SKIP_WORKTREE.bits() != 0
}

/// The entry's merge stage: 0, or 1 to 3 in a conflict.
fn stage_of(entry: &IndexEntry) -> u16 {
    (entry.flags >> 12) & 0b11
}

fn path_of(bytes: &[u8]) -> PathBuf {
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

fn io_error(path: &Path, source: std::io::Error) -> CheckpointError {
    CheckpointError::Io {
        what: format!("reading {}", path.display()),
        source,
    }
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::time::{Duration, SystemTime};

    use crate::checkpoint::take;
    use crate::checkpoint::test_repo::*;

    use super::*;

    /// The tree `git add -A && git write-tree` makes from a copy of the
    /// index (its mtime kept, which tells racily clean entries), leaving the
    /// real one alone.
    fn git_tree(root: &Path) -> String {
        let scratch = root.join(".git/scratch-index");
        let index = root.join(".git/index");
        fs::copy(&index, &scratch).unwrap();
        set_mtime(&scratch, mtime(&index));
        let run = |args: &[&str]| {
            let output = git_command(root, args)
                .env("GIT_INDEX_FILE", &scratch)
                .output()
                .unwrap();
            assert!(output.status.success(), "git {args:?}: {output:?}");
            String::from_utf8(output.stdout).unwrap()
        };
        run(&["add", "-A"]);
        let tree = run(&["write-tree"]).trim().to_owned();
        fs::remove_file(scratch).unwrap();
        tree
    }

    fn set_mtime(path: &Path, at: SystemTime) {
        fs::File::options()
            .write(true)
            .open(path)
            .and_then(|file| file.set_modified(at))
            .unwrap();
    }

    fn mtime(path: &Path) -> SystemTime {
        fs::metadata(path).unwrap().modified().unwrap()
    }

    /// A repository whose files were last written `age` ago, committed, so
    /// that the index file is newer than every entry.
    fn settled_repo(files: &[(&str, &str)], age: Duration) -> (tempfile::TempDir, PathBuf) {
        let (dir, root) = empty_repo();
        // Only the mtime and size say whether a file changed.
        git(&root, &["config", "core.trustctime", "false"]);
        let then = SystemTime::now() - age;
        for (path, contents) in files {
            write(&root, path, contents);
            set_mtime(&root.join(path), then);
        }
        commit_all(&root, "initial");
        (dir, root)
    }

    /// Rewrites `path` with `contents` (the same size) and puts its mtime
    /// back to `at`, so that its stat data are the entry's but for what `at`
    /// changes.
    fn rewrite_keeping_stat(root: &Path, path: &str, contents: &str, at: SystemTime) {
        let full = root.join(path);
        assert_eq!(fs::metadata(&full).unwrap().len(), contents.len() as u64);
        fs::write(&full, contents).unwrap();
        set_mtime(&full, at);
    }

    #[test]
    fn a_same_size_change_in_the_same_second_is_seen_by_its_nanoseconds() {
        let (_dir, root) = settled_repo(&[("a.txt", "one\n")], Duration::from_secs(3600));
        let before = mtime(&root.join("a.txt"));
        rewrite_keeping_stat(&root, "a.txt", "two\n", before + Duration::from_nanos(1));

        let checkpoint = take(&root, START, "start").unwrap();

        // git compares nanoseconds only when built with USE_NSEC, so it may
        // not see this one; libgit2 and cinch do.
        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), "two\n");
    }

    #[test]
    fn a_racily_clean_entry_is_read_again() {
        // The file is changed after its entry was made, with its size and
        // mtime kept, and the index file written in the same instant as the
        // entry's mtime: only the racy-git rule can tell.
        let (_dir, root) = settled_repo(&[("a.txt", "one\n")], Duration::from_secs(3600));
        let entry_mtime = mtime(&root.join("a.txt"));
        set_mtime(&root.join(".git/index"), entry_mtime);
        rewrite_keeping_stat(&root, "a.txt", "two\n", entry_mtime);

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), "two\n");
        assert_eq!(checkpoint.tree, git_tree(&root));
    }

    #[test]
    fn matching_stat_data_are_trusted_as_git_trusts_them() {
        // The same change, but the index file is newer than the entry: git
        // trusts the stat data and does not read the file; so does cinch.
        let (_dir, root) = settled_repo(&[("a.txt", "one\n")], Duration::from_secs(3600));
        let entry_mtime = mtime(&root.join("a.txt"));
        rewrite_keeping_stat(&root, "a.txt", "two\n", entry_mtime);

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(show(&root, &checkpoint.sha, "a.txt"), "one\n");
        assert_eq!(checkpoint.tree, git_tree(&root));
    }

    /// Every kind of change `git add -A` stages, in a tree big enough to be
    /// read on several threads.
    #[test]
    fn the_checkpoint_is_the_tree_git_add_all_writes() {
        let mut files: Vec<(String, String)> = (0..PARALLEL_FROM + 100)
            .map(|n| {
                (
                    format!("d{:02}/s{}/f{n:04}.txt", n % 37, n % 3),
                    format!("{n}\n"),
                )
            })
            .collect();
        files.push(("to-folder".into(), "a file now\n".into()));
        files.push(("from-folder/inner.txt".into(), "a folder now\n".into()));
        files.push(("script.sh".into(), "#!/bin/sh\n".into()));
        files.push(("ignored-but-tracked.log".into(), "kept\n".into()));
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(path, contents)| (path.as_str(), contents.as_str()))
            .collect();
        let (_dir, root) = settled_repo(&files, Duration::from_secs(3600));
        write(&root, ".gitignore", "*.log\nbuild/\n");
        write(&root, "d03/s0/f0003.txt", "changed\n");
        write(&root, "d36/s2/f0035.txt", "changed too, longer\n");
        fs::remove_file(root.join("d05/s2/f0005.txt")).unwrap();
        fs::remove_dir_all(root.join("d07")).unwrap();
        fs::remove_file(root.join("to-folder")).unwrap();
        write(&root, "to-folder/inside.txt", "in the new folder\n");
        fs::remove_dir_all(root.join("from-folder")).unwrap();
        write(&root, "from-folder", "a file again\n");
        {
            use std::os::unix::fs::PermissionsExt as _;
            fs::set_permissions(root.join("script.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        }
        std::os::unix::fs::symlink("d01", root.join("link-to-folder")).unwrap();
        write(&root, "build/out.o", "ignored\n");
        write(&root, "d01/s1/new.log", "ignored\n");
        write(&root, "new/deep/er/file.txt", "untracked\n");
        write(&root, "d10/s1/new.txt", "untracked beside tracked\n");
        fs::create_dir_all(root.join("empty/folder")).unwrap();

        let checkpoint = take(&root, START, "start").unwrap();

        assert_eq!(checkpoint.tree, git_tree(&root));
        assert!(files_at(&root, &checkpoint.sha).contains(&"to-folder/inside.txt".to_owned()));
    }
}
