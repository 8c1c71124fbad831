//! The component side: wit-bindgen's bindings for the contract and the glue
//! that converts between them and the SDK's types.

use std::cell::RefCell;
use std::marker::PhantomData;

use crate::{Driver, Parser as _};

// Parsing a line allocates and frees many small blocks (see `crate::heap`).
#[global_allocator]
static ALLOCATOR: crate::heap::SingleThreaded<crate::heap::LinearMemory> =
    crate::heap::SingleThreaded::new(crate::heap::Heap::new(crate::heap::LinearMemory));

#[allow(missing_docs, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        world: "harness-driver",
        path: "../wit/0.3.0",
        pub_export_macro: true,
        export_macro_name: "export_wit_bindings",
        default_bindings_module: "cinch_driver_sdk::guest::bindings",
    });
}

use bindings::cinch::driver::types as wit;
use bindings::exports::cinch::driver::driver::{Guest, GuestParser};

/// The component that [`crate::export_driver!`] exports for a driver `D`.
pub struct Component<D>(PhantomData<D>);

/// A parser resource: the driver's parser behind the `&self` the ABI gives.
pub struct ParserResource<D: Driver>(RefCell<D::Parser>);

impl<D: Driver + 'static> Guest for Component<D> {
    type Parser = ParserResource<D>;

    fn describe() -> wit::Info {
        D::info().into()
    }

    fn parse_version(output: String) -> Option<String> {
        D::parse_version(&output)
    }

    fn start_command(turn: wit::Turn) -> wit::Command {
        D::command(&turn.into()).into()
    }
}

impl<D: Driver + 'static> GuestParser for ParserResource<D> {
    fn new(turn: wit::Turn) -> Self {
        Self(RefCell::new(D::parser(&turn.into())))
    }

    fn opening(&self) -> Vec<String> {
        self.0.borrow_mut().opening()
    }

    fn feed(&self, lines: Vec<String>) -> wit::Fed {
        let fed = self.0.borrow_mut().feed(&lines);
        wit::Fed {
            events: fed.events.into_iter().map(Into::into).collect(),
            replies: fed.replies,
            done: fed.done,
        }
    }

    fn stop(&self) -> Vec<String> {
        self.0.borrow_mut().stop()
    }

    fn decide(&self, key: String, allow: bool, message: Option<String>) -> Vec<String> {
        self.0.borrow_mut().decide(&key, allow, message.as_deref())
    }

    fn finish(&self, exit_code: Option<i32>, stderr_tail: String) -> wit::Outcome {
        self.0.borrow_mut().finish(exit_code, &stderr_tail).into()
    }
}

impl From<crate::BriefDelivery> for wit::BriefDelivery {
    fn from(brief: crate::BriefDelivery) -> Self {
        match brief {
            crate::BriefDelivery::Stdin => Self::Stdin,
            crate::BriefDelivery::PromptFile => Self::PromptFile,
            crate::BriefDelivery::Conversation => Self::Conversation,
        }
    }
}

impl From<crate::LoginProbe> for wit::LoginProbe {
    fn from(probe: crate::LoginProbe) -> Self {
        Self {
            path: probe.path,
            account_pointer: probe.account_pointer,
        }
    }
}

fn env_vars(vars: Vec<(String, String)>) -> Vec<wit::EnvVar> {
    vars.into_iter()
        .map(|(name, value)| wit::EnvVar { name, value })
        .collect()
}

impl From<crate::HarnessProfile> for wit::HarnessProfile {
    fn from(profile: crate::HarnessProfile) -> Self {
        Self {
            name: profile.name,
            display_name: profile.display_name,
            program: profile.program,
            args: profile.args,
            version_args: profile.version_args,
            secret_env: profile.secret_env,
            login_files: profile.login_files.into_iter().map(Into::into).collect(),
            set_env: env_vars(profile.set_env),
            home_files: profile
                .home_files
                .into_iter()
                .map(|file| wit::HomeFile {
                    path: file.path,
                    contents: file.contents,
                })
                .collect(),
            models: profile.models,
            default_model: profile.default_model,
        }
    }
}

impl From<crate::Info> for wit::Info {
    fn from(info: crate::Info) -> Self {
        Self {
            name: info.name,
            display_name: info.display_name,
            program: info.program,
            version_args: info.version_args,
            state_dir: info.state_dir,
            managed_config: info.managed_config,
            secret_env: info.secret_env,
            login_files: info.login_files.into_iter().map(Into::into).collect(),
            models: info.models,
            default_model: info.default_model,
            efforts: info.efforts,
            default_effort: info.default_effort,
            brief: info.brief.into(),
            resume: match info.resume {
                crate::ResumeScope::SameDirectory => wit::ResumeScope::SameDirectory,
                crate::ResumeScope::Anywhere => wit::ResumeScope::Anywhere,
            },
            harnesses: info.harnesses.into_iter().map(Into::into).collect(),
        }
    }
}

impl From<wit::Turn> for crate::Turn {
    fn from(turn: wit::Turn) -> Self {
        Self {
            prompt_file: turn.prompt_file,
            workdir: turn.workdir,
            model: turn.model,
            effort: turn.effort,
            session_id: turn.session_id,
            brief: turn.brief,
            harness: turn.harness,
            permissions: crate::PermissionPolicy {
                default_allow: turn.permissions.default_allow,
                deny_tools: turn.permissions.deny_tools,
            },
            ask: turn.ask,
            fork: turn.fork,
        }
    }
}

impl From<crate::Command> for wit::Command {
    fn from(command: crate::Command) -> Self {
        Self {
            args: command.args,
            set_env: env_vars(command.set_env),
            remove_env: command.remove_env,
            brief: command.brief.into(),
        }
    }
}

impl From<crate::Usage> for wit::Usage {
    fn from(usage: crate::Usage) -> Self {
        Self {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cached_input_tokens: usage.cached_input_tokens,
            cost_usd: usage.cost_usd,
        }
    }
}

impl From<crate::Event> for wit::Event {
    fn from(event: crate::Event) -> Self {
        use crate::Event as E;
        match event {
            E::Started { model, session_id } => Self::Started(wit::Started { model, session_id }),
            E::Session(id) => Self::Session(id),
            E::AssistantMessage(text) => Self::AssistantMessage(text),
            E::AssistantDelta(text) => Self::AssistantDelta(text),
            E::Thinking(text) => Self::Thinking(text),
            E::ToolUse(tool) => Self::ToolUse(wit::ToolUse {
                id: tool.id,
                name: tool.name,
                detail: tool.detail,
                phase: match tool.phase {
                    crate::ToolPhase::Started => wit::ToolPhase::Started,
                    crate::ToolPhase::Completed => wit::ToolPhase::Completed,
                    crate::ToolPhase::Failed => wit::ToolPhase::Failed,
                },
            }),
            E::FileChange { path, kind } => Self::FileChange(wit::FileChange { path, kind }),
            E::Usage(usage) => Self::Usage(usage.into()),
            E::Warning(text) => Self::Warning(text),
            E::Error(text) => Self::Error(text),
            E::FinalMessage(text) => Self::FinalMessage(text),
            E::Other(kind) => Self::Other(kind),
            E::Skipped { reason, kind } => Self::Skipped(wit::Skipped {
                reason: match reason {
                    crate::SkipReason::NotJson => wit::SkipReason::NotJson,
                    crate::SkipReason::Unknown => wit::SkipReason::Unknown,
                },
                kind,
            }),
            E::Permission(answer) => Self::Permission(wit::PermissionAnswer {
                tool: answer.tool,
                allowed: answer.allowed,
            }),
            E::Plan(entries) => Self::Plan(
                entries
                    .into_iter()
                    .map(|entry| wit::PlanEntry {
                        content: entry.content,
                        status: entry.status,
                    })
                    .collect(),
            ),
            E::PermissionRequest(request) => Self::PermissionRequest(wit::PermissionRequest {
                key: request.key,
                tool: request.tool,
                kind: request.kind,
                title: request.title,
                input: request.input,
                options: request
                    .options
                    .into_iter()
                    .map(|option| wit::PermissionOption {
                        id: option.id,
                        name: option.name,
                        kind: option.kind,
                    })
                    .collect(),
            }),
        }
    }
}

impl From<crate::Outcome> for wit::Outcome {
    fn from(outcome: crate::Outcome) -> Self {
        Self {
            final_message: outcome.final_message,
            session_id: outcome.session_id,
            is_error: outcome.is_error,
            error: outcome.error,
            usage: outcome.usage.map(Into::into),
        }
    }
}
