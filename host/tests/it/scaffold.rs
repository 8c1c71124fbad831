//! `cinch driver new` scaffolds a project that passes its own test, builds as
//! a component with no cinch checkout around, installs with `cinch driver
//! add` and runs under `driver test`: a Rust crate on the vendored SDK, and a
//! TypeScript module made a component by componentize-js, into which the
//! Claude Code parser's TypeScript port (tests/drivers/claude-ts) is then
//! dropped to run the corpus and a turn.

use crate::support;
use crate::support::gate::{self, Load};

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Instant;

use cinch_fake_cli::Script;
use sha2::Digest as _;
use support::World;

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
    let _compiler = gate::hold(Load::Agent);
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let crate_dir = work.path().join("my-cli");
    let target = scaffold_target_dir();

    let created = run(cinch(&home)
        .args(["driver", "new", "my-cli", "--dir"])
        .arg(&crate_dir));
    let created = String::from_utf8_lossy(&created.stdout).into_owned();
    assert!(created.contains("driver `my-cli`"), "{created}");
    let contract = created
        .split("contract cinch:driver@")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect(&created)
        .to_owned();

    // Self-contained: the SDK and the contract are inside the crate, by a
    // relative path; nothing names this checkout.
    let manifest = std::fs::read_to_string(crate_dir.join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains(r#"cinch-driver-sdk = { path = "vendor/cinch-driver-sdk" }"#),
        "{manifest}"
    );
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    for file in walk(&crate_dir) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            !text.contains(&*checkout.to_string_lossy()),
            "{} names the checkout",
            file.display()
        );
    }
    assert!(
        crate_dir
            .join(format!("vendor/wit/{contract}/driver.wit"))
            .is_file()
    );

    // Offline: only the registry cache this machine already has.
    run(cargo(&crate_dir, &target).args(["test", "--quiet", "--offline"]));
    run(cargo(&crate_dir, &target).args([
        "build",
        "--quiet",
        "--offline",
        "--release",
        "--target",
        "wasm32-wasip2",
    ]));
    let wasm = target.join("wasm32-wasip2/release/cinch_driver_my_cli.wasm");

    let added = run(cinch(&home).arg("driver").arg("add").arg(&wasm));
    assert!(String::from_utf8_lossy(&added.stdout).contains("installed driver `my-cli`"));
    let lock = std::fs::read_to_string(home.join("drivers.lock")).unwrap();
    assert!(lock.contains("\"my-cli\""), "{lock}");

    let listed = run(cinch(&home).arg("drivers"));
    let listing = String::from_utf8_lossy(&listed.stdout).into_owned();
    let row = listing
        .lines()
        .find(|line| line.starts_with("my-cli "))
        .expect(&listing);
    assert!(
        row.contains(&contract) && row.contains("cinch_driver_my_cli.wasm (sha256:"),
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

/// Every file under `dir`.
fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

fn npm(dir: &Path) -> Command {
    let mut command = Command::new("npm");
    command
        .current_dir(dir)
        .args(["--no-audit", "--no-fund", "--loglevel=error"]);
    command
}

/// The `node_modules` of a TypeScript scaffold's devDependencies, installed
/// from the npm registry once per set of versions into a cache outside the
/// clone (as tests/browser's), and linked into `project`.
fn link_node_modules(project: &Path) {
    assert!(
        Command::new("npm")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "this test needs node and npm (Debian: apt-get install nodejs npm; .ci/run installs them)"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(project.join("package.json")).unwrap())
            .unwrap();
    let dependencies = manifest["devDependencies"].to_string();
    let key = format!("{:x}", sha2::Sha256::digest(dependencies.as_bytes()));
    let cache = std::env::var_os("CINCH_NPM_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/cinch/driver-ts")
        })
        .join(&key[..16]);
    if !cache.join("node_modules/.bin/componentize-js").exists() {
        let staging = cache.with_extension(format!("partial-{}", std::process::id()));
        std::fs::create_dir_all(&staging).unwrap();
        let package =
            serde_json::json!({ "private": true, "devDependencies": manifest["devDependencies"] });
        std::fs::write(staging.join("package.json"), package.to_string()).unwrap();
        let started = Instant::now();
        run(npm(&staging).arg("install"));
        eprintln!("npm install: {:.0} s", started.elapsed().as_secs_f64());
        // Another run may have finished first: either copy will do.
        if std::fs::rename(&staging, &cache).is_err() {
            std::fs::remove_dir_all(&staging).ok();
        }
    }
    std::os::unix::fs::symlink(cache.join("node_modules"), project.join("node_modules")).unwrap();
}

#[test]
fn a_typescript_driver_builds_tests_and_runs_a_turn() {
    let _compiler = gate::hold(Load::Agent);
    let world = World::new();
    let project = world.path("claude-ts");
    let cinch_bin = env!("CARGO_BIN_EXE_cinch");
    let created = run(world
        .cinch()
        .args(["driver", "new", "--lang", "ts", "claude-ts", "--dir"])
        .arg(&project));
    let created = String::from_utf8_lossy(&created.stdout).into_owned();
    assert!(created.contains("npm install && npm test"), "{created}");
    let contract = created
        .split("contract cinch:driver@")
        .nth(1)
        .and_then(|rest| rest.split(')').next())
        .expect(&created)
        .to_owned();
    assert!(project.join(format!("wit/{contract}/driver.wit")).is_file());
    link_node_modules(&project);

    // The scaffold's own test: its sample through `cinch driver test`.
    let started = Instant::now();
    let tested = run(npm(&project)
        .arg("test")
        .env("CINCH", cinch_bin)
        .env("CINCH_HOME", world.path("home")));
    assert!(
        String::from_utf8_lossy(&tested.stdout).contains("ok: sample.jsonl gave 3 events"),
        "{tested:?}"
    );
    eprintln!(
        "npm test of the scaffold (tsc, componentize-js, cinch driver test compiling it): {:.0} s",
        started.elapsed().as_secs_f64()
    );
    // Without a cinch to run, npm test says which variable to set.
    let missing = npm(&project)
        .args(["run", "test"])
        .env("CINCH", "/nonexistent/cinch")
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("set CINCH to cinch's path"),
        "{missing:?}"
    );

    // Claude Code's format, ported: the recorded corpus of Claude Code and
    // of Qwen Code (same format) passes as it does with the Rust driver.
    let port = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/drivers/claude-ts/driver.ts");
    std::fs::copy(&port, project.join("src/driver.ts")).unwrap();
    run(npm(&project).args(["run", "build"]));
    let wasm = project.join("dist/claude-ts.wasm");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus");
    let started = Instant::now();
    let output = run(world
        .cinch()
        .args(["driver", "test"])
        .arg(&wasm)
        .arg("--corpus")
        .arg(&corpus)
        .args(["--cli", "claude", "--cli", "qwen"]));
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        report.contains("claude 2.1.197: 6 passed, 0 failed"),
        "{report}"
    );
    assert!(
        report.contains("qwen 0.15.10: 1 passed, 0 failed"),
        "{report}"
    );
    eprintln!(
        "the corpus through claude-ts, compiling it: {:.0} s",
        started.elapsed().as_secs_f64()
    );

    // Installed, it runs a turn like a Rust driver: the fake CLI, installed
    // as `claude` (the port's program), replays a recorded tool-use run.
    let added = run(world.cinch().arg("driver").arg("add").arg(&wasm));
    assert!(
        String::from_utf8_lossy(&added.stdout).contains("installed driver `claude-ts`"),
        "{added:?}"
    );
    world.script(Script {
        replay: Some(support::recorded("claude/s2.jsonl")),
        ..Script::default()
    });
    let started = Instant::now();
    let output = world
        .cinch()
        .args(["run", "--harness", "claude-ts", "--repo"])
        .arg(world.path("repo"))
        .args(["--json", "Run the command"])
        .output()
        .unwrap();
    let result: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no JSON result: {output:?}"));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["harness"], "claude-ts", "{result}");
    let text = result["result_text"].as_str().unwrap();
    assert!(
        text.contains("Claude Code (TypeScript)") && text.contains("out.txt"),
        "{result}"
    );
    eprintln!(
        "a turn on the installed claude-ts (cached): {:.1} s",
        started.elapsed().as_secs_f64()
    );
}
