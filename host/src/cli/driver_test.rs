//! `cinch driver test`: recorded logs through a driver, or a whole corpus of
//! them against their expected outcomes (see `driver_corpus`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cinch_driver_sdk::Outcome;
use serde_json::Value;

use super::Context;
use super::driver_corpus;
use super::driver_name::named;
use cinch_engine::reading::replay::{Exit, Report, replay};
use cinch_engine::redact::Redactor;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A driver's name, or the path of a driver component (`.wasm`). With
    /// `--corpus` it is optional and replaces the driver of every log.
    #[arg(required_unless_present = "corpus")]
    driver: Option<String>,
    /// The logs: a harness CLI's raw standard output, one JSON event a line.
    #[arg(required_unless_present = "corpus", conflicts_with = "corpus")]
    logs: Vec<PathBuf>,
    /// Runs a corpus laid out `<cli>/<version>/NAME.jsonl`, each log beside
    /// its `NAME.expect.json` (and optionally `NAME.exit`, `NAME.stderr`), and
    /// reports per CLI version.
    #[arg(long, value_name = "DIR")]
    corpus: Option<PathBuf>,
    /// With `--corpus`: only these CLIs' folders.
    #[arg(long = "cli", value_name = "CLI", requires = "corpus")]
    clis: Vec<String>,
    /// With `--corpus`: writes each log's `.expect.json` from what the driver
    /// makes of it now, instead of comparing.
    #[arg(long, requires = "corpus")]
    write_expect: bool,
    /// Succeeds even when the driver understood nothing of a log (no event).
    #[arg(long)]
    allow_empty: bool,
    /// The exit code the CLI ended with.
    #[arg(long, default_value_t = 0, allow_negative_numbers = true)]
    exit_code: i32,
    /// A file holding what the CLI printed on standard error.
    #[arg(long)]
    stderr: Option<PathBuf>,
    /// Prints one JSON object per log instead of text.
    #[arg(long)]
    json: bool,
    /// Compares with a golden file (the `--json` output, one object per log).
    #[arg(long)]
    expect: Option<PathBuf>,
}

pub fn run(context: &Context, args: Args) -> anyhow::Result<ExitCode> {
    if let Some(corpus) = &args.corpus {
        return driver_corpus::run(
            context,
            corpus,
            &driver_corpus::Options {
                driver: args.driver.as_deref(),
                clis: &args.clis,
                write_expect: args.write_expect,
            },
        );
    }
    let named = named(context, args.driver.as_deref().unwrap_or_default())?;
    let driver = named.driver()?;
    let stderr_tail = match &args.stderr {
        Some(path) => {
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?
        }
        None => String::new(),
    };
    let exit = Exit {
        code: Some(args.exit_code),
        stderr_tail,
    };

    let mut reports = Vec::new();
    for log in &args.logs {
        let bytes = std::fs::read(log).with_context(|| format!("reading {}", log.display()))?;
        let mut session = driver.session()?;
        let info = driver.info();
        let report = replay(
            &info.name,
            &info.display_name,
            &mut session,
            &bytes,
            &exit,
            &Redactor::default(),
        );
        if args.json {
            println!("{}", serde_json::to_string(&report)?);
        } else {
            print_human(log, &report);
        }
        reports.push(report);
    }

    let failed = reports.iter().any(|report| report.driver_failure.is_some());
    let mut understood_nothing = false;
    for (log, report) in args.logs.iter().zip(&reports) {
        if let Some(warning) = understood_nothing_warning(log, report) {
            eprintln!("warning: {warning}");
            understood_nothing = true;
        }
    }
    if understood_nothing && !args.allow_empty {
        eprintln!(
            "failing for that: check that the logs come from the CLI `{}` reads, or pass --allow-empty",
            driver.info().name
        );
    }
    let matches = match &args.expect {
        Some(golden) => compare(golden, &reports)?,
        None => true,
    };
    Ok(
        if failed || !matches || (understood_nothing && !args.allow_empty) {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        },
    )
}

/// What to say when the driver made no event of a log that has lines: it
/// reads another CLI's format. (An empty log, a CLI that died before
/// printing, is not that.)
pub fn understood_nothing_warning(log: &Path, report: &Report) -> Option<String> {
    if report.events > 0 || report.unparsed == 0 || report.driver_failure.is_some() {
        return None;
    }
    let mut warning = format!(
        "the driver `{}` understood nothing of {}: 0 events from {} lines",
        report.driver,
        log.display(),
        report.unparsed
    );
    if !report.unknown_events.is_empty() {
        let kinds: Vec<String> = (report.unknown_events.iter())
            .take(5)
            .map(|(kind, count)| format!("{kind} ×{count}"))
            .collect();
        warning.push_str(&format!("; unknown event types: {}", kinds.join(", ")));
    }
    Some(warning)
}

fn print_human(log: &Path, report: &Report) {
    println!("== {} (driver {})", log.display(), report.driver);
    for line in &report.progress {
        println!("  {line}");
    }
    let Outcome {
        final_message,
        session_id,
        is_error,
        error,
        usage,
    } = &report.outcome;
    println!("outcome: {}", if *is_error { "error" } else { "ok" });
    println!("  session: {}", session_id.as_deref().unwrap_or("none"));
    if let Some(error) = error {
        println!("  error: {error}");
    }
    match final_message {
        Some(message) => println!("  final message:\n{}", indent(message)),
        None => println!("  final message: none"),
    }
    if let Some(usage) = usage {
        println!(
            "  usage: {}",
            serde_json::to_string(usage).unwrap_or_default()
        );
    }
    println!(
        "  events: {}, unparsed lines: {}",
        report.events, report.unparsed
    );
    if report.not_json_lines > 0 {
        println!("  lines not JSON: {}", report.not_json_lines);
    }
    if !report.unknown_events.is_empty() {
        println!("  unknown event types (the driver does not know them):");
        for (kind, count) in &report.unknown_events {
            println!("    {kind} ×{count}");
        }
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Compares `reports` with the golden file and prints a diff when they differ.
fn compare(golden: &Path, reports: &[Report]) -> anyhow::Result<bool> {
    let text =
        std::fs::read_to_string(golden).with_context(|| format!("reading {}", golden.display()))?;
    let expected: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .with_context(|| format!("{} is not a sequence of JSON objects", golden.display()))?;
    let actual: Vec<Value> = reports
        .iter()
        .map(serde_json::to_value)
        .collect::<Result<_, _>>()?;
    if expected == actual {
        return Ok(true);
    }
    let pretty = |values: &[Value]| {
        values
            .iter()
            .map(|value| serde_json::to_string_pretty(value).unwrap_or_default() + "\n")
            .collect::<String>()
    };
    let (expected, actual) = (pretty(&expected), pretty(&actual));
    let diff = similar::TextDiff::from_lines(&expected, &actual);
    eprintln!(
        "{} does not match (- expected, + actual):",
        golden.display()
    );
    eprint!(
        "{}",
        diff.unified_diff()
            .context_radius(3)
            .header("expected", "actual")
    );
    Ok(false)
}
