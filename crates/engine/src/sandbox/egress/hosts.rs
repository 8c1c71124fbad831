//! The host names an environment lets its processes reach: what an entry
//! of `allowed_hosts` may be, and whether a host a request names matches.
//!
//! An entry is a host name (`api.anthropic.com`), a wildcard for the names
//! below a domain (`*.npmjs.org`: `registry.npmjs.org`, not `npmjs.org`
//! itself) or an IP address written out (`127.0.0.1`, `::1`). Names compare
//! without case and without a final dot; nothing else (a port, a scheme, a
//! path) belongs in an entry.

use std::net::IpAddr;

/// The most entries one environment may list.
pub const MAX_HOSTS: usize = 100;

/// The longest host name (RFC 1035).
const MAX_NAME: usize = 253;

/// Why an entry of `allowed_hosts` is not one.
pub fn check(entry: &str) -> Result<(), String> {
    let entry = entry.strip_suffix('.').unwrap_or(entry);
    if entry.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let name = entry.strip_prefix("*.").unwrap_or(entry);
    if entry == "*" || (entry.starts_with("*.") && name.is_empty()) {
        return Err("a wildcard needs a domain after `*.`, as in *.npmjs.org".to_owned());
    }
    if entry.contains("://") || entry.contains('/') {
        return Err("a host name only, as in api.anthropic.com: no scheme and no path".to_owned());
    }
    if entry.contains(':') {
        return Err(
            "a host name only, as in api.anthropic.com: any port of an allowed host may be reached"
                .to_owned(),
        );
    }
    if name.len() > MAX_NAME {
        return Err(format!("a host name is at most {MAX_NAME} characters"));
    }
    let valid_label = |label: &str| {
        !label.is_empty()
            && label.len() <= 63
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label
                .bytes()
                .all(|byte| byte.is_ascii_alphanumeric() || byte == b'-' || byte == b'_')
    };
    if !name.split('.').all(valid_label) {
        return Err(
            "not a host name: labels of letters, digits, `-` and `_` (at most 63 each) joined by dots, optionally after `*.`, or an IP address"
                .to_owned(),
        );
    }
    Ok(())
}

/// `entry` as it is stored and compared: lower case, no final dot.
pub fn normalize(entry: &str) -> String {
    entry.trim_end_matches('.').to_ascii_lowercase()
}

/// The hosts a turn's requests may name.
#[derive(Debug, Clone)]
pub(crate) struct AllowedHosts {
    entries: Vec<String>,
}

impl AllowedHosts {
    /// The allowed hosts of these entries (each already [`check`]ed).
    pub(crate) fn new(entries: &[String]) -> Self {
        Self {
            entries: entries.iter().map(|entry| normalize(entry)).collect(),
        }
    }

    /// Whether a request may name `host` (as its URL or CONNECT gave it,
    /// without brackets around an IPv6 address).
    pub(crate) fn admits(&self, host: &str) -> bool {
        let host = normalize(host);
        if host.is_empty() {
            return false;
        }
        let address = host.parse::<IpAddr>().ok();
        self.entries.iter().any(|entry| {
            if let Some(domain) = entry.strip_prefix("*.") {
                return address.is_none()
                    && host
                        .strip_suffix(domain)
                        .is_some_and(|below| below.len() > 1 && below.ends_with('.'));
            }
            match (address, entry.parse::<IpAddr>()) {
                (Some(address), Ok(listed)) => address == listed,
                _ => *entry == host,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_names_wildcards_or_addresses() {
        for good in [
            "api.anthropic.com",
            "*.npmjs.org",
            "localhost",
            "127.0.0.1",
            "::1",
            "Registry.NPMJS.org.",
        ] {
            assert_eq!(check(good), Ok(()), "{good}");
        }
        for (bad, says) in [
            ("https://api.anthropic.com", "no scheme"),
            ("api.anthropic.com:443", "any port"),
            ("api.anthropic.com/v1", "no path"),
            ("*.", "wildcard"),
            ("a..b", "not a host name"),
            ("-a.com", "not a host name"),
            ("*a.com", "not a host name"),
            ("a.*.com", "not a host name"),
            ("", "not a host name"),
            ("exa mple.com", "not a host name"),
        ] {
            let error = check(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
        assert!(check(&"a".repeat(254)).is_err());
    }

    #[test]
    fn a_host_matches_its_name_a_wildcard_below_it_or_its_address() {
        let allowed = AllowedHosts::new(&[
            "api.anthropic.com".to_owned(),
            "*.npmjs.org".to_owned(),
            "127.0.0.1".to_owned(),
            "::1".to_owned(),
        ]);
        for admitted in [
            "api.anthropic.com",
            "API.Anthropic.COM.",
            "registry.npmjs.org",
            "a.b.npmjs.org",
            "127.0.0.1",
            "::1",
            "0:0:0:0:0:0:0:1",
        ] {
            assert!(allowed.admits(admitted), "{admitted}");
        }
        for refused in [
            "npmjs.org",
            "evilnpmjs.org",
            "anthropic.com",
            "api.anthropic.com.evil.net",
            "localhost",
            "127.0.0.2",
            "",
        ] {
            assert!(!allowed.admits(refused), "{refused}");
        }
    }
}
