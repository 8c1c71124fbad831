//! Harness CLIs that cinch installs and pins: where each comes from (its
//! package on npm or PyPI), the versions its driver was tested with, and the
//! versions installed under `<home>/tools/<harness>/<version>`. A harness
//! pinned in config.toml (`[harness.NAME] version = "…"`) runs that
//! installation rather than what PATH has; turns read it, read-only.

pub mod catalogue;
pub mod drift;
pub mod install;

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde::Serialize;

pub use drift::{CliDrift, drift};

use crate::config::{Config, HarnessConfig};

/// A package registry cinch installs CLIs from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Registry {
    /// npm (`npm install`).
    Npm,
    /// The Python Package Index (`pip install --target`).
    Pypi,
}

impl Registry {
    /// Its name as people know it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Npm => "npm",
            Self::Pypi => "PyPI",
        }
    }
}

/// A CLI's package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Package {
    /// Where it is published.
    pub registry: Registry,
    /// Its name there.
    pub name: String,
}

impl Package {
    /// `npm:NAME` or `pypi:NAME`, as config.toml's `package` writes it.
    pub fn parse(text: &str) -> Result<Self, String> {
        let (registry, name) = match text.split_once(':') {
            Some(("npm", name)) => (Registry::Npm, name),
            Some(("pypi", name)) => (Registry::Pypi, name),
            _ => {
                return Err(format!(
                    "`{text}` names no registry: write \"npm:PACKAGE\" or \"pypi:PACKAGE\""
                ));
            }
        };
        let plain = |c: char| c.is_ascii_alphanumeric() || "@/._-".contains(c);
        if name.is_empty() || name.starts_with(['-', '.']) || !name.chars().all(plain) {
            return Err(format!(
                "`{name}` is not a package name (letters, digits and `@/._-`)"
            ));
        }
        Ok(Self {
            registry,
            name: name.to_owned(),
        })
    }

    /// As config.toml's `package` writes it.
    pub fn spec(&self) -> String {
        match self.registry {
            Registry::Npm => format!("npm:{}", self.name),
            Registry::Pypi => format!("pypi:{}", self.name),
        }
    }
}

/// Whether `version` may name a version (and its folder): letters, digits
/// and `.+-`, starting with a letter or digit.
pub(crate) fn is_version(version: &str) -> bool {
    version.starts_with(|c: char| c.is_ascii_alphanumeric())
        && version.len() <= 64
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".+-".contains(c))
}

/// The home's `config.toml` at `path`, read, with every harness's `package`,
/// `tested` and `version` checked, so that a mistake shows when cinch starts
/// rather than at a turn.
pub fn load_config(path: &Path) -> anyhow::Result<Config> {
    let config = Config::load(path)?;
    for (name, harness) in &config.harness {
        check_pins(name, harness).with_context(|| format!("reading {}", path.display()))?;
    }
    Ok(config)
}

/// Checks `[harness.NAME]`'s `package`, `tested` and `version`.
fn check_pins(name: &str, harness: &HarnessConfig) -> anyhow::Result<()> {
    if let Some(package) = &harness.package {
        Package::parse(package)
            .map_err(|problem| anyhow::anyhow!("[harness.{name}] package: {problem}"))?;
    }
    if let Some(range) = &harness.tested {
        drift::check_range(range)
            .map_err(|problem| anyhow::anyhow!("[harness.{name}] tested: {problem}"))?;
    }
    if let Some(version) = &harness.version {
        anyhow::ensure!(
            is_version(version),
            "[harness.{name}] version: `{version}` is not a version (letters, digits and `.+-`, such as \"2.1.197\")"
        );
    }
    Ok(())
}

/// A harness's CLI as cinch installs and pins it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tool {
    /// The harness.
    pub harness: String,
    /// The program the harness runs.
    pub program: String,
    /// Its package; none when cinch knows of none.
    pub package: Option<Package>,
    /// The version `cinch harness install NAME` picks; none: the
    /// registry's latest.
    pub default_version: Option<String>,
    /// The versions its driver was tested with (a semver requirement).
    pub tested: Option<String>,
    /// The version config.toml pins it to.
    pub pinned: Option<String>,
}

impl Tool {
    /// The CLI of the harness `harness` (running `program`): as the
    /// catalogue of built-ins has it, with `[harness.NAME]`'s `package`,
    /// `tested` and `version` winning.
    pub fn of(harness: &str, program: &str, config: &Config) -> anyhow::Result<Self> {
        let known = catalogue::known(harness);
        let configured = config.harness.get(harness);
        let package = match configured.and_then(|config| config.package.as_deref()) {
            Some(text) => Some(Package::parse(text).map_err(|problem| {
                anyhow::anyhow!("[harness.{harness}] package in config.toml: {problem}")
            })?),
            None => known.map(catalogue::Known::package),
        };
        let tested = match configured.and_then(|config| config.tested.clone()) {
            Some(range) => {
                drift::check_range(&range).map_err(|problem| {
                    anyhow::anyhow!("[harness.{harness}] tested in config.toml: {problem}")
                })?;
                Some(range)
            }
            None => known.map(|known| known.tested.to_owned()),
        };
        let pinned = configured.and_then(|config| config.version.clone());
        if let Some(version) = &pinned {
            anyhow::ensure!(
                is_version(version),
                "[harness.{harness}] version in config.toml: `{version}` is not a version (letters, digits and `.+-`)"
            );
        }
        // A package of the operator's own has no default of the catalogue's.
        let default_version = match configured.and_then(|config| config.package.as_deref()) {
            Some(_) => None,
            None => known.map(|known| known.default_version.to_owned()),
        };
        Ok(Self {
            harness: harness.to_owned(),
            program: program.to_owned(),
            package,
            default_version,
            tested,
            pinned,
        })
    }

    /// The folder of `version` under the tools folder `root`.
    pub fn dir(&self, root: &Path, version: &str) -> PathBuf {
        root.join(&self.harness).join(version)
    }

    /// The program of the installation at `dir`.
    pub(crate) fn program_in(&self, dir: &Path) -> PathBuf {
        match self.package.as_ref().map(|package| package.registry) {
            Some(Registry::Pypi) => dir.join("bin").join(&self.program),
            _ => dir.join("node_modules").join(".bin").join(&self.program),
        }
    }

    /// The pinned version's program, when it is installed.
    pub(crate) fn installed_program(&self, root: &Path, version: &str) -> Option<PathBuf> {
        let program = self.program_in(&self.dir(root, version));
        program.is_file().then_some(program)
    }

    /// The versions installed under `root`, oldest first.
    pub fn installed(&self, root: &Path) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(root.join(&self.harness)) else {
            return Vec::new();
        };
        let mut versions: Vec<String> = entries
            .filter_map(|entry| entry.ok()?.file_name().into_string().ok())
            .filter(|name| is_version(name))
            .filter(|name| self.installed_program(root, name).is_some())
            .collect();
        versions.sort_by(
            |a, b| match (semver::Version::parse(a), semver::Version::parse(b)) {
                (Ok(a), Ok(b)) => a.cmp(&b),
                _ => a.cmp(b),
            },
        );
        versions
    }
}

/// The tools folder of the cinch home at `root`.
pub fn root(home: &Path) -> PathBuf {
    home.join("tools")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_packages_and_versions() {
        assert_eq!(
            Package::parse("npm:@scope/cli").unwrap().registry,
            Registry::Npm
        );
        assert_eq!(
            Package::parse("pypi:mistral-vibe").unwrap().name,
            "mistral-vibe"
        );
        assert!(Package::parse("cargo:x").is_err());
        assert!(Package::parse("npm:../x y").is_err());
        assert!(is_version("2.1.197"));
        assert!(!is_version("../2"));
        assert!(!is_version(".hidden"));
    }
}
