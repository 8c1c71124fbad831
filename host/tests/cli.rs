//! The `cinch` binary: `drivers` and `driver test`, as a person runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn cinch(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_cinch"))
        .args(args)
        .env("CINCH_HOME", home)
        .env("PATH", "/usr/bin:/bin")
        .output()
        .expect("running cinch")
}

fn recorded(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/recorded")
        .join(path)
        .display()
        .to_string()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn drivers_lists_the_builtins() {
    let home = tempfile::tempdir().unwrap();
    let output = cinch(home.path(), &["drivers"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for (name, display) in [
        ("claude", "Claude Code"),
        ("codex", "Codex"),
        ("cursor", "Cursor"),
        ("gemini", "Gemini CLI"),
    ] {
        let row = text
            .lines()
            .find(|line| line.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no row for {name} in:\n{text}"));
        assert!(
            row.contains(display) && row.contains("0.3.0") && row.contains("built-in"),
            "{row}"
        );
        assert!(row.contains("not on PATH"), "{row}");
    }
    // The first start compiled the drivers into the cache; later starts load from it.
    let cached = std::fs::read_dir(home.path().join("cache/components"))
        .unwrap()
        .count();
    assert_eq!(cached, 5);
}

#[test]
fn driver_test_prints_one_json_object_per_log() {
    let home = tempfile::tempdir().unwrap();
    let output = cinch(
        home.path(),
        &[
            "driver",
            "test",
            "claude",
            &recorded("claude/s1.jsonl"),
            &recorded("claude/s2.jsonl"),
            "--json",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    let reports: Vec<serde_json::Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(reports.len(), 2);
    assert_eq!(reports[1]["driver"], "claude");
    assert_eq!(
        reports[1]["outcome"]["session_id"],
        "e0771f6d-6bd9-438b-9a0b-2885249e66ac"
    );
    assert_eq!(
        reports[1]["outcome"]["final_message"],
        "I ran the command; out.txt now contains hello."
    );
    assert_eq!(reports[1]["outcome"]["is_error"], false);
    assert_eq!(reports[1]["progress"][1], "Bash: echo hello > out.txt");
    for key in ["progress", "outcome", "events", "unparsed"] {
        assert!(reports[0].get(key).is_some(), "no {key} in {}", reports[0]);
    }
}

#[test]
fn driver_test_reports_exit_code_and_stderr() {
    let home = tempfile::tempdir().unwrap();
    let output = cinch(
        home.path(),
        &[
            "driver",
            "test",
            "gemini",
            &recorded("gemini/s1_untrusted.jsonl"),
            "--exit-code",
            "55",
            "--stderr",
            &recorded("gemini/s1_untrusted.stderr"),
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("outcome: error"), "{text}");
    assert!(
        text.contains("not running in a trusted directory"),
        "{text}"
    );
}

#[test]
fn expect_passes_on_a_match_and_shows_a_diff_otherwise() {
    let home = tempfile::tempdir().unwrap();
    let log = recorded("codex/s2.jsonl");
    let first = cinch(home.path(), &["driver", "test", "codex", &log, "--json"]);
    let golden = home.path().join("golden.json");
    std::fs::write(&golden, &first.stdout).unwrap();
    let golden = golden.display().to_string();

    let matching = cinch(
        home.path(),
        &[
            "driver", "test", "codex", &log, "--json", "--expect", &golden,
        ],
    );
    assert!(matching.status.success(), "{}", stderr(&matching));

    let altered = String::from_utf8(first.stdout)
        .unwrap()
        .replace("now contains hello", "now contains bye");
    std::fs::write(&golden, altered).unwrap();
    let mismatch = cinch(
        home.path(),
        &["driver", "test", "codex", &log, "--expect", &golden],
    );
    assert!(!mismatch.status.success());
    let diff = stderr(&mismatch);
    assert!(diff.contains("does not match"), "{diff}");
    assert!(
        diff.contains("-    \"final_message\": \"I ran the command; out.txt now contains bye.\""),
        "{diff}"
    );
    assert!(
        diff.contains("+    \"final_message\": \"I ran the command; out.txt now contains hello.\""),
        "{diff}"
    );
}

#[test]
fn an_unknown_driver_names_the_installed_ones() {
    let home = tempfile::tempdir().unwrap();
    let output = cinch(
        home.path(),
        &["driver", "test", "nope", &recorded("claude/s1.jsonl")],
    );
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains(
            "harness.missing: no driver named `nope`; installed: acp, claude, codex, cursor, gemini"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn bad_input_is_counted_and_never_fatal() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path();
    let init = r#"{"type":"system","subtype":"init","session_id":"s-9","model":"m"}"#;
    let result = r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s-9"}"#;
    let huge = format!(
        "{{\"type\":\"assistant\",\"pad\":\"{}\"}}",
        "x".repeat(10 << 20)
    );
    let cases: Vec<(&str, Vec<u8>, usize)> = vec![
        (
            "ten-megabyte-line",
            format!("{init}\n{huge}\n{result}\n").into_bytes(),
            1,
        ),
        (
            "binary-junk",
            [
                init.as_bytes(),
                b"\n\x00\x01\x02\xff\xfe\x89PNG\r\n",
                result.as_bytes(),
                b"\n",
            ]
            .concat(),
            1,
        ),
        (
            "invalid-utf8",
            [
                init.as_bytes(),
                b"\n{\"type\":\"assistant\",\"x\":\"\xc3\x28\"}\n",
                result.as_bytes(),
            ]
            .concat(),
            1,
        ),
        (
            "not-json",
            format!("{init}\nWARNING: something\n{result}\n").into_bytes(),
            1,
        ),
        (
            "cut-mid-line",
            format!("{init}\n{}", &result[..40]).into_bytes(),
            1,
        ),
        ("empty", Vec::new(), 0),
    ];
    for (name, bytes, unparsed) in cases {
        let path = dir.join(format!("{name}.jsonl"));
        std::fs::write(&path, bytes).unwrap();
        let output = cinch(
            dir,
            &[
                "driver",
                "test",
                "claude",
                &path.display().to_string(),
                "--json",
            ],
        );
        assert!(output.status.success(), "{name}: {}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(report["unparsed"], unparsed, "{name}: {report}");
        if name != "empty" {
            assert_eq!(report["outcome"]["session_id"], "s-9", "{name}: {report}");
        }
        if name == "cut-mid-line" || name == "empty" {
            // No result arrived: the outcome says the turn did not end properly.
            assert_eq!(report["outcome"]["is_error"], true, "{name}: {report}");
            assert!(report["outcome"]["error"].is_string(), "{name}: {report}");
        } else {
            assert_eq!(report["outcome"]["final_message"], "ok", "{name}: {report}");
        }
    }
}

#[test]
fn driver_test_lists_the_unknown_event_types_it_saw() {
    let home = tempfile::tempdir().unwrap();
    // A real recording with lines a newer CLI might print injected.
    let mut log = std::fs::read_to_string(recorded("claude/s1.jsonl")).unwrap();
    log.push_str("{\"type\":\"brand_new_event\",\"session_id\":\"x\"}\n");
    log.push_str("{\"type\":\"brand_new_event\"}\n");
    log.push_str("{\"type\":\"system\",\"subtype\":\"fresh_subtype\"}\n");
    log.push_str("Warning: not json at all\n");
    let path = home.path().join("injected.jsonl");
    std::fs::write(&path, &log).unwrap();
    let path = path.display().to_string();

    let plain = cinch(home.path(), &["driver", "test", "claude", &path]);
    assert!(plain.status.success(), "{}", stderr(&plain));
    let text = stdout(&plain);
    assert!(
        text.contains("unknown event types (the driver does not know them):\n    brand_new_event ×2\n    system/fresh_subtype ×1\n"),
        "{text}"
    );
    assert!(text.contains("lines not JSON: 1"), "{text}");

    let json = cinch(home.path(), &["driver", "test", "claude", &path, "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        report["unknown_events"],
        serde_json::json!({"brand_new_event": 2, "system/fresh_subtype": 1})
    );
    assert_eq!(report["not_json_lines"], 1);

    // The recording alone has neither.
    let clean = cinch(
        home.path(),
        &["driver", "test", "claude", &recorded("claude/s1.jsonl")],
    );
    let text = stdout(&clean);
    assert!(
        !text.contains("unknown event types") && !text.contains("not JSON"),
        "{text}"
    );
}

/// Compiling the drivers into an empty cache takes a few hundred MB of heap
/// for a moment; a server that starts that way does not keep it.
#[test]
fn a_server_that_compiled_the_drivers_gives_the_compilers_memory_back() {
    use std::io::{BufRead as _, BufReader};
    let home = tempfile::tempdir().unwrap();
    let mut server = Command::new(env!("CARGO_BIN_EXE_cinch"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("CINCH_HOME", home.path())
        .env("HOME", home.path())
        .env("PATH", "/usr/bin:/bin")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting cinch serve");
    let mut said = String::new();
    for line in BufReader::new(server.stderr.take().unwrap()).lines() {
        let line = line.unwrap();
        said.push_str(&line);
        said.push('\n');
        if line.contains("serving on") {
            break;
        }
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.id())).unwrap();
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(said.contains("serving on"), "{said}");
    let resident_kb: u64 = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {status}"));
    let compiled = std::fs::read_dir(home.path().join("cache/components"))
        .unwrap()
        .count();
    assert_eq!(compiled, 5, "the server compiled the five built-ins");
    assert!(
        resident_kb < 200 * 1024,
        "cinch serve holds {} MB after compiling the drivers",
        resident_kb / 1024
    );
}
