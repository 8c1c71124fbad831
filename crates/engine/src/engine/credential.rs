//! The credential a harness would run on: a secret in its environment, a
//! login file under its HOME, or a model provider of its own configuration
//! (`credential_probe`), and what to say when it has none.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cinch_driver_sdk::Info;
use serde::Serialize;

use super::credential_probe::{self, OwnProvider};

/// The credential a harness would run on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Credential {
    /// A secret in the environment, by its variable's name.
    Secret {
        /// The variable.
        name: String,
    },
    /// A login kept in a file under HOME.
    Login {
        /// The file.
        path: PathBuf,
        /// The account the login names, when it does.
        account: Option<String>,
    },
    /// A model provider configured for the harness: its key's variable, or
    /// none for a local provider (see `credential_probe`).
    Provider {
        /// The provider's name.
        name: String,
        /// The variable holding its key.
        env_key: Option<String>,
    },
    /// Neither.
    None,
}

/// Finds the credential `info` names in `env` or under `home`.
pub fn credential(info: &Info, env: &BTreeMap<String, String>, home: Option<&Path>) -> Credential {
    match credential_probe::provider_credential(info, env, home) {
        Some(OwnProvider::Ready { name, env_key }) => {
            return Credential::Provider { name, env_key };
        }
        Some(OwnProvider::KeyMissing) => return Credential::None,
        None => {}
    }
    if let Some(name) = info
        .secret_env
        .iter()
        .find(|name| env.get(*name).is_some_and(|value| !value.trim().is_empty()))
    {
        return Credential::Secret { name: name.clone() };
    }
    let Some(home) = home else {
        return Credential::None;
    };
    for probe in &info.login_files {
        let path = home.join(&probe.path);
        if !path.is_file() {
            continue;
        }
        let account = probe.account_pointer.as_deref().and_then(|pointer| {
            let text = std::fs::read_to_string(&path).ok()?;
            let value: serde_json::Value = serde_json::from_str(&text).ok()?;
            value.pointer(pointer)?.as_str().map(str::to_owned)
        });
        return Credential::Login { path, account };
    }
    Credential::None
}

impl std::fmt::Display for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credential::Secret { name } => write!(f, "secret ({name})"),
            Credential::Login {
                path,
                account: Some(account),
            } => write!(f, "login ({}, {account})", path.display()),
            Credential::Login {
                path,
                account: None,
            } => write!(f, "login ({})", path.display()),
            Credential::Provider { name, env_key } => match env_key {
                Some(key) => write!(f, "model provider {name} ({key})"),
                None => write!(f, "model provider {name} (local, no key)"),
            },
            Credential::None => f.write_str("none"),
        }
    }
}

/// Whether the harness names any credential to look for: one declared in
/// config.toml with neither variables nor login files runs on its own
/// settings.
pub(super) fn needs_credential(info: &Info) -> bool {
    !info.secret_env.is_empty() || !info.login_files.is_empty()
}

pub(super) fn no_credential(info: &Info, home: Option<&Path>) -> String {
    if let Some(missing) = credential_probe::missing_key(info, home) {
        return missing;
    }
    let secrets = info.secret_env.join(" or ");
    let logins: Vec<String> = info
        .login_files
        .iter()
        .map(|probe| format!("~/{}", probe.path))
        .collect();
    match (secrets.is_empty(), logins.is_empty()) {
        (false, false) => format!(
            "{} has no credential: set {secrets}, or log in with `{}` (it writes {})",
            info.display_name,
            info.program,
            logins.join(" or ")
        ),
        (false, true) => format!("{} has no credential: set {secrets}", info.display_name),
        (true, _) => format!(
            "{} has no credential: log in with `{}`",
            info.display_name, info.program
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_driver_sdk::{BriefDelivery, LoginProbe, ResumeScope};

    fn info() -> Info {
        Info {
            name: "x".into(),
            display_name: "X".into(),
            program: "x".into(),
            version_args: vec![],
            state_dir: None,
            managed_config: vec![],
            secret_env: vec!["X_API_KEY".into()],
            login_files: vec![LoginProbe {
                path: ".x/login.json".into(),
                account_pointer: Some("/account/email".into()),
            }],
            models: vec![],
            default_model: None,
            efforts: vec![],
            default_effort: None,
            brief: BriefDelivery::Stdin,
            resume: ResumeScope::Anywhere,
            harnesses: vec![],
        }
    }

    #[test]
    fn credentials_prefer_a_secret_then_a_login_with_its_account() {
        let home = tempfile::tempdir().unwrap();
        let mut env = BTreeMap::new();
        assert_eq!(
            credential(&info(), &env, Some(home.path())),
            Credential::None
        );
        std::fs::create_dir_all(home.path().join(".x")).unwrap();
        std::fs::write(
            home.path().join(".x/login.json"),
            r#"{"account":{"email":"a@b.c"}}"#,
        )
        .unwrap();
        let login = credential(&info(), &env, Some(home.path()));
        assert_eq!(
            login.to_string(),
            format!(
                "login ({}, a@b.c)",
                home.path().join(".x/login.json").display()
            )
        );
        env.insert("X_API_KEY".into(), "k".into());
        assert_eq!(
            credential(&info(), &env, Some(home.path())).to_string(),
            "secret (X_API_KEY)"
        );
    }
}
