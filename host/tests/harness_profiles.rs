//! A harness declared in config.toml alone (`[harness.NAME] driver = ...`):
//! `cinch drivers` lists it, `cinch check` checks its program and credential,
//! `GET /v1/models` reports it, and a turn runs its program with its
//! arguments and environment through its driver.

mod support;

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
