//! `cinch driver test --corpus DIR`: every log of a corpus laid out
//! `<cli>/<version>/NAME.jsonl` through its driver, compared with the
//! expected outcome beside it (`NAME.expect.json`), reported per CLI version.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use serde::{Deserialize, Serialize};

use super::Context;
use super::driver_name::{Named, named};
use cinch_engine::reading::reader::UnknownEvents;
use cinch_engine::reading::replay::{Exit, Report, replay};
use cinch_engine::redact::Redactor;

/// How the corpus is run.
pub struct Options<'a> {
    /// A driver (name or component file) for every log, instead of each
    /// log's own.
    pub driver: Option<&'a str>,
    /// Only these CLIs' folders (all when empty).
    pub clis: &'a [String],
    /// Writes the expectations instead of checking them.
    pub write_expect: bool,
}

/// What a log is expected to give: `NAME.expect.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// The driver that reads the log, when not the one named like its CLI
    /// folder (Qwen Code prints Claude Code's format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    driver: Option<String>,
    outcome: OutcomeKind,
    /// The final message exactly; `null` when there must be none.
    final_message: Option<String>,
    /// A part of the error, for an outcome `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error_contains: Option<String>,
    /// How many events the driver made of the log.
    events: usize,
    /// How many lines gave no event.
    unparsed: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
enum OutcomeKind {
    Ok,
    Error,
}

/// One log of the corpus.
struct Case {
    cli: String,
    version: String,
    log: PathBuf,
}

impl Case {
    fn expect_path(&self) -> PathBuf {
        self.log.with_extension("expect.json")
    }
}

/// The tally of one CLI version.
#[derive(Default)]
struct Tally {
    passed: usize,
    failed: Vec<String>,
    unknown: UnknownEvents,
}

pub fn run(context: &Context, dir: &Path, options: &Options) -> anyhow::Result<ExitCode> {
    let cases = cases(dir, options.clis)?;
    anyhow::ensure!(
        !cases.is_empty(),
        "{} holds no logs: a corpus is laid out <cli>/<version>/NAME.jsonl{}",
        dir.display(),
        if options.clis.is_empty() {
            String::new()
        } else {
            format!(" (looked only under {})", options.clis.join(", "))
        }
    );
    let mut drivers: HashMap<String, Named> = HashMap::new();
    let mut tallies: BTreeMap<(String, String), Tally> = BTreeMap::new();
    for case in &cases {
        let expect = read_expect(&case.expect_path())?;
        let driver_name = match (options.driver, &expect) {
            (Some(driver), _) => driver.to_owned(),
            (
                None,
                Some(Expect {
                    driver: Some(driver),
                    ..
                }),
            ) => driver.clone(),
            _ => case.cli.clone(),
        };
        if !drivers.contains_key(&driver_name) {
            let loaded = named(context, &driver_name).with_context(|| {
                format!(
                    "the driver for {} (set \"driver\" in its .expect.json)",
                    case.log.display()
                )
            })?;
            drivers.insert(driver_name.clone(), loaded);
        }
        let report = replay_case(drivers[&driver_name].driver()?, case)?;
        let tally = tallies
            .entry((case.cli.clone(), case.version.clone()))
            .or_default();
        for (kind, count) in &report.unknown_events {
            *tally.unknown.entry(kind.clone()).or_default() += count;
        }
        let name = case.log.strip_prefix(dir).unwrap_or(&case.log).display();
        if options.write_expect {
            let driver = expect
                .and_then(|expect| expect.driver)
                .filter(|_| options.driver.is_none());
            write_expect(&case.expect_path(), &observed(&report, driver))?;
            println!("wrote {}", case.expect_path().display());
            tally.passed += 1;
            continue;
        }
        let Some(expect) = expect else {
            tally.failed.push(format!(
                "{name}: no {} (run with --write-expect to write it from the driver's output, then check it)",
                case.expect_path().display()
            ));
            continue;
        };
        match differences(&expect, &report) {
            differences if differences.is_empty() => tally.passed += 1,
            differences => tally
                .failed
                .push(format!("{name}: {}", differences.join("; "))),
        }
    }

    let mut any_failed = false;
    for ((cli, version), tally) in &tallies {
        println!(
            "{cli} {version}: {} passed, {} failed",
            tally.passed,
            tally.failed.len()
        );
        for failure in &tally.failed {
            println!("  FAILED {failure}");
        }
        if !tally.unknown.is_empty() {
            let kinds: Vec<String> = (tally.unknown.iter())
                .map(|(kind, count)| format!("{kind} ×{count}"))
                .collect();
            println!("  unknown event types: {}", kinds.join(", "));
        }
        any_failed |= !tally.failed.is_empty();
    }
    Ok(if any_failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The logs under `dir/<cli>/<version>/`, in order.
fn cases(dir: &Path, only: &[String]) -> anyhow::Result<Vec<Case>> {
    let mut cases = Vec::new();
    for cli in subfolders(dir)? {
        let cli_name = file_name(&cli);
        if !only.is_empty() && !only.contains(&cli_name) {
            continue;
        }
        for version in subfolders(&cli)? {
            let listing = std::fs::read_dir(&version)
                .with_context(|| format!("reading {}", version.display()))?;
            let mut logs: Vec<PathBuf> = listing
                .filter_map(Result::ok)
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
                .collect();
            logs.sort();
            cases.extend(logs.into_iter().map(|log| Case {
                cli: cli_name.clone(),
                version: file_name(&version),
                log,
            }));
        }
    }
    Ok(cases)
}

fn subfolders(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let listing = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    let mut folders: Vec<PathBuf> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .collect();
    folders.sort();
    Ok(folders)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Runs one log as `cinch driver test` does, with its recorded exit.
fn replay_case(driver: &cinch_runtime::Driver, case: &Case) -> anyhow::Result<Report> {
    let read_beside = |ext: &str| std::fs::read_to_string(case.log.with_extension(ext)).ok();
    let code = match read_beside("exit") {
        Some(text) => text.trim().parse().with_context(|| {
            format!(
                "{} holds no exit code",
                case.log.with_extension("exit").display()
            )
        })?,
        None => 0,
    };
    let exit = Exit {
        code: Some(code),
        stderr_tail: read_beside("stderr").unwrap_or_default(),
    };
    let bytes =
        std::fs::read(&case.log).with_context(|| format!("reading {}", case.log.display()))?;
    let info = driver.info();
    let mut session = driver.session()?;
    Ok(replay(
        &info.name,
        &info.display_name,
        &mut session,
        &bytes,
        &exit,
        &Redactor::default(),
    ))
}

fn read_expect(path: &Path) -> anyhow::Result<Option<Expect>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(error) => return Err(error).with_context(|| format!("reading {}", path.display())),
    };
    serde_json::from_str(&text).map(Some).with_context(|| {
        format!(
            "{} is not an expectation: it holds outcome (\"ok\" or \"error\"), final_message, events, unparsed, and optionally driver and error_contains",
            path.display()
        )
    })
}

fn write_expect(path: &Path, expect: &Expect) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(expect)? + "\n";
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// What `report` says, as an expectation.
fn observed(report: &Report, driver: Option<String>) -> Expect {
    Expect {
        driver,
        outcome: if report.outcome.is_error {
            OutcomeKind::Error
        } else {
            OutcomeKind::Ok
        },
        final_message: report.outcome.final_message.clone(),
        error_contains: report.outcome.error.clone(),
        events: report.events,
        unparsed: report.unparsed,
    }
}

/// How `report` differs from `expect`, one phrase each.
fn differences(expect: &Expect, report: &Report) -> Vec<String> {
    let mut differences = Vec::new();
    if let Some(failure) = &report.driver_failure {
        differences.push(format!("the driver failed: {failure}"));
    }
    let seen = observed(report, None);
    if seen.outcome != expect.outcome {
        differences.push(format!(
            "outcome {:?}, expected {:?}{}",
            seen.outcome,
            expect.outcome,
            report
                .outcome
                .error
                .as_deref()
                .map(|error| format!(" (error: {error})"))
                .unwrap_or_default()
        ));
    }
    if seen.final_message != expect.final_message {
        differences.push(format!(
            "final message {:?}, expected {:?}",
            seen.final_message, expect.final_message
        ));
    }
    if let Some(part) = &expect.error_contains
        && !(report.outcome.error.as_deref()).is_some_and(|error| error.contains(part.as_str()))
    {
        differences.push(format!(
            "error {:?} does not contain {part:?}",
            report.outcome.error
        ));
    }
    if seen.events != expect.events {
        differences.push(format!(
            "{} events, expected {}",
            seen.events, expect.events
        ));
    }
    if seen.unparsed != expect.unparsed {
        differences.push(format!(
            "{} unparsed lines, expected {}",
            seen.unparsed, expect.unparsed
        ));
    }
    differences
}
