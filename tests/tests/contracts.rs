//! Every contract version the host links keeps working: the built-in drivers
//! export the newest, a driver built against the frozen 0.1.0 still loads,
//! starts and reads a turn, with no conversation, and one built against the
//! frozen 0.2.0 still holds its conversation (with no decisions to take).

use cinch_driver_sdk::{BriefDelivery, Event, Turn};
use cinch_engine::drivers::{Registry, load_plugin};
use cinch_runtime::{CONTRACT_VERSIONS, Limits, Runtime};
use cinch_tests::test_drivers::{CONVERSANT_WASM, LEGACY_WASM};

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
fn the_host_links_0_1_0_0_2_0_and_0_3_0() {
    assert_eq!(CONTRACT_VERSIONS, ["0.1.0", "0.2.0", "0.3.0"]);
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
fn a_0_2_0_conversation_driver_still_loads_and_converses() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let conversant = load_plugin(&runtime, CONVERSANT_WASM.into())
        .driver
        .unwrap();
    assert_eq!(conversant.contract_version(), "0.2.0");
    assert_eq!(conversant.info().brief, BriefDelivery::Conversation);
    let turn = Turn {
        ask: true,
        ..turn()
    };
    let mut session = conversant.session_for(&turn).unwrap();
    assert_eq!(session.opening().unwrap(), ["hello Say hello"]);
    let fed = session
        .feed(&[
            r#"{"type":"hi"}"#.to_owned(),
            r#"{"type":"end"}"#.to_owned(),
        ])
        .unwrap();
    assert_eq!(fed.replies, ["ack 1", "ack 2"]);
    assert!(fed.done);
    assert!(
        session.decide("0", true, None).unwrap().is_empty(),
        "a 0.2.0 driver has no decisions to take"
    );
    assert_eq!(session.stop().unwrap(), ["bye"]);
    let outcome = session.finish(Some(0), "").unwrap();
    assert_eq!(
        outcome.final_message.as_deref(),
        Some("2 lines, exit Some(0)")
    );
}

#[test]
fn the_built_in_drivers_export_0_3_0() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let registry = Registry::load(&runtime, None).unwrap();
    for entry in registry.entries() {
        let driver = entry.driver.as_ref().unwrap();
        assert_eq!(driver.contract_version(), "0.3.0", "{}", entry.name);
    }
    // A stream driver under 0.3.0 has no conversation either.
    let claude = registry.get("claude").unwrap();
    let mut session = claude.session_for(&turn()).unwrap();
    assert!(session.opening().unwrap().is_empty());
    let line = r#"{"type":"system","subtype":"init","session_id":"s-1","model":"m"}"#;
    let fed = session.feed(&[line.to_owned()]).unwrap();
    assert!(fed.replies.is_empty() && !fed.done);
    assert!(session.stop().unwrap().is_empty());
}

#[test]
fn the_acp_component_names_its_harnesses_and_follows_the_turns_policy() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let registry = Registry::load(&runtime, None).unwrap();
    let acp = registry.get("acp").unwrap();
    let info = acp.info();
    assert_eq!(info.brief, BriefDelivery::Conversation);
    let names: Vec<&str> = info.harnesses.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "opencode",
            "qwen",
            "claude-acp",
            "codex-acp",
            "gemini-acp",
            "copilot",
            "kilo",
            "cline",
            "droid"
        ]
    );
    let qwen = &info.harnesses[1];
    assert_eq!(qwen.args, ["--acp", "--auth-type", "openai"]);
    assert_eq!(qwen.home_files[0].path, ".qwen/settings.json");
    let codex = &info.harnesses[3];
    assert!(
        codex
            .args
            .contains(&r#"sandbox_mode="danger-full-access""#.to_owned())
    );

    let mut turn = turn();
    turn.harness = "qwen".into();
    turn.permissions.deny_tools = vec!["RM".into()];
    let mut session = acp.session_for(&turn).unwrap();
    assert_eq!(session.opening().unwrap().len(), 2);
    let request = r#"{"jsonrpc":"2.0","id":"r-1","method":"session/request_permission","params":{"options":[{"optionId":"yes","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}],"toolCall":{"toolCallId":"t","kind":"execute","title":"rm -rf /tmp/x"}}}"#;
    let fed = session.feed(&[request.to_owned()]).unwrap();
    let reply: serde_json::Value = serde_json::from_str(&fed.replies[0]).unwrap();
    assert_eq!(reply["id"], "r-1");
    assert_eq!(reply["result"]["outcome"]["optionId"], "no");
    assert!(
        fed.events
            .contains(&Event::Permission(cinch_driver_sdk::PermissionAnswer {
                tool: "rm -rf /tmp/x".into(),
                allowed: false,
            }))
    );
}
