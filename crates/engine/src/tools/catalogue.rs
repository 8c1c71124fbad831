//! Where the built-in harnesses' CLIs are published, the version
//! `cinch harness install NAME` picks, and the versions each driver was
//! tested with (those of `tests/install-clis.sh`, which the real-CLI tests
//! run against the mock model, and of the recorded fixtures). A plugin
//! driver's harness, or any harness, is described in config.toml's
//! `[harness.NAME]` instead (`package`, `tested`), which wins over this.

use super::{Package, Registry};

/// What cinch knows of a built-in harness's CLI.
pub struct Known {
    /// The harness's name.
    pub harness: &'static str,
    /// The registry its package is on.
    pub registry: Registry,
    /// Its package's name there.
    pub package: &'static str,
    /// The version `cinch harness install NAME` installs.
    pub default_version: &'static str,
    /// The versions its driver was tested with (a semver requirement).
    pub tested: &'static str,
}

/// The built-in harnesses. cursor is absent: cursor-agent is not on a
/// package registry (its vendor's script installs it); so is kilo, whose
/// npm launcher starts its binary as a child that the sandbox's missing
/// `/proc/self` aborts (`tests/install-clis.sh` links the binary instead).
pub(crate) const KNOWN: &[Known] = &[
    npm(
        "claude",
        "@anthropic-ai/claude-code",
        "2.1.197",
        ">=2.1.0, <2.2.0",
    ),
    npm("codex", "@openai/codex", "0.171.0", ">=0.171.0, <0.172.0"),
    npm(
        "gemini",
        "@google/gemini-cli",
        "0.61.0",
        ">=0.61.0, <0.62.0",
    ),
    npm(
        "gemini-acp",
        "@google/gemini-cli",
        "0.61.0",
        ">=0.61.0, <0.62.0",
    ),
    npm(
        "claude-acp",
        "@zed-industries/claude-agent-acp",
        "0.23.1",
        ">=0.23.0, <0.24.0",
    ),
    npm(
        "codex-acp",
        "@zed-industries/codex-acp",
        "0.16.0",
        ">=0.16.0, <0.17.0",
    ),
    npm("opencode", "opencode-ai", "1.18.33", ">=1.18.0, <1.19.0"),
    npm(
        "qwen",
        "@qwen-code/qwen-code",
        "0.15.10",
        ">=0.15.0, <0.16.0",
    ),
    npm("copilot", "@github/copilot", "1.0.102", ">=1.0.102, <1.1.0"),
    npm("cline", "cline", "3.0.65", ">=3.0.0, <3.1.0"),
    npm("droid", "droid", "0.215.0", ">=0.215.0, <0.216.0"),
];

const fn npm(
    harness: &'static str,
    package: &'static str,
    default_version: &'static str,
    tested: &'static str,
) -> Known {
    Known {
        harness,
        registry: Registry::Npm,
        package,
        default_version,
        tested,
    }
}

/// What cinch knows of the built-in harness `name`, if it is one.
pub fn known(name: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|known| known.harness == name)
}

impl Known {
    /// Its package.
    pub fn package(&self) -> Package {
        Package {
            registry: self.registry,
            name: self.package.to_owned(),
        }
    }
}
