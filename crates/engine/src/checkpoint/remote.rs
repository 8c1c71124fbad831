//! The checkpoint remote: a git repository every node reaches (a bare one on
//! shared storage, or a git URL) to which a session's checkpoint refs are
//! pushed after each turn, and from which the node that takes the session
//! over fetches them to rebuild its work tree.
//!
//! Git runs through the caller's `git` (a workspace's git runs for a tenant,
//! in the sandbox); this module only knows which refs go where.

use anyhow::Context as _;

/// The refs of one run's (a session's) checkpoints.
pub(crate) fn run_refs(run: &str) -> String {
    format!("refs/cinch/runs/{run}/")
}

/// The refspec that copies a run's checkpoint refs as they are, replacing
/// what the other side had under them.
fn refspec(run: &str) -> String {
    let refs = run_refs(run);
    format!("+{refs}*:{refs}*")
}

/// Pushes the run's checkpoint refs from the repository `git` runs in to `remote`.
pub fn push(
    git: impl Fn(&[&str]) -> anyhow::Result<String>,
    remote: &str,
    run: &str,
) -> anyhow::Result<()> {
    git(&["push", "-q", "--no-verify", remote, &refspec(run)])
        .with_context(|| format!("pushing the checkpoints of {run} to {remote}"))
        .map(drop)
}

/// Fetches the run's checkpoint refs from `remote` into the repository `git`
/// runs in.
pub fn fetch(
    git: impl Fn(&[&str]) -> anyhow::Result<String>,
    remote: &str,
    run: &str,
) -> anyhow::Result<()> {
    git(&["fetch", "-q", "--no-tags", remote, &refspec(run)])
        .with_context(|| format!("fetching the checkpoints of {run} from {remote}"))
        .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;
    use std::process::Command;

    fn git_in(dir: &Path) -> impl Fn(&[&str]) -> anyhow::Result<String> + '_ {
        move |args: &[&str]| {
            let output = Command::new("git").current_dir(dir).args(args).output()?;
            anyhow::ensure!(
                output.status.success(),
                "git {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        }
    }

    #[test]
    fn a_runs_checkpoints_go_through_the_remote_and_no_other_run_s() {
        let dir = tempfile::tempdir().unwrap();
        let (here, remote, there) = (
            dir.path().join("here"),
            dir.path().join("remote.git"),
            dir.path().join("there"),
        );
        for repo in [&here, &there] {
            std::fs::create_dir_all(repo).unwrap();
            git_in(repo)(&["init", "-q"]).unwrap();
        }
        git_in(dir.path())(&["init", "-q", "--bare", "remote.git"]).unwrap();
        std::fs::write(here.join("file.txt"), "work\n").unwrap();
        let end =
            crate::checkpoint::take(&here, "refs/cinch/runs/ses_a/tasks/c1/end", "end").unwrap();
        crate::checkpoint::take(&here, "refs/cinch/runs/ses_b/tasks/c1/end", "other").unwrap();

        let remote_path = remote.display().to_string();
        push(git_in(&here), &remote_path, "ses_a").unwrap();
        fetch(git_in(&there), &remote_path, "ses_a").unwrap();
        let fetched =
            git_in(&there)(&["for-each-ref", "--format=%(refname) %(objectname)"]).unwrap();
        assert_eq!(
            fetched,
            format!("refs/cinch/runs/ses_a/tasks/c1/end {}\n", end.sha)
        );
        let file = git_in(&there)(&["show", &format!("{}:file.txt", end.sha)]).unwrap();
        assert_eq!(file, "work\n");
    }
}
