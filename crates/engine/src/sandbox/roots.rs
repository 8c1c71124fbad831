//! Which local repositories an environment may name: a harness gets
//! read-write access to its repository, so the operator decides where those
//! may lie.

use std::path::{Path, PathBuf};

/// The operator's repository roots and the home they must stay clear of.
#[derive(Debug, Clone)]
pub struct RepositoryRoots {
    roots: Vec<PathBuf>,
    private: PathBuf,
}

impl RepositoryRoots {
    /// `roots` (`--repository-root`) and cinch's home `private`.
    pub fn new(roots: &[PathBuf], private: &Path) -> Self {
        let canonical = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        Self {
            roots: roots.iter().map(|root| canonical(root)).collect(),
            private: canonical(private),
        }
    }

    /// Whether `path` may be used; the reason, for the client, when not.
    /// The first account (the operator's own) may use any path when no
    /// roots are set; other accounts only paths under a root.
    pub fn admits(&self, path: &Path, first_account: bool) -> Result<(), String> {
        let canonical = path
            .canonicalize()
            .map_err(|_| format!("{} does not exist on the server", path.display()))?;
        if canonical.starts_with(&self.private) || self.private.starts_with(&canonical) {
            return Err(format!(
                "{} overlaps cinch's own home, which no tenant may reach",
                path.display()
            ));
        }
        if self.roots.iter().any(|root| canonical.starts_with(root)) {
            return Ok(());
        }
        if first_account && self.roots.is_empty() {
            return Ok(());
        }
        Err(if self.roots.is_empty() {
            format!(
                "{} is not under a repository root: this server allows no local repositories for this account (the operator adds roots with `cinch serve --repository-root`); use a git URL",
                path.display()
            )
        } else {
            format!(
                "{} is not under a repository root the operator allows ({})",
                path.display(),
                self.roots
                    .iter()
                    .map(|root| root.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_admit_what_lies_under_them_and_never_cinchs_home() {
        let dir = tempfile::tempdir().unwrap();
        let (root, repo, home, elsewhere) = (
            dir.path().join("srv"),
            dir.path().join("srv/app"),
            dir.path().join("srv/cinch"),
            dir.path().join("other"),
        );
        for path in [&repo, &home, &elsewhere] {
            std::fs::create_dir_all(path).unwrap();
        }
        let roots = RepositoryRoots::new(std::slice::from_ref(&root), &home);
        assert_eq!(roots.admits(&repo, false), Ok(()));
        assert!(roots.admits(&elsewhere, true).is_err());
        assert!(
            roots
                .admits(&home.join("."), false)
                .unwrap_err()
                .contains("home")
        );
        assert!(roots.admits(&root, false).unwrap_err().contains("home"));
        assert!(roots.admits(&dir.path().join("missing"), false).is_err());
        let none = RepositoryRoots::new(&[], &home);
        assert_eq!(none.admits(&elsewhere, true), Ok(()));
        assert!(
            none.admits(&elsewhere, false)
                .unwrap_err()
                .contains("--repository-root")
        );
    }
}
