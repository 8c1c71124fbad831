//! Plugin changes on a running engine: made through it (the API's), or
//! made by `cinch driver` on its home, which a thread notices by looking at
//! the home's drivers.lock and plugins folder every [`INTERVAL`]. Either way
//! the drivers are loaded again for the turns that start from then on.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Weak};
use std::time::{Duration, SystemTime};

use super::Engine;
use crate::plugins::{Candidate, Installed, Pin, Plugins, SignaturePolicy};

/// How often the plugins are looked at: a `driver add` is in force for new
/// turns within this (plus the load of the new component).
pub(crate) const INTERVAL: Duration = Duration::from_millis(200);

/// What tells that the plugins changed: each file's name, size, inode and
/// modification time.
type Fingerprint = Vec<(PathBuf, u64, u64, Option<SystemTime>)>;

fn fingerprint(plugins_dir: &Path) -> Fingerprint {
    use std::os::unix::fs::MetadataExt as _;
    let lock = crate::plugins::Plugins::in_dir(plugins_dir).lock_path();
    let loose = std::fs::read_dir(plugins_dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "wasm"));
    let mut files: Fingerprint = std::iter::once(lock)
        .chain(loose)
        .filter_map(|path| {
            let metadata = std::fs::metadata(&path).ok()?;
            Some((
                path,
                metadata.len(),
                metadata.ino(),
                metadata.modified().ok(),
            ))
        })
        .collect();
    files.sort();
    files
}

impl Engine {
    /// The home's plugins.
    pub fn plugins(&self) -> Plugins {
        Plugins::in_dir(&self.home.plugins_dir())
    }

    /// Installs `candidate` as [`Plugins::install`] does, under the
    /// config's signature policy, and puts it in force at once.
    pub fn install_plugin(&self, candidate: Candidate, update: bool) -> anyhow::Result<Installed> {
        let policy = SignaturePolicy::from_config(&self.config.drivers)?;
        let _changing = cinch_base::sync::lock(&self.plugin_changes);
        let installed = self
            .plugins()
            .install(&self.runtime, &policy, candidate, update)?;
        self.reload_drivers()?;
        Ok(installed)
    }

    /// Removes plugin `name` and puts the change in force at once.
    pub fn remove_plugin(&self, name: &str) -> anyhow::Result<Option<Pin>> {
        let _changing = cinch_base::sync::lock(&self.plugin_changes);
        let removed = self.plugins().remove(name)?;
        self.reload_drivers()?;
        Ok(removed)
    }

    /// Starts the thread that reloads the drivers when the plugins change;
    /// it ends with the engine.
    pub fn watch_drivers(self: &Arc<Self>) -> std::io::Result<()> {
        let engine: Weak<Self> = Arc::downgrade(self);
        let dir = self.home.plugins_dir();
        let mut seen = fingerprint(&dir);
        std::thread::Builder::new()
            .name("cinch-drivers-watch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(INTERVAL);
                    let Some(engine) = engine.upgrade() else {
                        return;
                    };
                    let now = fingerprint(&dir);
                    if now == seen {
                        continue;
                    }
                    seen = now;
                    match engine.reload_drivers() {
                        Ok(()) => tracing::info!("the plugins changed: drivers reloaded"),
                        Err(error) => tracing::warn!(
                            "the plugins changed but could not be loaded, the drivers before stay: {error:#}"
                        ),
                    }
                }
            })?;
        Ok(())
    }
}
