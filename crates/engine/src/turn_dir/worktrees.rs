//! Which turns were started in each working tree, so that a start finds the
//! turns still running in its working tree without reading every turn's
//! launch record.
//!
//! `worktrees/<key>/<turn>` is an empty file for each turn started in the
//! working tree whose key is `<key>` (the key of its [`WorktreeLock`]). The
//! start writes it under that lock, once the turn's launch record is
//! written; it goes once the turn has its result, and a look that finds its
//! turn no longer unfinished (gone, or a start that failed) removes it; the
//! folder goes with its last file.
//! `worktrees/indexed` says that every turn unfinished when it was written
//! has its file: a home that a cinch from before this index used is scanned
//! once, by the first look after the upgrade.
//!
//! [`WorktreeLock`]: super::WorktreeLock

use std::io::ErrorKind;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use super::{Launch, TurnDir, record_private, turns_dir, write_private};
use crate::home::{Home, create_private_dir};

/// The marker of a home whose every unfinished turn is indexed.
const INDEXED: &str = "indexed";

/// The key naming the working tree `workdir` (a canonical path) among the
/// home's files.
pub(super) fn key(workdir: &Path) -> String {
    let digest = cinch_runtime::sha256_hex(workdir.as_os_str().as_encoded_bytes());
    digest[..32].to_owned()
}

fn index_dir(home: &Home) -> PathBuf {
    home.root().join("worktrees")
}

fn worktree_dir(home: &Home, workdir: &Path) -> PathBuf {
    index_dir(home).join(key(workdir))
}

/// Notes that turn `turn` works in `workdir`; called by its start, under
/// the working tree's lock, once its launch record is written.
pub fn record(home: &Home, workdir: &Path, turn: &str) -> anyhow::Result<()> {
    let dir = worktree_dir(home, workdir);
    // The folder goes once its last turn is forgotten, which a turn ending
    // outside the lock may do between making it and writing into it.
    for _ in 0..3 {
        create_private_dir(&dir)?;
        let written = record_private(&dir.join(turn), b"");
        if written.is_ok() || dir.exists() {
            return written;
        }
    }
    anyhow::bail!("{} kept vanishing", dir.display())
}

/// Forgets that turn `turn` works in `workdir`: it has its result. The
/// working tree's folder goes with its last turn.
pub fn forget(home: &Home, workdir: &Path, turn: &str) {
    let dir = worktree_dir(home, workdir);
    remove(&dir.join(turn));
    remove_if_empty(&dir);
}

fn remove_if_empty(dir: &Path) {
    // Fails, as it should, while the folder holds a turn.
    let _ = std::fs::remove_dir(dir);
}

fn remove(entry: &Path) {
    match std::fs::remove_file(entry) {
        Err(error) if error.kind() != ErrorKind::NotFound => {
            tracing::warn!("could not remove {}: {error}", entry.display());
        }
        _ => {}
    }
}

/// The turns whose CLI works in `workdir` and which are not finished yet;
/// the caller holds the working tree's lock.
pub fn unfinished_in(home: &Home, workdir: &Path) -> anyhow::Result<Vec<(TurnDir, Launch)>> {
    index_the_unindexed(home)?;
    let dir = worktree_dir(home, workdir);
    let listing = match std::fs::read_dir(&dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("listing {}", dir.display())),
    };
    let mut unfinished = Vec::new();
    for entry in listing.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(id) = name.to_str() else {
            continue;
        };
        match TurnDir::find(home, id) {
            Ok((turn, launch)) if turn.is_unfinished() => {
                if launch.workdir == workdir {
                    unfinished.push((turn, launch));
                }
            }
            // Ended, gone, or a start that failed before its supervisor ran:
            // a turn that is not unfinished never is again.
            _ => remove(&entry.path()),
        }
    }
    if unfinished.is_empty() {
        remove_if_empty(&dir);
    }
    Ok(unfinished)
}

/// Indexes, once per home, the unfinished turns that a cinch from before
/// the index started: it reads every turn's launch record.
fn index_the_unindexed(home: &Home) -> anyhow::Result<()> {
    let marker = index_dir(home).join(INDEXED);
    if marker.exists() {
        return Ok(());
    }
    if let Ok(listing) = std::fs::read_dir(turns_dir(home)) {
        let turns = listing
            .filter_map(Result::ok)
            .filter_map(|entry| TurnDir::open(&entry.path()).ok());
        for (turn, launch) in turns {
            if turn.is_unfinished() {
                record(home, &launch.workdir, &launch.turn)?;
            }
        }
    }
    create_private_dir(&index_dir(home))?;
    write_private(&marker, b"")
}
