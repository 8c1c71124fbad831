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
        Ok(CheckReport {
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
