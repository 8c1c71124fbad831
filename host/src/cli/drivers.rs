//! `cinch drivers` and `cinch driver add`.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;

use super::Context;
use crate::drivers::{Source, load_plugin};
pub use crate::harnesses::is_driver_name;
use crate::harnesses::{Profile, ProfileSource};
use crate::probe::{CliStatus, probe};

/// Prints one row per driver, then one per harness profile on a driver.
pub fn list(context: &Context) -> anyhow::Result<ExitCode> {
    let rows: Vec<[String; 5]> = std::thread::scope(|scope| {
        let registry = &context.registry;
        let probes: Vec<_> = registry
            .entries()
            .iter()
            .map(|entry| scope.spawn(move || row(entry)))
            .chain(
                registry
                    .profiles()
                    .iter()
                    .map(|profile| scope.spawn(move || profile_row(registry, profile))),
            )
            .collect();
        probes
            .into_iter()
            .map(|probe| probe.join().expect("a probe thread panicked"))
            .collect()
    });
    let header = ["NAME", "DISPLAY NAME", "CONTRACT", "SOURCE", "CLI"].map(str::to_owned);
    print_table(std::iter::once(&header).chain(&rows));
    Ok(ExitCode::SUCCESS)
}

fn row(entry: &crate::drivers::Entry) -> [String; 5] {
    let source = entry.source.to_string();
    match &entry.driver {
        Err(error) => [
            entry.name.clone(),
            "-".into(),
            "-".into(),
            source,
            format!("did not load: {error}"),
        ],
        Ok(driver) => {
            let info = driver.info();
            [
                info.name.clone(),
                info.display_name.clone(),
                driver.contract_version().to_owned(),
                source,
                cli_cell(driver, info),
            ]
        }
    }
}

fn profile_row(registry: &crate::drivers::Registry, profile: &Profile) -> [String; 5] {
    let source = match profile.source {
        ProfileSource::Driver => format!("{} driver", profile.driver),
        ProfileSource::Config => format!("config.toml ({} driver)", profile.driver),
    };
    match registry.harness(&profile.name) {
        Err(error) => [
            profile.name.clone(),
            profile.display_name.clone(),
            "-".into(),
            source,
            format!("{error:#}"),
        ],
        Ok(harness) => [
            profile.name.clone(),
            profile.display_name.clone(),
            harness.driver.contract_version().to_owned(),
            source,
            cli_cell(harness.driver, &harness.info),
        ],
    }
}

/// Where the harness's CLI is and its version, or why not.
fn cli_cell(driver: &crate::runtime::Driver, info: &cinch_driver_sdk::Info) -> String {
    if info.program.is_empty() {
        return "no program of its own: it runs its harnesses (below)".to_owned();
    }
    match probe(driver, info, &std::env::var("PATH").unwrap_or_default()) {
        CliStatus::Missing => format!("{} not on PATH", info.program),
        CliStatus::Found {
            path,
            version,
            problem,
        } => {
            // ACP agents often have no version command: not a fault.
            let version = version.unwrap_or_else(|| "(no version reported)".into());
            match problem {
                Some(problem) => format!("{} {version} ({problem})", path.display()),
                None => format!("{} {version}", path.display()),
            }
        }
    }
}

fn print_table<'a>(rows: impl Iterator<Item = &'a [String; 5]> + Clone) {
    let mut widths = [0; 5];
    for row in rows.clone() {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for row in rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        println!("{}", cells.join("  ").trim_end());
    }
}

/// Prints, per driver and CLI version, the event types the driver did not
/// know, from the server's database (where `cinch serve` records them when a
/// turn ends): `database`, else the one the home's config names, else the
/// home's SQLite file; a home without a database has seen none.
pub fn seen(
    home: &crate::home::Home,
    database: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    let rows = super::database::runtime()?.block_on(async {
        let Some(store) = super::database::open_existing_store(home, database).await? else {
            return anyhow::Ok(Vec::new());
        };
        store
            .unknown_events()
            .await
            .context("reading the unknown events")
    })?;
    if json {
        let mut harnesses: Vec<&str> = rows.iter().map(|row| row.harness.as_str()).collect();
        harnesses.dedup();
        let drivers: Vec<serde_json::Value> = harnesses
            .into_iter()
            .map(|harness| {
                let versions = crate::api::drivers::by_version(
                    rows.iter().filter(|row| row.harness == harness),
                );
                serde_json::json!({"name": harness, "cli_versions": versions})
            })
            .collect();
        println!("{}", serde_json::to_string(&drivers)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("no unknown event types seen");
        return Ok(ExitCode::SUCCESS);
    }
    let header = ["DRIVER", "CLI VERSION", "TYPE", "FIRST SEEN", "COUNT"].map(str::to_owned);
    let table: Vec<[String; 5]> = rows
        .iter()
        .map(|row| {
            [
                row.harness.clone(),
                if row.cli_version.is_empty() {
                    "unknown".to_owned()
                } else {
                    row.cli_version.clone()
                },
                row.event_type.clone(),
                row.first_seen.clone(),
                row.count.to_string(),
            ]
        })
        .collect();
    print_table(std::iter::once(&header).chain(&table));
    Ok(ExitCode::SUCCESS)
}

/// Checks the component at `file` and installs it as a plugin.
pub fn add(context: &Context, file: &Path) -> anyhow::Result<ExitCode> {
    let entry = load_plugin(&context.runtime, file.to_path_buf());
    let driver = entry
        .driver
        .with_context(|| format!("{} cannot be installed", file.display()))?;
    let name = &driver.info().name;
    anyhow::ensure!(
        is_driver_name(name),
        "{} calls itself `{name}`; a driver's name is lowercase letters, digits and dashes",
        file.display()
    );
    let dir = context.home.plugins_dir();
    crate::home::create_private_dir(&dir)?;
    let target = dir.join(format!("{name}.wasm"));
    let partial = dir.join(format!(".{name}.wasm.partial"));
    std::fs::copy(file, &partial)
        .with_context(|| format!("copying {} into {}", file.display(), dir.display()))?;
    std::fs::rename(&partial, &target)
        .with_context(|| format!("installing {}", target.display()))?;

    let replaces = context
        .registry
        .entries()
        .iter()
        .find(|existing| &existing.name == name)
        .map(|existing| match &existing.source {
            Source::Builtin => " (it replaces the built-in driver)".to_owned(),
            Source::Plugin(_) => " (it replaces the plugin installed before)".to_owned(),
        })
        .unwrap_or_default();
    println!(
        "installed driver `{name}` ({}, contract {}) at {}{replaces}",
        driver.info().display_name,
        driver.contract_version(),
        target.display()
    );
    Ok(ExitCode::SUCCESS)
}
