//! What a harness runs with: its environment and the secrets to mask in
//! everything cinch shows of it (its credential: `credential`).

use std::collections::BTreeMap;

use cinch_driver_sdk::{Command, Info};

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

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_driver_sdk::BriefDelivery;

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
}
