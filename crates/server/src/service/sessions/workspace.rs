//! A session's workspace, the spec's VM: a git worktree of its
//! environment's repository on the session's branch, prepared by the
//! environment's setup commands; and committing a turn's changes there.
//!
//! Everything here runs for a tenant, so every process (git included: a
//! repository's config can name commands) runs through [`Tenant`]: in the
//! sandbox, reaching only the folders it works in and the agent's home, with
//! the environment cinch built rather than its own, and with hooks off.

use std::collections::{BTreeMap, HashMap};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::Duration;

use anyhow::{Context as _, bail};

use super::linked_worktree;
use crate::runs::repository::{is_url, local_path};
use cinch_engine::config::SandboxConfig;
use cinch_engine::redact::Redactor;
use cinch_engine::sandbox::{Cgroup, Launcher, Policy};
use cinch_store::RebuiltFrom;

/// How long one setup command may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How many of a setup command's last output lines are kept to find the
/// one its error shows.
const OUTPUT_TAIL_LINES: usize = 200;

/// How many of its last lines a failing setup command's error shows,
/// after the one that explains.
const ERROR_TAIL_LINES: usize = 5;

/// How much of one setup command's output its log keeps; past it the
/// output is read and dropped.
const SETUP_LOG_CAP: usize = 1 << 20;

/// How long a setup command that succeeded may take to finish writing its
/// output (its pipe's end) before the next command starts.
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// Why a workspace could not be made.
#[derive(Debug, thiserror::Error)]
pub(crate) enum WorkspaceError {
    /// The repository could not be had or the worktree made (the spec's VM failure).
    #[error("{0}")]
    Repository(String),
    /// A setup command failed.
    #[error("{0}")]
    Setup(String),
}

/// What a workspace is made from.
pub(crate) struct Plan<'a> {
    /// Where the workspace goes.
    pub dir: &'a Path,
    /// The environment's repository: a local path or a git URL; `None` for a
    /// fresh scratch repository.
    pub repository: Option<&'a str>,
    /// Where a cloned repository is kept.
    pub clone_dir: &'a Path,
    /// The session's branch.
    pub branch: &'a str,
    /// The branch to start from; the repository's HEAD when `None`.
    pub base_branch: Option<&'a str>,
    /// Setup commands, run in order with `sh -c`.
    pub setup: &'a [String],
    /// A private temporary folder for the setup commands (their `TMPDIR`).
    pub tmp_dir: &'a Path,
    /// Where the setup commands' whole output goes (redacted), each after
    /// a `$ <command>` line.
    pub setup_log: &'a Path,
    /// How the tenant's processes run.
    pub tenant: &'a Tenant,
    /// Masks secrets in a setup command's output.
    pub redactor: &'a Redactor,
    /// Set when the workspace was another node's: how to make it again here.
    pub rebuild: Option<Rebuild<'a>>,
    /// Set for a fork: the checkpoint its work tree starts from.
    pub fork: Option<ForkFrom<'a>>,
}

/// Where a fork's work tree starts: another session's end checkpoint.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ForkFrom<'a> {
    /// The source session: its checkpoint refs are its run's.
    pub run: &'a str,
    /// The end checkpoint of the turn forked at.
    pub checkpoint: &'a str,
    /// The source's workspace, when it is on this node: a repository of its
    /// own (a scratch one) has the checkpoint only there.
    pub source_dir: Option<&'a Path>,
    /// The checkpoint remote, when the operator named one: the source may be
    /// on another node.
    pub remote: Option<&'a str>,
}

/// How a session's workspace, last on another node, is made again here.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rebuild<'a> {
    /// The session: its checkpoint refs are its run's.
    pub run: &'a str,
    /// Its last end checkpoint, when a turn of it ended with one.
    pub checkpoint: Option<&'a str>,
    /// The checkpoint remote, when the operator named one.
    pub remote: Option<&'a str>,
}

/// How much a workspace's git and setup commands yield the CPU: a session
/// being set up must not delay the lines of the turns already running (on 2
/// cores, 200 sessions' set-up held their lines' p99 at 12-39 ms).
const WORKSPACE_NICENESS: i32 = 10;

/// How cinch runs processes for one tenant: in the sandbox (through
/// `launcher`), with exactly `env`, `home` as the agent's home.
#[derive(Debug, Clone)]
pub(crate) struct Tenant {
    /// Starts processes in the sandbox (or not, under `--no-sandbox`).
    pub launcher: Launcher,
    /// The whole environment the processes get.
    pub env: BTreeMap<String, String>,
    /// The agent's home, writable.
    pub home: PathBuf,
    /// Readable besides the system: a `file://` repository being cloned.
    pub read_only: Vec<PathBuf>,
    /// The operator's widening and limits.
    pub config: SandboxConfig,
    /// When set, setup commands reach the network only through a proxy
    /// admitting these hosts (the environment's `allowed_hosts`).
    pub allowed_hosts: Option<Vec<String>>,
}

impl Tenant {
    /// `program args` in `cwd`, reaching (read-write) only `dirs` and the home.
    fn command(&self, dirs: &[&Path], cwd: &Path, program: &str, args: &[&str]) -> Command {
        let policy = self.policy(dirs);
        self.command_under(&policy, cwd, program, args)
    }

    fn policy(&self, dirs: &[&Path]) -> Policy {
        let mut policy = Policy::for_tenant(dirs, Some(&self.home), &self.config);
        policy.read_only.extend(self.read_only.iter().cloned());
        policy.niceness = WORKSPACE_NICENESS;
        policy
    }

    fn command_under(&self, policy: &Policy, cwd: &Path, program: &str, args: &[&str]) -> Command {
        let mut command = self.launcher.command(policy, program, args);
        command
            .current_dir(cwd)
            .env_clear()
            .envs(&self.env)
            .env("HOME", &self.home)
            .stdin(Stdio::null());
        command
    }
}

/// Whether `name` is a valid branch name. A NUL is refused before git2
/// sees the name: git2 panics on one (it makes a C string of the name).
pub(crate) fn is_valid_branch(name: &str) -> bool {
    !name.contains('\0') && git2::Reference::is_valid_name(&format!("refs/heads/{name}"))
}

/// Makes the workspace: a worktree on `plan.branch`, then the setup
/// commands. A workspace made again after another node had it gets the
/// files of its last end checkpoint when the checkpoint remote has it, else
/// stays as the branch was last committed; which one, it says.
pub(crate) fn create(plan: &Plan) -> Result<Option<RebuiltFrom>, WorkspaceError> {
    let repository_failed = |error: anyhow::Error| WorkspaceError::Repository(format!("{error:#}"));
    let repository = match plan.repository {
        None => {
            let made_now = !plan.dir.join(".git").exists();
            scratch(plan.tenant, plan.dir).map_err(repository_failed)?;
            if let (Some(fork), true) = (plan.fork, made_now) {
                let start = fork_start(plan, plan.dir, fork).map_err(repository_failed)?;
                git(
                    plan.tenant,
                    &[plan.dir],
                    plan.dir,
                    &["reset", "-q", "--hard", &start],
                )
                .map_err(repository_failed)?;
                checkout_checkpoint(plan, fork).map_err(repository_failed)?;
            }
            return rebuild_files(plan).map_err(repository_failed);
        }
        Some(repository) if is_url(repository) => PathBuf::from(plan.clone_dir),
        Some(repository) => PathBuf::from(repository),
    };
    let made_now = !plan.dir.join(".git").exists();
    {
        // Two boots at once in one repository race on its worktree list.
        let lock = repository_lock(&repository);
        let held = cinch_base::sync::lock(&lock);
        if let Some(url) = plan.repository.filter(|repository| is_url(repository)) {
            fetch(plan.tenant, url, plan.clone_dir).map_err(repository_failed)?;
        }
        if made_now {
            let start = match plan.fork {
                Some(fork) => Some(fork_start(plan, &repository, fork).map_err(repository_failed)?),
                None => None,
            };
            add_worktree(&repository, plan, start.as_deref(), held).map_err(repository_failed)?;
        }
    }
    if let (Some(fork), true) = (plan.fork, made_now) {
        checkout_checkpoint(plan, fork).map_err(repository_failed)?;
    }
    let rebuilt = rebuild_files(plan).map_err(repository_failed)?;
    for command in plan.setup {
        run_setup(command, plan)?;
    }
    Ok(rebuilt)
}

/// For a workspace made again here: its files as of the last end
/// checkpoint, fetched from the checkpoint remote, when both exist; else
/// the branch as last committed. `None` for a new workspace.
fn rebuild_files(plan: &Plan) -> anyhow::Result<Option<RebuiltFrom>> {
    let Some(rebuild) = plan.rebuild else {
        return Ok(None);
    };
    let (Some(checkpoint), Some(remote)) = (rebuild.checkpoint, rebuild.remote) else {
        return Ok(Some(RebuiltFrom::Branch));
    };
    let remote_dir = local_path(remote).filter(|path| path.exists());
    let dirs: Vec<&Path> = std::iter::once(plan.dir).chain(remote_dir).collect();
    let git = |args: &[&str]| git(plan.tenant, &dirs, plan.dir, args);
    if let Err(error) = cinch_engine::checkpoint::remote::fetch(git, remote, rebuild.run) {
        tracing::warn!(session = %rebuild.run, "rebuilding from the branch: {error:#}");
        return Ok(Some(RebuiltFrom::Branch));
    }
    // The checkpoint's files become the work tree's (files it lacks go), and
    // the index goes back to HEAD: what the turn left uncommitted is
    // uncommitted again, as it was on the other node.
    git(&["read-tree", "-u", "--reset", checkpoint])?;
    git(&["reset", "-q"])?;
    Ok(Some(RebuiltFrom::Checkpoint))
}

/// Where a fork's branch starts in `repository`: the parent of the
/// checkpoint (HEAD when the source's turn ended). A repository that lacks
/// the checkpoint fetches it from the checkpoint remote, else from the
/// source's workspace when that is on this machine.
fn fork_start(plan: &Plan, repository: &Path, fork: ForkFrom) -> anyhow::Result<String> {
    let commit = format!("{}^{{commit}}", fork.checkpoint);
    let has_it = |tenant: &Tenant| {
        git(
            tenant,
            &[repository],
            repository,
            &["cat-file", "-e", &commit],
        )
        .is_ok()
    };
    if !has_it(plan.tenant) {
        // The checkpoint remote first, which every node reaches; else the
        // source's own folder, when it is on this machine.
        let source = fork
            .source_dir
            .filter(|dir| dir.join(".git").exists())
            .map(|dir| dir.display().to_string());
        let places: Vec<&str> = fork.remote.into_iter().chain(source.as_deref()).collect();
        if places.is_empty() {
            bail!(
                "the checkpoint {} of session {} is not in this repository, and there is no \
                 checkpoint remote to fetch it from (`cinch serve --checkpoint-remote`)",
                fork.checkpoint,
                fork.run
            );
        }
        let mut failures = Vec::new();
        for from in places {
            // The place (a folder of this machine) is read, never written.
            let mut tenant = plan.tenant.clone();
            tenant.read_only.extend(
                local_path(from)
                    .filter(|path| path.exists())
                    .map(Path::to_path_buf),
            );
            let fetched = cinch_engine::checkpoint::remote::fetch(
                |args: &[&str]| git(&tenant, &[repository], repository, args),
                from,
                fork.run,
            );
            match fetched {
                Ok(()) if has_it(&tenant) => break,
                Ok(()) => failures.push(format!("{from} has no such commit")),
                Err(error) => failures.push(format!("{error:#}")),
            }
        }
        anyhow::ensure!(
            has_it(plan.tenant),
            "the checkpoint {} of session {} could not be had: {}",
            fork.checkpoint,
            fork.run,
            failures.join("; ")
        );
    }
    let parent = format!("{}~1", fork.checkpoint);
    git(
        plan.tenant,
        &[repository],
        repository,
        &["rev-parse", "--verify", "-q", &parent],
    )
    .with_context(|| format!("the checkpoint {} has no parent commit", fork.checkpoint))?;
    Ok(parent)
}

/// Makes a fork's fresh work tree the checkpoint's files (files it lacks
/// go), the index back to HEAD: what the source's turn left uncommitted is
/// uncommitted here too.
fn checkout_checkpoint(plan: &Plan, fork: ForkFrom) -> anyhow::Result<()> {
    let git = |args: &[&str]| git(plan.tenant, &[plan.dir], plan.dir, args);
    git(&["read-tree", "-u", "--reset", fork.checkpoint])?;
    git(&["reset", "-q"])?;
    Ok(())
}

/// Pushes the session's checkpoint refs from its workspace `dir` to the
/// checkpoint remote, for the node that may take it over.
pub(crate) fn push_checkpoints(
    tenant: &Tenant,
    dir: &Path,
    remote: &str,
    run: &str,
) -> anyhow::Result<()> {
    let remote_dir = local_path(remote).filter(|path| path.exists());
    let dirs: Vec<&Path> = std::iter::once(dir).chain(remote_dir).collect();
    cinch_engine::checkpoint::remote::push(
        |args: &[&str]| git(tenant, &dirs, dir, args),
        remote,
        run,
    )
}

/// Fetches the run's checkpoint refs from the checkpoint remote into the
/// repository of the workspace `dir`.
pub(crate) fn fetch_checkpoints(
    tenant: &Tenant,
    dir: &Path,
    remote: &str,
    run: &str,
) -> anyhow::Result<()> {
    let remote_dir = local_path(remote).filter(|path| path.exists());
    let mut tenant = tenant.clone();
    tenant.read_only.extend(remote_dir.map(Path::to_path_buf));
    cinch_engine::checkpoint::remote::fetch(
        |args: &[&str]| git(&tenant, &[dir], dir, args),
        remote,
        run,
    )
}

/// One lock per repository, held while cinch changes its worktrees.
fn repository_lock(repository: &Path) -> Arc<Mutex<()>> {
    static LOCKS: LazyLock<Mutex<HashMap<PathBuf, Arc<Mutex<()>>>>> =
        LazyLock::new(Default::default);
    let key = repository
        .canonicalize()
        .unwrap_or_else(|_| repository.to_path_buf());
    let mut locks = cinch_base::sync::lock(&LOCKS);
    locks.entry(key).or_default().clone()
}

/// A fresh repository with one empty commit, for a session without an environment.
fn scratch(tenant: &Tenant, dir: &Path) -> anyhow::Result<()> {
    if dir.join(".git").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    git(tenant, &[dir], dir, &["init", "-q"])?;
    commit_as_cinch(
        tenant,
        dir,
        &["--allow-empty", "-m", "cinch: empty workspace"],
    )?;
    Ok(())
}

/// Clones `url` into `dir`, or fetches when it is there already.
fn fetch(tenant: &Tenant, url: &str, dir: &Path) -> anyhow::Result<()> {
    if dir.join("HEAD").exists() || dir.join(".git").exists() {
        return git(tenant, &[dir], dir, &["fetch", "-q", "--all"]).map(drop);
    }
    // The sandbox grants folders that exist: the clone goes into an empty one.
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    git(tenant, &[dir], dir, &["clone", "-q", url, "."])
        .with_context(|| format!("cloning {url}"))
        .map(drop)
}

/// Adds the worktree on the session's branch, made new from `start` when
/// given (a fork's), else from the base branch. `held`: the repository's
/// lock, let go as soon as nothing two adds share is changed any more.
fn add_worktree(
    repository: &Path,
    plan: &Plan,
    start: Option<&str>,
    held: std::sync::MutexGuard<'_, ()>,
) -> anyhow::Result<()> {
    anyhow::ensure!(
        repository.join(".git").exists() || repository.join("HEAD").exists(),
        "{} is not a git repository",
        repository.display()
    );
    // Made empty first, so that the sandbox can grant it to git.
    std::fs::create_dir_all(plan.dir)
        .with_context(|| format!("creating {}", plan.dir.display()))?;
    let dirs = [repository, plan.dir];
    let git = |args: &[&str]| git(plan.tenant, &dirs, repository, args);
    let dir = plan.dir.display().to_string();
    let branch_exists = || {
        let branch = format!("refs/heads/{}", plan.branch);
        git(&["rev-parse", "--verify", "-q", &branch]).is_ok()
    };
    if plan.rebuild.is_some() && branch_exists() {
        // The node that had it may have left it checked out in a worktree
        // of a repository both reach; that worktree is gone with the node.
        return git(&["worktree", "add", "-q", "--force", &dir, plan.branch]).map(drop);
    }
    // In a clone, the base branch may exist only as the remote's.
    let base = start.map(str::to_owned).or_else(|| {
        plan.base_branch.map(|base| {
            let local = format!("refs/heads/{base}");
            if git(&["rev-parse", "--verify", "-q", &local]).is_ok() {
                base.to_owned()
            } else {
                format!("origin/{base}")
            }
        })
    });
    // A new session's branch from a local one (no upstream to record in
    // the repository's config) is its own; so is its link: neither needs
    // the lock, and the link's time does not grow with the worktrees the
    // repository has, as `git worktree add`'s does.
    let tracks = base
        .as_deref()
        .is_some_and(|base| base.starts_with("origin/"));
    if start.is_none()
        && plan.rebuild.is_none()
        && !tracks
        && let Some(common) = linked_worktree::common_dir(repository)
    {
        drop(held);
        match linked_worktree::link(&common, plan.dir, plan.branch) {
            Ok(linked) => {
                // git makes the branch as it checks it out, in one
                // sandboxed process: a process costs 1-2 ms of the
                // machine's CPU just to start here, and `git branch`
                // first made it two. Starting 1,000 sessions side by side
                // took 18.5-21.5 ms of the machine's CPU a session against
                // 22.6-24.3 with it.
                let start_point = base.as_deref().unwrap_or(REPOSITORY_HEAD);
                let checkout = [
                    "checkout",
                    "-q",
                    "--no-recurse-submodules",
                    "-b",
                    plan.branch,
                    start_point,
                ];
                let Err(error) = self::git(plan.tenant, &dirs, plan.dir, &checkout) else {
                    return Ok(());
                };
                // The branch is there already, or the repository has no
                // commit yet: for `git worktree add` to handle or explain,
                // once the link is gone.
                if !linked.take_back() {
                    return Err(error.context(
                        "git left files in the work tree's link, so it is kept for `git worktree prune`",
                    ));
                }
            }
            // A link or a file where the git folder should have a folder:
            // cinch writes nothing through it, and git, in the sandbox,
            // adds the worktree or says why not.
            Err(error) => tracing::warn!(
                repository = %repository.display(),
                "linking a session's worktree directly failed, so git worktree add makes it: {error:#}"
            ),
        }
        let lock = repository_lock(repository);
        let _held = cinch_base::sync::lock(&lock);
        return add_with_git(plan, &dirs, repository, &dir, start, base.as_deref());
    }
    add_with_git(plan, &dirs, repository, &dir, start, base.as_deref())
}

/// The repository's own HEAD, as a linked work tree names it: where `git
/// branch` starts a branch given no start point.
const REPOSITORY_HEAD: &str = "main-worktree/HEAD";

/// `git worktree add` of the session's branch, made new from `base` (or
/// HEAD), in `dir`.
fn add_with_git(
    plan: &Plan,
    dirs: &[&Path],
    repository: &Path,
    dir: &str,
    start: Option<&str>,
    base: Option<&str>,
) -> anyhow::Result<()> {
    let git = |args: &[&str]| git(plan.tenant, dirs, repository, args);
    let branch_exists = || {
        let branch = format!("refs/heads/{}", plan.branch);
        git(&["rev-parse", "--verify", "-q", &branch]).is_ok()
    };
    // A new session's branch is new too, so making it comes first: one git
    // process (a sandboxed start each) for most sessions.
    let mut args = vec!["worktree", "add", "-q", "-b", plan.branch, dir];
    if start.is_some() {
        // A fork's files are the checkpoint's, written once by its checkout
        // (not the branch's first: 20,000 files took 1.6 s instead of 1.1).
        args.insert(3, "--no-checkout");
    }
    args.extend(base);
    match git(&args) {
        Err(_) if branch_exists() => git(&["worktree", "add", "-q", dir, plan.branch]).map(drop),
        made => made.map(drop),
    }
}

fn run_setup(command: &str, plan: &Plan) -> Result<(), WorkspaceError> {
    // `command` names the builder below; the log takes the command's text.
    let command_line = command;
    let failed = |why: String| {
        WorkspaceError::Setup(
            plan.redactor
                .redact(format!("setup command `{command}` {why}")),
        )
    };
    let mut policy = plan.tenant.policy(&[plan.dir, plan.tmp_dir]);
    let name = plan.dir.file_name().unwrap_or_default().to_string_lossy();
    let cgroup = Cgroup::create(&format!("cinch-setup-{name}"), &policy.limits);
    policy.cgroups = cgroup.procs_files();
    // Beside the temporary folder, out of the command's reach.
    let refusals = plan.tmp_dir.with_extension("egress-refusals.jsonl");
    let confined = plan.tenant.launcher.mode() == cinch_engine::sandbox::Mode::Enforced;
    policy.egress = plan
        .tenant
        .allowed_hosts
        .clone()
        .filter(|_| confined)
        .map(|allowed_hosts| cinch_engine::sandbox::Egress {
            allowed_hosts,
            refusals: Some(refusals.clone()),
        });
    let start = || -> std::io::Result<(std::process::Child, std::thread::JoinHandle<String>)> {
        let (reader, writer) = std::io::pipe()?;
        let mut command = plan
            .tenant
            .command_under(&policy, plan.dir, "sh", &["-c", command]);
        if policy.egress.is_some() {
            let (set, removed) = cinch_engine::sandbox::egress::proxy_env();
            command.envs(set);
            for name in removed {
                command.env_remove(name);
            }
        }
        let child = command
            .env("TMPDIR", plan.tmp_dir)
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .process_group(0)
            .spawn()?;
        let log = SetupLog::open(plan.setup_log, command_line, plan.redactor.clone())?;
        Ok((child, std::thread::spawn(move || log.follow(reader))))
    };
    let result = start()
        .map_err(|error| failed(format!("could not start: {error}")))
        .and_then(|(child, output)| wait_setup(child, output, &failed));
    cgroup.remove();
    if policy.egress.is_some() {
        // Each refusal is in the command's output too, where its user reads it.
        let refused = cinch_engine::sandbox::egress::RefusalFeed::new(&refusals).next_refusals();
        for _ in &refused {
            cinch_engine::metrics::egress_refused("setup");
        }
        let _ = std::fs::remove_file(&refusals);
    }
    result
}

fn wait_setup(
    mut child: std::process::Child,
    output: std::thread::JoinHandle<String>,
    failed: &dyn Fn(String) -> WorkspaceError,
) -> Result<(), WorkspaceError> {
    let status = match cinch_engine::exit::wait_for(&mut child, SETUP_TIMEOUT) {
        Ok(Some(status)) => status,
        Ok(None) => {
            kill_group(&mut child);
            return Err(failed(format!(
                "ran past {} minutes and was stopped",
                SETUP_TIMEOUT.as_secs() / 60
            )));
        }
        Err(error) => return Err(failed(format!("could not be waited for: {error}"))),
    };
    if status.success() {
        // A service the command started in the background carries on (in
        // the sandbox) and keeps the output pipe open, so the pipe is
        // waited for a moment only: long enough for the command's own last
        // lines to reach the log before the next command's line does.
        let deadline = std::time::Instant::now() + OUTPUT_DRAIN;
        while !output.is_finished() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(2));
        }
        return Ok(());
    }
    kill_group(&mut child);
    let output = output.join().unwrap_or_default();
    let code = status
        .code()
        .map_or_else(|| "a signal".to_owned(), |code| format!("exit code {code}"));
    let Some(cause) = cinch_engine::headline::pick(&output) else {
        return Err(failed(format!("failed with {code} and no output")));
    };
    let tail = cinch_engine::headline::last_meaningful(&output, ERROR_TAIL_LINES);
    let tail = if tail.len() > 1 || tail.first() != Some(&cause) {
        format!("; its last lines: {}", tail.join(" | "))
    } else {
        String::new()
    };
    Err(failed(format!(
        "failed with {code}: {cause}{tail} (the session's setup log has its whole output)"
    )))
}

/// Kills what is left of a setup command's process group and reaps it.
fn kill_group(child: &mut std::process::Child) {
    // SAFETY: kill with a negative pid signals the child's own process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
}

/// A setup command's output on its way to the setup log.
struct SetupLog {
    file: std::fs::File,
    redactor: Redactor,
}

impl SetupLog {
    /// Opens the log for appending (mode 0600) and writes the command's line.
    fn open(path: &Path, command: &str, redactor: Redactor) -> std::io::Result<Self> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        writeln!(file, "$ {}", redactor.redact(command))?;
        Ok(Self { file, redactor })
    }

    /// Copies the command's output into the log, redacted, up to
    /// [`SETUP_LOG_CAP`] bytes; returns its last lines, to find the one
    /// that explains a failure.
    fn follow(mut self, reader: impl std::io::Read) -> String {
        use std::io::{BufRead as _, Write as _};
        let mut tail = std::collections::VecDeque::new();
        let mut written = 0;
        let mut reader = std::io::BufReader::new(reader);
        let mut bytes = Vec::new();
        // Read to the end whatever it prints (not UTF-8 included): a pipe
        // left full would stall the command.
        while matches!(reader.read_until(b'\n', &mut bytes), Ok(read) if read > 0) {
            let text = String::from_utf8_lossy(&bytes);
            let line = self.redactor.redact(text.trim_end_matches(['\n', '\r']));
            bytes.clear();
            if written < SETUP_LOG_CAP {
                written += line.len() + 1;
                // One write a line: a background service's output, still
                // coming after its command ended, never splits a line of
                // the log.
                let mut whole = Vec::with_capacity(line.len() + 1);
                whole.extend_from_slice(line.as_bytes());
                whole.push(b'\n');
                if written >= SETUP_LOG_CAP {
                    whole.extend_from_slice(b"[output past 1 MiB not kept]\n");
                }
                let _ = self.file.write_all(&whole);
            }
            if tail.len() == OUTPUT_TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(line);
        }
        Vec::from(tail).join("\n")
    }
}

/// Whether the workspace has changes no commit holds.
pub(crate) fn has_changes(tenant: &Tenant, dir: &Path) -> anyhow::Result<bool> {
    let status = git(tenant, &[dir], dir, &["status", "--porcelain"])?;
    Ok(!status.trim().is_empty())
}

/// Commits everything the turn changed in the workspace on its branch;
/// `None` when nothing changed.
pub(crate) fn commit_changes(
    tenant: &Tenant,
    dir: &Path,
    message: &str,
) -> anyhow::Result<Option<String>> {
    let git = |args: &[&str]| git(tenant, &[dir], dir, args);
    if !has_changes(tenant, dir)? {
        return Ok(None);
    }
    git(&["add", "-A"])?;
    commit_as_cinch(tenant, dir, &["--no-verify", "-m", message])?;
    Ok(Some(git(&["rev-parse", "HEAD"])?.trim().to_owned()))
}

/// `git commit -q` in `dir` with `args`, authored by cinch (a workspace's
/// repository may have no identity configured).
fn commit_as_cinch(tenant: &Tenant, dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let mut command = vec![
        "-c",
        "user.name=cinch",
        "-c",
        "user.email=cinch@localhost",
        "commit",
        "-q",
    ];
    command.extend(args);
    git(tenant, &[dir], dir, &command).map(drop)
}

/// Pushes the workspace `dir`'s branch `branch` to the environment's
/// `repository` (a local path, or a git URL the workspace was cloned from),
/// named `target` there. A local repository already holds the session's
/// branch (the workspace is its worktree): only another name is pushed.
/// Returns the repository's default branch, when it tells one.
pub(crate) fn push_branch(
    tenant: &Tenant,
    dir: &Path,
    repository: &str,
    branch: &str,
    target: &str,
) -> anyhow::Result<Option<String>> {
    let refspec = format!("refs/heads/{branch}:refs/heads/{target}");
    match local_path(repository).filter(|_| !is_url(repository)) {
        Some(source) => {
            let dirs = [dir, source];
            if target != branch {
                let source = source.display().to_string();
                git(tenant, &dirs, dir, &["push", "-q", &source, &refspec])?;
            }
            let head = git(
                tenant,
                &dirs,
                source,
                &["symbolic-ref", "-q", "--short", "HEAD"],
            );
            Ok(head.ok().map(|name| name.trim().to_owned()))
        }
        None => {
            // A `file://` remote is written to; any other is reached over the network.
            let remote_dir = local_path(repository).filter(|path| path.exists());
            let dirs: Vec<&Path> = std::iter::once(dir).chain(remote_dir).collect();
            // To the URL, not `origin`: the clone's remote-tracking refs are
            // not the tenant's to write.
            git(tenant, &dirs, dir, &["push", "-q", repository, &refspec])?;
            let head = git(
                tenant,
                &dirs,
                dir,
                &["symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"],
            );
            Ok(head.ok().and_then(|name| {
                let name = name.trim();
                name.strip_prefix("origin/").map(str::to_owned)
            }))
        }
    }
}

/// Runs git in `cwd` for the tenant, reaching `dirs`; its stdout, or an
/// error with its stderr. Hooks never run: cinch's own git operations are
/// not the tenant's to extend.
fn git(tenant: &Tenant, dirs: &[&Path], cwd: &Path, args: &[&str]) -> anyhow::Result<String> {
    let mut full = vec!["-c", "core.hooksPath=/dev/null"];
    full.extend(args);
    let output = tenant
        .command(dirs, cwd, "git", &full)
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .with_context(|| format!("running git {}", args.join(" ")))?;
    if !output.status.success() {
        bail!(
            "git {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_follow_git() {
        assert!(is_valid_branch("fix/checkout-flake-alt"));
        assert!(!is_valid_branch("two words"));
        assert!(!is_valid_branch("a..b"));
        assert!(!is_valid_branch("refs\0r"));
    }
}
