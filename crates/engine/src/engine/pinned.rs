//! The CLI a harness's turns run: the version config.toml pins, installed
//! under `<home>/tools` on first use, else the one on PATH.

use std::path::PathBuf;

use super::{Engine, Refusal, RefusalCode};
use crate::probe::find_program;
use crate::tools::{Tool, install};

impl Engine {
    /// The harness `name`'s CLI as cinch installs and pins it.
    pub fn tool(&self, name: &str) -> anyhow::Result<Tool> {
        let registry = self.registry();
        let harness = registry.harness(name)?;
        Tool::of(name, &harness.info.program, &self.config)
    }

    /// Where this home's installed CLIs are.
    pub fn tools_root(&self) -> PathBuf {
        crate::tools::root(self.home.root())
    }

    /// The program a turn of `tool` runs: the pinned version's, installed
    /// now when it is missing; else the one on PATH (none when it is not
    /// there).
    pub(super) fn program_for(&self, tool: &Tool) -> Result<Option<PathBuf>, Refusal> {
        let Some(version) = &tool.pinned else {
            return Ok(find_program(&tool.program, self.search_path()));
        };
        match install::install(&self.tools_root(), tool, Some(version)) {
            Ok(installed) => Ok(Some(installed.program)),
            Err(error) => Err(Refusal::new(
                RefusalCode::CliInstallFailed,
                format!(
                    "{} is pinned to {version} in config.toml ([harness.{}] version), which is not installed and could not be: {error}",
                    tool.harness, tool.harness
                ),
            )),
        }
    }
}
