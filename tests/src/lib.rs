//! Shared pieces of cinch's end-to-end tests and benchmarks: where the
//! recorded logs are, and how to run one through a driver natively or as a
//! sandboxed component.

use std::path::{Path, PathBuf};

use cinch::drivers::Registry;
use cinch::parse::{Native, TurnParser};
use cinch::redact::Redactor;
use cinch::replay::{Exit, Report, replay};
use cinch::runtime::{Limits, Runtime};
use cinch_driver_sdk::Driver;

/// Paths of the deliberately broken test components.
pub mod test_drivers {
    include!(concat!(env!("OUT_DIR"), "/test_drivers.rs"));
}

/// The built-in drivers, by name.
pub const DRIVERS: &[&str] = &["claude", "codex", "cursor", "gemini"];

/// This crate's directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded runs copied into the project.
pub fn recorded_dir() -> PathBuf {
    crate_dir().join("fixtures/recorded")
}

/// The public captures, read in place from `../shared` (never copied).
/// `None` when `../shared` is not beside the checkout.
pub fn public_dir() -> Option<PathBuf> {
    let dir = crate_dir().join("../../shared/fixtures/public");
    dir.is_dir().then_some(dir)
}

/// Which driver reads logs of the CLI a fixture folder is named for.
/// Amp and Qwen Code print Claude Code's format.
pub fn driver_for(cli: &str) -> Option<&'static str> {
    match cli {
        "claude" | "amp" | "qwen" => Some("claude"),
        "codex" => Some("codex"),
        "cursor" => Some("cursor"),
        "gemini" => Some("gemini"),
        _ => None,
    }
}

/// One log to test a driver on.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// `recorded` or `public`.
    pub source: &'static str,
    /// The CLI folder it sits in.
    pub cli: String,
    /// The log's file stem.
    pub name: String,
    /// The raw log.
    pub log: PathBuf,
    /// How the CLI exited (0 and no stderr when not recorded).
    pub exit: Exit,
}

impl Fixture {
    /// Where the golden report of this fixture is kept.
    pub fn golden(&self) -> PathBuf {
        crate_dir()
            .join("golden")
            .join(self.source)
            .join(&self.cli)
            .join(format!("{}.json", self.name))
    }
}

/// Every `.jsonl` log under `dir/<cli>/`, with its `.exit` and `.stderr`.
pub fn fixtures(source: &'static str, dir: &Path) -> Vec<Fixture> {
    let mut found = Vec::new();
    let Ok(clis) = std::fs::read_dir(dir) else {
        return found;
    };
    for cli in clis.filter_map(Result::ok).filter(|e| e.path().is_dir()) {
        let cli_name = cli.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(cli.path()) else {
            continue;
        };
        for file in files.filter_map(Result::ok).map(|e| e.path()) {
            if file.extension().is_none_or(|ext| ext != "jsonl") {
                continue;
            }
            let read = |ext: &str| std::fs::read_to_string(file.with_extension(ext)).ok();
            let code =
                read("exit").map(|text| text.trim().parse().expect("an .exit file holds a number"));
            found.push(Fixture {
                source,
                cli: cli_name.clone(),
                name: file.file_stem().unwrap().to_string_lossy().into_owned(),
                exit: Exit {
                    code: Some(code.unwrap_or(0)),
                    stderr_tail: read("stderr").unwrap_or_default(),
                },
                log: file,
            });
        }
    }
    found.sort_by(|a, b| (&a.cli, &a.name).cmp(&(&b.cli, &b.name)));
    found
}

/// A runtime with the default limits and its own compile cache.
pub fn runtime(cache: &Path) -> Runtime {
    Runtime::new(Some(cache.to_path_buf()), Limits::default()).expect("creating the runtime")
}

/// The built-in drivers, loaded.
pub fn registry(runtime: &Runtime) -> Registry {
    Registry::load(runtime, None).expect("loading the built-in drivers")
}

/// The native parser of the built-in driver `name`.
pub fn native_parser(name: &str) -> Box<dyn TurnParser> {
    fn of<D: Driver>() -> Box<dyn TurnParser>
    where
        D::Parser: 'static,
    {
        Box::new(Native(D::Parser::default()))
    }
    match name {
        "claude" => of::<cinch_driver_claude::Claude>(),
        "codex" => of::<cinch_driver_codex::Codex>(),
        "cursor" => of::<cinch_driver_cursor::Cursor>(),
        "gemini" => of::<cinch_driver_gemini::Gemini>(),
        other => panic!("no native driver named {other}"),
    }
}

/// The display name of the built-in driver `name`, natively.
pub fn native_display_name(name: &str) -> String {
    match name {
        "claude" => cinch_driver_claude::Claude::info().display_name,
        "codex" => cinch_driver_codex::Codex::info().display_name,
        "cursor" => cinch_driver_cursor::Cursor::info().display_name,
        "gemini" => cinch_driver_gemini::Gemini::info().display_name,
        other => panic!("no native driver named {other}"),
    }
}

/// `log` through the native driver `name`.
pub fn replay_native(name: &str, log: &[u8], exit: &Exit) -> Report {
    let mut parser = native_parser(name);
    replay(
        name,
        &native_display_name(name),
        parser.as_mut(),
        log,
        exit,
        &Redactor::default(),
    )
}

/// `log` through the component of driver `name`.
pub fn replay_wasm(registry: &Registry, name: &str, log: &[u8], exit: &Exit) -> Report {
    let driver = registry.get(name).expect("a built-in driver");
    let mut session = driver.session().expect("a fresh driver instance");
    let info = driver.info();
    replay(
        &info.name,
        &info.display_name,
        &mut session,
        log,
        exit,
        &Redactor::default(),
    )
}
