//! Advisory file locks: who holds a turn, and one start at a time in a
//! working tree.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::home::{Home, create_private_dir};

/// An exclusive advisory lock on a file, released when dropped.
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Takes the lock without waiting; `None` when someone else holds it.
    pub(crate) fn try_take(path: &Path) -> anyhow::Result<Option<Self>> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
            .with_context(|| format!("opening {}", path.display()))?;
        use std::os::fd::AsRawFd as _;
        // SAFETY: flock on a descriptor we own; no memory is involved.
        let taken = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
        Ok(taken.then_some(Self { file }))
    }

    /// Whether the locked file is still the one at `path`.
    fn is_at(&self, path: &Path) -> bool {
        use std::os::unix::fs::MetadataExt as _;
        match (self.file.metadata(), std::fs::metadata(path)) {
            (Ok(locked), Ok(there)) => locked.dev() == there.dev() && locked.ino() == there.ino(),
            _ => false,
        }
    }

    /// Whether someone holds the lock at `path` right now.
    pub fn is_held(path: &Path) -> bool {
        path.exists() && matches!(Self::try_take(path), Ok(None))
    }
}

/// Serialises turns in one working tree: held while a turn is started there,
/// so that two starts never both find it free. Its file goes with it, so that
/// a home does not keep one for every working tree it ever started a turn in.
pub struct WorktreeLock {
    /// Let go after the file is removed (fields drop after `drop`).
    _lock: FileLock,
    path: PathBuf,
}

impl WorktreeLock {
    /// Waits for the lock of the working tree `workdir` (a canonical path).
    pub fn take(home: &Home, workdir: &Path) -> anyhow::Result<Self> {
        let dir = home.root().join("locks");
        create_private_dir(&dir)?;
        let path = dir.join(format!("{}.lock", super::worktrees::key(workdir)));
        loop {
            let Some(lock) = FileLock::try_take(&path)? else {
                std::thread::sleep(std::time::Duration::from_millis(20));
                continue;
            };
            // A holder removes the file before letting go: a lock taken on a
            // file no longer at `path` guards nothing, and is taken again.
            if lock.is_at(&path) {
                return Ok(Self { _lock: lock, path });
            }
        }
    }
}

impl Drop for WorktreeLock {
    fn drop(&mut self) {
        if let Err(error) = std::fs::remove_file(&self.path) {
            tracing::warn!("could not remove {}: {error}", self.path.display());
        }
    }
}
