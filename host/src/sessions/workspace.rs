//! A session's workspace, the spec's VM: a git worktree of its
//! environment's repository on the session's branch, prepared by the
//! environment's setup commands; and committing a turn's changes there.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context as _, bail};

use crate::redact::Redactor;

/// How long one setup command may run.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// How much of a failing setup command's output its error shows.
const OUTPUT_TAIL_LINES: usize = 5;

/// Why a workspace could not be made.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// The repository could not be had or the worktree made (the spec's VM failure).
    #[error("{0}")]
    Repository(String),
    /// A setup command failed.
    #[error("{0}")]
    Setup(String),
}

/// What a workspace is made from.
pub struct Plan<'a> {
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
    /// The variables setup commands run with (on top of PATH).
    pub env: &'a BTreeMap<String, String>,
    /// Masks secrets in a setup command's output.
    pub redactor: &'a Redactor,
}

/// Whether `name` is a valid branch name.
pub fn is_valid_branch(name: &str) -> bool {
    git2::Reference::is_valid_name(&format!("refs/heads/{name}"))
}

/// Whether `repository` names a git remote rather than a local path.
pub fn is_url(repository: &str) -> bool {
    repository.contains("://") || repository.starts_with("git@")
}

/// Makes the workspace: a worktree on `plan.branch`, then the setup commands.
pub fn create(plan: &Plan) -> Result<(), WorkspaceError> {
    let repository = match plan.repository {
        None => {
            return scratch(plan.dir)
                .map_err(|error| WorkspaceError::Repository(format!("{error:#}")));
        }
        Some(repository) if is_url(repository) => {
            fetch(repository, plan.clone_dir)
                .map_err(|error| WorkspaceError::Repository(format!("{error:#}")))?;
            plan.clone_dir.to_path_buf()
        }
        Some(repository) => PathBuf::from(repository),
    };
    if !plan.dir.exists() {
        add_worktree(&repository, plan)
            .map_err(|error| WorkspaceError::Repository(format!("{error:#}")))?;
    }
    for command in plan.setup {
        run_setup(command, plan)?;
    }
    Ok(())
}

/// A fresh repository with one empty commit, for a session without an environment.
fn scratch(dir: &Path) -> anyhow::Result<()> {
    if dir.join(".git").exists() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    git(dir, &["init", "-q"])?;
    commit_as_cinch(dir, &["--allow-empty", "-m", "cinch: empty workspace"])?;
    Ok(())
}

/// Clones `url` into `dir`, or fetches when it is there already.
fn fetch(url: &str, dir: &Path) -> anyhow::Result<()> {
    if dir.join("HEAD").exists() || dir.join(".git").exists() {
        return git(dir, &["fetch", "-q", "--all"]).map(drop);
    }
    let parent = dir.parent().context("a clone needs a parent folder")?;
    std::fs::create_dir_all(parent)?;
    git(parent, &["clone", "-q", url, &dir.display().to_string()])
        .with_context(|| format!("cloning {url}"))
        .map(drop)
}

fn add_worktree(repository: &Path, plan: &Plan) -> anyhow::Result<()> {
    anyhow::ensure!(
        repository.join(".git").exists() || repository.join("HEAD").exists(),
        "{} is not a git repository",
        repository.display()
    );
    let dir = plan.dir.display().to_string();
    let branch_exists = git(
        repository,
        &[
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{}", plan.branch),
        ],
    )
    .is_ok();
    if branch_exists {
        git(repository, &["worktree", "add", "-q", &dir, plan.branch])?;
    } else {
        // In a clone, the base branch may exist only as the remote's.
        let base = plan.base_branch.map(|base| {
            let local = format!("refs/heads/{base}");
            if git(repository, &["rev-parse", "--verify", "-q", &local]).is_ok() {
                base.to_owned()
            } else {
                format!("origin/{base}")
            }
        });
        let mut args = vec!["worktree", "add", "-q", "-b", plan.branch, &dir];
        args.extend(base.as_deref());
        git(repository, &args)?;
    }
    Ok(())
}

fn run_setup(command: &str, plan: &Plan) -> Result<(), WorkspaceError> {
    let failed = |why: String| {
        WorkspaceError::Setup(
            plan.redactor
                .redact(&format!("setup command `{command}` {why}")),
        )
    };
    let start = || -> std::io::Result<(std::process::Child, std::thread::JoinHandle<String>)> {
        let (reader, writer) = std::io::pipe()?;
        let child = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(plan.dir)
            .envs(plan.env)
            .stdin(Stdio::null())
            .stdout(writer.try_clone()?)
            .stderr(writer)
            .spawn()?;
        Ok((child, std::thread::spawn(move || output_tail(reader))))
    };
    let (mut child, output) =
        start().map_err(|error| failed(format!("could not start: {error}")))?;
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() > SETUP_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(failed(format!(
                    "ran past {} minutes and was stopped",
                    SETUP_TIMEOUT.as_secs() / 60
                )));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => return Err(failed(format!("could not be waited for: {error}"))),
        }
    };
    // A background process the command left holding the pipe must not hold the session.
    let output = if status.success() {
        String::new()
    } else {
        output.join().unwrap_or_default()
    };
    if status.success() {
        return Ok(());
    }
    let code = status
        .code()
        .map_or_else(|| "a signal".to_owned(), |code| format!("exit code {code}"));
    Err(failed(format!("failed with {code}: {output}")))
}

/// The last lines a command printed, joined on one line.
fn output_tail(reader: impl std::io::Read) -> String {
    use std::io::BufRead as _;
    let mut tail = std::collections::VecDeque::new();
    for line in std::io::BufReader::new(reader).lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        if tail.len() == OUTPUT_TAIL_LINES {
            tail.pop_front();
        }
        tail.push_back(line);
    }
    if tail.is_empty() {
        "no output".to_owned()
    } else {
        Vec::from(tail).join(" | ")
    }
}

/// Commits everything the turn changed in the workspace on its branch;
/// `None` when nothing changed.
pub fn commit_changes(dir: &Path, message: &str) -> anyhow::Result<Option<String>> {
    if git(dir, &["status", "--porcelain"])?.trim().is_empty() {
        return Ok(None);
    }
    git(dir, &["add", "-A"])?;
    commit_as_cinch(dir, &["--no-verify", "-m", message])?;
    Ok(Some(git(dir, &["rev-parse", "HEAD"])?.trim().to_owned()))
}

/// `git commit -q` in `dir` with `args`, authored by cinch (a workspace's
/// repository may have no identity configured).
fn commit_as_cinch(dir: &Path, args: &[&str]) -> anyhow::Result<()> {
    let mut command = vec![
        "-c",
        "user.name=cinch",
        "-c",
        "user.email=cinch@localhost",
        "commit",
        "-q",
    ];
    command.extend(args);
    git(dir, &command).map(drop)
}

/// Runs git in `dir`; its stdout, or an error with its stderr.
fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let output = Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(Stdio::null())
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
        assert!(is_url("https://example.com/a.git") && is_url("git@host:a.git"));
        assert!(!is_url("/srv/repo"));
    }
}
