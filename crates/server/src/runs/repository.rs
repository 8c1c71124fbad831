//! How environments name their repositories: a local path, a `file://`
//! URL or a git remote.

use std::path::Path;

/// Whether `repository` names a git remote rather than a local path.
pub(crate) fn is_url(repository: &str) -> bool {
    repository.contains("://") || repository.starts_with("git@")
}

/// The folder on this machine a repository reads from: its path, or the
/// path of a `file://` URL; `None` for a remote.
pub(crate) fn local_path(repository: &str) -> Option<&Path> {
    if let Some(path) = repository.strip_prefix("file://") {
        return Some(Path::new(path));
    }
    (!is_url(repository)).then_some(Path::new(repository))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_is_told_from_a_local_path() {
        assert!(is_url("https://example.com/a.git") && is_url("git@host:a.git"));
        assert!(!is_url("/srv/repo"));
        assert_eq!(local_path("file:///srv/repo"), Some(Path::new("/srv/repo")));
        assert_eq!(local_path("git@host:a.git"), None);
    }
}
