//! Run retention: each agent's most recent runs' logs are kept; older run
//! folders go, and the folders of their turns with them.
//!
//! An index of runs by agent (`runs-by-agent/<agent's key>/<run>`, an empty
//! file each) lets a turn's end look at its own agent's runs only: looking at
//! every run folder of the home, as a prune did before there was an index,
//! cost a turn's end 24 ms of CPU in a home holding 50 agents' runs (1,000),
//! five times what its 500 lines cost.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

use anyhow::Context as _;

use super::{LOG_SUFFIX, TurnDir, is_valid_id, turns_dir};
use crate::home::Home;

/// How many runs' logs are kept for each agent; older run folders are deleted.
pub const RUNS_KEPT: usize = 20;

/// The file in a run's folder naming the agent whose run it is.
pub(super) const OWNER_FILE: &str = ".agent";

/// The index of runs by agent, in the home.
const INDEX: &str = "runs-by-agent";

/// In the index once it holds every run of the home: the runs of a home from
/// before there was an index are added, by their owner files, by the first
/// prune.
const INDEX_BUILT: &str = ".built";

/// The least time between two prunes of one home by this process. Turns
/// ending faster have their prunes done together once it has passed, by a
/// thread of their own: with 1,000 turns of one agent ending within
/// seconds, a prune at each end (a listing of the agent's 1,000 runs and a
/// lookup of each) was half of a turn's end in the engine. A turn that
/// ends alone prunes at once, before its result, as always.
const PRUNE_GAP: Duration = Duration::from_millis(100);

/// Each home's prunes in this process.
static PRUNING: Mutex<BTreeMap<PathBuf, HomePrunes>> = Mutex::new(BTreeMap::new());

/// A home's prunes in this process.
#[derive(Debug, Default)]
struct HomePrunes {
    /// A thread is pruning the home, or will once the gap has passed: it
    /// does the prunes asked for meanwhile, `asked`, next.
    busy: bool,
    asked: Vec<Asked>,
    /// When the last prune ended.
    last: Option<Instant>,
}

/// The runs with a turn this process follows, by the folder holding them
/// (a home's `runs`), each with how many: a prune takes them as unfinished
/// without looking at their files. With 200 turns of one agent running,
/// those looks (each run folder's time, its listing, and two locks tried)
/// were a sixth of the host's CPU over the turns' whole life.
static FOLLOWED_RUNS: Mutex<BTreeMap<PathBuf, HashMap<String, usize>>> =
    Mutex::new(BTreeMap::new());

/// Marks its turn's run as followed by this process until dropped: a prune
/// neither counts nor deletes it meanwhile. Held from before the turn's end
/// is watched until after its result is written; a run held a moment too
/// long is only kept a moment longer.
pub struct FollowedRun {
    runs: PathBuf,
    run: String,
}

impl FollowedRun {
    /// Marks `turn`'s run as followed.
    pub fn of(turn: &TurnDir) -> Self {
        let folder = turn.run_dir();
        let followed = Self {
            runs: folder.parent().unwrap_or(folder).to_path_buf(),
            run: folder
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
        };
        *cinch_base::sync::lock(&FOLLOWED_RUNS)
            .entry(followed.runs.clone())
            .or_default()
            .entry(followed.run.clone())
            .or_default() += 1;
        followed
    }
}

impl Drop for FollowedRun {
    fn drop(&mut self) {
        let mut followed = cinch_base::sync::lock(&FOLLOWED_RUNS);
        let Some(runs) = followed.get_mut(&self.runs) else {
            return;
        };
        if let Some(count) = runs.get_mut(&self.run) {
            *count -= 1;
            if *count == 0 {
                runs.remove(&self.run);
            }
        }
        if runs.is_empty() {
            followed.remove(&self.runs);
        }
    }
}

/// A prune asked for at a turn's end: its agent's runs, keeping its own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Asked {
    agent: Option<String>,
    keep: String,
}

/// Records in the index that the run whose folder is `run` (under the
/// home's `runs`) is `agent`'s; none: nobody's (`cinch run` in a terminal).
pub(super) fn index_run(run: &Path, agent: Option<&str>) -> anyhow::Result<()> {
    let (Some(home), Some(name)) = (run.parent().and_then(Path::parent), run.file_name()) else {
        anyhow::bail!("{} is not a run's folder", run.display());
    };
    add_to_index(&home.join(INDEX), agent, &name.to_string_lossy())
}

fn add_to_index(index: &Path, agent: Option<&str>, run: &str) -> anyhow::Result<()> {
    let folder = index.join(agent_key(agent));
    crate::home::create_private_dir(&folder)?;
    let entry = folder.join(run);
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&entry)
        .with_context(|| format!("indexing the run {}", entry.display()))?;
    Ok(())
}

/// The index's folder name for `agent`: the start of its name's SHA-256 in
/// hex, so that any name, however long, makes a plain file name. Nobody's
/// runs go with an agent whose name is empty, as before the index.
fn agent_key(agent: Option<&str>) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(agent.unwrap_or_default().as_bytes());
    cinch_base::hex::encode(&digest[..16])
}

/// Prunes as [`prune_runs`] does, for `agent`, keeping `keep` too, unless
/// another thread of this process is pruning the same home at this moment
/// or did less than [`PRUNE_GAP`] ago: the prune is then left to that
/// thread, or to one that does it when the gap has passed, with the
/// others asked for meanwhile. When many turns of one agent end together
/// a prune each would cost the square of their number (1,000 turns
/// ending: a million looks, which starved the threads moving the other
/// turns' lines for seconds); together they look once.
pub fn prune_runs_unless_pruning(
    home: &Home,
    agent: Option<&str>,
    keep: &str,
) -> anyhow::Result<()> {
    let root = home.root().to_path_buf();
    let asked = Asked {
        agent: agent.map(str::to_owned),
        keep: keep.to_owned(),
    };
    {
        let mut pruning = cinch_base::sync::lock(&PRUNING);
        let prunes = pruning.entry(root.clone()).or_default();
        if prunes.busy {
            prunes.asked.push(asked);
            return Ok(());
        }
        prunes.busy = true;
        let due = prunes.last.map(|last| last + PRUNE_GAP);
        if let Some(due) = due.filter(|due| *due > Instant::now()) {
            prunes.asked.push(asked);
            drop(pruning);
            prune_later(home.clone(), due);
            return Ok(());
        }
    }
    let pruned = {
        let _busy = Busy(&root);
        prune_asked(home, vec![asked])
    };
    if let Some(due) = pruned_once(&root) {
        prune_later(home.clone(), due);
    }
    pruned
}

/// Lets go of its home, should a prune panic: else no prune of that home
/// would ever run again in this process.
struct Busy<'a>(&'a Path);

impl Drop for Busy<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            cinch_base::sync::lock(&PRUNING).remove(self.0);
        }
    }
}

/// Does the prunes asked for: each agent's once, keeping all their runs.
fn prune_asked(home: &Home, asked: Vec<Asked>) -> anyhow::Result<()> {
    let mut by_agent: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
    for Asked { agent, keep } in asked {
        by_agent.entry(agent).or_default().push(keep);
    }
    for (agent, keep) in by_agent {
        prune_runs(home, agent.as_deref(), &keep)?;
    }
    Ok(())
}

/// Notes that a prune of `root` ended; when more were asked for meanwhile,
/// when they are due. Otherwise the home is let go of.
fn pruned_once(root: &Path) -> Option<Instant> {
    let mut pruning = cinch_base::sync::lock(&PRUNING);
    let prunes = pruning.get_mut(root)?;
    let now = Instant::now();
    prunes.last = Some(now);
    prunes.busy = !prunes.asked.is_empty();
    prunes.busy.then_some(now + PRUNE_GAP)
}

/// Does the prunes asked for of `home` at `due`, on a thread of its own,
/// and those asked for meanwhile after each gap, until none is left.
fn prune_later(home: Home, due: Instant) {
    let root = home.root().to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("cinch-prune".to_owned())
        .spawn(move || {
            let root = home.root();
            let mut due = due;
            loop {
                std::thread::sleep(due.saturating_duration_since(Instant::now()));
                let asked = cinch_base::sync::lock(&PRUNING)
                    .get_mut(root)
                    .map(|prunes| std::mem::take(&mut prunes.asked))
                    .unwrap_or_default();
                let pruned = {
                    let _busy = Busy(root);
                    prune_asked(&home, asked)
                };
                if let Err(error) = pruned {
                    tracing::warn!("could not prune old runs: {error:#}");
                }
                match pruned_once(root) {
                    Some(next) => due = next,
                    None => return,
                }
            }
        });
    if let Err(error) = spawned {
        tracing::warn!("could not start a thread to prune old runs: {error}");
        cinch_base::sync::lock(&PRUNING).remove(&root);
    }
}

/// Deletes the folders of all but `agent`'s `RUNS_KEPT` most recently
/// changed runs, and the folders of their turns; never one of the runs
/// `keep` nor one with a turn not finished yet (or followed by this process:
/// [`FollowedRun`]). A run being finished is one of its agent's most recent:
/// it takes a place in the count. A folder already gone (another process
/// pruning at the same moment) is fine.
fn prune_runs(home: &Home, agent: Option<&str>, keep: &[String]) -> anyhow::Result<()> {
    build_index(home)?;
    let runs = home.root().join("runs");
    let indexed = home.root().join(INDEX).join(agent_key(agent));
    let listing = match std::fs::read_dir(&indexed) {
        Ok(listing) => listing,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(error).with_context(|| format!("listing {}", indexed.display())),
    };
    // Many turns' ends pruned together keep as many runs.
    let keep: HashSet<&str> = keep.iter().map(String::as_str).collect();
    let listed: Vec<String> = listing
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    // A run this process follows has a turn not finished: it is neither
    // counted nor deleted, as one whose files say so below. Looked up in
    // place: copying the names followed, as before, was a quarter of a
    // prune's CPU with 1,000 turns running.
    let unfollowed: Vec<String> = {
        let followed = cinch_base::sync::lock(&FOLLOWED_RUNS);
        let followed = followed.get(&runs);
        listed
            .into_iter()
            .filter(|run| {
                keep.contains(run.as_str()) || !followed.is_some_and(|runs| runs.contains_key(run))
            })
            .collect()
    };
    let mut folders: Vec<(SystemTime, String)> = Vec::new();
    for run in unfollowed {
        let changed = if keep.contains(run.as_str()) {
            Ok(SystemTime::now())
        } else {
            runs.join(&run).metadata().and_then(|meta| meta.modified())
        };
        match changed {
            Ok(changed) => folders.push((changed, run)),
            // Its folder went (another process pruned it): so does its entry.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                remove(&indexed.join(&run), |path| std::fs::remove_file(path))?;
            }
            Err(_) => {}
        }
    }
    if folders.len() <= RUNS_KEPT {
        return Ok(());
    }
    folders.sort_by(|a, b| b.cmp(a));
    let mut counted = 0;
    for (_, run) in folders {
        if keep.contains(run.as_str()) {
            counted += 1;
            continue;
        }
        let folder = runs.join(&run);
        let turns = turns_of(home, &folder);
        // A run with a turn not finished is neither counted nor deleted.
        if turns.iter().any(TurnDir::is_unfinished) {
            continue;
        }
        counted += 1;
        if counted <= RUNS_KEPT {
            continue;
        }
        // Its turns first: a run folder left by a prune cut short is found
        // again by the next, and its turns' folders are already gone.
        for turn in &turns {
            remove(turn.dir(), |path| std::fs::remove_dir_all(path))?;
        }
        remove(&folder, |path| std::fs::remove_dir_all(path))?;
        remove(&indexed.join(&run), |path| std::fs::remove_file(path))?;
    }
    Ok(())
}

/// Removes `path` with `how`; one already gone is fine.
fn remove(path: &Path, how: fn(&Path) -> std::io::Result<()>) -> anyhow::Result<()> {
    match how(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(error) => Err(error).with_context(|| format!("removing {}", path.display())),
    }
}

/// Adds every run of the home to the index by its owner file, unless that
/// was done: a home from before there was an index has runs it lacks.
fn build_index(home: &Home) -> anyhow::Result<()> {
    let index = home.root().join(INDEX);
    let built = index.join(INDEX_BUILT);
    if built.exists() {
        return Ok(());
    }
    crate::home::create_private_dir(&index)?;
    if let Ok(listing) = std::fs::read_dir(home.root().join("runs")) {
        for entry in listing.filter_map(Result::ok) {
            let run = entry.file_name().to_string_lossy().into_owned();
            if !is_valid_id(&run) {
                continue;
            }
            let agent = std::fs::read_to_string(entry.path().join(OWNER_FILE)).ok();
            add_to_index(&index, agent.as_deref(), &run)?;
        }
    }
    super::write_private(&built, b"")
}

/// The turns whose logs are in the run folder `run`.
fn turns_of(home: &Home, run: &Path) -> Vec<TurnDir> {
    let Ok(logs) = std::fs::read_dir(run) else {
        return Vec::new();
    };
    logs.filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name();
            let turn = name
                .to_str()?
                .strip_suffix(LOG_SUFFIX)
                .filter(|turn| is_valid_id(turn))?;
            Some(TurnDir {
                dir: turns_dir(home).join(turn),
                log: entry.path(),
            })
        })
        .collect()
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
            cli_tested: None,
            sandbox: None,
            tmpdir: None,
            agent: None,
            model: None,
            conversation: None,
            driver: None,
        }
    }

    /// Makes 25 runs of a finished turn each, `run-00` to `run-24`, oldest
    /// first, each `owner`'s run.
    fn finished_runs<'a>(home: &Home, owner: impl Fn(u64) -> Option<&'a str>) {
        for n in 0..25 {
            finished_run(home, n, owner(n));
        }
    }

    /// Makes run `run-<n>` of a finished turn, `owner`'s, changed at second
    /// `n` (the higher, the more recent).
    fn finished_run(home: &Home, n: u64, owner: Option<&str>) {
        let run = format!("run-{n:02}");
        let turn = TurnDir::new(home, &run, &format!("turn-{n:02}")).unwrap();
        turn.create(owner).unwrap();
        std::fs::write(turn.log(), "{}\n").unwrap();
        write_json(&turn.launch(), &launch(&turn, &run)).unwrap();
        std::fs::write(turn.result(), "{}").unwrap();
        let when = std::time::UNIX_EPOCH + Duration::from_secs(1_000_000 + n);
        let folder = std::fs::File::open(turn.log().parent().unwrap()).unwrap();
        folder.set_modified(when).unwrap();
    }

    /// Waits up to 10 s for `done`; whether it came.
    fn within_10_s(done: impl Fn() -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(10);
        while !done() {
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    fn runs(home: &Home) -> Vec<String> {
        let mut runs: Vec<String> = std::fs::read_dir(home.root().join("runs"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        runs
    }

    /// Whether no prune of `home` is left to do.
    fn no_prune_left(home: &Home) -> bool {
        !cinch_base::sync::lock(&PRUNING)[home.root()].busy
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
        prune_runs(&home, None, &["run-24".to_owned()]).unwrap();
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
    fn a_run_this_process_follows_is_neither_counted_nor_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        finished_runs(&home, |_| None);
        // The oldest run's turn is followed here, though its files say it
        // has ended (its result is written before it is let go of).
        let turn = TurnDir::new(&home, "run-00", "turn-00").unwrap();
        let followed = FollowedRun::of(&turn);
        prune_runs(&home, None, &[]).unwrap();
        assert_eq!(runs(&home).len(), RUNS_KEPT + 1);
        assert_eq!(runs(&home)[..2], ["run-00", "run-05"]);
        assert!(turn.dir().exists());

        drop(followed);
        prune_runs(&home, None, &[]).unwrap();
        assert_eq!(runs(&home).len(), RUNS_KEPT);
        assert_eq!(runs(&home)[0], "run-05");
        assert!(!turn.dir().exists());
    }

    #[test]
    fn a_prune_looks_at_its_own_agents_runs_only() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        finished_runs(&home, |_| Some("agent-b"));
        prune_runs(&home, Some("agent-c"), &[]).unwrap();
        prune_runs(&home, None, &[]).unwrap();
        assert_eq!(runs(&home).len(), 25);
        prune_runs(&home, Some("agent-b"), &[]).unwrap();
        assert_eq!(runs(&home)[..2], ["run-05", "run-06"]);
        assert_eq!(runs(&home).len(), RUNS_KEPT);
        assert!(!turns_dir(&home).join("turn-04").exists());
        assert!(turns_dir(&home).join("turn-05").exists());
    }

    #[test]
    fn an_agent_of_any_name_has_its_runs_indexed() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        let long = "agent/../with a name longer than a file name may be ".repeat(20);
        finished_runs(&home, |_| Some(long.as_str()));
        prune_runs(&home, Some(&long), &[]).unwrap();
        assert_eq!(runs(&home).len(), RUNS_KEPT);
    }

    #[test]
    fn the_runs_of_a_home_from_before_the_index_are_indexed_by_the_first_prune() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        finished_runs(&home, |n| (n % 2 == 0).then_some("agent-b"));
        std::fs::remove_dir_all(home.root().join(INDEX)).unwrap();
        // A turn of this version, after the upgrade, is indexed as it starts.
        let new = TurnDir::new(&home, "run-25", "turn-25").unwrap();
        new.create(None).unwrap();
        std::fs::write(new.result(), "{}").unwrap();
        prune_runs(&home, None, &[]).unwrap();
        // Nobody's runs were the odd ones, and run-25: 13, under the quota.
        assert_eq!(runs(&home).len(), 26);
        let indexed = |agent| {
            std::fs::read_dir(home.root().join(INDEX).join(agent_key(agent)))
                .unwrap()
                .count()
        };
        assert_eq!((indexed(None), indexed(Some("agent-b"))), (13, 13));
        std::fs::write(home.root().join("runs/run-03").join(OWNER_FILE), "agent-b").unwrap();
        // Indexed once: a changed owner file changes nothing.
        prune_runs(&home, Some("agent-b"), &[]).unwrap();
        assert_eq!(indexed(Some("agent-b")), 13);
    }

    #[test]
    fn a_prune_asked_for_while_its_home_is_pruned_is_done_next_by_the_pruning_thread() {
        let dir = tempfile::tempdir().unwrap();
        let busy = Home::open(dir.path().join("busy")).unwrap();
        let other = Home::open(dir.path().join("other")).unwrap();
        finished_runs(&busy, |_| None);
        finished_runs(&other, |_| None);
        // Another thread of this process is pruning `busy`.
        let busy_prunes = HomePrunes {
            busy: true,
            ..HomePrunes::default()
        };
        cinch_base::sync::lock(&PRUNING).insert(busy.root().to_path_buf(), busy_prunes);

        // A prune of another home does not wait for it.
        prune_runs_unless_pruning(&other, None, "run-00").unwrap();
        // The run kept takes one of the places.
        assert_eq!(runs(&other).len(), RUNS_KEPT);
        assert_eq!(runs(&other)[..2], ["run-00", "run-06"]);
        // A prune of the same home is left to the pruning thread, which
        // prunes once more when done, keeping its run, and then lets go of
        // the home.
        prune_runs_unless_pruning(&busy, None, "run-00").unwrap();
        assert_eq!(runs(&busy).len(), 25);
        let asked = Asked {
            agent: None,
            keep: "run-00".to_owned(),
        };
        assert_eq!(cinch_base::sync::lock(&PRUNING)[busy.root()].asked, [asked]);
        let due = pruned_once(busy.root()).expect("a prune is left to do");
        prune_later(busy.clone(), due);
        assert!(within_10_s(|| runs(&busy).len() == RUNS_KEPT));
        assert_eq!(runs(&busy)[..2], ["run-00", "run-06"]);
        assert!(within_10_s(|| no_prune_left(&busy)));
    }

    #[test]
    fn prunes_asked_for_within_the_gap_are_done_together_once_it_has_passed() {
        let dir = tempfile::tempdir().unwrap();
        let home = Home::open(dir.path().join("home")).unwrap();
        finished_runs(&home, |_| None);
        prune_runs_unless_pruning(&home, None, "run-24").unwrap();
        let pruned = Instant::now();
        assert_eq!(runs(&home).len(), RUNS_KEPT);

        // Three more turns end at once: their prunes are left to a thread
        // that does them when the gap after the first has passed.
        for n in 25..28 {
            finished_run(&home, n, None);
            prune_runs_unless_pruning(&home, None, &format!("run-{n:02}")).unwrap();
        }
        if pruned.elapsed() < PRUNE_GAP / 2 {
            assert_eq!(runs(&home).len(), RUNS_KEPT + 3);
        }
        assert!(within_10_s(|| runs(&home).len() == RUNS_KEPT));
        assert!(pruned.elapsed() >= PRUNE_GAP);
        assert_eq!(runs(&home)[0], "run-08");
        assert!(within_10_s(|| no_prune_left(&home)));
    }
}
