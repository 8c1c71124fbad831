//! The driver runtime: one wasmtime engine, compiled components cached on
//! disk, and a fresh sandboxed store for every turn.
//!
//! A driver is granted nothing: its WASI context has no files, no
//! environment, no arguments and no network. Every call into it has a
//! deadline (epoch interruption) and its memory is capped. A trap, a timeout
//! or an exhausted memory becomes a [`DriverFailure`] for that turn; the
//! instance is then discarded, never reused.
//!
//! This crate knows drivers only: nothing of turns, the engine, the store or
//! HTTP (Cargo holds that: it depends on none of them). `contract` is the one
//! place that knows the contract versions, one bindings module beside it for
//! each folder of `wit/`.

mod cache;
mod contract;
mod convert;
mod failure;
mod sandbox;
mod stderr;
mod v0_1_0;
mod v0_2_0;
mod v0_3_0;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use cinch_driver_sdk as sdk;
use wasmtime::component::{Component, Linker, ResourceAny};
use wasmtime::{Config, Engine, Store};

pub use cache::ComponentCache;
pub use contract::VERSIONS as CONTRACT_VERSIONS;
pub use failure::{DriverFailure, FailureCause};

use contract::{Bindings, Instance};
use failure::{classify, root_cause};
use sandbox::Sandbox;

/// The WIT interface a driver exports, without its version.
const DRIVER_INTERFACE: &str = "cinch:driver/driver";

/// How far a driver may go.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The longest one call (a batch of lines, `finish`, ...) may run.
    pub call_timeout: Duration,
    /// The most linear memory a driver instance may have.
    pub memory_bytes: usize,
    /// How much of the driver's stderr is kept to explain a failure.
    pub stderr_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            call_timeout: Duration::from_secs(2),
            memory_bytes: 256 << 20,
            stderr_bytes: 16 << 10,
        }
    }
}

/// How often the epoch ticks; call deadlines are counted in ticks.
const EPOCH_TICK: Duration = Duration::from_millis(10);

/// A component that could not be loaded as a driver.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(
        "{origin} is not a WebAssembly component ({cause}); a driver is built for wasm32-wasip2"
    )]
    /// The bytes are not a component.
    NotAComponent {
        /// Where the bytes came from.
        origin: String,
        /// What wasmtime said.
        cause: String,
    },
    #[error(
        "{origin} is a component but not a cinch driver: it exports no {DRIVER_INTERFACE} (it exports: {exports})"
    )]
    /// A component that exports no driver interface.
    NotADriver {
        /// Where the component came from.
        origin: String,
        /// What it exports instead.
        exports: String,
    },
    #[error(
        "{origin} was built for contract cinch:driver@{found}, which this cinch does not link \
         (it links {supported}); rebuild the driver against a supported SDK or update cinch"
    )]
    /// A driver of a contract version this host does not link.
    UnsupportedContract {
        /// Where the driver came from.
        origin: String,
        /// The version it was built for.
        found: String,
        /// The versions this host links.
        supported: String,
    },
    #[error("{origin} could not be instantiated: {cause}")]
    /// The component could not be linked or instantiated.
    Instantiate {
        /// Where the component came from.
        origin: String,
        /// What wasmtime said.
        cause: String,
    },
    /// A call into the driver (its `describe`) failed.
    #[error(transparent)]
    Failed(#[from] DriverFailure),
}

/// The engine and everything shared by the drivers it runs.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    linker: Arc<Linker<Sandbox>>,
    cache: ComponentCache,
    limits: Limits,
}

impl Runtime {
    /// A runtime whose compiled components are cached in `cache_dir`.
    pub fn new(cache_dir: Option<PathBuf>, limits: Limits) -> anyhow::Result<Self> {
        let mut config = Config::new();
        config
            .wasm_component_model(true)
            .epoch_interruption(true)
            .cranelift_opt_level(wasmtime::OptLevel::Speed)
            // Cranelift inlining small functions within a driver: 6-10%
            // more throughput, for about 3x the compile time (once per
            // driver and cinch version: compiled drivers are cached).
            .compiler_inlining(wasmtime::Inlining::Yes)
            .parallel_compilation(true);
        let engine = Engine::new(&config)?;
        start_epoch_ticker(&engine);

        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)?;
        Ok(Self {
            cache: ComponentCache::new(&engine, &config, cache_dir),
            engine,
            linker: Arc::new(linker),
            limits,
        })
    }

    /// The limits every driver runs under.
    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Loads the driver whose component bytes are `wasm`. `origin` names it
    /// in errors; `sha256` is the bytes' hash when already known.
    pub fn load(
        &self,
        origin: &str,
        wasm: &[u8],
        sha256: Option<&str>,
    ) -> Result<Driver, LoadError> {
        let hash;
        let sha256 = match sha256 {
            Some(known) => known,
            None => {
                hash = sha256_hex(wasm);
                &hash
            }
        };
        let component = self
            .cache
            .load(&self.engine, wasm, sha256)
            .map_err(|error| LoadError::NotAComponent {
                origin: origin.to_owned(),
                cause: root_cause(&error),
            })?;
        let (bindings, contract_version) = self.bind(origin, &component)?;
        let mut driver = Driver {
            info: placeholder_info(origin),
            contract_version,
            bindings,
            engine: self.engine.clone(),
            limits: self.limits,
            sha256: sha256.to_owned(),
        };
        driver.info =
            driver.with_instance("describe", |store, instance| instance.describe(store))?;
        Ok(driver)
    }

    /// Finds which contract version `component` was built for and binds it.
    fn bind(
        &self,
        origin: &str,
        component: &Component,
    ) -> Result<(Bindings, &'static str), LoadError> {
        let exports: Vec<String> = component
            .component_type()
            .exports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        let Some(version) = exports
            .iter()
            .find_map(|name| name.strip_prefix(DRIVER_INTERFACE)?.strip_prefix('@'))
        else {
            return Err(LoadError::NotADriver {
                origin: origin.to_owned(),
                exports: if exports.is_empty() {
                    "nothing".into()
                } else {
                    exports.join(", ")
                },
            });
        };
        let Some(contract_version) = CONTRACT_VERSIONS.iter().find(|known| **known == version)
        else {
            return Err(LoadError::UnsupportedContract {
                origin: origin.to_owned(),
                found: version.to_owned(),
                supported: CONTRACT_VERSIONS.join(", "),
            });
        };
        let instantiate_error = |error: wasmtime::Error| LoadError::Instantiate {
            origin: origin.to_owned(),
            cause: root_cause(&error),
        };
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(instantiate_error)?;
        let bindings = Bindings::new(contract_version, pre).map_err(instantiate_error)?;
        Ok((bindings, contract_version))
    }
}

/// Loads and hashes nothing twice: the hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    cinch_base::hex::encode(&sha2::Sha256::digest(bytes))
}

fn start_epoch_ticker(engine: &Engine) {
    let engine = engine.weak();
    std::thread::Builder::new()
        .name("cinch-epoch".into())
        .spawn(move || {
            while let Some(engine) = engine.upgrade() {
                engine.increment_epoch();
                drop(engine);
                std::thread::sleep(EPOCH_TICK);
            }
        })
        .expect("spawning the epoch ticker thread");
}

/// A loaded driver: ready to be instantiated for a turn. A clone shares the
/// compiled component.
#[derive(Clone)]
pub struct Driver {
    info: sdk::Info,
    contract_version: &'static str,
    bindings: Bindings,
    engine: Engine,
    limits: Limits,
    sha256: String,
}

impl Driver {
    /// What the driver says about its harness.
    pub fn info(&self) -> &sdk::Info {
        &self.info
    }

    /// The contract version the driver was built for.
    pub fn contract_version(&self) -> &'static str {
        self.contract_version
    }

    /// The hex SHA-256 of the component's bytes.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }

    /// The CLI's version from the output of its version command.
    pub fn parse_version(&self, output: &str) -> Result<Option<String>, DriverFailure> {
        self.with_instance("parse-version", |store, instance| {
            instance.parse_version(store, output)
        })
    }

    /// The command that starts `turn`.
    pub fn command(&self, turn: &sdk::Turn) -> Result<sdk::Command, DriverFailure> {
        self.with_instance("start-command", |store, instance| {
            instance.start_command(store, turn)
        })
    }

    /// A fresh instance with a parser, for `turn` (a 0.1.0 driver's parser
    /// takes no turn).
    pub fn session_for(&self, turn: &sdk::Turn) -> Result<DriverSession, DriverFailure> {
        let mut store = self.store();
        let instance = self
            .instantiate(&mut store)
            .map_err(|error| self.failure("instantiate", &store, &error))?;
        let parser = instance
            .new_parser(&mut store, turn)
            .map_err(|error| self.failure("parser constructor", &store, &error))?;
        Ok(DriverSession {
            name: self.info.name.clone(),
            store,
            instance,
            parser,
            failed: false,
        })
    }

    /// A fresh instance with a parser for reading a log whose turn is not at
    /// hand (`cinch driver test`, a kept log): the parser gets an empty turn,
    /// so a conversation driver's `opening` and replies are of no use.
    pub fn session(&self) -> Result<DriverSession, DriverFailure> {
        self.session_for(&sdk::Turn::default())
    }

    fn store(&self) -> Store<Sandbox> {
        let mut store = Store::new(&self.engine, Sandbox::new(self.limits));
        store.limiter(|sandbox| &mut sandbox.memory);
        // Instantiation runs guest code too, so the deadline starts now.
        arm_deadline(&mut store, self.limits);
        store
    }

    fn instantiate(&self, store: &mut Store<Sandbox>) -> wasmtime::Result<Instance> {
        self.bindings.instantiate(store)
    }

    /// Runs `call` on a throwaway instance.
    fn with_instance<R>(
        &self,
        name: &'static str,
        call: impl FnOnce(&mut Store<Sandbox>, &Instance) -> wasmtime::Result<R>,
    ) -> Result<R, DriverFailure> {
        let mut store = self.store();
        let result = self
            .instantiate(&mut store)
            .and_then(|instance| call(&mut store, &instance));
        result.map_err(|error| self.failure(name, &store, &error))
    }

    fn failure(
        &self,
        call: &'static str,
        store: &Store<Sandbox>,
        error: &wasmtime::Error,
    ) -> DriverFailure {
        DriverFailure {
            driver: self.info.name.clone(),
            call,
            cause: classify(store, error, self.limits),
        }
    }
}

/// One turn's instance of a driver, with its parser.
pub struct DriverSession {
    name: String,
    store: Store<Sandbox>,
    instance: Instance,
    parser: ResourceAny,
    failed: bool,
}

impl DriverSession {
    /// The lines to write to the CLI's stdin first (none for a driver that
    /// only reads).
    pub fn opening(&mut self) -> Result<Vec<String>, DriverFailure> {
        self.call("opening", |store, instance, parser| {
            instance.opening(store, parser)
        })
    }

    /// Parses a batch of whole lines: their events, the lines to write back
    /// and whether the turn's answer has come.
    pub fn feed(&mut self, lines: &[String]) -> Result<sdk::Fed, DriverFailure> {
        self.call("feed", |store, instance, parser| {
            instance.feed(store, parser, lines)
        })
    }

    /// The lines that ask the CLI to stop gracefully (none for a driver that
    /// only reads).
    pub fn stop(&mut self) -> Result<Vec<String>, DriverFailure> {
        self.call("stop", |store, instance, parser| {
            instance.stop(store, parser)
        })
    }

    /// The host's decision on the permission request `key`: the lines that
    /// answer the agent.
    pub fn decide(
        &mut self,
        key: &str,
        allow: bool,
        message: Option<&str>,
    ) -> Result<Vec<String>, DriverFailure> {
        self.call("decide", |store, instance, parser| {
            instance.decide(store, parser, key, allow, message)
        })
    }

    /// The CLI has exited: how did the turn end?
    pub fn finish(
        &mut self,
        exit_code: Option<i32>,
        stderr_tail: &str,
    ) -> Result<sdk::Outcome, DriverFailure> {
        self.call("finish", |store, instance, parser| {
            instance.finish(store, parser, exit_code, stderr_tail)
        })
    }

    fn call<R>(
        &mut self,
        name: &'static str,
        call: impl FnOnce(&mut Store<Sandbox>, &Instance, ResourceAny) -> wasmtime::Result<R>,
    ) -> Result<R, DriverFailure> {
        let failure = |cause| DriverFailure {
            driver: self.name.clone(),
            call: name,
            cause,
        };
        if self.failed {
            return Err(failure(FailureCause::AlreadyFailed));
        }
        let limits = self.store.data().limits;
        arm_deadline(&mut self.store, limits);
        call(&mut self.store, &self.instance, self.parser).map_err(|error| {
            self.failed = true;
            failure(classify(&self.store, &error, limits))
        })
    }
}

fn arm_deadline(store: &mut Store<Sandbox>, limits: Limits) {
    // The next tick may come at once: one tick more than the limit holds
    // makes sure a call gets its whole time before it is stopped.
    let ticks = limits
        .call_timeout
        .as_millis()
        .div_ceil(EPOCH_TICK.as_millis())
        + 1;
    store.set_epoch_deadline(u64::try_from(ticks).unwrap_or(u64::MAX));
}

/// Stands in for a driver's info until `describe` gives it, naming the
/// component in errors meanwhile.
fn placeholder_info(origin: &str) -> sdk::Info {
    sdk::Info {
        name: origin.to_owned(),
        display_name: String::new(),
        program: String::new(),
        version_args: Vec::new(),
        state_dir: None,
        managed_config: Vec::new(),
        secret_env: Vec::new(),
        login_files: Vec::new(),
        models: Vec::new(),
        default_model: None,
        efforts: Vec::new(),
        default_effort: None,
        brief: sdk::BriefDelivery::Stdin,
        resume: sdk::ResumeScope::Anywhere,
        harnesses: Vec::new(),
    }
}
