//! Run retention: each agent's most recent runs' logs are kept, older run
//! folders and the finished turns whose logs went with them are deleted.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context as _;

use super::{TurnDir, is_valid_id, turns_dir};
use crate::home::Home;

/// How many runs' logs are kept for each agent; older run folders are deleted.
pub const RUNS_KEPT: usize = 20;

/// The file in a run's folder naming the agent whose run it is.
pub(super) const OWNER_FILE: &str = ".agent";

/// The runs of no agent (`cinch run` in a terminal) are kept together.
const NO_AGENT: &str = "";

/// Whether a thread of this process is pruning now.
static PRUNING: AtomicBool = AtomicBool::new(false);

/// Prunes as [`prune_runs`] does, unless another thread of this process is
/// pruning at this moment. A prune looks at every run folder, so when many
/// turns end together a prune each would cost the square of their number
/// (1,000 turns ending: a million looks, which starved the threads moving
/// the other turns' lines for seconds); one at a time looks for all of them.
/// What a skipped prune would have deleted goes with the next.
pub fn prune_runs_unless_pruning(home: &Home, keep: &str) -> anyhow::Result<()> {
    struct Pruning;
    impl Drop for Pruning {
        fn drop(&mut self) {
            PRUNING.store(false, Ordering::Release);
        }
    }
    if PRUNING.swap(true, Ordering::AcqRel) {
        return Ok(());
    }
    let _pruning = Pruning;
    prune_runs(home, keep)
}

/// Deletes the folders of all but each agent's `RUNS_KEPT` most recently
/// changed runs, never the run `keep` nor one with a turn not finished yet.
/// A folder already gone (another turn pruning at the same moment) is fine.
pub fn prune_runs(home: &Home, keep: &str) -> anyhow::Result<()> {
    let runs = home.root().join("runs");
    let Ok(listing) = std::fs::read_dir(&runs) else {
        return Ok(());
    };
    let mut by_agent: std::collections::HashMap<String, Vec<(std::time::SystemTime, PathBuf)>> =
        std::collections::HashMap::new();
    for entry in listing.filter_map(Result::ok) {
        let path = entry.path();
        let Some(modified) = entry.metadata().ok().and_then(|meta| meta.modified().ok()) else {
            continue;
        };
        let agent =
            std::fs::read_to_string(path.join(OWNER_FILE)).unwrap_or_else(|_| NO_AGENT.to_owned());
        let slot = by_agent.entry(agent).or_default();
        // The run being finished is one of its agent's most recent: it takes
        // a place in the count but is never a candidate.
        if entry.file_name() == keep {
            slot.push((std::time::SystemTime::now(), PathBuf::new()));
        } else if !has_unfinished_turn(home, &path) {
            slot.push((modified, path));
        }
    }
    for mut folders in by_agent.into_values() {
        folders.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
        for (_, folder) in folders.into_iter().skip(RUNS_KEPT) {
            if folder.as_os_str().is_empty() {
                continue;
            }
            match std::fs::remove_dir_all(&folder) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error).with_context(|| format!("removing {}", folder.display()));
                }
            }
        }
    }
    // A finished turn whose run's log is gone goes too; a running one stays.
    let Ok(turns) = std::fs::read_dir(turns_dir(home)) else {
        return Ok(());
    };
    for entry in turns.filter_map(Result::ok) {
        if let Ok((turn, _)) = TurnDir::open(&entry.path())
            && turn.result().exists()
            && !turn.log().parent().is_some_and(Path::exists)
        {
            match std::fs::remove_dir_all(turn.dir()) {
                Ok(()) => {}
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => {
                    return Err(error)
                        .with_context(|| format!("removing {}", turn.dir().display()));
                }
            }
        }
    }
    Ok(())
}

/// Whether a turn whose log is in the run folder `run` is not finished yet:
/// its supervisor still runs, or its CLI has exited and its result is not
/// written yet. (A folder's time changes when a log is created in it, not
/// when the log grows, so a long turn's run can look like an old one.)
fn has_unfinished_turn(home: &Home, run: &Path) -> bool {
    let Ok(logs) = std::fs::read_dir(run) else {
        return false;
    };
    logs.filter_map(Result::ok).any(|entry| {
        let name = entry.file_name();
        let Some(turn) = name
            .to_str()
            .and_then(|name| name.strip_suffix(".harness.jsonl"))
            .filter(|turn| is_valid_id(turn))
        else {
            return false;
        };
        TurnDir {
            dir: turns_dir(home).join(turn),
            log: entry.path(),
        }
        .is_unfinished()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::turn_dir::{FileLock, Launch, write_json};

    fn launch(turn: &TurnDir, run: &str) -> Launch {
        Launch {
            turn: turn
                .dir()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            run: run.to_owned(),
            harness: "claude".into(),
            repository: "repo".into(),
            workdir: "/nonexistent".into(),
            program: "/bin/true".into(),
            args: Vec::new(),
            stdin: None,
            log: turn.log().to_path_buf(),
            prompt: turn.prompt(),
            started_at_ms: 0,
            timeout_ms: 60_000,
            idle_limit_ms: None,
            resumed_session: None,
            start_checkpoint: None,
            cli_version: None,
            sandbox: None,
            tmpdir: None,
            agent: None,
            model: None,
            conversation: None,
        }
    }

    #[test]
    fn keeps_each_agents_twenty_most_recent_runs_and_their_turns() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        for n in 0..25 {
            let run = format!("run-{n:02}");
            let turn = TurnDir::new(&home, &run, &format!("turn-{n:02}")).unwrap();
            // One old run is another agent's: it is that agent's most recent.
            turn.create((n == 2).then_some("agent-b")).unwrap();
            std::fs::write(turn.log(), "{}\n").unwrap();
            write_json(&turn.launch(), &launch(&turn, &run)).unwrap();
            std::fs::write(turn.result(), "{}").unwrap();
            // Distinct modification times, oldest first.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + n);
            let folder = std::fs::File::open(turn.log().parent().unwrap()).unwrap();
            folder.set_modified(when).unwrap();
        }
        // The oldest run has a turn still running, the next one a turn whose
        // CLI has exited but whose result is not written yet: both stay,
        // whatever their age.
        let running = TurnDir::new(&home, "run-00", "turn-00").unwrap();
        assert!(!running.is_unfinished());
        std::fs::remove_file(running.result()).unwrap();
        let _supervisor = FileLock::try_take(&running.supervisor_lock())
            .unwrap()
            .unwrap();
        let exited = TurnDir::new(&home, "run-01", "turn-01").unwrap();
        std::fs::remove_file(exited.result()).unwrap();
        std::fs::write(exited.exit(), "{}").unwrap();
        prune_runs(&home, "run-24").unwrap();
        let mut runs: Vec<String> = std::fs::read_dir(home.root().join("runs"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        assert_eq!(runs.len(), RUNS_KEPT + 3);
        assert_eq!(runs[..4], ["run-00", "run-01", "run-02", "run-05"]);
        assert!(turns_dir(&home).join("turn-00").exists());
        assert!(turns_dir(&home).join("turn-01").exists());
        assert!(turns_dir(&home).join("turn-02").exists());
        assert!(!turns_dir(&home).join("turn-03").exists());
        assert!(!turns_dir(&home).join("turn-04").exists());
        assert!(turns_dir(&home).join("turn-05").exists());
    }
}
