//! `oci://HOST[:PORT]/REPO[:TAG][@sha256:DIGEST]`: where a driver lives in
//! an OCI registry.

use std::fmt;

/// A reference to a component in an OCI registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    /// `HOST[:PORT]`.
    pub registry: String,
    /// The repository's path, `a/b/c`.
    pub repository: String,
    /// The tag, when one is named.
    pub tag: Option<String>,
    /// The manifest's digest (`sha256:HEX`), when one is named.
    pub digest: Option<String>,
}

/// A reference that is not `oci://HOST[:PORT]/REPO[:TAG][@sha256:DIGEST]`.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{given}` is not an OCI reference ({why}); write oci://HOST[:PORT]/REPO:TAG or oci://HOST[:PORT]/REPO@sha256:DIGEST"
)]
pub struct BadReference {
    given: String,
    why: &'static str,
}

/// The scheme an OCI reference starts with.
pub const SCHEME: &str = "oci://";

impl Reference {
    /// Parses `oci://HOST[:PORT]/REPO[:TAG][@sha256:DIGEST]`.
    pub fn parse(given: &str) -> Result<Self, BadReference> {
        let bad = |why| BadReference {
            given: given.to_owned(),
            why,
        };
        let rest = given
            .strip_prefix(SCHEME)
            .ok_or_else(|| bad("it does not start with oci://"))?;
        let (registry, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names no repository"))?;
        if registry.is_empty()
            || !registry
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-:[]".contains(c))
        {
            return Err(bad("the registry is not HOST or HOST:PORT"));
        }
        let (path, digest) = match path.split_once('@') {
            Some((path, digest)) => {
                let hex = digest
                    .strip_prefix("sha256:")
                    .ok_or_else(|| bad("a digest is sha256:HEX"))?;
                if hex.len() != 64 || !hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')) {
                    return Err(bad("a sha256 digest is 64 lowercase hex digits"));
                }
                (path, Some(digest.to_owned()))
            }
            None => (path, None),
        };
        // A tag follows the last `:` of the last path segment.
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repository, tag)) if !tag.contains('/') => (repository, Some(tag.to_owned())),
            _ => (path, None),
        };
        if repository.is_empty()
            || repository.split('/').any(|segment| {
                segment.is_empty()
                    || !segment
                        .chars()
                        .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '.' | '_' | '-'))
            })
        {
            return Err(bad(
                "a repository is lowercase letters, digits and . _ - in /-separated parts",
            ));
        }
        if let Some(tag) = &tag
            && (tag.is_empty()
                || tag.len() > 128
                || !tag
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))
        {
            return Err(bad("a tag is letters, digits and . _ -, at most 128"));
        }
        if tag.is_none() && digest.is_none() {
            return Err(bad("it names neither a tag nor a digest"));
        }
        Ok(Self {
            registry: registry.to_owned(),
            repository: repository.to_owned(),
            tag,
            digest,
        })
    }

    /// The tag, else the digest: what the registry's manifest URL takes.
    pub(crate) fn manifest_name(&self) -> &str {
        self.digest
            .as_deref()
            .or(self.tag.as_deref())
            .expect("a parsed reference has a tag or a digest")
    }

    /// Whether the registry is on this machine (plain HTTP is allowed there).
    pub fn is_loopback(&self) -> bool {
        let host = match self.registry.strip_prefix('[') {
            Some(bracketed) => bracketed.split(']').next().unwrap_or_default(),
            None => self.registry.split(':').next().unwrap_or_default(),
        };
        host == "localhost"
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

impl fmt::Display for Reference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.registry, self.repository)?;
        if let Some(tag) = &self.tag {
            write!(f, ":{tag}")?;
        }
        if let Some(digest) = &self.digest {
            write!(f, "@{digest}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_print_back() {
        let digest = format!("sha256:{}", "a".repeat(64));
        for given in [
            "oci://127.0.0.1:5000/drivers/claude:1.2.0".to_owned(),
            "oci://localhost/x:latest".to_owned(),
            format!("oci://registry.example/a/b@{digest}"),
            format!("oci://registry.example:443/a/b:v1@{digest}"),
        ] {
            let parsed = Reference::parse(&given).unwrap();
            assert_eq!(parsed.to_string(), given);
        }
        let parsed = Reference::parse("oci://127.0.0.1:5000/drivers/claude:1.2.0").unwrap();
        assert_eq!(parsed.registry, "127.0.0.1:5000");
        assert_eq!(parsed.repository, "drivers/claude");
        assert_eq!(parsed.tag.as_deref(), Some("1.2.0"));
        assert!(parsed.is_loopback());
        assert!(
            !Reference::parse("oci://registry.example/a:b")
                .unwrap()
                .is_loopback()
        );
        assert!(
            Reference::parse("oci://[::1]:5000/a:b")
                .unwrap()
                .is_loopback()
        );
    }

    #[test]
    fn bad_references_say_why() {
        for (given, why) in [
            ("https://x/y:z", "oci://"),
            ("oci://x", "no repository"),
            ("oci://x/Y:z", "lowercase"),
            ("oci://x/y", "neither a tag nor a digest"),
            ("oci://x/y@sha256:abc", "64 lowercase hex"),
            ("oci://x/y@md5:abc", "sha256:HEX"),
        ] {
            let error = Reference::parse(given).unwrap_err().to_string();
            assert!(error.contains(why), "{given}: {error}");
        }
    }
}
