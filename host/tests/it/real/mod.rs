//! What `cinch run --json` must show for the mock model's scenarios,
//! whichever real CLI ran the turn (shared by real_clis and real_acp).

pub mod fork;

use std::path::Path;

use cinch_mock_model::{RunOutput, S2_ANSWER, S4_RESUMED, git};
use serde_json::{Value, json};

/// s1, a plain answer from `harness`; returns the harness's session id.
pub fn assert_s1(out: &RunOutput, result: &Value, harness: &str) -> String {
    assert!(out.success(), "s1: {}", out.describe());
    assert_eq!(result["status"], "completed", "s1: {result:#}");
    assert_eq!(result["harness"], harness, "s1: {result:#}");
    assert_eq!(result["final_message"], "done", "s1: {result:#}");
    assert_eq!(result["files_changed"], json!([]), "s1: {result:#}");
    result["session_id"]
        .as_str()
        .filter(|sid| !sid.is_empty())
        .unwrap_or_else(|| panic!("s1: no session id: {result:#}"))
        .to_owned()
}

/// s2, in `repo`: the harness's shell tool wrote out.txt; the diff and the
/// checkpoints show it.
pub fn assert_s2(repo: &Path, out: &RunOutput, result: &Value) {
    assert!(out.success(), "s2: {}", out.describe());
    assert_eq!(result["status"], "completed", "s2: {result:#}");
    assert_eq!(result["final_message"], S2_ANSWER, "s2: {result:#}");
    // The harness's log says what its shell tool answered: a tool that
    // failed still gets the mock model's scripted answer after it.
    assert_eq!(
        result["files_changed"],
        json!([{ "path": "out.txt", "insertions": 1, "deletions": 0, "binary": false }]),
        "s2: {result:#}\nits log:\n{}",
        log_tail(result)
    );
    let start = result["start_checkpoint"]
        .as_str()
        .expect("a start checkpoint");
    let end = result["end_checkpoint"]
        .as_str()
        .expect("an end checkpoint");
    assert_eq!(git(repo, &["ls-tree", "--name-only", start]), "README.md\n");
    assert_eq!(git(repo, &["show", &format!("{end}:out.txt")]), "hello\n");
}

/// The end of the harness's log named in `result`, or why it cannot be read.
fn log_tail(result: &Value) -> String {
    const TAIL_CHARS: usize = 4000;
    let path = result["log_path"].as_str().unwrap_or_default();
    match std::fs::read_to_string(path) {
        Ok(log) => {
            let skipped = log.chars().count().saturating_sub(TAIL_CHARS);
            log.chars().skip(skipped).collect()
        }
        Err(error) => format!("(reading {path}: {error})"),
    }
}

/// s4: s1's session `sid` resumed, its history sent again.
pub fn assert_s4(out: &RunOutput, result: &Value, sid: &str) {
    assert!(out.success(), "s4: {}", out.describe());
    assert_eq!(result["status"], "completed", "s4: {result:#}");
    assert_eq!(result["session_id"], sid, "s4: {result:#}");
    let message = result["final_message"].as_str().unwrap_or_default();
    assert!(message.starts_with(S4_RESUMED), "s4: {result:#}");
}
