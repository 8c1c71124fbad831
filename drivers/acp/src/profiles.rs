//! The ACP agents cinch knows by name, each with the setup that makes it run
//! unattended and offline-safe: no telemetry, no self-update, bounded
//! retries, and cinch's sandbox instead of the agent's own.

use cinch_driver_sdk::{HarnessProfile, HomeFile, LoginProbe};

/// Every named profile.
pub fn all() -> Vec<HarnessProfile> {
    vec![opencode(), qwen(), claude_acp(), codex_acp(), gemini_acp()]
}

/// How the turn's `model` is passed to the agent of `harness`: arguments and
/// environment variables. None for an agent that takes its model from its
/// own configuration (opencode) or for an unknown harness.
pub fn model_choice(harness: &str, model: &str) -> (Vec<String>, Vec<(String, String)>) {
    match harness {
        "gemini-acp" | "qwen" => (vec!["-m".into(), model.into()], vec![]),
        "codex-acp" => (
            vec!["-c".into(), format!("model={}", toml_string(model))],
            vec![],
        ),
        "claude-acp" => (vec![], vec![("ANTHROPIC_MODEL".into(), model.into())]),
        _ => (vec![], vec![]),
    }
}

/// What makes the agent of `harness` ask before it acts, for a turn whose
/// requests the host decides: arguments and environment variables. Gemini,
/// qwen and claude-agent-acp ask in their default mode; opencode asks only
/// for the tools its permission setting marks, codex-acp only under the
/// `untrusted` approval policy (a later `-c` wins over the profile's).
pub fn asking(harness: &str) -> (Vec<String>, Vec<(String, String)>) {
    match harness {
        "opencode" => (
            vec![],
            env(&[(
                "OPENCODE_PERMISSION",
                r#"{"bash":"ask","edit":"ask","webfetch":"ask"}"#,
            )]),
        ),
        "codex-acp" => (strings(&["-c", r#"approval_policy="untrusted""#]), vec![]),
        _ => (vec![], vec![]),
    }
}

/// `text` as a TOML basic string, for codex's `-c key=value`.
fn toml_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            _ => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
        .collect()
}

fn login(path: &str) -> LoginProbe {
    LoginProbe {
        path: path.into(),
        account_pointer: None,
    }
}

fn profile(name: &str, display_name: &str, program: &str, args: &[&str]) -> HarnessProfile {
    HarnessProfile {
        name: name.into(),
        display_name: display_name.into(),
        program: program.into(),
        args: strings(args),
        version_args: strings(&["--version"]),
        secret_env: vec![],
        login_files: vec![],
        set_env: vec![],
        home_files: vec![],
        models: vec![],
        default_model: None,
    }
}

/// opencode 1.18 (`opencode acp`): its provider's key, or its auth file.
fn opencode() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["ANTHROPIC_API_KEY", "OPENAI_API_KEY"]),
        login_files: vec![login(".local/share/opencode/auth.json")],
        set_env: env(&[
            ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
            ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
            ("OPENCODE_DISABLE_SHARE", "1"),
            ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
        ]),
        ..profile("opencode", "OpenCode", "opencode", &["acp"])
    }
}

/// Qwen Code 0.15 with an OpenAI-compatible endpoint (`OPENAI_BASE_URL`).
/// Its settings keep telemetry off (without them it looks up its telemetry
/// host) and retries off (it retries a 500 for over a minute otherwise).
fn qwen() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["OPENAI_API_KEY"]),
        login_files: vec![login(".qwen/oauth_creds.json")],
        home_files: vec![HomeFile {
            path: ".qwen/settings.json".into(),
            contents: concat!(
                r#"{"security":{"auth":{"selectedType":"openai"}},"#,
                r#""general":{"enableAutoUpdate":false},"#,
                r#""privacy":{"usageStatisticsEnabled":false},"#,
                r#""telemetry":{"enabled":false},"#,
                r#""model":{"generationConfig":{"maxRetries":0}}}"#,
                "\n"
            )
            .into(),
        }],
        ..profile(
            "qwen",
            "Qwen Code",
            "qwen",
            &["--acp", "--auth-type", "openai"],
        )
    }
}

/// Zed's claude-agent-acp 0.23 (Claude Code through its SDK).
fn claude_acp() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["ANTHROPIC_API_KEY"]),
        login_files: vec![login(".claude/.credentials.json")],
        set_env: env(&[
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("DISABLE_TELEMETRY", "1"),
            ("DISABLE_AUTOUPDATER", "1"),
            ("DISABLE_ERROR_REPORTING", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ]),
        ..profile("claude-acp", "Claude Code (ACP)", "claude-agent-acp", &[])
    }
}

/// Zed's codex-acp 0.16. cinch's sandbox replaces codex's own, which needs
/// bubblewrap and without it silently writes nothing.
fn codex_acp() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["OPENAI_API_KEY"]),
        login_files: vec![login(".codex/auth.json")],
        ..profile(
            "codex-acp",
            "Codex (ACP)",
            "codex-acp",
            &[
                "-c",
                r#"sandbox_mode="danger-full-access""#,
                "-c",
                r#"approval_policy="never""#,
            ],
        )
    }
}

/// Gemini CLI 0.61 over ACP (`gemini --acp`). Its settings choose the API
/// key, keep telemetry off and make an API error fail at once.
fn gemini_acp() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
        login_files: vec![login(".gemini/oauth_creds.json")],
        set_env: env(&[("GEMINI_CLI_TRUST_WORKSPACE", "true")]),
        home_files: vec![HomeFile {
            path: ".gemini/settings.json".into(),
            contents: concat!(
                r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"#,
                r#""general":{"enableAutoUpdate":false,"enableAutoUpdateNotification":false,"maxAttempts":1},"#,
                r#""privacy":{"usageStatisticsEnabled":false},"#,
                r#""telemetry":{"enabled":false}}"#,
                "\n"
            )
            .into(),
        }],
        ..profile("gemini-acp", "Gemini CLI (ACP)", "gemini", &["--acp"])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_asking_turn_turns_on_the_prompts_of_agents_that_keep_them_off() {
        let (args, _) = asking("codex-acp");
        assert_eq!(args, ["-c", r#"approval_policy="untrusted""#]);
        let (_, vars) = asking("opencode");
        let permission: cinch_driver_sdk::serde_json::Value =
            cinch_driver_sdk::serde_json::from_str(&vars[0].1).unwrap();
        assert_eq!(permission["bash"], "ask");
        assert_eq!(asking("qwen"), (vec![], vec![]));
    }

    #[test]
    fn every_profile_has_a_distinct_name_a_program_and_a_credential() {
        let all = all();
        let mut names: Vec<&str> = all.iter().map(|p| p.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all.len());
        for profile in &all {
            assert!(!profile.program.is_empty(), "{}", profile.name);
            assert!(!profile.secret_env.is_empty(), "{}", profile.name);
        }
    }

    #[test]
    fn home_files_are_json_that_bounds_retries_and_disables_telemetry() {
        for profile in all() {
            for file in &profile.home_files {
                let value: cinch_driver_sdk::serde_json::Value =
                    cinch_driver_sdk::serde_json::from_str(&file.contents).unwrap();
                assert_eq!(value["telemetry"]["enabled"], false, "{}", file.path);
                let retries = value["model"]["generationConfig"]["maxRetries"]
                    .as_u64()
                    .or(value["general"]["maxAttempts"].as_u64().map(|n| n - 1));
                assert_eq!(retries, Some(0), "{}", file.path);
            }
        }
    }

    #[test]
    fn the_model_goes_where_each_agent_takes_it() {
        assert_eq!(
            model_choice("codex-acp", "gpt-\"5\"").0,
            ["-c", r#"model="gpt-\"5\"""#]
        );
        assert_eq!(model_choice("gemini-acp", "flash").0, ["-m", "flash"]);
        assert_eq!(
            model_choice("claude-acp", "sonnet").1,
            [("ANTHROPIC_MODEL".to_owned(), "sonnet".to_owned())]
        );
        assert_eq!(model_choice("opencode", "x"), (vec![], vec![]));
    }
}
