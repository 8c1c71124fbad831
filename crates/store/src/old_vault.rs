//! The folder of secret files older versions of cinch kept beside the
//! database (one JSON object of name to value per environment or webhook,
//! named by its id), read once to import it into the database and removed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{Result, StoreError, is_id};

/// One environment's or webhook's file.
#[derive(Debug)]
pub(super) struct OldFile {
    /// The environment's or webhook's id: the file's name.
    pub owner: String,
    /// Where it is.
    pub path: PathBuf,
    /// Its secrets, name to value.
    pub secrets: BTreeMap<String, String>,
}

fn io_error(what: String, error: std::io::Error) -> StoreError {
    StoreError::OldVault(format!("{what}: {error}"))
}

/// The files in `dir`, none when it does not exist. Files half written
/// when a write was cut short (`.partial`) hold values in clear too: they
/// are removed.
pub(super) fn files(dir: &Path) -> Result<Vec<OldFile>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(io_error(format!("reading {}", dir.display()), error)),
    };
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|error| io_error(format!("reading {}", dir.display()), error))?
            .path();
        let Some(owner) = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .filter(|stem| is_id(stem) && path.is_file())
        else {
            continue;
        };
        match path.extension().and_then(|extension| extension.to_str()) {
            Some("json") => {}
            Some("partial") => {
                remove(&path)?;
                continue;
            }
            _ => continue,
        }
        let bytes = std::fs::read(&path)
            .map_err(|error| io_error(format!("reading {}", path.display()), error))?;
        let secrets = serde_json::from_slice(&bytes).map_err(|error| {
            StoreError::OldVault(format!(
                "{} is not a JSON object of secrets ({error}): fix it or remove it",
                path.display()
            ))
        })?;
        files.push(OldFile {
            owner: owner.to_owned(),
            path,
            secrets,
        });
    }
    files.sort_by(|a, b| a.owner.cmp(&b.owner));
    Ok(files)
}

/// Removes the file at `path`; one already gone is fine.
pub(super) fn remove(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(io_error(format!("removing {}", path.display()), error)),
    }
}
