//! Plugin drivers as installed under cinch's home, and how they get there:
//! pulled from OCI registries ([`oci`]), pinned by digest in
//! `<home>/drivers.lock` ([`lock`]), signed with OpenSSH keys
//! ([`signature`]). A pinned component's bytes are kept under
//! `<home>/drivers/blobs/`, by digest, so that a rollback needs no
//! registry; the lock alone says which one is in force, so rewriting it is
//! the whole swap.

pub mod lock;
pub mod oci;
pub mod reference;
pub mod signature;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cinch_base::timestamp::Timestamp;
use cinch_runtime::{Driver, Runtime};

pub use lock::{Lock, Locked, Pin};

use crate::harnesses::is_driver_name;

/// The plugins folder and the lock beside it.
#[derive(Debug, Clone)]
pub struct Plugins {
    dir: PathBuf,
}

/// What config.toml's `[drivers]` asks of plugins' signatures.
#[derive(Debug, Clone, Default)]
pub struct SignaturePolicy {
    /// OpenSSH public key lines whose signatures are trusted.
    pub trusted_keys: Vec<String>,
    /// Whether an unsigned plugin is refused.
    pub require_signature: bool,
}

impl SignaturePolicy {
    /// The policy config.toml's `[drivers]` makes, its keys checked.
    pub fn from_config(config: &crate::config::DriversConfig) -> anyhow::Result<Self> {
        signature::check_trusted_keys(&config.trusted_keys)?;
        Ok(Self {
            trusted_keys: config.trusted_keys.clone(),
            require_signature: config.require_signature,
        })
    }

    /// Checks `component`'s `signature` (if any) under this policy: a
    /// signature present is verified whenever keys are trusted; none is
    /// refused when one is required. Returns the signer's fingerprint.
    pub fn check(
        &self,
        what: &str,
        component: &[u8],
        signature: Option<&str>,
    ) -> Result<Option<String>, signature::SignatureError> {
        match signature {
            None if self.require_signature => Err(signature::SignatureError::Missing {
                what: what.to_owned(),
            }),
            None => Ok(None),
            Some(text) if self.require_signature || !self.trusted_keys.is_empty() => {
                signature::verify(what, component, text, &self.trusted_keys).map(Some)
            }
            Some(text) => Ok(signature::signer(text)),
        }
    }
}

/// A component on its way in.
#[derive(Debug)]
pub struct Candidate {
    /// Its bytes.
    pub component: Vec<u8>,
    /// Where it came from: a file's path or an OCI reference.
    pub source: String,
    /// Its version, when its source tells one.
    pub version: Option<String>,
    /// The OCI manifest's digest, when pulled from a registry.
    pub manifest: Option<String>,
    /// Its SSHSIG signature, armored.
    pub signature: Option<String>,
}

impl Candidate {
    /// The component `reference` names, pulled through `client` with every
    /// digest checked; its version from the manifest's version annotation,
    /// else the tag; its signature from the manifest's annotation.
    pub fn pull(
        reference: &reference::Reference,
        client: &mut oci::Client,
    ) -> Result<Self, oci::RegistryError> {
        let pulled = client.pull(reference)?;
        Ok(Self {
            version: pulled
                .annotations
                .get(oci::VERSION_ANNOTATION)
                .cloned()
                .or_else(|| reference.tag.clone()),
            signature: pulled.annotations.get(oci::SIGNATURE_ANNOTATION).cloned(),
            manifest: Some(pulled.manifest_digest),
            component: pulled.component,
            source: reference.to_string(),
        })
    }
}

/// What [`Plugins::install`] did.
pub enum Installed {
    /// The plugin is now pinned to the candidate.
    Pinned {
        /// The driver.
        driver: Box<Driver>,
        /// Its new pin.
        pin: Pin,
        /// The pin it replaced, if it had one.
        replaced: Option<Pin>,
    },
    /// The plugin was pinned to these very bytes already.
    Unchanged {
        /// The driver.
        driver: Box<Driver>,
        /// Its pin.
        pin: Pin,
    },
}

/// A source that now gives other bytes than when it was added.
#[derive(Debug, thiserror::Error)]
#[error(
    "{source_name} now points to {new} (it was {old} when driver `{name}` was added): pass --update to take the new one"
)]
pub struct SourceMoved {
    /// The plugin.
    pub name: String,
    /// Its source.
    pub source_name: String,
    /// The digest pinned.
    pub old: String,
    /// The digest the source gives now.
    pub new: String,
}

/// Why a pinned plugin was not loaded.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// Its bytes are not the ones the lock pins.
    #[error(
        "plugin `{name}`'s component {path} is {actual}, but drivers.lock pins {pinned}: it changed after it was installed; add it again from its source with `cinch driver add {origin} --update`, or `cinch driver rollback {name}`"
    )]
    Changed {
        /// The plugin.
        name: String,
        /// The file.
        path: String,
        /// Where it came from.
        origin: String,
        /// The digest in the lock.
        pinned: String,
        /// The digest of the file.
        actual: String,
    },
    /// Its bytes are gone.
    #[error(
        "plugin `{name}`'s component {path} cannot be read ({cause}); add it again with `cinch driver add {origin} --update`"
    )]
    Missing {
        /// The plugin.
        name: String,
        /// The file.
        path: String,
        /// Where it came from.
        origin: String,
        /// Why.
        cause: String,
    },
}

impl Plugins {
    /// The plugins in `dir` (`<home>/drivers`), their lock beside it
    /// (`<home>/drivers.lock`).
    pub fn in_dir(dir: &Path) -> Self {
        Self {
            dir: dir.to_path_buf(),
        }
    }

    /// The plugins folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The lock file.
    pub(crate) fn lock_path(&self) -> PathBuf {
        self.dir.with_file_name("drivers.lock")
    }

    /// The lock; empty when there is none.
    pub fn lock(&self) -> anyhow::Result<Lock> {
        Lock::read(&self.lock_path())
    }

    /// Where the component of `digest` is kept.
    pub(crate) fn blob_path(&self, digest: &str) -> PathBuf {
        let hex = digest.strip_prefix("sha256:").unwrap_or(digest);
        self.dir.join("blobs").join(format!("{hex}.wasm"))
    }

    /// The pinned component's bytes, checked against its pin.
    pub(crate) fn pinned_bytes(&self, name: &str, pin: &Pin) -> Result<Vec<u8>, PinError> {
        let path = self.blob_path(&pin.digest);
        let bytes = std::fs::read(&path).map_err(|error| PinError::Missing {
            name: name.to_owned(),
            path: path.display().to_string(),
            origin: pin.source.clone(),
            cause: error.to_string(),
        })?;
        let actual = oci::digest_of(&bytes);
        if actual != pin.digest {
            return Err(PinError::Changed {
                name: name.to_owned(),
                path: path.display().to_string(),
                origin: pin.source.clone(),
                pinned: pin.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// Loads `candidate` (its contract and info), checks its signature
    /// under `policy` and pins it. A source pinned before that now gives
    /// other bytes is refused ([`SourceMoved`]) unless `update`.
    pub fn install(
        &self,
        runtime: &Runtime,
        policy: &SignaturePolicy,
        candidate: Candidate,
        update: bool,
    ) -> anyhow::Result<Installed> {
        let driver = runtime
            .load(&candidate.source, &candidate.component, None)
            .with_context(|| format!("{} cannot be installed", candidate.source))?;
        let name = driver.info().name.clone();
        anyhow::ensure!(
            is_driver_name(&name),
            "{} calls itself `{name}`; a driver's name is lowercase letters, digits and dashes",
            candidate.source
        );
        let signed_by = policy.check(
            &candidate.source,
            &candidate.component,
            candidate.signature.as_deref(),
        )?;
        let digest = oci::digest_of(&candidate.component);
        let mut lock = self.lock()?;
        if let Some(locked) = lock.drivers.get(&name) {
            if locked.pin.digest == digest {
                return Ok(Installed::Unchanged {
                    driver: Box::new(driver),
                    pin: locked.pin.clone(),
                });
            }
            if locked.pin.source == candidate.source && !update {
                return Err(SourceMoved {
                    name,
                    source_name: candidate.source,
                    old: locked.pin.digest.clone(),
                    new: digest,
                }
                .into());
            }
        }
        let pin = Pin {
            version: candidate.version,
            contract: driver.contract_version().to_owned(),
            source: candidate.source,
            digest,
            manifest: candidate.manifest,
            signature: candidate.signature,
            signed_by,
            installed_at: Timestamp::now(),
        };
        self.keep_blob(&pin.digest, &candidate.component)?;
        let replaced = lock.drivers.get(&name).map(|locked| locked.pin.clone());
        lock.pin(&name, pin.clone());
        lock.write(&self.lock_path())?;
        // A file of the same name from before pins takes no part any more.
        remove_if_present(&self.dir.join(format!("{name}.wasm")))?;
        Ok(Installed::Pinned {
            driver: Box::new(driver),
            pin,
            replaced,
        })
    }

    /// Removes plugin `name` (its kept components stay for a later add);
    /// returns the pin it had, none for a plugin file installed unpinned.
    pub fn remove(&self, name: &str) -> anyhow::Result<Option<Pin>> {
        let mut lock = self.lock()?;
        let loose = self.dir.join(format!("{name}.wasm"));
        let removed = lock.drivers.remove(name);
        anyhow::ensure!(
            removed.is_some() || loose.exists(),
            "no plugin named `{name}` is installed (see `cinch drivers`)"
        );
        if removed.is_some() {
            lock.write(&self.lock_path())?;
        }
        remove_if_present(&loose)?;
        Ok(removed.map(|locked| locked.pin))
    }

    /// Pins plugin `name` back to the component it had before its current
    /// one; returns (the pin left, the pin restored).
    pub fn rollback(&self, name: &str) -> anyhow::Result<(Pin, Pin)> {
        let mut lock = self.lock()?;
        let locked = lock
            .drivers
            .get_mut(name)
            .with_context(|| format!("no plugin named `{name}` is pinned in drivers.lock"))?;
        let previous = locked.previous.pop().with_context(|| {
            format!("plugin `{name}` has no earlier pin to roll back to (drivers.lock keeps the ones `driver add` replaced)")
        })?;
        self.pinned_bytes(name, &previous)?;
        let left = std::mem::replace(&mut locked.pin, previous.clone());
        lock.write(&self.lock_path())?;
        Ok((left, previous))
    }

    fn keep_blob(&self, digest: &str, component: &[u8]) -> anyhow::Result<()> {
        let path = self.blob_path(digest);
        let blobs = path.parent().expect("a blob is in a folder");
        crate::home::create_private_dir(&self.dir)?;
        crate::home::create_private_dir(blobs)?;
        let partial = path.with_extension("wasm.partial");
        std::fs::write(&partial, component)
            .with_context(|| format!("writing {}", partial.display()))?;
        std::fs::rename(&partial, &path).with_context(|| format!("writing {}", path.display()))
    }
}

fn remove_if_present(path: &Path) -> anyhow::Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error).with_context(|| format!("removing {}", path.display())),
    }
}
