//! The disk under cinch's home: how much room is left (for `/healthz` and
//! `/metrics`), and whether an error is the disk being full, so that a turn
//! that could not be saved says so where its user reads it.

use std::path::Path;

/// Free space under which the disk counts as full: a turn's files and the
/// database's next writes no longer fit.
pub(crate) const FULL_BELOW_BYTES: u64 = 1 << 20;

/// Free space under which the disk counts as low, unless configured.
pub const DEFAULT_LOW_BELOW_BYTES: u64 = 1 << 30;

/// The room on a file system.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes cinch may still write.
    pub free_bytes: u64,
    /// The file system's size in bytes.
    pub total_bytes: u64,
}

/// How the disk stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum DiskState {
    /// Room enough.
    Ok,
    /// Below the configured minimum: turns still run, but not for long.
    Low,
    /// Next to no room: turns' results and the database's writes fail.
    Full,
    /// Its room could not be measured (the home is gone, say).
    Unknown,
}

impl Space {
    /// The room on the file system holding `path`.
    pub fn of(path: &Path) -> std::io::Result<Self> {
        use std::os::unix::ffi::OsStrExt as _;
        let path = std::ffi::CString::new(path.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
        // SAFETY: statvfs fills the zeroed struct from a NUL-terminated path.
        let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
        if unsafe { libc::statvfs(path.as_ptr(), &mut stat) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let block = stat.f_frsize as u64;
        Ok(Self {
            free_bytes: (stat.f_bavail as u64).saturating_mul(block),
            total_bytes: (stat.f_blocks as u64).saturating_mul(block),
        })
    }

    /// How this room stands, with `low_below` bytes the least that is not low.
    pub fn state(&self, low_below: u64) -> DiskState {
        if self.free_bytes < FULL_BELOW_BYTES {
            DiskState::Full
        } else if self.free_bytes < low_below {
            DiskState::Low
        } else {
            DiskState::Ok
        }
    }
}

/// Whether `error` comes of a full disk (or a spent quota).
pub(crate) fn is_full(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.downcast_ref::<std::io::Error>().is_some_and(|io| {
            matches!(
                io.kind(),
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_judged_against_the_thresholds() {
        let space = |free_bytes| Space {
            free_bytes,
            total_bytes: 10 << 30,
        };
        assert_eq!(space(0).state(DEFAULT_LOW_BELOW_BYTES), DiskState::Full);
        assert_eq!(space(512 << 10).state(0), DiskState::Full);
        assert_eq!(
            space(2 << 20).state(DEFAULT_LOW_BELOW_BYTES),
            DiskState::Low
        );
        assert_eq!(space(2 << 30).state(DEFAULT_LOW_BELOW_BYTES), DiskState::Ok);
        let here = Space::of(Path::new(".")).unwrap();
        assert!(here.total_bytes >= here.free_bytes && here.total_bytes > 0);
    }

    #[test]
    fn a_full_disk_is_told_through_context() {
        use anyhow::Context as _;
        let full: anyhow::Result<()> = Err(std::io::Error::from_raw_os_error(libc::ENOSPC).into());
        assert!(is_full(&full.context("writing result.json").unwrap_err()));
        let denied: anyhow::Result<()> =
            Err(std::io::Error::from_raw_os_error(libc::EACCES).into());
        assert!(!is_full(
            &denied.context("writing result.json").unwrap_err()
        ));
    }
}
