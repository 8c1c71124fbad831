//! Which drivers there are: the built-in ones embedded in the binary and the
//! plugins installed under cinch's home: those pinned in its drivers.lock
//! (see [`crate::plugins`]) and loose component files. A plugin with a
//! built-in's name replaces the built-in; a pinned one, a loose file's.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use cinch_runtime::{Driver, LoadError, Runtime};

use crate::harnesses::{Harness, Profile};
use crate::plugins::{Pin, PinError, Plugins, SignaturePolicy, signature::SignatureError};

/// A driver component compiled into the binary.
pub struct BuiltinDriver {
    /// The driver's name.
    pub name: &'static str,
    /// The component's bytes.
    pub wasm: &'static [u8],
    /// Their hex SHA-256, computed at build time.
    pub sha256: &'static str,
}

/// The built-in drivers (built by `build.rs`).
pub const BUILTIN: &[BuiltinDriver] = include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// Where a driver came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// Embedded in the cinch binary.
    Builtin,
    /// A plugin file installed without a pin.
    Plugin(PathBuf),
    /// A plugin pinned in the drivers lock.
    Pinned(Box<Pin>),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Builtin => f.write_str("built-in"),
            Source::Plugin(path) => write!(f, "{} (not pinned)", path.display()),
            Source::Pinned(pin) => write!(f, "{} ({})", pin.source, pin.digest),
        }
    }
}

/// A driver the registry knows of, loaded or not.
pub struct Entry {
    /// The driver's name (its file's stem when it did not load).
    pub name: String,
    /// Where it came from.
    pub source: Source,
    /// The loaded driver, or why it did not load.
    pub driver: Result<Driver, PluginError>,
}

/// Why a driver was not loaded.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The component is not a driver this cinch runs.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// A pinned plugin's bytes are not the ones pinned.
    #[error(transparent)]
    Pin(#[from] PinError),
    /// Its signature is missing or does not verify.
    #[error(transparent)]
    Signature(#[from] SignatureError),
}

/// Every driver, by name, and the harness profiles on them.
pub struct Registry {
    entries: Vec<Entry>,
    profiles: Vec<Profile>,
    /// [`Registry::infos`], made at its first call: every new session asks
    /// (to resolve its harness and model), and making them (each profile's
    /// info cloned from its driver's) was 2% of the server's request
    /// threads while 1,000 sessions started.
    infos: std::sync::OnceLock<Vec<cinch_driver_sdk::Info>>,
}

/// No driver has the name asked for.
#[derive(Debug, thiserror::Error)]
#[error("harness.missing: no driver named `{name}`; installed: {installed}")]
pub(crate) struct UnknownDriver {
    /// The name asked for.
    pub name: String,
    /// The names there are, comma-separated.
    pub installed: String,
}

impl Registry {
    /// Loads the built-in drivers and the plugins in `plugins_dir`, with no
    /// signature required. A plugin that fails to load is kept as an entry
    /// with its error.
    pub fn load(runtime: &Runtime, plugins_dir: Option<&Path>) -> anyhow::Result<Self> {
        Self::load_with(runtime, plugins_dir, &SignaturePolicy::default())
    }

    /// [`Registry::load`], plugins' signatures checked under `policy`.
    pub fn load_with(
        runtime: &Runtime,
        plugins_dir: Option<&Path>,
        policy: &SignaturePolicy,
    ) -> anyhow::Result<Self> {
        let mut entries = match plugins_dir {
            Some(dir) => load_plugins(runtime, &Plugins::in_dir(dir), policy)?,
            None => Vec::new(),
        };
        for builtin in BUILTIN {
            if entries.iter().any(|entry| entry.name == builtin.name) {
                continue;
            }
            let origin = format!("built-in driver `{}`", builtin.name);
            entries.push(Entry {
                name: builtin.name.to_owned(),
                source: Source::Builtin,
                driver: runtime
                    .load(&origin, builtin.wasm, Some(builtin.sha256))
                    .map_err(PluginError::from),
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        let mut registry = Self {
            entries,
            profiles: Vec::new(),
            infos: Default::default(),
        };
        registry.profiles = crate::harnesses::profiles(
            registry.drivers(),
            &Default::default(),
            &registry.driver_names(),
        )?;
        Ok(registry)
    }

    /// This registry with the harnesses `configured` declares (config.toml's
    /// `[harness.NAME] driver = ...`) besides the drivers' own.
    pub fn with_configured(
        mut self,
        configured: &std::collections::BTreeMap<String, crate::config::HarnessConfig>,
    ) -> anyhow::Result<Self> {
        self.profiles =
            crate::harnesses::profiles(self.drivers(), configured, &self.driver_names())?;
        self.infos = Default::default();
        Ok(self)
    }

    /// The drivers that loaded.
    fn drivers(&self) -> impl Iterator<Item = &Driver> {
        self.entries
            .iter()
            .filter_map(|entry| entry.driver.as_ref().ok())
    }

    fn driver_names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .map(|entry| entry.name.as_str())
            .collect()
    }

    /// Every harness's info (each driver's own, then each profile's as its
    /// harness), by name.
    pub fn infos(&self) -> &[cinch_driver_sdk::Info] {
        self.infos.get_or_init(|| {
            let mut infos: Vec<cinch_driver_sdk::Info> = self
                .names()
                .into_iter()
                .filter_map(|name| self.harness(name).ok())
                .map(|harness| harness.info)
                .collect();
            infos.sort_by(|a, b| a.name.cmp(&b.name));
            infos
        })
    }

    /// The harness profiles, by name.
    pub fn profiles(&self) -> &[Profile] {
        &self.profiles
    }

    /// The harness called `name`: a driver under its own name, or a profile
    /// on one.
    pub fn harness(&self, name: &str) -> anyhow::Result<Harness<'_>> {
        if let Some(profile) = self.profiles.iter().find(|profile| profile.name == name) {
            let driver = self
                .get(&profile.driver)
                .with_context(|| format!("harness `{name}` runs on driver `{}`", profile.driver))?;
            return Ok(Harness {
                driver,
                info: profile.info(driver.info()),
                profile: Some(profile),
            });
        }
        if !self.entries.iter().any(|entry| entry.name == name) {
            return Err(UnknownDriver {
                name: name.to_owned(),
                installed: self.names().join(", "),
            }
            .into());
        }
        let driver = self.get(name)?;
        Ok(Harness {
            driver,
            info: driver.info().clone(),
            profile: None,
        })
    }

    /// Which component `driver` (one of this registry's) is: its name, its
    /// pin's version (cinch's own for a built-in) and its digest.
    pub fn driver_used(&self, driver: &Driver) -> crate::turn_dir::DriverUsed {
        let name = driver.info().name.clone();
        let version = self
            .entries
            .iter()
            .find(|entry| entry.name == name)
            .and_then(|entry| match &entry.source {
                Source::Builtin => Some(env!("CARGO_PKG_VERSION").to_owned()),
                Source::Pinned(pin) => pin.version.clone(),
                Source::Plugin(_) => None,
            });
        crate::turn_dir::DriverUsed {
            name,
            version,
            digest: format!("sha256:{}", driver.sha256()),
        }
    }

    /// Every entry, by name.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The driver called `name`.
    pub fn get(&self, name: &str) -> anyhow::Result<&Driver> {
        let entry = self
            .entries
            .iter()
            .find(|entry| entry.name == name)
            .ok_or_else(|| UnknownDriver {
                name: name.to_owned(),
                installed: self.driver_names().join(", "),
            })?;
        entry.driver.as_ref().map_err(|error| {
            anyhow::anyhow!("driver `{name}` ({}) did not load: {error}", entry.source)
        })
    }

    /// The names of the harnesses there are: the drivers' (but one with no
    /// program of its own, such as acp, which runs only as its profiles) and
    /// the profiles'.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self
            .entries
            .iter()
            .filter(|entry| {
                entry
                    .driver
                    .as_ref()
                    .map_or(true, |driver| !driver.info().program.is_empty())
            })
            .map(|entry| entry.name.as_str())
            .collect();
        names.extend(self.profiles.iter().map(|profile| profile.name.as_str()));
        names.sort_unstable();
        names.dedup();
        names
    }
}

fn load_plugins(
    runtime: &Runtime,
    plugins: &Plugins,
    policy: &SignaturePolicy,
) -> anyhow::Result<Vec<Entry>> {
    let lock = plugins.lock()?;
    let mut entries: Vec<Entry> = lock
        .drivers
        .iter()
        .map(|(name, locked)| load_pinned(runtime, plugins, name, &locked.pin, policy))
        .collect();
    let dir = plugins.dir();
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(entries),
        Err(error) => return Err(error).with_context(|| format!("reading {}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    paths.sort();
    for path in paths {
        let mut entry = load_plugin(runtime, path);
        if lock.drivers.contains_key(&entry.name) {
            continue;
        }
        // A loose file has no signature: refused when one is required.
        if entry.driver.is_ok()
            && let Err(error) = policy.check(&entry.source.to_string(), &[], None)
        {
            entry.driver = Err(error.into());
        }
        entries.push(entry);
    }
    Ok(entries)
}

/// Loads plugin `name` as `pin` pins it: its kept bytes checked against the
/// pin's digest, its signature against `policy`.
fn load_pinned(
    runtime: &Runtime,
    plugins: &Plugins,
    name: &str,
    pin: &Pin,
    policy: &SignaturePolicy,
) -> Entry {
    let driver = plugins
        .pinned_bytes(name, pin)
        .map_err(PluginError::from)
        .and_then(|bytes| {
            let what = format!("plugin `{name}` ({})", pin.source);
            policy.check(&what, &bytes, pin.signature.as_deref())?;
            let hex = pin.digest.trim_start_matches("sha256:");
            Ok(runtime.load(&what, &bytes, Some(hex))?)
        });
    Entry {
        name: name.to_owned(),
        source: Source::Pinned(Box::new(pin.clone())),
        driver,
    }
}

/// Loads the plugin at `path`.
pub fn load_plugin(runtime: &Runtime, path: PathBuf) -> Entry {
    let stem = path
        .file_stem()
        .map(|stem| stem.to_string_lossy().into_owned())
        .unwrap_or_default();
    let driver = std::fs::read(&path)
        .map_err(|error| LoadError::NotAComponent {
            origin: path.display().to_string(),
            cause: error.to_string(),
        })
        .and_then(|wasm| runtime.load(&path.display().to_string(), &wasm, None))
        .map_err(PluginError::from);
    Entry {
        name: driver
            .as_ref()
            .map(|d| d.info().name.clone())
            .unwrap_or(stem),
        source: Source::Plugin(path),
        driver,
    }
}
