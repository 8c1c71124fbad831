//! Private files written atomically: a reader never sees half of one.

use std::fs::File;
use std::io::{BufWriter, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::Path;

use anyhow::Context as _;
use serde::{Serialize, de::DeserializeOwned};

/// Reads a JSON file.
pub fn read_json<T: DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    let text = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    parse_json(path, &text)
}

/// Reads a JSON file that may not be written yet: `None` while it is not
/// there. A turn looks for its exit record and its result each time it
/// wakes, and an error made for each look would capture a backtrace
/// wherever `RUST_BACKTRACE` is set.
pub fn read_json_if_present<T: DeserializeOwned>(path: &Path) -> anyhow::Result<Option<T>> {
    match std::fs::read(path) {
        Ok(text) => parse_json(path, &text).map(Some),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
    }
}

fn parse_json<T: DeserializeOwned>(path: &Path, text: &[u8]) -> anyhow::Result<T> {
    serde_json::from_slice(text).with_context(|| format!("parsing {}", path.display()))
}

/// Writes a JSON file atomically (a reader never sees half of it), mode
/// 0600, and waits for the disk to have it.
pub fn write_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    write_private(path, &serde_json::to_vec_pretty(value)?)
}

/// Writes `bytes` to `path` atomically, mode 0600, and waits for the disk
/// to have it.
pub fn write_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    replace_bytes(path, bytes, Reach::Disk)
}

/// Writes a record of a running turn as [`write_json`] does, without
/// waiting for the disk (see [`record_private`]).
pub fn record_json<T: Serialize>(path: &Path, value: &T) -> anyhow::Result<()> {
    record_private(path, &serde_json::to_vec_pretty(value)?)
}

/// Writes a record of a running turn as [`write_private`] does, without
/// waiting for the disk: for what cinch's own processes tell each other
/// while a turn runs (its launch, prompt, secrets, session), which must
/// outlive the server's process (the kernel holds the file) but not a power
/// cut, which ends the turn with it, as a commit of the store's SQLite
/// (`synchronous=NORMAL`) does not either. Waiting cost 2–25 ms a file
/// while 1,000 sessions started, on the thread that moves every turn's
/// lines for the session record, and 4–6 `fsync`s a turn start.
pub fn record_private(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    replace_bytes(path, bytes, Reach::PageCache)
}

/// How far a replaced file must have gone before the write returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reach {
    /// The disk: it survives a power cut.
    Disk,
    /// The kernel's page cache: it survives the process.
    PageCache,
}

fn replace_bytes(path: &Path, bytes: &[u8], reach: Reach) -> anyhow::Result<()> {
    replace_private(path, reach, |writer, partial| {
        writer
            .write_all(bytes)
            .with_context(|| format!("writing {}", partial.display()))
    })
}

/// Replaces the file at `path` with what `write` writes, mode 0600: the new
/// file is written beside it and renamed over it once it has reached
/// `reach`. Each write has its own temporary file (named to `write` for its
/// errors), so concurrent writers of one path (two turns recording the same
/// harness session, say) never rename each other's.
pub(super) fn replace_private(
    path: &Path,
    reach: Reach,
    write: impl FnOnce(&mut BufWriter<File>, &Path) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = path
        .file_name()
        .with_context(|| format!("{} names no file", path.display()))?
        .to_string_lossy();
    let partial = path.with_file_name(format!(
        ".{name}.{}.{}.partial",
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&partial)
        .with_context(|| format!("creating {}", partial.display()))?;
    let mut writer = BufWriter::new(file);
    write(&mut writer, &partial)?;
    writer
        .into_inner()
        .map_err(|error| error.into_error())
        .and_then(|file| match reach {
            Reach::Disk => file.sync_all(),
            Reach::PageCache => Ok(()),
        })
        .with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("renaming into {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_writers_of_one_path_all_succeed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s-1.x");
        std::thread::scope(|scope| {
            for n in 0..16 {
                let path = &path;
                scope.spawn(move || write_private(path, format!("{n}").as_bytes()).unwrap());
            }
        });
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file is left behind");
        assert!(
            std::fs::read_to_string(&path)
                .unwrap()
                .parse::<u32>()
                .unwrap()
                < 16
        );
    }
}
