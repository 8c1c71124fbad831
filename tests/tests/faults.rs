//! Deliberately broken drivers: each failure is a clear error within a
//! bounded time, and the host goes on serving other drivers.

use std::time::{Duration, Instant};

use cinch_engine::drivers::{PluginError, Registry, Source, load_plugin};
use cinch_runtime::{FailureCause, Limits, LoadError, Runtime};
use cinch_tests::test_drivers::{FAULTY_WASM, FUTURE_WASM};

const LIMITS: Limits = Limits {
    call_timeout: Duration::from_millis(500),
    memory_bytes: 64 << 20,
    stderr_bytes: 4 << 10,
};

fn runtime(cache: &tempfile::TempDir) -> Runtime {
    Runtime::new(Some(cache.path().to_path_buf()), LIMITS).unwrap()
}

/// Feeds `line` to a fresh faulty instance; returns the failure and how long it took.
fn fail_with(runtime: &Runtime, line: &str) -> (cinch_runtime::DriverFailure, Duration) {
    let faulty = load_plugin(runtime, FAULTY_WASM.into()).driver.unwrap();
    let mut session = faulty.session().unwrap();
    let started = Instant::now();
    let failure = session
        .feed(&[line.to_owned()])
        .expect_err("the faulty driver should fail");
    let elapsed = started.elapsed();
    // The instance is discarded after a trap, never called again.
    let again = session
        .finish(Some(0), "")
        .expect_err("a failed instance is not reused");
    assert_eq!(again.cause, FailureCause::AlreadyFailed);
    (failure, elapsed)
}

/// The built-in drivers still work after another driver failed.
fn assert_others_still_work(runtime: &Runtime) {
    let registry = Registry::load(runtime, None).unwrap();
    let claude = registry.get("claude").unwrap();
    let mut session = claude.session().unwrap();
    let line = r#"{"type":"system","subtype":"init","session_id":"s-1","model":"m"}"#;
    session.feed(&[line.to_owned()]).unwrap();
    assert_eq!(
        session.finish(Some(0), "").unwrap().session_id.as_deref(),
        Some("s-1")
    );
    // And so does a fresh instance of the driver that failed.
    let faulty = load_plugin(runtime, FAULTY_WASM.into()).driver.unwrap();
    let mut session = faulty.session().unwrap();
    session.feed(&[r#"{"type":"fine"}"#.to_owned()]).unwrap();
    assert_eq!(
        session
            .finish(Some(0), "")
            .unwrap()
            .final_message
            .as_deref(),
        Some("fine")
    );
}

#[test]
fn a_panic_is_an_error_with_its_message() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let (failure, elapsed) = fail_with(&runtime, r#"{"type":"panic"}"#);
    assert_eq!(failure.driver, "faulty");
    assert_eq!(failure.call, "feed");
    assert_eq!(
        failure.cause,
        FailureCause::Panic(Some("the faulty driver was told to panic".into()))
    );
    assert!(
        failure
            .to_string()
            .contains("driver `faulty` failed in feed: it panicked: the faulty driver")
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_others_still_work(&runtime);
}

#[test]
fn an_endless_loop_is_stopped_at_the_deadline() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let (failure, elapsed) = fail_with(&runtime, r#"{"type":"loop"}"#);
    assert_eq!(failure.cause, FailureCause::Timeout(LIMITS.call_timeout));
    assert!(
        failure.to_string().contains("ran past its 500 ms limit"),
        "{failure}"
    );
    assert!(elapsed >= LIMITS.call_timeout, "stopped early: {elapsed:?}");
    assert!(elapsed < Duration::from_secs(10), "took {elapsed:?}");
    assert_others_still_work(&runtime);
}

#[test]
fn an_allocation_bomb_hits_the_memory_cap() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let (failure, elapsed) = fail_with(&runtime, r#"{"type":"alloc"}"#);
    assert_eq!(
        failure.cause,
        FailureCause::OutOfMemory(LIMITS.memory_bytes)
    );
    assert!(
        failure
            .to_string()
            .contains("ran out of its 64 MiB of memory"),
        "{failure}"
    );
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
    assert_others_still_work(&runtime);
}

#[test]
fn a_component_for_another_contract_version_is_refused_by_name() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let entry = load_plugin(&runtime, FUTURE_WASM.into());
    match entry.driver {
        Err(PluginError::Load(LoadError::UnsupportedContract {
            found, supported, ..
        })) => {
            assert_eq!(found, "9.0.0");
            assert_eq!(supported, "0.1.0, 0.2.0, 0.3.0");
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(_) => panic!("a 9.0.0 component loaded"),
    }
    assert_others_still_work(&runtime);
}

#[test]
fn files_that_are_not_components_are_refused() {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(&cache);
    let junk = cache.path().join("junk.wasm");
    std::fs::write(&junk, b"this is not wasm at all").unwrap();
    let core_module = cache.path().join("core.wasm");
    std::fs::write(&core_module, b"\0asm\x01\0\0\0").unwrap();
    let missing = cache.path().join("missing.wasm");
    for path in [junk, core_module, missing] {
        let entry = load_plugin(&runtime, path.clone());
        let error = entry.driver.err().expect("should not load");
        assert!(
            matches!(error, PluginError::Load(LoadError::NotAComponent { .. })),
            "{error}"
        );
        let text = error.to_string();
        assert!(
            text.contains(&path.display().to_string())
                && text.contains("not a WebAssembly component"),
            "{text}"
        );
    }
    assert_others_still_work(&runtime);
}

#[test]
fn a_plugin_with_a_builtin_name_replaces_the_builtin() {
    let home = tempfile::tempdir().unwrap();
    let runtime = runtime(&home);
    let plugins = home.path().join("drivers");
    std::fs::create_dir_all(&plugins).unwrap();
    // A plugin of a new name sits beside the built-ins...
    std::fs::copy(FAULTY_WASM, plugins.join("faulty.wasm")).unwrap();
    // ...and one that calls itself `codex` takes the built-in's place.
    let codex = cinch_engine::drivers::BUILTIN
        .iter()
        .find(|b| b.name == "codex")
        .unwrap();
    let replacement = plugins.join("my-codex-build.wasm");
    std::fs::write(&replacement, codex.wasm).unwrap();

    let registry = Registry::load(&runtime, Some(&plugins)).unwrap();
    // Harness names: the drivers' and the acp driver's profiles.
    assert_eq!(
        registry.names(),
        [
            "claude",
            "claude-acp",
            "cline",
            "codex",
            "codex-acp",
            "copilot",
            "cursor",
            "droid",
            "faulty",
            "gemini",
            "gemini-acp",
            "kilo",
            "opencode",
            "qwen"
        ]
    );
    let source_of = |name: &str| {
        registry
            .entries()
            .iter()
            .find(|e| e.name == name)
            .unwrap()
            .source
            .clone()
    };
    assert_eq!(source_of("codex"), Source::Plugin(replacement));
    assert_eq!(
        source_of("faulty"),
        Source::Plugin(plugins.join("faulty.wasm"))
    );
    assert_eq!(source_of("claude"), Source::Builtin);
}
