//! Whether a CLI's version lies in the range its driver was tested with:
//! a turn on a CLI outside it still runs, and says so (its result, `cinch
//! check`, `GET /v1/drivers`, `/metrics`), so that an operator sees which
//! CLI update a change of behaviour came with.

use serde::{Deserialize, Serialize};

/// A CLI's version against its driver's tested range.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CliDrift {
    /// In the tested range.
    Tested,
    /// Outside it: the CLI may have changed under its driver.
    Untested,
    /// The CLI told no version cinch can compare.
    Unknown,
}

/// Where `version` stands against `tested` (a semver requirement such as
/// `>=2.1.0, <2.2.0`); none when no range is declared.
pub fn drift(tested: Option<&str>, version: Option<&str>) -> Option<CliDrift> {
    let requirement = semver::VersionReq::parse(tested?).ok()?;
    let Some(version) = version.and_then(parse_version) else {
        return Some(CliDrift::Unknown);
    };
    // A pre-release matches a requirement only if the requirement names
    // one; its release's range is what counts here.
    let release = semver::Version::new(version.major, version.minor, version.patch);
    Some(if requirement.matches(&release) {
        CliDrift::Tested
    } else {
        CliDrift::Untested
    })
}

/// Checks a declared range, for config.toml's `tested`.
pub(crate) fn check_range(range: &str) -> Result<(), String> {
    semver::VersionReq::parse(range)
        .map(|_| ())
        .map_err(|error| {
            format!("`{range}` is not a version range like \">=2.1.0, <2.2.0\" ({error})")
        })
}

/// The version in a CLI's answer: `2.1.197`, or a version with fewer
/// parts (`0.15` as `0.15.0`).
fn parse_version(text: &str) -> Option<semver::Version> {
    let text = text.trim().trim_start_matches('v');
    if let Ok(version) = semver::Version::parse(text) {
        return Some(version);
    }
    let mut parts = text.split('.').map(|part| part.parse::<u64>().ok());
    let major = parts.next()??;
    let minor = parts.next().unwrap_or(Some(0))?;
    let patch = parts.next().unwrap_or(Some(0))?;
    Some(semver::Version::new(major, minor, patch))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_versions_against_a_range() {
        let range = Some(">=2.1.0, <2.2.0");
        assert_eq!(drift(range, Some("2.1.197")), Some(CliDrift::Tested));
        assert_eq!(drift(range, Some("2.2.0")), Some(CliDrift::Untested));
        assert_eq!(drift(range, Some("2.1.5-beta.1")), Some(CliDrift::Tested));
        assert_eq!(drift(range, Some("2.1")), Some(CliDrift::Tested));
        assert_eq!(drift(range, None), Some(CliDrift::Unknown));
        assert_eq!(drift(range, Some("nightly")), Some(CliDrift::Unknown));
        assert_eq!(drift(None, Some("2.1.197")), None);
        assert!(check_range("two").is_err());
    }
}
