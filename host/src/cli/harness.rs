//! `cinch harness install NAME[@VERSION]` and `cinch harness list`: the
//! harnesses' CLIs as cinch installs them under `<home>/tools`, pins them
//! (config.toml's `[harness.NAME] version`) and finds them on PATH.

use std::process::ExitCode;

use serde::Serialize;

use cinch_engine::engine::Engine;
use cinch_engine::probe::{CliStatus, probe};
use cinch_engine::tools::{CliDrift, drift, install};

/// Installs `spec` (`NAME` or `NAME@VERSION`).
pub fn install(engine: &Engine, spec: &str, json: bool) -> anyhow::Result<ExitCode> {
    let (name, version) = match spec.rsplit_once('@') {
        // `@scope/…` is no version: a harness's name has no `@`.
        Some((name, version)) if !name.is_empty() => (name, Some(version)),
        _ => (spec, None),
    };
    let tool = engine.tool(name)?;
    let installed = match install::install(&engine.tools_root(), &tool, version) {
        Ok(installed) => installed,
        Err(error) => {
            eprintln!("cinch: {error}");
            return Ok(ExitCode::FAILURE);
        }
    };
    if json {
        println!(
            "{}",
            serde_json::json!({
                "harness": tool.harness,
                "version": installed.version,
                "program": installed.program,
                "installed": installed.fresh,
                "pinned": tool.pinned,
            })
        );
    } else {
        let done = if installed.fresh {
            "installed"
        } else {
            "already installed"
        };
        println!(
            "{} {} {done}: {}",
            tool.harness,
            installed.version,
            installed.program.display()
        );
        if tool.pinned.as_deref() != Some(installed.version.as_str()) {
            println!(
                "  turns run it once config.toml pins it: [harness.{}] version = \"{}\"",
                tool.harness, installed.version
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// One harness's CLIs.
#[derive(Debug, Serialize)]
pub struct HarnessTools {
    /// The harness.
    pub harness: String,
    /// Its package (`npm:…`, `pypi:…`), when known.
    pub package: Option<String>,
    /// The versions its driver was tested with.
    pub tested: Option<String>,
    /// The versions installed under `<home>/tools`, oldest first.
    pub installed: Vec<String>,
    /// The version config.toml pins.
    pub pinned: Option<String>,
    /// The CLI on PATH, when there is one.
    pub on_path: Option<OnPath>,
}

/// The CLI on PATH.
#[derive(Debug, Serialize)]
pub struct OnPath {
    /// Where.
    pub path: std::path::PathBuf,
    /// Its version, when it told one.
    pub version: Option<String>,
    /// Its version against the tested range.
    pub drift: Option<CliDrift>,
}

/// Lists every harness's CLIs.
pub fn list(engine: &Engine, json: bool) -> anyhow::Result<ExitCode> {
    let registry = engine.registry();
    let mut rows = Vec::new();
    for name in registry.names() {
        let harness = registry.harness(name)?;
        let tool = engine.tool(name)?;
        let search_path = std::env::var("PATH").unwrap_or_default();
        let on_path = match probe(harness.driver, &harness.info, &search_path) {
            CliStatus::Missing => None,
            CliStatus::Found { path, version, .. } => Some(OnPath {
                drift: drift(tool.tested.as_deref(), version.as_deref()),
                path,
                version,
            }),
        };
        rows.push(HarnessTools {
            harness: name.to_owned(),
            package: tool
                .package
                .as_ref()
                .map(cinch_engine::tools::Package::spec),
            tested: tool.tested.clone(),
            installed: tool.installed(&engine.tools_root()),
            pinned: tool.pinned.clone(),
            on_path,
        });
    }
    if json {
        println!("{}", serde_json::to_string(&rows)?);
        return Ok(ExitCode::SUCCESS);
    }
    for row in &rows {
        let installed = if row.installed.is_empty() {
            "none".to_owned()
        } else {
            row.installed.join(", ")
        };
        let path = match &row.on_path {
            None => "not on PATH".to_owned(),
            Some(cli) => format!(
                "{} {}{}",
                cli.path.display(),
                cli.version.as_deref().unwrap_or("(no version reported)"),
                drift_note(cli.drift)
            ),
        };
        println!(
            "{}: package {}; tested {}",
            row.harness,
            row.package.as_deref().unwrap_or("(none known)"),
            row.tested.as_deref().unwrap_or("(not stated)")
        );
        println!(
            "  installed: {installed}; pinned: {}; PATH: {path}",
            row.pinned.as_deref().unwrap_or("no (PATH's runs)")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A version's note against its tested range.
pub fn drift_note(drift: Option<CliDrift>) -> &'static str {
    match drift {
        Some(CliDrift::Untested) => " (outside the tested range)",
        Some(CliDrift::Unknown) | Some(CliDrift::Tested) | None => "",
    }
}
