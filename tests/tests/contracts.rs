//! Every contract version the host links keeps working: the built-in drivers
//! export the newest, and a driver built against the frozen 0.1.0 still
//! loads, starts and reads a turn, with no conversation.

use cinch::drivers::{Registry, load_plugin};
use cinch::runtime::{CONTRACT_VERSIONS, Limits, Runtime};
use cinch_driver_sdk::{BriefDelivery, Event, Turn};
use cinch_tests::test_drivers::LEGACY_WASM;

fn runtime(cache: &tempfile::TempDir) -> Runtime {
    Runtime::new(Some(cache.path().to_path_buf()), Limits::default()).unwrap()
}

fn turn() -> Turn {
    Turn {
        prompt_file: "/tmp/prompt".into(),
        workdir: "/work/repo".into(),
        brief: "Say hello".into(),
        harness: "legacy".into(),
        ..Turn::default()
    }
}

#[test]
fn the_host_links_0_1_0_and_0_2_0() {
    assert_eq!(CONTRACT_VERSIONS, ["0.1.0", "0.2.0"]);
}

#[test]
fn a_0_1_0_driver_loads_starts_and_reads_a_turn() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let legacy = load_plugin(&runtime, LEGACY_WASM.into()).driver.unwrap();
    assert_eq!(legacy.contract_version(), "0.1.0");
    let info = legacy.info();
    assert_eq!(info.name, "legacy");
    assert_eq!(info.brief, BriefDelivery::Stdin);
    assert!(info.harnesses.is_empty());
    assert_eq!(
        legacy.parse_version("legacy 1.2.3").unwrap().as_deref(),
        Some("1.2.3")
    );
    let command = legacy.command(&turn()).unwrap();
    assert_eq!(command.args, ["--dir", "/work/repo"]);

    let mut session = legacy.session_for(&turn()).unwrap();
    assert!(session.opening().unwrap().is_empty());
    let fed = session
        .feed(&[
            r#"{"type":"hello"}"#.to_owned(),
            r#"{"type":"bye"}"#.to_owned(),
        ])
        .unwrap();
    assert_eq!(
        fed.events,
        [Event::Other("hello".into()), Event::Other("bye".into())]
    );
    assert!(fed.replies.is_empty());
    assert!(!fed.done);
    assert!(session.stop().unwrap().is_empty());
    let outcome = session.finish(Some(0), "").unwrap();
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("2 lines, exit Some(0)")
    );
    assert!(!outcome.is_error);
}

#[test]
fn the_built_in_drivers_export_0_2_0() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let registry = Registry::load(&runtime, None).unwrap();
    for entry in registry.entries() {
        let driver = entry.driver.as_ref().unwrap();
        assert_eq!(driver.contract_version(), "0.2.0", "{}", entry.name);
    }
    // A stream driver under 0.2.0 has no conversation either.
    let claude = registry.get("claude").unwrap();
    let mut session = claude.session_for(&turn()).unwrap();
    assert!(session.opening().unwrap().is_empty());
    let line = r#"{"type":"system","subtype":"init","session_id":"s-1","model":"m"}"#;
    let fed = session.feed(&[line.to_owned()]).unwrap();
    assert!(fed.replies.is_empty() && !fed.done);
    assert!(session.stop().unwrap().is_empty());
}
