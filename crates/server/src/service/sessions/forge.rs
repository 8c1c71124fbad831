//! Links to open a pull request for a pushed branch, where the repository's
//! remote is on a forge whose "new pull request" page cinch knows: github.com,
//! gitlab.com, bitbucket.org and codeberg.org. Anything else gets no link.

/// A known forge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Forge {
    GitHub,
    GitLab,
    Bitbucket,
    Codeberg,
}

impl Forge {
    fn of_host(host: &str) -> Option<Self> {
        match host.to_ascii_lowercase().as_str() {
            "github.com" | "www.github.com" => Some(Self::GitHub),
            "gitlab.com" | "www.gitlab.com" => Some(Self::GitLab),
            "bitbucket.org" | "www.bitbucket.org" => Some(Self::Bitbucket),
            "codeberg.org" | "www.codeberg.org" => Some(Self::Codeberg),
            _ => None,
        }
    }

    fn host(self) -> &'static str {
        match self {
            Self::GitHub => "github.com",
            Self::GitLab => "gitlab.com",
            Self::Bitbucket => "bitbucket.org",
            Self::Codeberg => "codeberg.org",
        }
    }
}

/// The page that opens a pull request of `branch` into `base` (the
/// repository's default branch when `None`) for the repository at `remote`
/// (an `https://`, `ssh://` or `git@host:` URL); `None` when `remote` is not
/// on a known forge.
pub(super) fn pull_request_url(remote: &str, branch: &str, base: Option<&str>) -> Option<String> {
    let (forge, path) = forge_path(remote)?;
    let root = format!("https://{}/{path}", forge.host());
    let head = encode(branch);
    Some(match (forge, base) {
        (Forge::GitHub, Some(base)) => {
            format!("{root}/compare/{}...{head}?expand=1", encode(base))
        }
        (Forge::GitHub, None) => format!("{root}/pull/new/{head}"),
        (Forge::GitLab, base) => {
            let target = base
                .map(|base| format!("&merge_request%5Btarget_branch%5D={}", encode(base)))
                .unwrap_or_default();
            format!("{root}/-/merge_requests/new?merge_request%5Bsource_branch%5D={head}{target}")
        }
        (Forge::Bitbucket, base) => {
            let dest = base
                .map(|base| format!("&dest={}", encode(base)))
                .unwrap_or_default();
            format!("{root}/pull-requests/new?source={head}{dest}")
        }
        (Forge::Codeberg, Some(base)) => format!("{root}/compare/{}...{head}", encode(base)),
        (Forge::Codeberg, None) => format!("{root}/compare/{head}"),
    })
}

/// The forge and `owner/name` of `remote`, credentials and `.git` dropped.
fn forge_path(remote: &str) -> Option<(Forge, String)> {
    let remote = remote.trim();
    let (host, path) = if let Some((_, rest)) = remote.split_once("://") {
        let (authority, path) = rest.split_once('/')?;
        // `user:token@host:port`: only the host names the forge.
        let host = authority.rsplit('@').next()?;
        let host = host.split(':').next()?;
        (host, path)
    } else {
        // scp-like `git@host:owner/name.git`.
        let (authority, path) = remote.split_once(':')?;
        let host = authority.rsplit('@').next()?;
        (host, path)
    };
    let forge = Forge::of_host(host)?;
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let parts: Vec<&str> = path.split('/').collect();
    // GitLab nests groups; the others are owner/name.
    let enough = match forge {
        Forge::GitLab => parts.len() >= 2,
        _ => parts.len() == 2,
    };
    let named = parts.iter().all(|part| {
        !part.is_empty()
            && part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    });
    (enough && named).then(|| (forge, parts.join("/")))
}

/// `text` as a URL's path segment or query value: a branch's `/` stays
/// readable where forges accept it, everything else outside
/// `[A-Za-z0-9-._~/]` is percent-encoded.
fn encode(text: &str) -> String {
    let mut encoded = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~' | b'/') {
            encoded.push(byte as char);
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_forge_gets_its_own_page() {
        assert_eq!(
            pull_request_url(
                "https://github.com/acme/widget.git",
                "cinch/s1",
                Some("main")
            )
            .as_deref(),
            Some("https://github.com/acme/widget/compare/main...cinch/s1?expand=1")
        );
        assert_eq!(
            pull_request_url("git@github.com:acme/widget.git", "fix", None).as_deref(),
            Some("https://github.com/acme/widget/pull/new/fix")
        );
        assert_eq!(
            pull_request_url("https://x:tok@gitlab.com/g/sub/p.git", "fix", Some("dev")).as_deref(),
            Some(
                "https://gitlab.com/g/sub/p/-/merge_requests/new?merge_request%5Bsource_branch%5D=fix&merge_request%5Btarget_branch%5D=dev"
            )
        );
        assert_eq!(
            pull_request_url("ssh://git@bitbucket.org/t/r.git", "fix", Some("main")).as_deref(),
            Some("https://bitbucket.org/t/r/pull-requests/new?source=fix&dest=main")
        );
        assert_eq!(
            pull_request_url("https://codeberg.org/o/r", "a b", Some("main")).as_deref(),
            Some("https://codeberg.org/o/r/compare/main...a%20b")
        );
    }

    #[test]
    fn other_remotes_get_none() {
        for remote in [
            "/srv/repo",
            "file:///srv/repo.git",
            "https://git.example.com/acme/widget.git",
            "https://github.com/acme",
            "https://github.com/acme/widget/extra",
            "https://github.com.evil.example/acme/widget",
        ] {
            assert_eq!(pull_request_url(remote, "b", None), None, "{remote}");
        }
    }
}
