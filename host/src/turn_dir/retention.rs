//! Run retention: each agent's most recent runs' logs are kept, older run
//! folders and the finished turns whose logs went with them are deleted.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::Context as _;

use super::{TurnDir, is_valid_id, turns_dir};
use crate::home::Home;

/// How many runs' logs are kept for each agent; older run folders are deleted.
pub const RUNS_KEPT: usize = 20;

/// The file in a run's folder naming the agent whose run it is.
pub(super) const OWNER_FILE: &str = ".agent";

/// The runs of no agent (`cinch run` in a terminal) are kept together.
const NO_AGENT: &str = "";

/// The homes a thread of this process is pruning, each with the runs to
/// keep of the prunes asked for meanwhile, which that thread does next.
static PRUNING: Mutex<BTreeMap<PathBuf, Vec<String>>> = Mutex::new(BTreeMap::new());

/// Prunes as [`prune_runs`] does, unless another thread of this process is
/// pruning the same home at this moment: that thread then prunes once more
/// when it is done, keeping `keep` too. A prune looks at every run folder,
/// so when many turns end together a prune each would cost the square of
/// their number (1,000 turns ending: a million looks, which starved the
/// threads moving the other turns' lines for seconds); one at a time looks
/// for all of them.
pub fn prune_runs_unless_pruning(home: &Home, keep: &str) -> anyhow::Result<()> {
    let root = home.root().to_path_buf();
    {
        let mut pruning = crate::sync::lock(&PRUNING);
        if let Some(asked) = pruning.get_mut(&root) {
            asked.push(keep.to_owned());
            return Ok(());
        }
        pruning.insert(root.clone(), Vec::new());
    }
    // Lets go of the home when a prune fails or panics: unless it is let go
    // of, no prune of it would ever run again in this process.
    struct Pruning<'a>(Option<&'a Path>);
    impl Drop for Pruning<'_> {
        fn drop(&mut self) {
            if let Some(root) = self.0 {
                crate::sync::lock(&PRUNING).remove(root);
            }
        }
    }
    let mut pruning = Pruning(Some(&root));
    let mut keep = vec![keep.to_owned()];
    loop {
        prune_runs(home, &keep)?;
        match next_keep(&root) {
            Some(asked) => keep = asked,
            None => {
                // `next_keep` has let go of it.
                pruning.0 = None;
                return Ok(());
            }
        }
    }
}

/// The runs to keep of the prunes of `root` asked for since its pruning
/// thread last looked, which it prunes for next; none when none was asked
/// for, and the home is then no longer being pruned.
fn next_keep(root: &Path) -> Option<Vec<String>> {
    let mut pruning = crate::sync::lock(&PRUNING);
    let asked = std::mem::take(pruning.get_mut(root)?);
    if asked.is_empty() {
        pruning.remove(root);
        return None;
    }
    Some(asked)
}

/// Deletes the folders of all but each agent's `RUNS_KEPT` most recently
/// changed runs, never one of the runs `keep` nor one with a turn not
/// finished yet.
/// A folder already gone (another turn pruning at the same moment) is fine.
pub fn prune_runs(home: &Home, keep: &[String]) -> anyhow::Result<()> {
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
        // A run being finished is one of its agent's most recent: it takes
        // a place in the count but is never a candidate.
        if keep.iter().any(|run| entry.file_name() == run.as_str()) {
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

    /// Makes 25 runs of a finished turn each, `run-00` to `run-24`, oldest
    /// first, each `owner`'s run.
    fn finished_runs(home: &Home, owner: impl Fn(u64) -> Option<&'static str>) {
        for n in 0..25 {
            let run = format!("run-{n:02}");
            let turn = TurnDir::new(home, &run, &format!("turn-{n:02}")).unwrap();
            turn.create(owner(n)).unwrap();
            std::fs::write(turn.log(), "{}\n").unwrap();
            write_json(&turn.launch(), &launch(&turn, &run)).unwrap();
            std::fs::write(turn.result(), "{}").unwrap();
            // Distinct modification times, oldest first.
            let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + n);
            let folder = std::fs::File::open(turn.log().parent().unwrap()).unwrap();
            folder.set_modified(when).unwrap();
        }
    }

    fn runs(home: &Home) -> Vec<String> {
        let mut runs: Vec<String> = std::fs::read_dir(home.root().join("runs"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        runs
    }

    #[test]
    fn keeps_each_agents_twenty_most_recent_runs_and_their_turns() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        // One old run is another agent's: it is that agent's most recent.
        finished_runs(&home, |n| (n == 2).then_some("agent-b"));
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
        prune_runs(&home, &["run-24".to_owned()]).unwrap();
        let runs = runs(&home);
        assert_eq!(runs.len(), RUNS_KEPT + 3);
        assert_eq!(runs[..4], ["run-00", "run-01", "run-02", "run-05"]);
        assert!(turns_dir(&home).join("turn-00").exists());
        assert!(turns_dir(&home).join("turn-01").exists());
        assert!(turns_dir(&home).join("turn-02").exists());
        assert!(!turns_dir(&home).join("turn-03").exists());
        assert!(!turns_dir(&home).join("turn-04").exists());
        assert!(turns_dir(&home).join("turn-05").exists());
    }

    #[test]
    fn a_prune_asked_for_while_its_home_is_pruned_is_done_next_by_the_pruning_thread() {
        let dir = tempfile::tempdir().unwrap();
        let busy = Home::open(dir.path().join("busy")).unwrap();
        let other = Home::open(dir.path().join("other")).unwrap();
        finished_runs(&busy, |_| None);
        finished_runs(&other, |_| None);
        // Another thread of this process is pruning `busy`.
        crate::sync::lock(&PRUNING).insert(busy.root().to_path_buf(), Vec::new());

        // A prune of another home does not wait for it.
        prune_runs_unless_pruning(&other, "run-00").unwrap();
        // The run kept takes one of the places.
        assert_eq!(runs(&other).len(), RUNS_KEPT);
        assert_eq!(runs(&other)[..2], ["run-00", "run-06"]);
        // A prune of the same home is left to the pruning thread, which
        // prunes once more, keeping its run, and then lets go of the home.
        prune_runs_unless_pruning(&busy, "run-00").unwrap();
        assert_eq!(runs(&busy).len(), 25);
        assert_eq!(next_keep(busy.root()), Some(vec!["run-00".to_owned()]));
        assert_eq!(next_keep(busy.root()), None);
        assert!(!crate::sync::lock(&PRUNING).contains_key(busy.root()));
        prune_runs_unless_pruning(&busy, "run-00").unwrap();
        assert_eq!(runs(&busy).len(), RUNS_KEPT);
    }
}
