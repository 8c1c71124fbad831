//! `cinch driver new` scaffolds a crate that passes its own test, builds as a
//! component, installs with `cinch driver add` and runs under `driver test`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(command: &mut Command) -> Output {
    let output = command.output().expect("running a command");
    assert!(
        output.status.success(),
        "{command:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn cinch(home: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_cinch"));
    command.env("CINCH_HOME", home);
    command
}

fn cargo(dir: &Path, target: &Path) -> Command {
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    command
}

/// Shared across runs so the scaffold's dependencies compile once.
fn scaffold_target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("scaffold")
}

#[test]
fn a_new_driver_builds_tests_installs_and_runs() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let crate_dir = work.path().join("my-cli");
    let target = scaffold_target_dir();

    let created = run(cinch(&home)
        .args(["driver", "new", "my-cli", "--dir"])
        .arg(&crate_dir));
    assert!(String::from_utf8_lossy(&created.stdout).contains("driver `my-cli`"));

    run(cargo(&crate_dir, &target).args(["test", "--quiet"]));
    run(cargo(&crate_dir, &target).args([
        "build",
        "--quiet",
        "--release",
        "--target",
        "wasm32-wasip2",
    ]));
    let wasm = target.join("wasm32-wasip2/release/cinch_driver_my_cli.wasm");

    let added = run(cinch(&home).arg("driver").arg("add").arg(&wasm));
    assert!(String::from_utf8_lossy(&added.stdout).contains("installed driver `my-cli`"));
    assert!(home.join("drivers/my-cli.wasm").is_file());

    let listed = run(cinch(&home).arg("drivers"));
    let listing = String::from_utf8_lossy(&listed.stdout).into_owned();
    let row = listing
        .lines()
        .find(|line| line.starts_with("my-cli "))
        .expect(&listing);
    assert!(
        row.contains("0.3.0") && row.contains("drivers/my-cli.wasm"),
        "{row}"
    );

    let tested = run(cinch(&home)
        .args(["driver", "test", "my-cli", "--json"])
        .arg(crate_dir.join("sample.jsonl")));
    let report: serde_json::Value = serde_json::from_slice(&tested.stdout).unwrap();
    assert_eq!(report["outcome"]["final_message"], "All done.");
    assert_eq!(
        report["progress"],
        serde_json::json!(["my-cli started (example-1)", "shell: ls", "All done."])
    );
}

#[test]
fn new_refuses_bad_names_and_occupied_folders() {
    let work = tempfile::tempdir().unwrap();
    let output = cinch(work.path())
        .args(["driver", "new", "Bad Name"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a driver name"));

    let occupied = work.path().join("occupied");
    std::fs::create_dir_all(&occupied).unwrap();
    std::fs::write(occupied.join("keep.txt"), "mine").unwrap();
    let output = cinch(work.path())
        .args(["driver", "new", "ok", "--dir"])
        .arg(&occupied)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("already exists and is not empty"));
    assert_eq!(
        std::fs::read_to_string(occupied.join("keep.txt")).unwrap(),
        "mine"
    );
}
