//! Which drivers there are: the built-in ones embedded in the binary and the
//! plugins installed under cinch's home. A plugin with a built-in's name
//! replaces the built-in.

use std::fmt;
use std::path::{Path, PathBuf};

use anyhow::Context as _;

use crate::runtime::{Driver, LoadError, Runtime};

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
    /// A plugin file.
    Plugin(PathBuf),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Builtin => f.write_str("built-in"),
            Source::Plugin(path) => write!(f, "{}", path.display()),
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
    pub driver: Result<Driver, LoadError>,
}

/// Every driver, by name.
pub struct Registry {
    entries: Vec<Entry>,
}

/// No driver has the name asked for.
#[derive(Debug, thiserror::Error)]
#[error("harness.missing: no driver named `{name}`; installed: {installed}")]
pub struct UnknownDriver {
    /// The name asked for.
    pub name: String,
    /// The names there are, comma-separated.
    pub installed: String,
}

impl Registry {
    /// Loads the built-in drivers and the plugins in `plugins_dir`. A plugin
    /// that fails to load is kept as an entry with its error.
    pub fn load(runtime: &Runtime, plugins_dir: Option<&Path>) -> anyhow::Result<Self> {
        let mut entries = match plugins_dir {
            Some(dir) => load_plugins(runtime, dir)?,
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
                driver: runtime.load(&origin, builtin.wasm, Some(builtin.sha256)),
            });
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(Self { entries })
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
                installed: self.names().join(", "),
            })?;
        entry.driver.as_ref().map_err(|error| {
            anyhow::anyhow!("driver `{name}` ({}) did not load: {error}", entry.source)
        })
    }

    /// The names of the drivers there are.
    pub fn names(&self) -> Vec<&str> {
        self.entries
            .iter()
            .map(|entry| entry.name.as_str())
            .collect()
    }
}

fn load_plugins(runtime: &Runtime, dir: &Path) -> anyhow::Result<Vec<Entry>> {
    let listing = match std::fs::read_dir(dir) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error).with_context(|| format!("reading {}", dir.display())),
    };
    let mut paths: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"))
        .collect();
    paths.sort();
    Ok(paths
        .into_iter()
        .map(|path| load_plugin(runtime, path))
        .collect())
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
        .and_then(|wasm| runtime.load(&path.display().to_string(), &wasm, None));
    Entry {
        name: driver
            .as_ref()
            .map(|d| d.info().name.clone())
            .unwrap_or(stem),
        source: Source::Plugin(path),
        driver,
    }
}
