//! Contract version 0.2.0 (conversation drivers): its bindings, and the
//! conversion of what a driver returns into the SDK's types.

use cinch_driver_sdk as sdk;

wasmtime::component::bindgen!({
    world: "harness-driver",
    path: "../../wit/0.2.0",
});

use self::cinch::driver::types as wit;

pub(crate) use HarnessDriverPre as Pre;

super::convert::conversions! {
    brief { wit::BriefDelivery::Conversation => Self::Conversation, }
    info(info) {
        harnesses: info.harnesses.into_iter().map(Into::into).collect(),
    }
    turn(turn) {
        brief: turn.brief.clone(),
        harness: turn.harness.clone(),
        permissions: wit::PermissionPolicy {
            default_allow: turn.permissions.default_allow,
            deny_tools: turn.permissions.deny_tools.clone(),
        },
    }
    event {
        W::Permission(answer) => Self::Permission(sdk::PermissionAnswer {
            tool: answer.tool,
            allowed: answer.allowed,
        }),
        W::Plan(entries) => Self::Plan(
            entries
                .into_iter()
                .map(|entry| sdk::PlanEntry {
                    content: entry.content,
                    status: entry.status,
                })
                .collect(),
        ),
    }
}

impl From<wit::HarnessProfile> for sdk::HarnessProfile {
    fn from(profile: wit::HarnessProfile) -> Self {
        Self {
            name: profile.name,
            display_name: profile.display_name,
            program: profile.program,
            args: profile.args,
            version_args: profile.version_args,
            secret_env: profile.secret_env,
            login_files: profile.login_files.into_iter().map(Into::into).collect(),
            set_env: profile
                .set_env
                .into_iter()
                .map(|var| (var.name, var.value))
                .collect(),
            home_files: profile
                .home_files
                .into_iter()
                .map(|file| sdk::HomeFile {
                    path: file.path,
                    contents: file.contents,
                })
                .collect(),
            models: profile.models,
            default_model: profile.default_model,
        }
    }
}

impl From<wit::Fed> for sdk::Fed {
    fn from(fed: wit::Fed) -> Self {
        Self {
            events: fed.events.into_iter().map(Into::into).collect(),
            replies: fed.replies,
            done: fed.done,
        }
    }
}
