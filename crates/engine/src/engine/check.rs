//! `cinch check`: whether a harness's CLI is installed, its version and the
//! credential it would run on.

use std::path::PathBuf;

use serde::Serialize;

use super::Engine;
use super::credential::{self, Credential, needs_credential, no_credential};
use super::server_credential::ServerCredential;
use crate::probe::{CliStatus, probe};

/// What `cinch check` reports of one harness.
#[derive(Debug, Clone, Serialize)]
pub struct CheckReport {
    /// The driver's name.
    pub harness: String,
    /// Whether cinch's config lets it run.
    pub enabled: bool,
    /// The CLI's path, when installed.
    pub path: Option<PathBuf>,
    /// The CLI's version, when it said.
    pub version: Option<String>,
    /// The credential it would run on.
    pub credential: Credential,
    /// What keeps it from running, if anything.
    pub problem: Option<String>,
    /// What a `cinch serve` started here would give its turns: they get
    /// none of the shell's variables unless `[serve] pass_env` lists them.
    pub server_credential: ServerCredential,
    /// The versions its driver was tested with (a semver range).
    pub tested: Option<String>,
    /// The version config.toml pins.
    pub pinned: Option<String>,
    /// The versions installed under cinch's home, oldest first.
    pub installed: Vec<String>,
    /// The version turns run (the pinned one, else PATH's) against the
    /// tested range.
    pub drift: Option<crate::tools::CliDrift>,
}

impl Engine {
    /// Whether `name`'s CLI is installed, its version and its credential.
    pub fn check(&self, name: &str) -> anyhow::Result<CheckReport> {
        let registry = self.registry();
        let harness = registry.harness(name)?;
        let info = &harness.info;
        let env = self.base_env();
        let home_dir = env.get("HOME").map(PathBuf::from);
        let credential = credential::credential(info, &env, home_dir.as_deref());
        let (path, version, mut problem) = match probe(harness.driver, info, self.search_path()) {
            CliStatus::Missing => (None, None, Some(format!("{} is not on PATH", info.program))),
            CliStatus::Found {
                path,
                version,
                problem,
            } => (Some(path), version, problem),
        };
        if problem.is_none() && credential == Credential::None && needs_credential(info) {
            problem = Some(no_credential(info, home_dir.as_deref()));
        }
        let enabled = self.config.is_enabled(name);
        if !enabled {
            problem = Some(format!(
                "harness.off: {name} is turned off in cinch's config"
            ));
        }
        let tool = self.tool(name)?;
        let installed = tool.installed(&self.tools_root());
        let running = match &tool.pinned {
            Some(pinned) => Some(pinned.as_str()),
            None => version.as_deref(),
        };
        let drift = crate::tools::drift(tool.tested.as_deref(), running);
        Ok(CheckReport {
            tested: tool.tested,
            pinned: tool.pinned,
            installed,
            drift,
            harness: name.to_owned(),
            enabled,
            path,
            version,
            credential,
            problem,
            server_credential: self.server_credential_with(name, &self.env)?,
        })
    }
}
