//! Compiled components, cached on disk.
//!
//! Compiling a driver takes tens of milliseconds; loading its precompiled
//! form takes a fraction of one. Entries are keyed by the component's
//! content hash and by the engine's compatibility hash, so a new cinch (or
//! different engine settings) never loads an artifact it cannot run.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::Context as _;
use wasmtime::component::Component;
use wasmtime::{Config, Engine};

/// Where compiled components are kept; `None` compiles every time.
#[derive(Clone)]
pub struct ComponentCache {
    dir: Option<PathBuf>,
    engine_key: String,
    /// The settings of the engine, for the compiler of each miss.
    config: Config,
}

impl ComponentCache {
    /// A cache in `dir` for components run by `engine`, made with `config`.
    pub fn new(engine: &Engine, config: &Config, dir: Option<PathBuf>) -> Self {
        let mut hasher = DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Self {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
            config: config.clone(),
        }
    }

    /// The component whose bytes are `wasm` (with SHA-256 `sha256`), loaded
    /// from the cache or compiled and cached.
    pub fn load(&self, engine: &Engine, wasm: &[u8], sha256: &str) -> wasmtime::Result<Component> {
        let path =
            (self.dir.as_ref()).map(|dir| dir.join(format!("{sha256}-{}.cwasm", self.engine_key)));
        if let Some(path) = &path
            && path.exists()
        {
            // SAFETY: the file sits in cinch's own home (mode 0700) and was
            // written by `Engine::precompile_component` of an engine with the
            // same compatibility hash, as its name says.
            match unsafe { Component::deserialize_file(engine, path) } {
                Ok(component) => return Ok(component),
                Err(error) => {
                    tracing::warn!(path = %path.display(), "recompiling a cached component that did not load: {error:#}");
                }
            }
        }
        let compiled = self.compile(wasm)?;
        if let (Some(dir), Some(path)) = (&self.dir, &path)
            && let Err(error) = write_atomically(dir, path, &compiled)
        {
            tracing::warn!(path = %path.display(), "could not cache a compiled component: {error:#}");
        }
        // SAFETY: compiled just now, with this engine's settings.
        unsafe { Component::deserialize(engine, &compiled) }
    }

    /// `wasm` compiled by an engine of its own, with the same settings (so
    /// any of them runs the result), dropped once done, and the freed heap
    /// handed back: an engine keeps what Cranelift compiled with, and glibc
    /// what was freed. Compiling the built-ins left `cinch serve` holding
    /// 450 MB without either, 52 MB with both.
    fn compile(&self, wasm: &[u8]) -> wasmtime::Result<Vec<u8>> {
        let compiled = Engine::new(&self.config)?.precompile_component(wasm);
        #[cfg(target_env = "gnu")]
        // SAFETY: only hands free heap memory back to the system.
        unsafe {
            libc::malloc_trim(0);
        }
        compiled
    }
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut file = tempfile_in(dir)?;
    file.1.write_all(bytes)?;
    file.1.sync_all()?;
    std::fs::rename(&file.0, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}

fn tempfile_in(dir: &Path) -> anyhow::Result<(PathBuf, std::fs::File)> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let unique = NEXT.fetch_add(1, Ordering::Relaxed);
    let path = dir.join(format!(".partial-{}-{unique}", std::process::id()));
    let file =
        std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
    Ok((path, file))
}
