//! `<home>/drivers.lock`: per installed plugin, the component it is pinned
//! to (its digest), where it came from, its versions and signature, and the
//! pins it replaced (for `cinch driver rollback`). Written whole, by rename,
//! so a running server reading it sees the old lock or the new one.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cinch_base::timestamp::Timestamp;
use serde::{Deserialize, Serialize};

/// One pinned component.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pin {
    /// The driver's version: the OCI version annotation, else the tag it
    /// was added by; none for a file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The driver contract version it implements.
    pub contract: String,
    /// Where it came from: a file's path or an OCI reference.
    pub source: String,
    /// The component's digest, `sha256:HEX`.
    pub digest: String,
    /// The OCI manifest's digest, for a component pulled from a registry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub manifest: Option<String>,
    /// Its SSHSIG signature, armored, when it came signed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// The SHA-256 fingerprint of the key that signed it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signed_by: Option<String>,
    /// When it was installed (RFC 3339, UTC).
    pub installed_at: Timestamp,
}

/// A plugin's pin and the pins it replaced, oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Locked {
    /// The pin in force.
    #[serde(flatten)]
    pub pin: Pin,
    /// The pins before it, the most recent last.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous: Vec<Pin>,
}

/// The lock file's content.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lock {
    /// By plugin name.
    #[serde(default)]
    pub drivers: BTreeMap<String, Locked>,
}

/// How many replaced pins a plugin keeps.
const HISTORY: usize = 10;

impl Lock {
    /// The lock at `path`; empty when there is none.
    pub fn read(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).with_context(|| {
                format!(
                    "{} is not a drivers lock; restore it from a backup, or remove it and add the plugins again",
                    path.display()
                )
            }),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Writes the lock to `path` whole: a reader sees it before or after.
    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        let partial = partial_path(path);
        let mut text = serde_json::to_string_pretty(self).expect("a lock serializes");
        text.push('\n');
        std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, path).with_context(|| format!("writing {}", path.display()))
    }

    /// Pins `name` to `pin`, keeping the pin it replaces for a rollback.
    pub fn pin(&mut self, name: &str, pin: Pin) {
        match self.drivers.get_mut(name) {
            Some(locked) => {
                let replaced = std::mem::replace(&mut locked.pin, pin);
                locked.previous.push(replaced);
                let excess = locked.previous.len().saturating_sub(HISTORY);
                locked.previous.drain(..excess);
            }
            None => {
                self.drivers.insert(
                    name.to_owned(),
                    Locked {
                        pin,
                        previous: Vec::new(),
                    },
                );
            }
        }
    }
}

fn partial_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".partial");
    path.with_file_name(name)
}
