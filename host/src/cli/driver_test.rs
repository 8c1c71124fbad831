//! `cinch driver test`: recorded logs through a driver.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use cinch_driver_sdk::Outcome;
use serde_json::Value;

use super::Context;
use crate::drivers::load_plugin;
use crate::redact::Redactor;
use crate::replay::{Exit, Report, replay};
use crate::runtime::Driver;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// A driver's name, or the path of a driver component (`.wasm`).
    driver: String,
    /// The logs: a harness CLI's raw standard output, one JSON event a line.
    #[arg(required = true)]
    logs: Vec<PathBuf>,
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
    let plugin;
    let driver: &Driver = if args.driver.ends_with(".wasm") || Path::new(&args.driver).is_file() {
        plugin = load_plugin(&context.runtime, PathBuf::from(&args.driver));
        plugin
            .driver
            .as_ref()
            .map_err(|error| anyhow::anyhow!("{error}"))?
    } else {
        context.registry.get(&args.driver)?
    };
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
    let matches = match &args.expect {
        Some(golden) => compare(golden, &reports)?,
        None => true,
    };
    Ok(if failed || !matches {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
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
