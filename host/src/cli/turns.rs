//! `cinch turns`, `cinch stop` and `cinch check`.

use std::process::ExitCode;

use cinch_engine::engine::Engine;
use cinch_engine::engine::result::{CostSource, TurnUsage, human_duration};
use cinch_engine::engine::server_credential::{CredentialSource, ServerCredential};
use cinch_engine::turn_dir::now_ms;

/// Lists the turns, newest first.
pub fn list(engine: &Engine, json: bool) -> anyhow::Result<ExitCode> {
    let turns = engine.list()?;
    if json {
        println!("{}", serde_json::to_string(&turns)?);
        return Ok(ExitCode::SUCCESS);
    }
    if turns.is_empty() {
        println!("no turns yet");
    }
    for turn in turns {
        println!(
            "{}  {:<10} {:<8} {:>9} ago  {:>10}  {}  session {}{}",
            turn.turn,
            turn.status,
            turn.harness,
            human_duration(now_ms().saturating_sub(turn.started_at_ms)),
            cost_column(turn.usage.as_ref()),
            turn.repository,
            turn.session_id.as_deref().unwrap_or("none"),
            unknown_column(&turn.unknown_events),
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A turn's cost as `cinch turns` shows it: `$0.0123` as the harness
/// reported it, `~$0.0123` as cinch estimates it, its tokens when it has no
/// cost, `-` without usage.
fn cost_column(usage: Option<&TurnUsage>) -> String {
    let Some(usage) = usage else {
        return "-".to_owned();
    };
    match (usage.cost_usd, usage.cost_source) {
        (Some(cost), Some(CostSource::Estimated)) => format!("~${cost:.4}"),
        (Some(cost), _) => format!("${cost:.4}"),
        (None, _) => format!(
            "{} tok",
            usage.input_tokens.unwrap_or(0) + usage.output_tokens.unwrap_or(0)
        ),
    }
}

/// The unknown event types a turn saw, as `cinch turns` ends its row with
/// them: `  unknown: brand_new ×2, other ×1`; nothing when there were none.
pub fn unknown_column(unknown: &cinch_engine::reading::reader::UnknownEvents) -> String {
    if unknown.is_empty() {
        return String::new();
    }
    let listed: Vec<String> = unknown
        .iter()
        .map(|(kind, count)| format!("{kind} ×{count}"))
        .collect();
    format!("  unknown: {}", listed.join(", "))
}

/// Shows a turn's kept log.
pub fn log(engine: &Engine, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    let view = engine.log(id)?;
    if json {
        println!("{}", serde_json::to_string(&view)?);
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(driver) = &view.driver {
        println!(
            "driver: {} {} {}",
            driver.name,
            driver.version.as_deref().unwrap_or("(no version)"),
            driver.digest
        );
    }
    for line in &view.lines {
        println!("{line}");
    }
    if view.lines_truncated {
        println!("… more lines not shown");
    }
    println!(
        "\n{} events, {} lines not understood, {} bytes{}",
        view.events,
        view.unparsed,
        view.bytes,
        if view.raw_truncated {
            " (raw log cut at 256 KiB below)"
        } else {
            ""
        }
    );
    print!("\n{}", view.raw);
    Ok(ExitCode::SUCCESS)
}

/// Stops a running turn.
pub fn stop(engine: &Engine, id: &str) -> anyhow::Result<ExitCode> {
    engine.stop(id)?;
    println!("stopping turn {id}: SIGTERM now, SIGKILL in 10 s if it lingers");
    Ok(ExitCode::SUCCESS)
}

/// Reports each harness's CLI and credential; fails when the one asked for cannot run.
pub fn check(engine: &Engine, name: Option<&str>, json: bool) -> anyhow::Result<ExitCode> {
    let names: Vec<String> = match name {
        Some(name) => vec![name.to_owned()],
        None => engine
            .registry()
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect(),
    };
    let reports = names
        .iter()
        .map(|name| engine.check(name))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sandbox = cinch_engine::sandbox::Support::detect();
    if json {
        println!(
            "{}",
            serde_json::json!({"harnesses": reports, "sandbox": sandbox, "helper": engine.helper()})
        );
    } else {
        println!("sandbox:");
        for line in sandbox.lines() {
            println!("  {line}");
        }
        println!(
            "  helper: {}",
            cinch_engine::helper::describe(engine.helper())
        );
        if !sandbox.is_sufficient() {
            println!(
                "  turns cannot run sandboxed here (Landlock ABI {} or later is needed); `cinch run --no-sandbox` and `cinch serve --no-sandbox` run them unsandboxed",
                cinch_engine::sandbox::MINIMUM_ABI
            );
        }
        for report in &reports {
            let cli = match (&report.path, &report.version) {
                (Some(path), Some(version)) => format!("{} {version}", path.display()),
                // ACP agents often have no version command: not a fault.
                (Some(path), None) => format!("{} (no version reported)", path.display()),
                (None, _) => "not installed".to_owned(),
            };
            println!(
                "{}: {cli}; credential: {}",
                report.harness, report.credential
            );
            if let Some(problem) = &report.problem {
                println!("  cannot run: {problem}");
            } else {
                println!("  {}", server_turns(&report.server_credential));
            }
            println!("  {}", tools_line(report));
        }
    }
    let runnable = reports.iter().filter(|report| report.problem.is_none());
    let ready = match name {
        Some(_) => reports.iter().all(|report| report.problem.is_none()),
        None => runnable.count() > 0,
    };
    if !ready && name.is_none() {
        eprintln!(
            "cinch: no harness can run here: install one's CLI and give it a credential (see each `cannot run` above)"
        );
    }
    Ok(if ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// The harness's pinned, installed and tested versions, in a line.
fn tools_line(report: &cinch_engine::engine::CheckReport) -> String {
    let installed = if report.installed.is_empty() {
        "none".to_owned()
    } else {
        report.installed.join(", ")
    };
    let pinned = match &report.pinned {
        Some(version) if report.installed.contains(version) => format!("pinned {version}"),
        Some(version) => format!("pinned {version} (installed on the first turn)"),
        None => "not pinned (PATH's runs)".to_owned(),
    };
    let drift = match report.drift {
        Some(cinch_engine::tools::CliDrift::Untested) => {
            "; the CLI turns run is OUTSIDE the tested range"
        }
        Some(cinch_engine::tools::CliDrift::Tested) => "; the CLI turns run is in the tested range",
        Some(cinch_engine::tools::CliDrift::Unknown) | None => "",
    };
    format!(
        "{pinned}; installed in cinch's home: {installed}; tested with: {}{drift}",
        report.tested.as_deref().unwrap_or("(not stated)")
    )
}

/// What `cinch serve`'s turns of a harness get for a credential, in a line.
fn server_turns(credential: &ServerCredential) -> String {
    match (credential.source, credential.variable.as_deref()) {
        (Some(CredentialSource::ServerSecrets), Some(variable)) => {
            format!("cinch serve's turns: {variable} from [secrets]")
        }
        (Some(CredentialSource::PassEnv), Some(variable)) => {
            format!("cinch serve's turns: {variable}, passed on by [serve] pass_env")
        }
        (Some(_), _) => "cinch serve's turns: no key needed".to_owned(),
        (None, _) if credential.variables.is_empty() => {
            "cinch serve's turns: only a login made in the agent's home".to_owned()
        }
        (None, _) => format!(
            "cinch serve's turns: only what their environment gives ({} as an environment secret), unless [secrets] or [serve] pass_env gives it",
            credential.variables.join(" or ")
        ),
    }
}
