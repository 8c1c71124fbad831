//! What `cinch serve` says at its start of each harness's credential: whether
//! its turns will have one, and where to give one.

use std::collections::BTreeMap;

use cinch_engine::engine::Engine;
use cinch_engine::engine::server_credential::CredentialSource;

/// Says, for each harness whose CLI this server finds, whether its turns
/// will have a credential and, when they will not, where to give one; a
/// key in the server's own environment that turns do not get is named.
pub fn report(engine: &Engine, server_env: &BTreeMap<String, String>) {
    let search_path = server_env.get("PATH").map_or("", String::as_str);
    for info in engine.registry().infos() {
        if !engine.config().is_enabled(&info.name)
            || cinch_engine::probe::find_program(&info.program, search_path).is_none()
        {
            continue;
        }
        let Ok(credential) = engine.server_credential_with(&info.name, server_env) else {
            continue;
        };
        let harness = info.name.as_str();
        match (credential.source, credential.variable.as_deref()) {
            (Some(CredentialSource::ServerSecrets), Some(variable)) => tracing::info!(
                harness,
                "{harness}: every turn has a credential: {variable} from [secrets] in config.toml"
            ),
            (Some(CredentialSource::PassEnv), Some(variable)) => tracing::info!(
                harness,
                "{harness}: every turn has a credential: {variable}, passed on from the server's environment by [serve] pass_env"
            ),
            (Some(_), _) => {
                tracing::info!(
                    harness,
                    "{harness}: runs on its own settings, no key needed"
                )
            }
            (None, _) => {
                let withheld: Vec<&str> = credential
                    .variables
                    .iter()
                    .map(String::as_str)
                    .filter(|name| server_env.contains_key(*name))
                    .collect();
                let note = if withheld.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({} is set where cinch serve started, but a turn gets none of the server's variables unless [serve] pass_env lists it)",
                        withheld.join(", ")
                    )
                };
                tracing::warn!(
                    harness,
                    "{harness}: turns have a credential only from their environment's secrets{note}; to give one: {}",
                    credential.how_to_add.join("; or ")
                );
            }
        }
    }
}
