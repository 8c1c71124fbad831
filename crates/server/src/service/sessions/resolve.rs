//! Which harness, model and effort a session runs: what was asked when it is
//! supported, else the acting agent's settings, else the harness's defaults.
//! An unknown value never fails a request; the session reports what it got.

use cinch_driver_sdk::Info;

use cinch_store::Agent;

/// The harness a request gets when it names none (and its agent has none).
pub(crate) const DEFAULT_HARNESS: &str = "claude";

/// What a session runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Choice {
    /// The harness.
    pub harness: String,
    /// Who makes its models.
    pub vendor: String,
    /// The model; `None` for the harness's own default.
    pub model: Option<String>,
    /// The effort; `None` for the harness's own default.
    pub effort: Option<String>,
}

/// What was asked for.
#[derive(Debug, Clone, Default)]
pub(crate) struct Asked<'a> {
    /// The harness asked for.
    pub harness: Option<&'a str>,
    /// The model asked for.
    pub model: Option<&'a str>,
    /// The effort asked for.
    pub effort: Option<&'a str>,
}

/// Resolves `asked` for `agent`, among the harnesses `drivers` describes.
pub(crate) fn resolve(asked: &Asked, agent: &Agent, drivers: &[Info]) -> Choice {
    let find =
        |name: Option<&str>| name.and_then(|name| drivers.iter().find(|info| info.name == name));
    let info = find(asked.harness)
        .or_else(|| find(agent.harness.as_deref()))
        .or_else(|| find(Some(DEFAULT_HARNESS)))
        .or_else(|| drivers.first());
    let Some(info) = info else {
        return Choice {
            harness: DEFAULT_HARNESS.to_owned(),
            vendor: vendor(DEFAULT_HARNESS).to_owned(),
            model: None,
            effort: None,
        };
    };
    // The agent's pins are in its own harness's vocabulary: they apply only there.
    let own_harness = agent.harness.as_deref() == Some(info.name.as_str());
    let pinned = |value: &Option<String>| value.clone().filter(|_| own_harness);
    // A driver that lists no models takes any id (the CLI knows its own);
    // one that lists no efforts takes none.
    let model_ok = |value: &String| info.models.is_empty() || info.models.contains(value);
    let effort_ok = |value: &String| info.efforts.contains(value);
    let model = asked
        .model
        .map(str::to_owned)
        .filter(model_ok)
        .or_else(|| pinned(&agent.model).filter(model_ok))
        .or_else(|| info.default_model.clone());
    let effort = asked
        .effort
        .map(str::to_owned)
        .filter(effort_ok)
        .or_else(|| pinned(&agent.effort).filter(effort_ok))
        .or_else(|| info.default_effort.clone());
    Choice {
        harness: info.name.clone(),
        vendor: vendor(&info.name).to_owned(),
        model,
        effort,
    }
}

/// Who makes a harness's models; a plugin's own name when cinch does not know it.
pub(crate) fn vendor(harness: &str) -> &str {
    match harness {
        "claude" => "anthropic",
        "codex" => "openai",
        "gemini" => "google",
        "cursor" => "cursor",
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, models: &[&str], efforts: &[&str]) -> Info {
        Info {
            name: name.into(),
            display_name: name.into(),
            program: name.into(),
            models: models.iter().map(|m| (*m).to_owned()).collect(),
            default_model: models.first().map(|m| (*m).to_owned()),
            efforts: efforts.iter().map(|e| (*e).to_owned()).collect(),
            default_effort: efforts.get(1).map(|e| (*e).to_owned()),
            version_args: Vec::new(),
            state_dir: None,
            managed_config: Vec::new(),
            secret_env: Vec::new(),
            login_files: Vec::new(),
            brief: cinch_driver_sdk::BriefDelivery::Stdin,
            resume: cinch_driver_sdk::ResumeScope::Anywhere,
            harnesses: Vec::new(),
        }
    }

    fn agent(harness: Option<&str>, model: Option<&str>, effort: Option<&str>) -> Agent {
        Agent {
            id: "agt".to_owned().into(),
            account_id: "acc".to_owned().into(),
            name: "agent".into(),
            connected: true,
            enabled: true,
            harness: harness.map(Into::into),
            model: model.map(Into::into),
            effort: effort.map(Into::into),
            environment_id: None,
            created_at: cinch_base::timestamp::Timestamp::now(),
        }
    }

    #[test]
    fn falls_back_and_applies_pins_only_to_the_agents_harness() {
        let claude = info(
            "claude",
            &["claude-a", "claude-b"],
            &["low", "medium", "high"],
        );
        let codex = info(
            "codex",
            &["gpt-x"],
            &["minimal", "low", "medium", "high", "xhigh"],
        );
        let drivers = [claude, codex];
        let pinned = agent(Some("codex"), Some("gpt-x"), Some("xhigh"));

        let got = resolve(&Asked::default(), &pinned, &drivers);
        assert_eq!(
            (got.harness.as_str(), got.effort.as_deref()),
            ("codex", Some("xhigh"))
        );
        assert_eq!(got.vendor, "openai");

        let asked = Asked {
            harness: Some("claude"),
            ..Asked::default()
        };
        let got = resolve(&asked, &pinned, &drivers);
        assert_eq!(got.harness, "claude");
        assert_eq!(
            got.effort.as_deref(),
            Some("medium"),
            "the agent's effort is codex's, not claude's"
        );

        let asked = Asked {
            harness: Some("nope"),
            model: Some("nope"),
            effort: Some("max"),
        };
        let got = resolve(&asked, &agent(None, None, None), &drivers);
        assert_eq!(got.harness, "claude");
        assert_eq!(got.model.as_deref(), Some("claude-a"));
        assert_eq!(got.effort.as_deref(), Some("medium"));

        let asked = Asked {
            harness: Some("claude"),
            model: Some("claude-b"),
            effort: Some("high"),
        };
        let got = resolve(&asked, &pinned, &drivers);
        assert_eq!(
            (got.model.as_deref(), got.effort.as_deref()),
            (Some("claude-b"), Some("high"))
        );
    }
}
