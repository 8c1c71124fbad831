//! Every recorded and public log through its driver, natively and as a
//! sandboxed component: both must agree, and match the golden report.
//! `CINCH_BLESS=1` rewrites the golden files (read them before committing).

use cinch_tests::{
    Fixture, driver_for, fixtures, public_dir, recorded_dir, registry, replay_native, replay_wasm,
    runtime,
};

fn check(all: &[Fixture]) -> Vec<String> {
    let cache = tempfile::tempdir().unwrap();
    let runtime = runtime(cache.path());
    let registry = registry(&runtime);
    let bless = std::env::var_os("CINCH_BLESS").is_some();
    let mut problems = Vec::new();
    let mut checked = 0;
    for fixture in all {
        let Some(driver) = driver_for(&fixture.cli) else {
            continue;
        };
        let log = std::fs::read(&fixture.log).unwrap();
        let native = replay_native(driver, &log, &fixture.exit);
        let wasm = replay_wasm(&registry, driver, &log, &fixture.exit);
        let label = format!("{}/{}/{}", fixture.source, fixture.cli, fixture.name);
        if native != wasm {
            problems.push(format!(
                "{label}: native and wasm differ:\n  native {native:?}\n  wasm   {wasm:?}"
            ));
            continue;
        }
        let actual = serde_json::to_string_pretty(&wasm).unwrap() + "\n";
        let golden = fixture.golden();
        if bless {
            std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
            std::fs::write(&golden, &actual).unwrap();
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == actual => checked += 1,
            Ok(expected) => problems.push(format!(
                "{label}: does not match {}\n--- expected\n{expected}--- actual\n{actual}",
                golden.display()
            )),
            Err(_) => problems.push(format!("{label}: no golden file at {}", golden.display())),
        }
    }
    assert!(
        checked > 0 || !problems.is_empty(),
        "no fixture was checked"
    );
    problems
}

#[test]
fn recorded_logs_match_their_golden_reports() {
    let all = fixtures("recorded", &recorded_dir());
    assert!(
        all.len() >= 20,
        "expected the recorded fixtures, found {}",
        all.len()
    );
    let problems = check(&all);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

#[test]
fn public_logs_match_their_golden_reports() {
    let Some(dir) = public_dir() else {
        // CI always has ../shared beside the clone: a missing folder there is
        // a broken setup, not a reason to pass without checking anything.
        assert!(
            std::env::var_os("CI").is_none_or(|ci| ci.is_empty() || ci == "false"),
            "CI is set but ../shared/fixtures/public is not beside this checkout"
        );
        eprintln!("skipped: ../shared/fixtures/public is not beside this checkout");
        return;
    };
    let all = fixtures("public", &dir);
    assert!(
        !all.is_empty(),
        "no public fixtures under {}",
        dir.display()
    );
    let problems = check(&all);
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}
