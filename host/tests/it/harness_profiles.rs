//! A harness declared in config.toml alone (`[harness.NAME] driver = ...`):
//! `cinch drivers` lists it, `cinch check` checks its program and credential,
//! `GET /v1/models` reports it, and a turn runs its program with its
//! arguments and environment through its driver.

use crate::support;

use cinch_fake_cli::{Record, Script};
use serde_json::Value;
use support::{API_KEY, World};

const PROFILE_KEY: &str = "my-claude-key-0123456789";

/// The world with the fake CLI installed as `my-claude` too, and a harness
/// of that name on the claude driver.
fn declared(world: &World) {
    cinch_fake_cli::install(&world.path("bin"), "my-claude");
    let config = format!(
        "{}\n[harness.my-claude]\ndriver = \"claude\"\nprogram = \"my-claude\"\n\
         args = [\"--from-profile\"]\ndisplay_name = \"My Claude\"\n\
         secret_env = [\"MY_CLAUDE_KEY\"]\nenv = {{ MY_CLAUDE_MODE = \"quiet\" }}\n",
        world.operator_config()
    );
    std::fs::write(world.path("home/config.toml"), config).unwrap();
}

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn cinch_drivers_and_check_show_a_declared_harness() {
    let world = World::new();
    declared(&world);
    let output = world.cinch().arg("drivers").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    let row = listing
        .lines()
        .find(|line| line.starts_with("my-claude "))
        .unwrap_or_else(|| panic!("no my-claude row in:\n{listing}"));
    assert!(row.contains("My Claude"), "{row}");
    assert!(row.contains("config.toml (claude driver)"), "{row}");
    assert!(row.contains("bin/my-claude 1.2.3"), "{row}");

    // No credential: the check says which variable to set.
    let output = world.cinch().args(["check", "my-claude"]).output().unwrap();
    assert!(!output.status.success());
    assert!(stdout(&output).contains("set MY_CLAUDE_KEY"), "{output:?}");

    let output = world
        .cinch()
        .env("MY_CLAUDE_KEY", PROFILE_KEY)
        .args(["check", "my-claude"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("my-claude: ") && text.contains("credential: secret (MY_CLAUDE_KEY)"),
        "{text}"
    );
    assert!(
        !text.contains(PROFILE_KEY),
        "the key is never shown: {text}"
    );
}

#[test]
fn the_acp_drivers_harnesses_are_listed_and_checked_by_name() {
    let world = World::new();
    let output = world.cinch().arg("drivers").output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let listing = stdout(&output);
    for (name, program) in [
        ("opencode", "opencode"),
        ("qwen", "qwen"),
        ("claude-acp", "claude-agent-acp"),
        ("codex-acp", "codex-acp"),
        ("gemini-acp", "gemini"),
        ("copilot", "copilot"),
        ("kilo", "kilo"),
        ("cline", "cline"),
        ("droid", "droid"),
    ] {
        let row = listing
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} row in:\n{listing}"));
        assert!(row.contains("acp driver"), "{row}");
        assert!(row.contains(&format!("{program} not on PATH")), "{row}");
    }
    let acp = listing
        .lines()
        .find(|line| line.starts_with("acp "))
        .unwrap();
    assert!(acp.contains("no program of its own"), "{acp}");

    // `cinch check` of every harness names the profiles, not the bare driver.
    let output = world.cinch().arg("check").output().unwrap();
    let text = stdout(&output);
    assert!(text.contains("qwen: not installed"), "{text}");
    assert!(!text.lines().any(|line| line.starts_with("acp:")), "{text}");
}

#[test]
fn a_turn_of_a_declared_harness_runs_its_program_with_its_arguments_and_env() {
    let world = World::new();
    declared(&world);
    let record = world.path("out/record.json");
    world.script(Script {
        replay: Some(support::recorded("claude/s1.jsonl")),
        record: Some(record.clone()),
        ..Script::default()
    });
    let output = world
        .cinch()
        .env("MY_CLAUDE_KEY", PROFILE_KEY)
        .args(["run", "--harness", "my-claude", "--repo"])
        .arg(world.path("repo"))
        .args(["--json", "Reply with the word done"])
        .output()
        .unwrap();
    let result: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|_| panic!("no JSON result: {output:?}"));
    assert_eq!(result["status"], "completed", "{result}");
    assert_eq!(result["harness"], "my-claude");
    assert!(
        result["result_text"]
            .as_str()
            .unwrap()
            .contains(" · My Claude · "),
        "{result}"
    );
    let record = Record::read_from(&record).unwrap();
    assert!(record.argv[0].ends_with("/my-claude"), "{:?}", record.argv);
    assert_eq!(record.argv[1], "--from-profile", "{:?}", record.argv);
    assert_eq!(record.env["MY_CLAUDE_MODE"], "quiet");
    assert_eq!(record.env["MY_CLAUDE_KEY"], PROFILE_KEY);
    assert_eq!(record.env["ANTHROPIC_API_KEY"], API_KEY);
}

#[test]
fn the_api_lists_a_declared_harness_with_the_drivers() {
    let world = World::new();
    declared(&world);
    let server = world.serve();
    let models = server.get("/v1/models", &world.admin_token()).data();
    let names: Vec<&str> = models
        .as_array()
        .unwrap()
        .iter()
        .map(|entry| entry["harness"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"my-claude"), "{models}");
    assert!(names.contains(&"claude"), "{models}");
    assert!(names.contains(&"qwen"), "{models}");
    assert!(
        !names.contains(&"acp"),
        "acp runs only as its harnesses: {models}"
    );
    let entry = models
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["harness"] == "my-claude")
        .unwrap();
    assert_eq!(entry["display_name"], "My Claude");
}

#[test]
fn a_declared_harness_on_a_driver_that_is_not_there_is_a_clear_error() {
    let world = World::new();
    let config = format!(
        "{}\n[harness.mine]\ndriver = \"nope\"\nprogram = \"mine\"\n",
        world.operator_config()
    );
    std::fs::write(world.path("home/config.toml"), config).unwrap();
    let output = world.cinch().arg("drivers").output().unwrap();
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("[harness.mine] in config.toml names driver `nope`, which is not installed"),
        "{error}"
    );
}

/// A package registry on loopback that npm installs from: one package,
/// `fake-claude-cli`, whose versions are tarballs `npm pack` made of a
/// claude that answers `--version` with its version and otherwise runs the
/// fake CLI. Versions listed in `missing` are in the package document but
/// their tarballs are not found. Counts each path's requests.
struct Registry {
    url: String,
    requests: std::sync::Arc<std::sync::Mutex<std::collections::BTreeMap<String, u32>>>,
}

const PACKAGE: &str = "fake-claude-cli";

impl Registry {
    fn start(world: &World, versions: &[&str], missing: &[&str]) -> Self {
        use std::io::{BufRead as _, Write as _};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let mut tarballs = std::collections::BTreeMap::new();
        for version in versions {
            tarballs.insert(
                format!("/{PACKAGE}/-/{PACKAGE}-{version}.tgz"),
                pack(world, version),
            );
        }
        let listed: Vec<&str> = versions.iter().chain(missing).copied().collect();
        let document = serde_json::json!({
            "name": PACKAGE,
            "dist-tags": {"latest": versions.last().unwrap()},
            "versions": listed.iter().map(|version| (version.to_string(), serde_json::json!({
                "name": PACKAGE,
                "version": version,
                "bin": {"claude": "bin/claude"},
                "dist": {"tarball": format!("{url}{PACKAGE}/-/{PACKAGE}-{version}.tgz")},
            }))).collect::<serde_json::Map<_, _>>(),
        })
        .to_string();
        let requests =
            std::sync::Arc::new(std::sync::Mutex::new(std::collections::BTreeMap::new()));
        let counted = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                if reader.read_line(&mut head).is_err() {
                    continue;
                }
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
                        break;
                    }
                }
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                *counted.lock().unwrap().entry(path.clone()).or_insert(0) += 1;
                let (status, body): (&str, Vec<u8>) = if path == format!("/{PACKAGE}") {
                    ("200 OK", document.clone().into_bytes())
                } else if let Some(tarball) = tarballs.get(&path) {
                    ("200 OK", tarball.clone())
                } else {
                    ("404 Not Found", b"{\"error\":\"not found\"}".to_vec())
                };
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                    body.len()
                );
                let _ = stream.write_all(&body);
            }
        });
        Self { url, requests }
    }

    fn requests(&self, path: &str) -> u32 {
        self.requests
            .lock()
            .unwrap()
            .get(path)
            .copied()
            .unwrap_or(0)
    }
}

/// `npm pack` of the fake claude at `version`: the tarball's bytes.
fn pack(world: &World, version: &str) -> Vec<u8> {
    let dir = world.path(&format!("pack/{version}"));
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    std::fs::write(
        dir.join("package.json"),
        serde_json::json!({"name": PACKAGE, "version": version, "bin": {"claude": "bin/claude"}})
            .to_string(),
    )
    .unwrap();
    let fake = std::fs::canonicalize(world.path("bin/claude")).unwrap();
    std::fs::write(
        dir.join("bin/claude"),
        format!(
            "#!/bin/sh\nfor arg in \"$@\"; do case \"$arg\" in --version|-v) echo \"{version} (Claude Code)\"; exit 0;; esac; done\nexec {} \"$@\"\n",
            fake.display()
        ),
    )
    .unwrap();
    let output = std::process::Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(world.path("pack"))
        .current_dir(&dir)
        .env("npm_config_cache", world.path("npm-cache"))
        .output()
        .unwrap();
    assert!(output.status.success(), "npm pack: {output:?}");
    std::fs::read(world.path(&format!("pack/{PACKAGE}-{version}.tgz"))).unwrap()
}

/// `cinch` of `world` with npm pointed at `registry` (no retries: a
/// failure shows at once) and a cache of the world's own.
fn cinch_npm(world: &World, registry: &str) -> std::process::Command {
    let mut command = world.cinch();
    command
        .env("NPM_CONFIG_REGISTRY", registry)
        .env("npm_config_cache", world.path("npm-cache"))
        .env("npm_config_fetch_retries", "0");
    command
}

/// config.toml naming the fake package for claude, its tested range,
/// `extra` lines, and the fake CLI's folder readable in the sandbox (the
/// installed claude runs it from there).
fn configure_tools(world: &World, extra: &str) {
    let fake_dir = std::fs::canonicalize(world.path("bin/claude"))
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let config = world.operator_config().replacen(
        "read_only = [",
        &format!(
            "read_only = [{:?}, {:?}, ",
            fake_dir.display().to_string(),
            world.path("bin").display().to_string()
        ),
        1,
    );
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{config}\n[harness.claude]\npackage = \"npm:{PACKAGE}\"\ntested = \">=1.0.0, <1.1.0\"\n{extra}"
        ),
    )
    .unwrap();
}

/// The entries of the home's `tools/claude`, the lock aside.
fn installed_folders(world: &World) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(world.path("home/tools/claude"))
        .map(|entries| {
            entries
                .map(|entry| entry.unwrap().file_name().into_string().unwrap())
                .filter(|name| name != ".lock")
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn a_pinned_version_is_installed_on_first_use_and_runs_instead_of_paths() {
    let world = World::new();
    let registry = Registry::start(&world, &["1.0.0", "1.5.0"], &[]);
    configure_tools(&world, "version = \"1.0.0\"\n");
    world.script(Script {
        replay: Some(support::recorded("claude/s1.jsonl")),
        ..Script::default()
    });

    // Before: nothing installed; PATH has the fake claude at 1.2.3.
    let listed = cinch_npm(&world, &registry.url)
        .args(["harness", "list", "--json"])
        .output()
        .unwrap();
    assert!(listed.status.success(), "{listed:?}");
    let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let claude = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["harness"] == "claude")
        .unwrap()
        .clone();
    assert_eq!(claude["installed"], serde_json::json!([]), "{claude:#}");
    assert_eq!(claude["pinned"], "1.0.0");
    assert_eq!(claude["package"], format!("npm:{PACKAGE}"));
    assert_eq!(claude["on_path"]["version"], "1.2.3", "{claude:#}");
    assert_eq!(claude["on_path"]["drift"], "untested", "{claude:#}");
    assert!(installed_folders(&world).is_empty());

    // A turn: the pinned version is installed, then runs (its version says so).
    let run = |world: &World| -> Value {
        let output = cinch_npm(world, &registry.url)
            .args(["run", "--harness", "claude", "--repo"])
            .arg(world.path("repo"))
            .args(["--json", "Reply with the word done"])
            .output()
            .unwrap();
        serde_json::from_slice(&output.stdout).unwrap_or_else(|_| panic!("no result: {output:?}"))
    };
    let result = run(&world);
    assert_eq!(result["status"], "completed", "{result:#}");
    assert_eq!(result["cli_version"], "1.0.0", "{result:#}");
    assert_eq!(result["cli_drift"], "tested", "{result:#}");
    assert_eq!(installed_folders(&world), ["1.0.0"]);
    assert_eq!(
        registry.requests(&format!("/{PACKAGE}/-/{PACKAGE}-1.0.0.tgz")),
        1
    );

    // Again: installed already, nothing fetched.
    let result = run(&world);
    assert_eq!(result["cli_version"], "1.0.0", "{result:#}");
    assert_eq!(
        registry.requests(&format!("/{PACKAGE}/-/{PACKAGE}-1.0.0.tgz")),
        1
    );
    let check = cinch_npm(&world, &registry.url)
        .args(["check", "claude"])
        .output()
        .unwrap();
    let text = stdout(&check);
    assert!(
        text.contains("pinned 1.0.0;") && text.contains("installed in cinch's home: 1.0.0"),
        "{text}"
    );

    // Unpinned: PATH's runs again, outside the tested range.
    configure_tools(&world, "");
    let result = run(&world);
    assert_eq!(result["cli_version"], "1.2.3", "{result:#}");
    assert_eq!(result["cli_drift"], "untested", "{result:#}");

    // Pinned to a version the registry lacks: the turn is refused, saying why.
    configure_tools(&world, "version = \"9.9.9\"\n");
    let refused = cinch_npm(&world, &registry.url)
        .args(["run", "--harness", "claude", "--repo"])
        .arg(world.path("repo"))
        .arg("Reply with the word done")
        .output()
        .unwrap();
    assert!(!refused.status.success(), "{refused:?}");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains("harness.cli_install_failed")
            && said.contains("claude is pinned to 9.9.9 in config.toml"),
        "{said}"
    );
    assert_eq!(installed_folders(&world), ["1.0.0"]);
}

#[test]
fn harness_install_is_atomic_locked_and_names_the_registry_that_failed() {
    let world = World::new();
    let registry = Registry::start(&world, &["1.0.0", "1.5.0"], &["2.0.0"]);
    configure_tools(&world, "");

    // Two installs of one version at once: one installs, the other finds it.
    let starts: Vec<std::process::Child> = (0..2)
        .map(|_| {
            cinch_npm(&world, &registry.url)
                .args(["harness", "install", "claude@1.0.0"])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let outputs: Vec<String> = starts
        .into_iter()
        .map(|child| {
            let output = child.wait_with_output().unwrap();
            assert!(output.status.success(), "{output:?}");
            stdout(&output)
        })
        .collect();
    let fresh = outputs
        .iter()
        .filter(|text| text.starts_with("claude 1.0.0 installed:"))
        .count();
    let found = outputs
        .iter()
        .filter(|text| text.starts_with("claude 1.0.0 already installed:"))
        .count();
    assert_eq!((fresh, found), (1, 1), "{outputs:?}");
    assert_eq!(
        registry.requests(&format!("/{PACKAGE}/-/{PACKAGE}-1.0.0.tgz")),
        1
    );
    assert_eq!(installed_folders(&world), ["1.0.0"]);

    // A version whose tarball is missing: the install fails, naming npm and
    // the version; what was installed stays, and nothing half-made is left.
    let failed = cinch_npm(&world, &registry.url)
        .args(["harness", "install", "claude@2.0.0"])
        .output()
        .unwrap();
    assert!(!failed.status.success(), "{failed:?}");
    let error = String::from_utf8_lossy(&failed.stderr);
    assert!(
        error.contains(&format!("installing claude (npm:{PACKAGE}) failed"))
            && error.contains("npm"),
        "{error}"
    );
    assert_eq!(installed_folders(&world), ["1.0.0"]);

    // No version: the registry's latest.
    let latest = cinch_npm(&world, &registry.url)
        .args(["harness", "install", "claude", "--json"])
        .output()
        .unwrap();
    assert!(latest.status.success(), "{latest:?}");
    let done: Value = serde_json::from_slice(&latest.stdout).unwrap();
    assert_eq!(done["version"], "1.5.0", "{done:#}");
    assert_eq!(done["installed"], true);
    assert_eq!(installed_folders(&world), ["1.0.0", "1.5.0"]);

    // The registry unreachable: said so, with where npm looked and what to do.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let nowhere = format!("http://{}/", closed.local_addr().unwrap());
    drop(closed);
    let offline = cinch_npm(&world, &nowhere)
        .args(["harness", "install", "claude@1.6.0"])
        .output()
        .unwrap();
    assert!(!offline.status.success(), "{offline:?}");
    let error = String::from_utf8_lossy(&offline.stderr);
    assert!(
        error.contains(&format!("npm could not be reached at {nowhere}"))
            && error.contains("NPM_CONFIG_REGISTRY"),
        "{error}"
    );
    assert_eq!(installed_folders(&world), ["1.0.0", "1.5.0"]);

    // A harness with no package known: said so, with what to write.
    let cursor = world
        .cinch()
        .args(["harness", "install", "cursor"])
        .output()
        .unwrap();
    assert!(!cursor.status.success());
    assert!(
        String::from_utf8_lossy(&cursor.stderr).contains("package = \"npm:PACKAGE\""),
        "{cursor:?}"
    );

    // The listing shows both.
    let listed = world.cinch().args(["harness", "list"]).output().unwrap();
    let text = stdout(&listed);
    assert!(
        text.contains("installed: 1.0.0, 1.5.0; pinned: no (PATH's runs)"),
        "{text}"
    );
}

#[test]
fn the_server_installs_a_pinned_version_on_its_first_turn_and_shows_the_pin() {
    let world = World::new();
    let registry = Registry::start(&world, &["1.0.0", "1.5.0"], &[]);
    configure_tools(&world, "version = \"1.0.0\"\n");
    world.script(Script {
        replay: Some(support::recorded("claude/s1.jsonl")),
        ..Script::default()
    });
    let mut serve = cinch_npm(&world, &registry.url);
    serve.args(["serve", "--home"]).arg(world.path("home"));
    let server = support::Server::start(serve, world.dir.path());
    let token = world.admin_token();
    let shown = server.get("/v1/server", &token).data();
    assert_eq!(
        shown["pinned_clis"],
        serde_json::json!({"claude": "1.0.0"}),
        "{shown:#}"
    );
    let drivers = server.get("/v1/drivers", &token).data();
    let claude = drivers
        .as_array()
        .unwrap()
        .iter()
        .find(|driver| driver["name"] == "claude")
        .unwrap();
    assert_eq!(
        claude["harnesses"][0]["pinned_version"], "1.0.0",
        "{claude:#}"
    );
    assert!(installed_folders(&world).is_empty());

    let api = support::Api::new(&server, &token);
    let environment = api.environment(serde_json::json!({
        "name": "shop",
        "repository": world.path("repo").display().to_string(),
    }));
    let (task, session) = api.task_on(&environment, "Reply with the word done");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let turn = loop {
        let page = api.messages(&task, &session, "").data();
        if let Some(turn) = support::last_assistant(&page)
            && turn["turn"]["status"] != "running"
        {
            break turn;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no ended turn: {page:#}\n{}",
            server.log()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let result = &turn["turn"]["result"];
    assert_eq!(turn["turn"]["status"], "completed", "{turn:#}");
    assert_eq!(result["cli_version"], "1.0.0", "{result:#}");
    assert_eq!(result["cli_drift"], "tested", "{result:#}");
    assert_eq!(installed_folders(&world), ["1.0.0"]);
}

#[test]
fn a_bad_pin_package_or_range_in_config_is_a_clear_error() {
    let world = World::new();
    for (line, said) in [
        (
            "version = \"../2\"",
            "[harness.claude] version: `../2` is not a version",
        ),
        (
            "package = \"cargo:x\"",
            "[harness.claude] package: `cargo:x` names no registry",
        ),
        (
            "tested = \"two\"",
            "[harness.claude] tested: `two` is not a version range",
        ),
    ] {
        std::fs::write(
            world.path("home/config.toml"),
            format!("{}\n[harness.claude]\n{line}\n", world.operator_config()),
        )
        .unwrap();
        let output = world.cinch().args(["harness", "list"]).output().unwrap();
        assert!(!output.status.success(), "{output:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains(said), "{line}: {error}");
    }
}

/// Writes a wheel of a one-module package `name` at `version` into `dir`,
/// whose console script prints the version.
fn wheel(dir: &std::path::Path, name: &str, version: &str) {
    let script = r#"
import base64, hashlib, sys, zipfile
name, version, out = sys.argv[1:4]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": f"def main():\n    print('{version}')\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    f"{info}/entry_points.txt": f"[console_scripts]\n{name} = {name}:main\n",
}
record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},{len(text.encode())}" for path, text in files.items()]
files[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
with zipfile.ZipFile(f"{out}/{name}-{version}-py3-none-any.whl", "w") as archive:
    for path, text in files.items():
        archive.writestr(path, text)
"#;
    let output = std::process::Command::new("python3")
        .args(["-c", script, name, version])
        .arg(dir)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
}

#[test]
fn a_pypi_harness_installs_with_pip_into_a_folder_that_runs_where_it_lands() {
    let world = World::new();
    let wheels = world.path("wheels");
    std::fs::create_dir_all(&wheels).unwrap();
    wheel(&wheels, "pyagent", "0.1.0");
    std::fs::write(
        world.path("home/config.toml"),
        format!(
            "{}\n[harness.pyagent]\ndriver = \"acp\"\nprogram = \"pyagent\"\npackage = \"pypi:pyagent\"\ntested = \">=0.1.0, <0.2.0\"\n",
            world.operator_config()
        ),
    )
    .unwrap();
    // pip finds the wheels here and asks no index.
    let pip = |args: &[&str]| {
        world
            .cinch()
            .env("PIP_NO_INDEX", "1")
            .env("PIP_FIND_LINKS", &wheels)
            .args(args)
            .output()
            .unwrap()
    };
    let installed = pip(&["harness", "install", "pyagent@0.1.0"]);
    assert!(installed.status.success(), "{installed:?}");
    assert!(
        stdout(&installed).starts_with("pyagent 0.1.0 installed:"),
        "{installed:?}"
    );
    // The launcher finds its packages in the folder it was renamed to.
    let program = world.path("home/tools/pyagent/0.1.0/bin/pyagent");
    let ran = std::process::Command::new(&program)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "0.1.0\n", "{ran:?}");
    let listed = pip(&["harness", "list", "--json"]);
    let rows: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let row = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|row| row["harness"] == "pyagent")
        .unwrap();
    assert_eq!(row["installed"], serde_json::json!(["0.1.0"]), "{row:#}");
    assert_eq!(row["package"], "pypi:pyagent");

    // A version the index does not have: PyPI named, the old one kept.
    let missing = pip(&["harness", "install", "pyagent@0.2.0"]);
    assert!(!missing.status.success(), "{missing:?}");
    let error = String::from_utf8_lossy(&missing.stderr);
    assert!(
        error.contains("installing pyagent (pypi:pyagent) failed: PyPI has no pyagent==0.2.0"),
        "{error}"
    );
    let left: Vec<String> = std::fs::read_dir(world.path("home/tools/pyagent"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .filter(|name| name != ".lock")
        .collect();
    assert_eq!(left, ["0.1.0"]);
}
