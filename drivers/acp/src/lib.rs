//! Any agent that speaks ACP (Agent Client Protocol): JSON-RPC 2.0, one
//! object per line, on the agent's stdin and stdout.
//!
//! The driver is the client side of the conversation (see [`conversation`]):
//! it opens with `initialize` and `session/new` (or `session/load` when the
//! turn resumes a session; `session/fork` when it forks one and the agent's
//! answer to `initialize` says it can), sends the brief with `session/prompt` once the
//! session's answer names it, answers the agent's permission requests by the
//! turn's policy, and reads `session/update` notifications into events. The
//! turn is done when the prompt's answer arrives.
//!
//! The harnesses it runs are named by product ([`profiles`]): `opencode`,
//! `qwen`, `claude-acp`, `codex-acp` and `gemini-acp`; any other ACP agent is
//! declared in the host's configuration with this driver.

mod conversation;
pub mod profiles;
mod rpc;

use cinch_driver_sdk::{BriefDelivery, Command, Driver, Info, ResumeScope, Turn, export_driver};

pub use conversation::AcpParser;

/// The ACP driver.
pub struct Acp;

impl Driver for Acp {
    type Parser = AcpParser;

    fn info() -> Info {
        Info {
            name: "acp".into(),
            display_name: "ACP agent".into(),
            // The program is the harness profile's (or the configuration's).
            program: String::new(),
            version_args: vec!["--version".into()],
            state_dir: None,
            managed_config: vec![],
            secret_env: vec![],
            login_files: vec![],
            models: vec![],
            default_model: None,
            efforts: vec![],
            default_effort: None,
            brief: BriefDelivery::Conversation,
            // Gemini and Claude find a session by the directory it started in.
            resume: ResumeScope::SameDirectory,
            harnesses: profiles::all(),
        }
    }

    /// The arguments after the profile's own: how the turn's model is named
    /// to the agent, where the agent takes one on its command line.
    fn command(turn: &Turn) -> Command {
        let (mut args, mut set_env) = match turn.model.as_deref() {
            Some(model) => profiles::model_choice(&turn.harness, model),
            None => (Vec::new(), Vec::new()),
        };
        if turn.ask {
            let (ask_args, ask_env) = profiles::asking(&turn.harness);
            args.extend(ask_args);
            set_env.extend(ask_env);
        }
        Command {
            args,
            set_env,
            remove_env: vec![],
            brief: BriefDelivery::Conversation,
        }
    }

    fn parser(turn: &Turn) -> AcpParser {
        AcpParser::new(turn)
    }
}

export_driver!(Acp);
