//! The ACP agents cinch knows by name, each with the setup that makes it run
//! unattended and offline-safe: no telemetry, no self-update, bounded
//! retries, and cinch's sandbox instead of the agent's own.

use cinch_driver_sdk::{HarnessProfile, HomeFile, LoginProbe};

/// Every named profile.
pub fn all() -> Vec<HarnessProfile> {
    vec![
        opencode(),
        qwen(),
        claude_acp(),
        codex_acp(),
        gemini_acp(),
        copilot(),
        kilo(),
        cline(),
        droid(),
    ]
}

/// How the turn's `model` is passed to the agent of `harness`: arguments and
/// environment variables. None for an agent that takes its model from its
/// own configuration (opencode, kilo) or for an unknown harness.
pub fn model_choice(harness: &str, model: &str) -> (Vec<String>, Vec<(String, String)>) {
    match harness {
        "gemini-acp" | "qwen" => (vec!["-m".into(), model.into()], vec![]),
        "copilot" => (vec!["--model".into(), model.into()], vec![]),
        "cline" => (vec![], vec![("CLINE_MODEL".into(), model.into())]),
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

/// GitHub Copilot CLI 1.0 over ACP (`copilot --acp`), on GitHub's models
/// (a login or a GitHub token) or on a model server of the user's own
/// (`COPILOT_PROVIDER_BASE_URL`, `COPILOT_PROVIDER_TYPE` and
/// `COPILOT_PROVIDER_API_KEY`; `COPILOT_OFFLINE=true` then keeps it from
/// calling GitHub at all). It never updates itself under a turn.
fn copilot() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&[
            "COPILOT_PROVIDER_API_KEY",
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "GITHUB_TOKEN",
        ]),
        login_files: vec![login(".copilot/config.json")],
        set_env: env(&[("COPILOT_AUTO_UPDATE", "false")]),
        ..profile(
            "copilot",
            "GitHub Copilot CLI",
            "copilot",
            &["--acp", "--no-auto-update", "--disable-client-telemetry"],
        )
    }
}

/// Kilo CLI 7.7 (`kilo acp`), an opencode fork: its provider's key, or its
/// auth file; a model server of the user's own goes in its configuration
/// (`~/.config/kilo/kilo.json`, or `KILO_CONFIG_CONTENT`).
fn kilo() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "KILO_API_KEY"]),
        login_files: vec![login(".local/share/kilo/auth.json")],
        // Without the last five a turn took 200 to 250 s here against 16 s: it
        // waits on its telemetry, presence and downloads it cannot reach.
        set_env: env(&[
            ("KILO_DISABLE_AUTOUPDATE", "1"),
            ("KILO_DISABLE_MODELS_FETCH", "1"),
            ("KILO_DISABLE_SHARE", "1"),
            ("KILO_DISABLE_DEFAULT_PLUGINS", "1"),
            ("KILO_DISABLE_LSP_DOWNLOAD", "1"),
            ("KILO_DISABLE_PRESENCE", "1"),
            ("KILO_DISABLE_SESSION_INGEST", "1"),
            ("KILO_DISABLE_CODEBASE_INDEXING", "1"),
            ("KILO_TELEMETRY_LEVEL", "off"),
        ]),
        ..profile("kilo", "Kilo", "kilo", &["acp"])
    }
}

/// Cline CLI 3.0 (`cline --acp`). Over ACP it starts a session only with
/// `CLINE_API_KEY` set or a Cline account signed in; `CLINE_PROVIDER`
/// (`openai-compatible`, `anthropic`, ...) picks the provider whose settings
/// `cline auth` wrote (its base URL among them).
fn cline() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["CLINE_API_KEY"]),
        login_files: vec![login(".cline/data/settings/providers.json")],
        ..profile("cline", "Cline", "cline", &["--acp"])
    }
}

/// Factory's Droid 0.215 over ACP (`droid exec --output-format acp`). Over
/// ACP it starts a session only with `FACTORY_API_KEY` or a Factory login,
/// unless `FACTORY_AIRGAP_ENABLED=true`, which runs it on the custom models of
/// `~/.factory/config.json` (`custom_models`: a base URL and key of the user's
/// own) with nothing sent to Factory; `~/.factory/settings.json`'s `model`
/// (`custom:<model>`) picks one.
fn droid() -> HarnessProfile {
    HarnessProfile {
        secret_env: strings(&["FACTORY_API_KEY"]),
        // A login, or custom models with their keys.
        login_files: vec![login(".factory/auth.json"), login(".factory/config.json")],
        set_env: env(&[("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false")]),
        ..profile(
            "droid",
            "Droid",
            "droid",
            &["exec", "--output-format", "acp"],
        )
    }
}

/// The error in `chunk`, the last message chunk of a turn of the agent of
/// `harness` that the agent ended as if it went well, when that chunk is the
/// agent's own notice of a failure rather than the model's words: Copilot
/// CLI ends a failed prompt with `end_turn` and says why in a chunk of its
/// own that starts `Error: ` (its retries in ones that start `Info: `).
pub fn failure_notice<'a>(harness: &str, chunk: &'a str) -> Option<&'a str> {
    match harness {
        "copilot" => chunk
            .strip_prefix("Error: ")
            .map(str::trim)
            .filter(|error| !error.is_empty()),
        _ => None,
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
        assert_eq!(model_choice("copilot", "gpt-5").0, ["--model", "gpt-5"]);
        assert_eq!(
            model_choice("cline", "m").1,
            [("CLINE_MODEL".to_owned(), "m".to_owned())]
        );
    }

    #[test]
    fn only_copilots_error_notices_fail_a_turn() {
        let said = "Error: Authentication failed with provider at http://x (HTTP 401).";
        assert_eq!(
            failure_notice("copilot", said),
            Some("Authentication failed with provider at http://x (HTTP 401).")
        );
        assert_eq!(failure_notice("copilot", "It raised TypeError: x"), None);
        assert_eq!(failure_notice("copilot", "done"), None);
        assert_eq!(failure_notice("kilo", said), None);
    }
}
