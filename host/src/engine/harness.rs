//! What a harness runs with: its environment, its credential, and the
//! secrets to mask in everything cinch shows of it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use cinch_driver_sdk::{Command, Info};
use serde::Serialize;

use crate::config::Config;
use crate::redact::Redactor;

/// Set for every harness so that tools behave in a pipe.
const FIXED_ENV: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("DEBIAN_FRONTEND", "noninteractive"),
];

/// Never given to a harness: it does not push or open pull requests.
const WITHHELD_ENV: &[&str] = &["GH_TOKEN", "GITHUB_TOKEN"];

/// Variables of the server's own that every tenant process gets: where
/// programs are and how text is read, nothing that can hold a credential.
const PASSED_BY_DEFAULT: &[&str] = &["PATH", "LANG", "LANGUAGE", "TZ", "USER", "LOGNAME"];

/// The part of the server's environment `vars` that tenants' processes
/// may see: PATH, the locale and time zone, and the names the operator
/// lists in `pass` (`[serve] pass_env`). The rest (the server's own keys
/// among it) reaches no harness.
pub fn passed_env(
    vars: impl IntoIterator<Item = (String, String)>,
    pass: &[String],
) -> BTreeMap<String, String> {
    vars.into_iter()
        .filter(|(name, _)| {
            PASSED_BY_DEFAULT.contains(&name.as_str())
                || name.starts_with("LC_")
                || pass.iter().any(|passed| passed == name)
        })
        .collect()
}

/// The environment a harness runs with: cinch's own, the configured
/// secrets, the fixed settings and turn ids, then the driver's changes.
pub fn environment(
    base: impl IntoIterator<Item = (String, String)>,
    config: &Config,
    run: &str,
    turn: &str,
    command: &Command,
) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = base.into_iter().collect();
    env.extend(config.secrets.clone());
    for (name, value) in FIXED_ENV {
        env.insert((*name).to_owned(), (*value).to_owned());
    }
    env.insert("CINCH_RUN_ID".into(), run.to_owned());
    env.insert("CINCH_TURN_ID".into(), turn.to_owned());
    env.extend(command.set_env.iter().cloned());
    for name in WITHHELD_ENV
        .iter()
        .copied()
        .chain(command.remove_env.iter().map(String::as_str))
    {
        env.remove(name);
    }
    env
}

/// Masks the configured secrets and the values of the driver's credential
/// variables.
pub fn redactor(info: &Info, config: &Config, env: &BTreeMap<String, String>) -> Redactor {
    let credentials = info
        .secret_env
        .iter()
        .filter_map(|name| env.get(name).cloned());
    Redactor::new(config.secrets.values().cloned().chain(credentials))
}

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
    if let Some(provider) = super::credential_probe::provider_credential(info, env, home) {
        return provider;
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
    fn only_the_locale_path_and_listed_variables_pass() {
        let vars = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("ANTHROPIC_API_KEY", "server-key"),
            ("LISTED", "yes"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let env = passed_env(vars, &["LISTED".to_owned()]);
        assert_eq!(
            env.keys().map(String::as_str).collect::<Vec<_>>(),
            ["LC_ALL", "LISTED", "PATH"]
        );
    }

    #[test]
    fn the_environment_withholds_github_tokens_and_applies_the_driver() {
        let base = [
            ("GH_TOKEN", "t"),
            ("GITHUB_TOKEN", "t"),
            ("HOME", "/h"),
            ("DROP", "1"),
            ("TERM", "xterm"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        let command = Command {
            args: vec![],
            set_env: vec![("IS_SANDBOX".into(), "1".into())],
            remove_env: vec!["DROP".into()],
            brief: BriefDelivery::Stdin,
        };
        let env = environment(base, &Config::default(), "r1", "t1", &command);
        assert_eq!(env.get("HOME").map(String::as_str), Some("/h"));
        assert_eq!(env.get("TERM").map(String::as_str), Some("dumb"));
        assert_eq!(env.get("CINCH_TURN_ID").map(String::as_str), Some("t1"));
        assert_eq!(env.get("IS_SANDBOX").map(String::as_str), Some("1"));
        for gone in ["GH_TOKEN", "GITHUB_TOKEN", "DROP"] {
            assert!(!env.contains_key(gone), "{gone}");
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
