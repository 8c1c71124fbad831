//! The conversions from a contract version's bindings into the SDK's types
//! that every version shares. Each version's module (`v0_1_0`, `v0_2_0`)
//! brings its bindings' `wit` types into scope and expands
//! [`conversions!`] with what its version adds.

/// Implements `From` between the `wit` types in scope and the SDK's (`sdk`):
/// the records all versions have, plus the version's own arms and fields:
///
/// - `brief { .. }`: match arms of `wit::BriefDelivery` beyond `stdin` and
///   `prompt-file`;
/// - `info(name) { .. }`: field initialisers of `sdk::Info` beyond 0.1.0's,
///   reading the `wit::Info` bound to `name`;
/// - `turn(name) { .. }`: field initialisers of `wit::Turn` beyond 0.1.0's,
///   reading the `&sdk::Turn` bound to `name`;
/// - `event { .. }`: match arms of `wit::Event as W` beyond 0.1.0's.
macro_rules! conversions {
    (
        brief { $($brief:tt)* }
        info($info:ident) { $($info_extra:tt)* }
        turn($turn:ident) { $($turn_extra:tt)* }
        event { $($event:tt)* }
    ) => {
        impl From<wit::BriefDelivery> for sdk::BriefDelivery {
            fn from(brief: wit::BriefDelivery) -> Self {
                match brief {
                    wit::BriefDelivery::Stdin => Self::Stdin,
                    wit::BriefDelivery::PromptFile => Self::PromptFile,
                    $($brief)*
                }
            }
        }

        impl From<wit::LoginProbe> for sdk::LoginProbe {
            fn from(probe: wit::LoginProbe) -> Self {
                Self {
                    path: probe.path,
                    account_pointer: probe.account_pointer,
                }
            }
        }

        impl From<wit::Info> for sdk::Info {
            fn from($info: wit::Info) -> Self {
                Self {
                    name: $info.name,
                    display_name: $info.display_name,
                    program: $info.program,
                    version_args: $info.version_args,
                    state_dir: $info.state_dir,
                    managed_config: $info.managed_config,
                    secret_env: $info.secret_env,
                    login_files: $info.login_files.into_iter().map(Into::into).collect(),
                    models: $info.models,
                    default_model: $info.default_model,
                    efforts: $info.efforts,
                    default_effort: $info.default_effort,
                    brief: $info.brief.into(),
                    resume: match $info.resume {
                        wit::ResumeScope::SameDirectory => sdk::ResumeScope::SameDirectory,
                        wit::ResumeScope::Anywhere => sdk::ResumeScope::Anywhere,
                    },
                    $($info_extra)*
                }
            }
        }

        impl From<&sdk::Turn> for wit::Turn {
            fn from($turn: &sdk::Turn) -> Self {
                Self {
                    prompt_file: $turn.prompt_file.clone(),
                    workdir: $turn.workdir.clone(),
                    model: $turn.model.clone(),
                    effort: $turn.effort.clone(),
                    session_id: $turn.session_id.clone(),
                    $($turn_extra)*
                }
            }
        }

        impl From<wit::Command> for sdk::Command {
            fn from(command: wit::Command) -> Self {
                Self {
                    args: command.args,
                    set_env: command
                        .set_env
                        .into_iter()
                        .map(|var| (var.name, var.value))
                        .collect(),
                    remove_env: command.remove_env,
                    brief: command.brief.into(),
                }
            }
        }

        impl From<wit::Usage> for sdk::Usage {
            fn from(usage: wit::Usage) -> Self {
                Self {
                    input_tokens: usage.input_tokens,
                    output_tokens: usage.output_tokens,
                    cached_input_tokens: usage.cached_input_tokens,
                    cost_usd: usage.cost_usd,
                }
            }
        }

        impl From<wit::Event> for sdk::Event {
            fn from(event: wit::Event) -> Self {
                use wit::Event as W;
                match event {
                    W::Started(started) => Self::Started {
                        model: started.model,
                        session_id: started.session_id,
                    },
                    W::Session(id) => Self::Session(id),
                    W::AssistantMessage(text) => Self::AssistantMessage(text),
                    W::AssistantDelta(text) => Self::AssistantDelta(text),
                    W::Thinking(text) => Self::Thinking(text),
                    W::ToolUse(tool) => Self::ToolUse(sdk::ToolUse {
                        id: tool.id,
                        name: tool.name,
                        detail: tool.detail,
                        phase: match tool.phase {
                            wit::ToolPhase::Started => sdk::ToolPhase::Started,
                            wit::ToolPhase::Completed => sdk::ToolPhase::Completed,
                            wit::ToolPhase::Failed => sdk::ToolPhase::Failed,
                        },
                    }),
                    W::FileChange(change) => Self::FileChange {
                        path: change.path,
                        kind: change.kind,
                    },
                    W::Usage(usage) => Self::Usage(usage.into()),
                    W::Warning(text) => Self::Warning(text),
                    W::Error(text) => Self::Error(text),
                    W::FinalMessage(text) => Self::FinalMessage(text),
                    W::Other(kind) => Self::Other(kind),
                    W::Skipped(skipped) => Self::Skipped {
                        reason: match skipped.reason {
                            wit::SkipReason::NotJson => sdk::SkipReason::NotJson,
                            wit::SkipReason::Unknown => sdk::SkipReason::Unknown,
                        },
                        kind: skipped.kind,
                    },
                    $($event)*
                }
            }
        }

        impl From<wit::Outcome> for sdk::Outcome {
            fn from(outcome: wit::Outcome) -> Self {
                Self {
                    final_message: outcome.final_message,
                    session_id: outcome.session_id,
                    is_error: outcome.is_error,
                    error: outcome.error,
                    usage: outcome.usage.map(Into::into),
                }
            }
        }
    };
}

pub(super) use conversions;
