//! Whether a server's turns will have a harness's credential, and where to
//! give one.
//!
//! A server turn's environment is built, not inherited (see
//! [`super::harness::passed_env`]): a key reaches the harness only as a
//! secret of the task's environment, from `[secrets]` in cinch's
//! `config.toml`, or from the server's own variables that `[serve] pass_env`
//! lists. Its `HOME` is the agent's home, not the operator's, so a login made
//! with the CLI in a terminal does not count either. `cinch check` in the
//! server's shell sees that shell's variables; this is what the server's
//! turns see.

use std::collections::BTreeMap;

use serde::Serialize;

use super::Engine;
use super::credential::needs_credential;
use super::harness::passed_env;

/// Where a server turn's credential comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum CredentialSource {
    /// `[secrets]` in cinch's `config.toml`: every turn gets it.
    ServerSecrets,
    /// A variable of the server's own environment that `[serve] pass_env`
    /// lists.
    PassEnv,
    /// The harness names no credential: it runs on its own settings.
    NotNeeded,
}

/// Whether every server turn of a harness has a credential, whatever its
/// environment, and how to give it one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ServerCredential {
    /// Every turn of the harness has a credential from the server itself.
    /// When false, a turn has one only if its environment has a secret named
    /// in `variables`.
    pub available: bool,
    /// Where it comes from, when `available`.
    pub source: Option<CredentialSource>,
    /// The variable that holds it, when it is a variable.
    pub variable: Option<String>,
    /// The variables the harness takes a key from, in its order of
    /// preference: an environment secret of one of these names gives its
    /// turns a credential.
    pub variables: Vec<String>,
    /// The ways to give its turns a credential, one sentence each.
    pub how_to_add: Vec<String>,
}

/// The credential server turns of `info`'s harness get from `secrets`
/// (`[secrets]`) and the server's environment `server_env` filtered by
/// `pass_env`.
pub fn server_credential(
    info: &cinch_driver_sdk::Info,
    secrets: &BTreeMap<String, String>,
    server_env: &BTreeMap<String, String>,
    pass_env: &[String],
) -> ServerCredential {
    let passed = passed_env(server_env.clone(), pass_env);
    let set = |env: &BTreeMap<String, String>, name: &str| {
        env.get(name).is_some_and(|value| !value.trim().is_empty())
    };
    let found = info.secret_env.iter().find_map(|name| {
        if set(secrets, name) {
            Some((CredentialSource::ServerSecrets, name))
        } else if set(&passed, name) {
            Some((CredentialSource::PassEnv, name))
        } else {
            None
        }
    });
    let (source, variable) = match found {
        Some((source, name)) => (Some(source), Some(name.clone())),
        None if !needs_credential(info) => (Some(CredentialSource::NotNeeded), None),
        None => (None, None),
    };
    ServerCredential {
        available: source.is_some(),
        source,
        variable,
        variables: info.secret_env.clone(),
        how_to_add: how_to_add(info),
    }
}

impl Engine {
    /// What server turns of the harness `name` get for a credential, for a
    /// server whose own variables are `server_env` (a server's engine holds
    /// only those it passes on: [`Engine::server_credential`]).
    pub fn server_credential_with(
        &self,
        name: &str,
        server_env: &BTreeMap<String, String>,
    ) -> anyhow::Result<ServerCredential> {
        let registry = self.registry();
        let harness = registry.harness(name)?;
        Ok(server_credential(
            &harness.info,
            &self.config.secrets,
            server_env,
            &self.config.serve.pass_env,
        ))
    }

    /// What this server's turns of the harness `name` get for a credential.
    pub fn server_credential(&self, name: &str) -> anyhow::Result<ServerCredential> {
        self.server_credential_with(name, &self.env)
    }
}

/// The ways a server turn of `info`'s harness gets a credential.
fn how_to_add(info: &cinch_driver_sdk::Info) -> Vec<String> {
    let mut ways = Vec::new();
    if let Some(first) = info.secret_env.first() {
        let names = info.secret_env.join(" or ");
        ways.push(format!(
            "add {names} as a secret of the task's environment (in the app: the environment's secrets; over the API: PATCH the environment with {{\"secrets\": {{\"{first}\": \"…\"}}}})"
        ));
        ways.push(format!(
            "give it to every turn on this server: {first} = \"…\" under [secrets] in cinch's config.toml, then restart cinch serve"
        ));
        ways.push(format!(
            "pass the server's own variable on: pass_env = [\"{first}\"] under [serve] in cinch's config.toml, with {first} set where cinch serve starts"
        ));
    }
    if let Some(login) = info.login_files.first() {
        ways.push(format!(
            "log in with `{}` as the agent: run it with HOME set to the agent's home (~/.cinch/agents/<agent>); it writes ~/{}",
            info.program, login.path
        ));
    }
    ways
}

/// What a server turn with no credential says: the ways that work for it.
pub fn no_credential(info: &cinch_driver_sdk::Info) -> String {
    let ways = how_to_add(info);
    format!(
        "{} has no credential for this turn: a server turn gets only what cinch gives it, not the server's own environment or logins. Either {}",
        info.display_name,
        ways.join("; or ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(secret_env: &[&str]) -> cinch_driver_sdk::Info {
        cinch_driver_sdk::Info {
            name: "claude".into(),
            display_name: "Claude Code".into(),
            program: "claude".into(),
            version_args: vec![],
            state_dir: None,
            managed_config: vec![],
            secret_env: secret_env.iter().map(|name| (*name).to_owned()).collect(),
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

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    }

    #[test]
    fn a_server_variable_counts_only_when_passed_on() {
        let claude = info(&["ANTHROPIC_API_KEY"]);
        let server = env(&[("ANTHROPIC_API_KEY", "sk-1")]);
        let withheld = server_credential(&claude, &BTreeMap::new(), &server, &[]);
        assert!(!withheld.available);
        assert_eq!(withheld.source, None);
        assert_eq!(withheld.how_to_add.len(), 3);
        let passed = server_credential(
            &claude,
            &BTreeMap::new(),
            &server,
            &["ANTHROPIC_API_KEY".to_owned()],
        );
        assert_eq!(passed.source, Some(CredentialSource::PassEnv));
        assert_eq!(passed.variable.as_deref(), Some("ANTHROPIC_API_KEY"));
        let configured = server_credential(
            &claude,
            &env(&[("ANTHROPIC_API_KEY", "sk-2")]),
            &BTreeMap::new(),
            &[],
        );
        assert_eq!(configured.source, Some(CredentialSource::ServerSecrets));
        let own_settings = server_credential(&info(&[]), &BTreeMap::new(), &server, &[]);
        assert_eq!(own_settings.source, Some(CredentialSource::NotNeeded));
    }
}
