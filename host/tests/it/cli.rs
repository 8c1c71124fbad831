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

/// A home whose compiled drivers are shared with the other tests that use
/// one, so that only the first compiles them.
fn shared_cache_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let shared = Path::new(env!("CARGO_TARGET_TMPDIR")).join("compiled-drivers");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::create_dir_all(home.path().join("cache")).unwrap();
    std::os::unix::fs::symlink(&shared, home.path().join("cache/components")).unwrap();
    home
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
fn a_driver_that_understood_nothing_fails_unless_allowed() {
    let home = shared_cache_home();
    let claude_log = recorded("claude/s1.jsonl");
    let wrong = cinch(home.path(), &["driver", "test", "codex", &claude_log]);
    assert!(!wrong.status.success(), "{}", stdout(&wrong));
    let warning = stderr(&wrong);
    assert!(
        warning.contains("warning: the driver `codex` understood nothing of")
            && warning.contains("0 events from")
            && warning.contains("unknown event types: assistant ×")
            && warning.contains("pass --allow-empty"),
        "{warning}"
    );

    let allowed = cinch(
        home.path(),
        &["driver", "test", "codex", &claude_log, "--allow-empty"],
    );
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert!(stderr(&allowed).contains("understood nothing"));

    // The right driver on the same log: no warning.
    let right = cinch(home.path(), &["driver", "test", "claude", &claude_log]);
    assert!(right.status.success(), "{}", stderr(&right));
    assert!(!stderr(&right).contains("understood nothing"));
}

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

#[test]
fn the_shipped_corpus_passes_per_cli_version() {
    let home = shared_cache_home();
    let corpus = corpus_dir().display().to_string();
    let output = cinch(home.path(), &["driver", "test", "--corpus", &corpus]);
    let text = stdout(&output);
    assert!(output.status.success(), "{text}{}", stderr(&output));
    for line in [
        "claude 2.1.197: 6 passed, 0 failed",
        "codex 0.171.0: 5 passed, 0 failed",
        "gemini 0.61.0: 7 passed, 0 failed",
        "qwen 0.15.10: 1 passed, 0 failed",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in:\n{text}");
    }
}

#[test]
fn a_corpus_reports_failures_and_unknown_types_per_version() {
    let home = shared_cache_home();
    let corpus = home.path().join("corpus");
    let version = corpus.join("claude/2.1.197");
    std::fs::create_dir_all(&version).unwrap();
    for name in ["s1", "s2"] {
        let from = corpus_dir().join("claude/2.1.197");
        for ext in ["jsonl", "expect.json", "exit", "stderr"] {
            let file = format!("{name}.{ext}");
            std::fs::copy(from.join(&file), version.join(&file)).unwrap();
        }
    }
    // s1 expects another final message; s2 gains a line of a new type (one
    // more unparsed line than expected); a third log has no expectation.
    let expect = version.join("s1.expect.json");
    let altered = std::fs::read_to_string(&expect).unwrap().replace(
        "\"final_message\": \"done\"",
        "\"final_message\": \"finished\"",
    );
    std::fs::write(&expect, altered).unwrap();
    let mut log = std::fs::read_to_string(version.join("s2.jsonl")).unwrap();
    log.push_str("{\"type\":\"brand_new_event\"}\n");
    std::fs::write(version.join("s2.jsonl"), log).unwrap();
    std::fs::copy(version.join("s1.jsonl"), version.join("s3.jsonl")).unwrap();
    std::fs::create_dir_all(corpus.join("codex/0.171.0")).unwrap();
    std::fs::copy(
        corpus_dir().join("codex/0.171.0/s1.jsonl"),
        corpus.join("codex/0.171.0/s1.jsonl"),
    )
    .unwrap();
    std::fs::copy(
        corpus_dir().join("codex/0.171.0/s1.expect.json"),
        corpus.join("codex/0.171.0/s1.expect.json"),
    )
    .unwrap();

    let dir = corpus.display().to_string();
    let output = cinch(home.path(), &["driver", "test", "--corpus", &dir]);
    let text = stdout(&output);
    assert!(!output.status.success(), "{text}");
    assert!(
        text.contains("claude 2.1.197: 0 passed, 3 failed"),
        "{text}"
    );
    assert!(
        text.contains(
            "FAILED claude/2.1.197/s1.jsonl: final message Some(\"done\"), expected Some(\"finished\")"
        ),
        "{text}"
    );
    assert!(text.contains("FAILED claude/2.1.197/s2.jsonl:"), "{text}");
    assert!(text.contains("unparsed lines, expected"), "{text}");
    assert!(
        text.contains("FAILED claude/2.1.197/s3.jsonl: no ") && text.contains("--write-expect"),
        "{text}"
    );
    assert!(
        text.contains("  unknown event types: brand_new_event ×1"),
        "{text}"
    );
    assert!(text.contains("codex 0.171.0: 1 passed, 0 failed"), "{text}");

    // Only the CLI asked for; and written expectations pass.
    let only = cinch(
        home.path(),
        &["driver", "test", "--corpus", &dir, "--cli", "codex"],
    );
    assert!(only.status.success(), "{}", stdout(&only));
    assert!(!stdout(&only).contains("claude"), "{}", stdout(&only));
    let written = cinch(
        home.path(),
        &["driver", "test", "--corpus", &dir, "--write-expect"],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    assert!(version.join("s3.expect.json").is_file());
    let again = cinch(home.path(), &["driver", "test", "--corpus", &dir]);
    assert!(again.status.success(), "{}", stdout(&again));
    assert!(stdout(&again).contains("claude 2.1.197: 3 passed, 0 failed"));
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
        let path = path.display().to_string();
        let output = cinch(dir, &["driver", "test", "claude", &path, "--json"]);
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

/// `cinch check` of every harness exits non-zero when none can run, and says so; once one
/// can, it succeeds and says what `cinch serve`'s turns of it would get, which is not the
/// shell's key.
#[test]
fn check_fails_when_no_harness_can_run() {
    let home = tempfile::tempdir().unwrap();
    // No agent CLI on /usr/bin:/bin.
    let none = cinch(home.path(), &["check"]);
    assert_eq!(none.status.code(), Some(1), "{}", stdout(&none));
    assert!(
        stderr(&none).contains("no harness can run here"),
        "{}",
        stderr(&none)
    );

    let bin = tempfile::tempdir().unwrap();
    cinch_fake_cli::install(bin.path(), "claude");
    let one = Command::new(env!("CARGO_BIN_EXE_cinch"))
        .arg("check")
        .env("CINCH_HOME", home.path())
        .env("PATH", format!("{}:/usr/bin:/bin", bin.path().display()))
        .env("ANTHROPIC_API_KEY", "sk-in-this-shell")
        .output()
        .unwrap();
    let text = stdout(&one);
    assert!(one.status.success(), "{text}{}", stderr(&one));
    let claude = text
        .lines()
        .skip_while(|line| !line.starts_with("claude:"))
        .take(2)
        .collect::<Vec<_>>();
    assert!(
        claude[0].contains("credential: secret (ANTHROPIC_API_KEY)"),
        "{claude:?}"
    );
    assert!(
        claude[1].contains(
            "cinch serve's turns: only what their environment gives (ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN as an environment secret)"
        ),
        "{claude:?}"
    );
}
