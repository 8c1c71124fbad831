//! Credentials a driver's info cannot describe: Codex's model providers.
//!
//! Codex runs on the provider `model_provider` names in `~/.codex/config.toml`
//! (or the active profile's). A provider of the file's own
//! `[model_providers.<name>]` reads its key from the variable its `env_key`
//! names, or needs none (a local server); the built-in `ollama` and
//! `lmstudio` need none. That provider is then the credential, whatever
//! `OPENAI_API_KEY` or a login say. The frozen driver contract has no word
//! for this, so the host reads the file for the driver whose state lives in
//! `.codex`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

/// The state folder of the harness whose providers are read here.
const CODEX_STATE_DIR: &str = ".codex";

/// Codex's own providers that run locally and need no key.
const LOCAL_BUILT_INS: &[&str] = &["ollama", "lmstudio"];

/// The parts of `~/.codex/config.toml` that choose a provider.
#[derive(Debug, Default, Deserialize)]
struct CodexConfig {
    model_provider: Option<String>,
    profile: Option<String>,
    #[serde(default)]
    profiles: BTreeMap<String, CodexProfile>,
    #[serde(default)]
    model_providers: BTreeMap<String, CodexProvider>,
}

#[derive(Debug, Default, Deserialize)]
struct CodexProfile {
    model_provider: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct CodexProvider {
    env_key: Option<String>,
}

/// The provider a harness runs on, when it is not the vendor's own.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Provider {
    name: String,
    /// The variable holding its key; none when it needs no key.
    env_key: Option<String>,
}

/// The custom or local provider `info`'s harness is configured to run on
/// under `home`, if any.
fn provider(info: &cinch_driver_sdk::Info, home: Option<&Path>) -> Option<Provider> {
    if info.state_dir.as_deref() != Some(CODEX_STATE_DIR) {
        return None;
    }
    let path = home?.join(CODEX_STATE_DIR).join("config.toml");
    let text = std::fs::read_to_string(&path).ok()?;
    let config: CodexConfig = toml::from_str(&text)
        .map_err(|error| {
            tracing::warn!(
                "{} does not parse, so its provider is not known: {error}",
                path.display()
            );
        })
        .ok()?;
    let name = config
        .profile
        .as_ref()
        .and_then(|profile| config.profiles.get(profile))
        .and_then(|profile| profile.model_provider.clone())
        .or(config.model_provider)?;
    if let Some(custom) = config.model_providers.get(&name) {
        return Some(Provider {
            env_key: custom.env_key.clone().filter(|key| !key.trim().is_empty()),
            name,
        });
    }
    LOCAL_BUILT_INS
        .contains(&name.as_str())
        .then_some(Provider {
            name,
            env_key: None,
        })
}

/// A provider of the harness's own configuration, as a credential.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum OwnProvider {
    /// Its key is set, or it needs none.
    Ready {
        /// The provider's name.
        name: String,
        /// The variable holding its key.
        env_key: Option<String>,
    },
    /// It reads its key from a variable that is not set.
    KeyMissing,
}

/// The provider a harness is configured to run on, and whether it has its
/// key; `None` when no such provider is configured.
pub(crate) fn provider_credential(
    info: &cinch_driver_sdk::Info,
    env: &BTreeMap<String, String>,
    home: Option<&Path>,
) -> Option<OwnProvider> {
    let provider = provider(info, home)?;
    let has_key = match &provider.env_key {
        Some(key) => env.get(key).is_some_and(|value| !value.trim().is_empty()),
        None => true,
    };
    Some(if has_key {
        OwnProvider::Ready {
            name: provider.name,
            env_key: provider.env_key,
        }
    } else {
        OwnProvider::KeyMissing
    })
}

/// Whether `info`'s harness runs on a provider of its own configuration
/// under `home`: the vendor's model ids then mean nothing to it, and the
/// configuration chooses the model.
pub(crate) fn runs_on_own_provider(info: &cinch_driver_sdk::Info, home: Option<&Path>) -> bool {
    provider(info, home).is_some()
}

/// The variable holding the key of the provider `info`'s harness runs on
/// under `home`, when it has one: a secret to mask.
pub(crate) fn provider_key(info: &cinch_driver_sdk::Info, home: Option<&Path>) -> Option<String> {
    provider(info, home)?.env_key
}

/// What to tell a user whose configured provider has no key, if that is why
/// the harness has no credential.
pub(crate) fn missing_key(info: &cinch_driver_sdk::Info, home: Option<&Path>) -> Option<String> {
    let provider = provider(info, home)?;
    let key = provider.env_key?;
    Some(format!(
        "{} has no credential: its model provider `{}` (~/{CODEX_STATE_DIR}/config.toml) reads its key from {key}, which is not set",
        info.display_name, provider.name
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codex() -> cinch_driver_sdk::Info {
        cinch_driver_sdk::Info {
            name: "codex".into(),
            display_name: "Codex".into(),
            program: "codex".into(),
            version_args: vec![],
            state_dir: Some(".codex".into()),
            managed_config: vec![],
            secret_env: vec!["OPENAI_API_KEY".into()],
            login_files: vec![],
            models: vec![],
            default_model: None,
            efforts: vec![],
            default_effort: None,
            brief: cinch_driver_sdk::BriefDelivery::Stdin,
            resume: cinch_driver_sdk::ResumeScope::Anywhere,
            harnesses: vec![],
        }
    }

    fn home_with(config: &str) -> tempfile::TempDir {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/config.toml"), config).unwrap();
        home
    }

    #[test]
    fn a_profiles_provider_wins_and_a_local_one_needs_no_key() {
        let home = home_with(
            "model_provider = \"openai\"\nprofile = \"local\"\n[profiles.local]\nmodel_provider = \"ollama\"\n",
        );
        assert_eq!(
            provider_credential(&codex(), &BTreeMap::new(), Some(home.path())),
            Some(OwnProvider::Ready {
                name: "ollama".into(),
                env_key: None
            })
        );
        // The vendor's own provider is left to the usual probes.
        let home = home_with("model_provider = \"openai\"\n");
        assert_eq!(
            provider_credential(&codex(), &BTreeMap::new(), Some(home.path())),
            None
        );
    }

    #[test]
    fn a_custom_providers_key_must_be_set() {
        let home = home_with(
            "model_provider = \"mock\"\n[model_providers.mock]\nname = \"mock\"\nbase_url = \"http://127.0.0.1:1/v1\"\nenv_key = \"MOCK_API_KEY\"\n",
        );
        let mut env = BTreeMap::new();
        assert_eq!(
            provider_credential(&codex(), &env, Some(home.path())),
            Some(OwnProvider::KeyMissing)
        );
        assert!(
            missing_key(&codex(), Some(home.path()))
                .unwrap()
                .contains("`mock`")
        );
        env.insert("MOCK_API_KEY".to_owned(), "sk-mock".to_owned());
        assert_eq!(
            provider_credential(&codex(), &env, Some(home.path())),
            Some(OwnProvider::Ready {
                name: "mock".into(),
                env_key: Some("MOCK_API_KEY".into())
            })
        );
        assert_eq!(
            provider_key(&codex(), Some(home.path())).as_deref(),
            Some("MOCK_API_KEY")
        );
    }
}
