//! Approvals: a person (or a rule, or a deadline) decides what the agent
//! may do while its turn runs. Which harnesses can ask is here, and
//! [`view`] an approval as the API shows it; the policy (when to ask, what
//! rules decide without asking) is `cinch_store::approval_policy`, kept with
//! the environment, and the objects live in the store; the flow is
//! `service::sessions::approvals`, the routes `api::approvals`.

pub(crate) mod view;

use cinch_engine::drivers::Registry;

/// The first contract version whose drivers can hand the host a
/// permission request to decide.
const ASKING_CONTRACT: &str = "0.3.0";

/// Whether the harness `name` can ask: its driver (of a contract that
/// carries decisions) holds a conversation with the CLI, at least for a turn
/// that asks (claude's control protocol), in which it reports permission
/// requests and answers them with the host's decisions.
pub(crate) fn can_ask(registry: &Registry, name: &str) -> bool {
    use cinch_driver_sdk::BriefDelivery::Conversation;
    registry.harness(name).is_ok_and(|harness| {
        let asking = cinch_driver_sdk::Turn {
            harness: name.to_owned(),
            ask: true,
            ..cinch_driver_sdk::Turn::default()
        };
        harness.driver.contract_version() >= ASKING_CONTRACT
            && (harness.info.brief == Conversation
                || harness
                    .driver
                    .command(&asking)
                    .is_ok_and(|command| command.brief == Conversation))
    })
}

/// The harnesses that can ask, by name.
pub(crate) fn harnesses_that_ask(registry: &Registry) -> Vec<String> {
    let mut names: Vec<String> = registry
        .names()
        .into_iter()
        .filter(|name| can_ask(registry, name))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}
