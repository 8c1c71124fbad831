//! `cinch fork`: a new worktree from a `cinch run` turn's end checkpoint,
//! to try another way from there while the original stays as it is.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use serde::Serialize;

use cinch_engine::checkpoint;
use cinch_engine::engine::result::TurnResult;
use cinch_engine::home::Home;
use cinch_engine::turn_dir::{TurnDir, is_valid_id, read_json};

/// What `cinch fork` made.
#[derive(Debug, Serialize)]
struct Forked {
    /// The turn forked at.
    turn_id: String,
    /// Its work tree, untouched.
    source: PathBuf,
    /// The new worktree.
    workdir: PathBuf,
    /// Its branch.
    branch: String,
    /// The end checkpoint its files come from.
    checkpoint: String,
    /// The turn's harness, and its harness session (to resume it elsewhere).
    harness: String,
    session_id: Option<String>,
}

/// Forks the work tree of turn `id` at its end: a worktree at `into`
/// (default `<work tree>-fork-<id>` beside it) on branch `branch` (default
/// `cinch/fork-<id>`).
pub fn fork(
    home: &Home,
    id: &str,
    into: Option<PathBuf>,
    branch: Option<String>,
    json: bool,
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        is_valid_id(id),
        "`{id}` is not a turn id (see `cinch turns`)"
    );
    let (turn, launch) = TurnDir::find(home, id)?;
    let Ok(result) = read_json::<TurnResult>(&turn.result()) else {
        bail!("turn {id} has not ended: wait for it, or `cinch stop {id}`");
    };
    let Some(end) = result.end_checkpoint.clone() else {
        bail!("turn {id} has no end checkpoint to fork from");
    };
    let branch = branch.unwrap_or_else(|| format!("cinch/fork-{id}"));
    let workdir = match into {
        Some(dir) => dir,
        None => {
            let name = launch
                .workdir
                .file_name()
                .map(|name| name.to_string_lossy().into_owned())
                .unwrap_or_else(|| "work".to_owned());
            launch.workdir.with_file_name(format!("{name}-fork-{id}"))
        }
    };
    if workdir.exists() {
        bail!(
            "{} exists already: name another folder with --into",
            workdir.display()
        );
    }
    checkpoint::fork_worktree(&launch.workdir, &end, &workdir, &branch)
        .with_context(|| format!("forking {} at turn {id}", launch.workdir.display()))?;
    let forked = Forked {
        turn_id: id.to_owned(),
        source: launch.workdir,
        workdir,
        branch,
        checkpoint: end,
        harness: launch.harness,
        session_id: result.session_id.clone(),
    };
    if json {
        println!("{}", serde_json::to_string(&forked)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "forked turn {id} into {} on branch {}: its files as the turn left them",
        forked.workdir.display(),
        forked.branch
    );
    println!(
        "go on there with `cinch run --harness {} --repo {} \"...\"`",
        forked.harness,
        forked.workdir.display()
    );
    Ok(ExitCode::SUCCESS)
}
