//! `cinch revert`: a turn's work tree back to the turn's start.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde::{Deserialize, Serialize};

use cinch_engine::checkpoint::{self, Restored};
use cinch_engine::engine::FILES_LISTED;
use cinch_engine::engine::result::{TurnResult, human_duration};
use cinch_engine::home::{Home, create_private_dir};
use cinch_engine::turn_dir::worktrees::unfinished_in;
use cinch_engine::turn_dir::{TurnDir, WorktreeLock, is_valid_id, now_ms, read_json, write_json};

/// A revert as `cinch revert` keeps it (`reverts/<id>.json` in the home), so
/// that `cinch revert <id>` undoes it.
#[derive(Debug, Serialize, Deserialize)]
struct RevertRecord {
    /// The revert's id.
    turn_id: String,
    /// The turn (or revert) it went back to the start of.
    reverted_turn_id: String,
    /// The work tree.
    workdir: PathBuf,
    /// The run whose refs hold its checkpoints.
    run: String,
    /// What it did.
    result: Restored,
}

/// Restores the work tree of turn (or revert) `id` to its start; refused
/// while a turn runs there.
pub fn revert(home: &Home, id: &str, json: bool) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        is_valid_id(id),
        "`{id}` is not a turn id (see `cinch turns`)"
    );
    let records = home.root().join("reverts");
    let record_path = records.join(format!("{id}.json"));
    let (workdir, run, target, what) = if record_path.exists() {
        let record: RevertRecord = read_json(&record_path)?;
        let what = format!(
            "the start of revert {id} (undoing it: back to before turn {} was reverted)",
            record.reverted_turn_id
        );
        (
            record.workdir,
            record.run,
            record.result.start_checkpoint,
            what,
        )
    } else {
        let (turn, launch) = TurnDir::find(home, id)?;
        let Ok(result) = read_json::<TurnResult>(&turn.result()) else {
            bail!("turn {id} has not ended: wait for it, or `cinch stop {id}`");
        };
        let Some(start) = result.start_checkpoint.or(launch.start_checkpoint) else {
            bail!("turn {id} has no start checkpoint to go back to");
        };
        let ago = human_duration(now_ms().saturating_sub(launch.started_at_ms));
        let what = format!(
            "the start of turn {id} ({}, started {ago} ago, {})",
            launch.harness,
            result.status.as_str()
        );
        (launch.workdir, launch.run, start, what)
    };
    // Held until the work tree is restored: a turn starting there meanwhile
    // waits, and one that started first is found below.
    let _worktree = WorktreeLock::take(home, &workdir)?;
    if let Some((_, running)) = unfinished_in(home, &workdir)?.into_iter().next() {
        bail!(
            "turn {} is running in {}: a revert waits until it ends (or `cinch stop {}`)",
            running.turn,
            workdir.display(),
            running.turn
        );
    }
    let revert_id = cinch_store::new_id("revert")?;
    let refs = format!("refs/cinch/runs/{run}/reverts/{revert_id}");
    let restored = checkpoint::restore(
        &workdir,
        &target,
        &format!("{refs}/start"),
        &format!("{refs}/end"),
        FILES_LISTED,
    )
    .with_context(|| format!("reverting {}", workdir.display()))?;
    let record = RevertRecord {
        turn_id: revert_id.clone(),
        reverted_turn_id: id.to_owned(),
        workdir,
        run,
        result: restored,
    };
    create_private_dir(&records)?;
    write_json(&records.join(format!("{revert_id}.json")), &record)?;
    if json {
        println!("{}", serde_json::to_string(&record)?);
        return Ok(ExitCode::SUCCESS);
    }
    let result = &record.result;
    println!(
        "reverted {} to {what}: {} file(s) changed, +{} \u{2212}{}",
        record.workdir.display(),
        result.changes.total_files,
        result.changes.insertions,
        result.changes.deletions
    );
    for file in &result.changes.files_changed {
        println!("  {}", file.path);
    }
    if !result.commits_undone.is_empty() {
        println!("HEAD went back past the commits made since:");
        for commit in &result.commits_undone {
            println!("  {} {}", &commit.sha[..12], commit.summary);
        }
    }
    println!("undo it with `cinch revert {revert_id}`");
    Ok(ExitCode::SUCCESS)
}
