//! Environment secrets, kept out of the database: one file per environment
//! in a private folder beside it (mode 0700, files 0600), written whole and
//! renamed into place. The database holds only the secrets' names.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use super::{Result, StoreError};

/// The folder of secret files.
#[derive(Debug, Clone)]
pub struct Vault {
    dir: PathBuf,
}

fn io_error(what: String, error: std::io::Error) -> StoreError {
    StoreError::Vault(format!("{what}: {error}"))
}

impl Vault {
    /// The vault in `dir`, created private when missing.
    pub fn open(dir: PathBuf) -> Result<Self> {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .and_then(|()| std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)))
            .map_err(|error| io_error(format!("creating {}", dir.display()), error))?;
        Ok(Self { dir })
    }

    fn path(&self, environment_id: &str) -> PathBuf {
        self.dir.join(format!("{environment_id}.json"))
    }

    /// The environment's secrets; none when it has no file.
    pub fn read(&self, environment_id: &str) -> Result<BTreeMap<String, String>> {
        let path = self.path(environment_id);
        match std::fs::read(&path) {
            Ok(bytes) => Ok(serde_json::from_slice(&bytes)?),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(BTreeMap::new()),
            Err(error) => Err(io_error(format!("reading {}", path.display()), error)),
        }
    }

    /// Replaces the environment's secrets.
    pub fn write(&self, environment_id: &str, secrets: &BTreeMap<String, String>) -> Result<()> {
        let path = self.path(environment_id);
        if secrets.is_empty() {
            return self.remove(environment_id);
        }
        let partial = path.with_extension("partial");
        let bytes = serde_json::to_vec(secrets)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&partial)
            .and_then(|mut file| file.write_all(&bytes).and_then(|()| file.sync_all()))
            .and_then(|()| std::fs::rename(&partial, &path))
            .map_err(|error| io_error(format!("writing {}", path.display()), error))
    }

    /// Forgets the environment's secrets.
    pub fn remove(&self, environment_id: &str) -> Result<()> {
        let path = self.path(environment_id);
        match std::fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(error) => Err(io_error(format!("removing {}", path.display()), error)),
        }
    }
}

/// Where the vault of the database at `database` lives.
pub fn beside(database: &Path) -> PathBuf {
    database.parent().unwrap_or(Path::new(".")).join("secrets")
}
