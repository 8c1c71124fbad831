//! cinch's home: the one directory it keeps its state in (mode 0700).

use std::path::{Path, PathBuf};

use anyhow::Context as _;

/// The environment variable that overrides where the home is.
pub(crate) const HOME_ENV: &str = "CINCH_HOME";

/// cinch's home directory and the places under it.
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// `$CINCH_HOME`, else `~/.cinch`, created when missing.
    pub fn discover() -> anyhow::Result<Self> {
        let root = match std::env::var_os(HOME_ENV) {
            Some(dir) if !dir.is_empty() => PathBuf::from(dir),
            _ => std::env::home_dir()
                .context("cannot tell the home directory; set CINCH_HOME")?
                .join(".cinch"),
        };
        Self::open(root)
    }

    /// The home at `root`, created (mode 0700) when missing.
    pub fn open(root: PathBuf) -> anyhow::Result<Self> {
        create_private_dir(&root)?;
        Ok(Self { root })
    }

    /// The home's own directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where plugin drivers are installed.
    pub fn plugins_dir(&self) -> PathBuf {
        self.root.join("drivers")
    }

    /// Where compiled components are cached.
    pub fn component_cache_dir(&self) -> PathBuf {
        self.root.join("cache").join("components")
    }
}

/// Creates `dir` and its parents; `dir` itself gets mode 0700.
pub fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt as _;
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .with_context(|| format!("creating {}", dir.display()))?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
        .with_context(|| format!("making {} private", dir.display()))
}
