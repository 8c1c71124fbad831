//! Harnesses: what a turn names. Every driver is a harness under its own
//! name; a harness profile is another name on a driver, with its own program,
//! arguments, credential variables, environment and settings files. Profiles
//! come from the drivers (`info.harnesses`: the acp driver's `opencode`,
//! `qwen`, ...) and from config.toml (`[harness.NAME] driver = "acp"`), which
//! wins over a driver's profile of the same name.

use std::collections::BTreeMap;

use cinch_driver_sdk::{Info, LoginProbe};
use cinch_runtime::Driver;

use crate::config::HarnessConfig;

/// Where a profile was declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProfileSource {
    /// By its driver.
    Driver,
    /// In cinch's config.toml.
    Config,
}

/// A named harness on a driver.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    /// The harness's name.
    pub name: String,
    /// The driver that reads its output.
    pub driver: String,
    /// Its name shown to people.
    pub display_name: String,
    /// The program, looked up on PATH.
    pub program: String,
    /// Arguments before the driver's own.
    pub args: Vec<String>,
    /// Arguments that make it print its version; none: the driver's.
    pub version_args: Vec<String>,
    /// Variables that carry its credential, in order of preference.
    pub secret_env: Vec<String>,
    /// Files under HOME that hold a login.
    pub login_files: Vec<LoginProbe>,
    /// Variables set for it on every turn.
    pub env: Vec<(String, String)>,
    /// Settings written into its HOME (a path relative to HOME, the
    /// contents) before a turn, where no such file exists yet.
    pub home_files: Vec<(String, String)>,
    /// Model names it accepts; none: any.
    pub models: Vec<String>,
    /// Its model when a turn names none.
    pub default_model: Option<String>,
    /// Where it was declared.
    pub source: ProfileSource,
}

impl Profile {
    /// The profile `[harness.NAME]` declares, when it names a driver.
    pub fn from_config(name: &str, config: &HarnessConfig) -> anyhow::Result<Option<Self>> {
        let Some(driver) = &config.driver else {
            return Ok(None);
        };
        anyhow::ensure!(
            is_driver_name(name),
            "[harness.{name}] in config.toml: a harness's name is lowercase letters, digits and dashes"
        );
        let program = config
            .program
            .clone()
            .filter(|program| !program.trim().is_empty())
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "[harness.{name}] in config.toml names driver `{driver}` but no program: add program = \"...\" (the command to run, looked up on PATH)"
                )
            })?;
        Ok(Some(Self {
            name: name.to_owned(),
            driver: driver.clone(),
            display_name: config
                .display_name
                .clone()
                .unwrap_or_else(|| name.to_owned()),
            program,
            args: config.args.clone(),
            version_args: Vec::new(),
            secret_env: config.secret_env.clone(),
            login_files: Vec::new(),
            env: config
                .env
                .iter()
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            home_files: Vec::new(),
            models: Vec::new(),
            default_model: None,
            source: ProfileSource::Config,
        }))
    }

    /// The driver's info as this harness: its name, program and credential.
    pub fn info(&self, driver: &Info) -> Info {
        let mut info = driver.clone();
        info.name = self.name.clone();
        info.display_name = self.display_name.clone();
        info.program = self.program.clone();
        if !self.version_args.is_empty() {
            info.version_args = self.version_args.clone();
        }
        info.secret_env = self.secret_env.clone();
        info.login_files = self.login_files.clone();
        info.models = self.models.clone();
        info.default_model = self.default_model.clone();
        info
    }
}

/// A harness resolved: the driver that runs it and what the host needs of it.
pub struct Harness<'a> {
    /// The driver.
    pub driver: &'a Driver,
    /// The driver's info as this harness (see [`Profile::info`]).
    pub info: Info,
    /// The profile, when the harness is not the driver itself.
    pub profile: Option<&'a Profile>,
}

impl Harness<'_> {
    /// The harness's name (the driver's, or the profile's).
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// The arguments before the driver's own.
    pub fn args(&self) -> &[String] {
        self.profile.map_or(&[], |profile| &profile.args)
    }
}

/// The profiles of `drivers` and of `configured`, by name; config wins.
pub fn profiles<'a>(
    drivers: impl Iterator<Item = &'a Driver>,
    configured: &BTreeMap<String, HarnessConfig>,
    driver_names: &[&str],
) -> anyhow::Result<Vec<Profile>> {
    let mut by_name: BTreeMap<String, Profile> = BTreeMap::new();
    for driver in drivers {
        for profile in declared_by(driver) {
            by_name.insert(profile.name.clone(), profile);
        }
    }
    for (name, config) in configured {
        let Some(profile) = Profile::from_config(name, config)? else {
            continue;
        };
        anyhow::ensure!(
            !driver_names.contains(&name.as_str()),
            "[harness.{name}] in config.toml declares a harness with the name of a driver; give it another name"
        );
        anyhow::ensure!(
            driver_names.contains(&profile.driver.as_str()),
            "[harness.{name}] in config.toml names driver `{}`, which is not installed (drivers: {})",
            profile.driver,
            driver_names.join(", ")
        );
        by_name.insert(name.clone(), profile);
    }
    Ok(by_name.into_values().collect())
}

/// The harness profiles `driver` declares.
fn declared_by(driver: &Driver) -> Vec<Profile> {
    let info = driver.info();
    info.harnesses
        .iter()
        .map(|declared| Profile {
            name: declared.name.clone(),
            driver: info.name.clone(),
            display_name: declared.display_name.clone(),
            program: declared.program.clone(),
            args: declared.args.clone(),
            version_args: declared.version_args.clone(),
            secret_env: declared.secret_env.clone(),
            login_files: declared.login_files.clone(),
            env: declared.set_env.clone(),
            home_files: declared
                .home_files
                .iter()
                .map(|file| (file.path.clone(), file.contents.clone()))
                .collect(),
            models: declared.models.clone(),
            default_model: declared.default_model.clone(),
            source: ProfileSource::Driver,
        })
        .collect()
}

/// Whether `name` is usable as a driver's or harness's (and file) name.
pub fn is_driver_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
}
