//! cinch's configuration: `config.toml` in its home.
//!
//! ```toml
//! [harness.cursor]
//! enabled = false          # turns of this harness fail with harness.off
//!
//! [secrets]
//! OPENAI_API_KEY = "sk-…"  # given to every harness, masked wherever cinch shows text
//!
//! [serve]                  # `cinch serve`; its flags and CINCH_* variables win
//! listen = "127.0.0.1:7700"
//! max_turns = 4
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use serde::Deserialize;

/// The parsed configuration; every part is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Per-harness settings, by driver name.
    #[serde(default)]
    pub harness: BTreeMap<String, HarnessConfig>,
    /// Secrets set in every harness's environment and masked in output.
    #[serde(default)]
    pub secrets: BTreeMap<String, String>,
    /// `cinch serve`'s settings.
    #[serde(default)]
    pub serve: ServeConfig,
}

/// `cinch serve`'s settings in the file; each is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServeConfig {
    /// The address to listen on.
    pub listen: Option<String>,
    /// The database: a SQLite file's path or `sqlite:` URL.
    pub database: Option<String>,
    /// The largest request body, in bytes.
    pub body_limit: Option<usize>,
    /// Turns running at once, at most.
    pub max_turns: Option<usize>,
    /// Seconds between a waiting session's attempts to get a slot.
    pub retry_seconds: Option<u64>,
    /// Minutes a session waits for a slot before it is closed.
    pub wait_limit_minutes: Option<u64>,
    /// Minutes one turn may run, 1 to 60.
    pub turn_timeout_minutes: Option<u64>,
}

/// Settings of one harness.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HarnessConfig {
    /// Whether turns of this harness may start.
    #[serde(default = "enabled_by_default")]
    pub enabled: bool,
}

fn enabled_by_default() -> bool {
    true
}

impl Config {
    /// The configuration at `path`; an absent file is the default.
    pub fn load(path: &Path) -> anyhow::Result<Self> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                toml::from_str(&text).with_context(|| format!("reading {}", path.display()))
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Self::default()),
            Err(error) => Err(error).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Whether the harness `name` may run.
    pub fn is_enabled(&self, name: &str) -> bool {
        self.harness.get(name).is_none_or(|harness| harness.enabled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_harness_switches_and_secrets() {
        let config: Config = toml::from_str(
            "[harness.cursor]\nenabled = false\n[harness.claude]\n[secrets]\nTOKEN = \"abcdefgh\"\n",
        )
        .unwrap();
        assert!(!config.is_enabled("cursor"));
        assert!(config.is_enabled("claude"));
        assert!(config.is_enabled("codex"));
        assert_eq!(config.secrets["TOKEN"], "abcdefgh");
        assert!(toml::from_str::<Config>("[harness.x]\nenabld = true\n").is_err());
    }
}
