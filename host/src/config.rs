//! cinch's configuration: `config.toml` in its home.
//!
//! ```toml
//! [harness.cursor]
//! enabled = false          # turns of this harness fail with harness.off
//!
//! [secrets]
//! OPENAI_API_KEY = "sk-…"  # given to every harness, masked wherever cinch shows text
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
