//! Every ACP transcript in `../shared/fixtures/acp` through the acp driver,
//! natively and as a sandboxed component: the agent's lines go in one at a
//! time, the lines the driver writes must be the recorded client's in kind
//! (initialize, session/new or session/load, session/prompt with the brief,
//! the permission answers, session/cancel where the client cancelled), both
//! sides must agree, and the report must match the golden file.
//! `CINCH_BLESS=1` rewrites the golden files (read them before committing).

use cinch_driver_acp::Acp;
use cinch_driver_sdk::Driver;
use cinch_engine::reading::parse::Native;
use cinch_engine::reading::replay::{Report, replay};
use cinch_engine::redact::Redactor;
use cinch_tests::{
    Transcript, acp_dir, acp_display_name, acp_transcripts, client_line_kind, converse, registry,
    runtime,
};
use serde_json::{Value, json};

/// The driver's side of one transcript: what it wrote and what it read.
#[derive(Debug, PartialEq)]
struct Played {
    sent: Vec<String>,
    report: Report,
}

fn play_native(transcript: &Transcript) -> Played {
    let turn = transcript.turn();
    let mut parser = Native(Acp::parser(&turn));
    let sent = converse(&mut parser, transcript).expect("a native parser does not fail");
    let mut parser = Native(Acp::parser(&turn));
    let report = replay(
        "acp",
        &acp_display_name(&Acp::info(), &turn.harness),
        &mut parser,
        &transcript.agent_log(),
        &transcript.exit(),
        &Redactor::default(),
    );
    Played { sent, report }
}

fn play_wasm(registry: &cinch_engine::drivers::Registry, transcript: &Transcript) -> Played {
    let turn = transcript.turn();
    let driver = registry.get("acp").expect("the built-in acp driver");
    let mut session = driver.session_for(&turn).unwrap();
    let sent = converse(&mut session, transcript).expect("the component does not fail");
    let mut session = driver.session_for(&turn).unwrap();
    let report = replay(
        &driver.info().name,
        &acp_display_name(driver.info(), &turn.harness),
        &mut session,
        &transcript.agent_log(),
        &transcript.exit(),
        &Redactor::default(),
    );
    Played { sent, report }
}

fn parse(line: &str) -> Value {
    serde_json::from_str(line).expect("the driver writes JSON lines")
}

#[test]
fn acp_transcripts_match_the_recorded_client_and_their_golden_reports() {
    let Some(dir) = acp_dir() else {
        assert!(
            std::env::var_os("CI").is_none_or(|ci| ci.is_empty() || ci == "false"),
            "CI is set but ../shared/fixtures/acp is not beside this checkout"
        );
        eprintln!("skipped: ../shared/fixtures/acp is not beside this checkout");
        return;
    };
    let all = acp_transcripts(&dir);
    assert!(
        all.len() >= 49,
        "expected the ACP transcripts, found {}",
        all.len()
    );
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(cache.path());
    let registry = registry(&runtime);
    let bless = std::env::var_os("CINCH_BLESS").is_some();
    let mut problems = Vec::new();
    for transcript in &all {
        let label = format!("{}/{}", transcript.agent, transcript.name);
        let native = play_native(transcript);
        let wasm = play_wasm(&registry, transcript);
        if native != wasm {
            problems.push(format!(
                "{label}: native and wasm differ:\n  native {native:?}\n  wasm   {wasm:?}"
            ));
            continue;
        }
        let recorded: Vec<Value> = transcript.client_lines().map(client_line_kind).collect();
        let written: Vec<Value> = wasm
            .sent
            .iter()
            .map(|line| client_line_kind(&parse(line)))
            .collect();
        if recorded != written {
            problems.push(format!(
                "{label}: the driver wrote other lines than the recorded client:\n  recorded {recorded:#?}\n  written  {written:#?}"
            ));
            continue;
        }
        let golden = json!({
            "sent": wasm.sent.iter().map(|line| parse(line)).collect::<Vec<_>>(),
            "report": wasm.report,
        });
        let actual = serde_json::to_string_pretty(&golden).unwrap() + "\n";
        let path = transcript.golden();
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &actual).unwrap();
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => problems.push(format!(
                "{label}: does not match {}\n--- expected\n{expected}--- actual\n{actual}",
                path.display()
            )),
            Err(_) => problems.push(format!("{label}: no golden file at {}", path.display())),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
