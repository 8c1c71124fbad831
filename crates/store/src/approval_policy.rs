//! An approval policy: when a harness asks, and which rules decide without
//! asking. A rule names a tool by its name or kind (`Bash`, `shell`,
//! `edit`), optionally with a glob on its command or path in parentheses:
//! `Bash(git push*)`, `Write(.env*)`, `shell(rm *)`. Deny rules win over
//! allow rules; what no rule decides follows the mode. It lives with the
//! store, which keeps it with each environment and session; the host's
//! sessions apply it.

use serde::{Deserialize, Serialize};

/// The longest deadline, in seconds (a day).
pub(crate) const MAX_TIMEOUT_SECONDS: u32 = 86_400;

/// The deadline when the policy names none, in seconds.
pub(crate) const DEFAULT_TIMEOUT_SECONDS: u32 = 600;

/// The most rules in one list.
pub(crate) const MAX_RULES: usize = 100;

/// When and how the agent's permission requests are decided.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct ApprovalPolicy {
    /// `allow` (the default: nothing is asked), `ask` (a person decides
    /// what no rule does) or `deny` (what no rule allows is refused).
    #[serde(default)]
    pub mode: ApprovalMode,
    /// Rules for tools allowed without asking: `Read`, `Bash(git status*)`.
    #[serde(default)]
    pub allow: Vec<String>,
    /// Rules for tools refused without asking: `Bash(git push*)`, `Write(.env*)`.
    #[serde(default)]
    pub deny: Vec<String>,
    /// Seconds a request waits for a decision (1 to 86400; default 600).
    #[serde(default)]
    pub timeout_seconds: Option<u32>,
    /// What the deadline decides (default `deny`).
    #[serde(default)]
    pub on_timeout: Option<Decision>,
}

/// When the agent's permission requests are asked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    /// Nothing is asked; the harness runs unattended (deny rules still refuse).
    #[default]
    Allow,
    /// A person decides what no rule does.
    Ask,
    /// What no rule allows is refused.
    Deny,
}

/// A decision on one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    /// The tool may run.
    Allow,
    /// The tool may not run.
    Deny,
}

impl Decision {
    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }

    /// The decision named `text`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// What the policy makes of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Decided by a rule or the mode, without asking.
    Decided(Decision),
    /// A person decides.
    Ask,
}

/// One rule: a tool's name or kind, and a glob on its input.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule<'a> {
    tool: &'a str,
    pattern: Option<&'a str>,
}

impl<'a> Rule<'a> {
    fn parse(text: &'a str) -> Result<Self, String> {
        let text = text.trim();
        let (tool, pattern) = match text.split_once('(') {
            Some((tool, rest)) => {
                let Some(pattern) = rest.strip_suffix(')') else {
                    return Err(format!(
                        "{text:?} opens a parenthesis it does not close: write `Tool(pattern)`"
                    ));
                };
                (tool.trim(), Some(pattern))
            }
            None => (text, None),
        };
        if tool.is_empty() || tool.contains(|c: char| c.is_whitespace() || c == ')') {
            return Err(format!(
                "{text:?} names no tool: write a tool's name or kind, e.g. `Bash` or `Bash(git status*)`"
            ));
        }
        Ok(Self { tool, pattern })
    }

    fn matches(&self, tool: &str, kind: &str, input: Option<&str>) -> bool {
        let named = self.tool.eq_ignore_ascii_case(tool) || self.tool.eq_ignore_ascii_case(kind);
        named
            && self
                .pattern
                .is_none_or(|pattern| input.is_some_and(|input| glob(pattern, input.trim())))
    }
}

impl ApprovalPolicy {
    /// The field errors of this policy, named under `field` (`approvals`).
    pub fn check(&self) -> Vec<(String, String)> {
        let mut errors = Vec::new();
        for (list, rules) in [("allow", &self.allow), ("deny", &self.deny)] {
            if rules.len() > MAX_RULES {
                errors.push((list.to_owned(), format!("at most {MAX_RULES} rules")));
            }
            for (index, rule) in rules.iter().enumerate() {
                if let Err(why) = Rule::parse(rule) {
                    errors.push((format!("{list}[{index}]"), why));
                }
            }
        }
        if let Some(seconds) = self.timeout_seconds
            && !(1..=MAX_TIMEOUT_SECONDS).contains(&seconds)
        {
            errors.push((
                "timeout_seconds".to_owned(),
                format!("must be 1 to {MAX_TIMEOUT_SECONDS} seconds"),
            ));
        }
        errors
    }

    /// Whether a turn under this policy needs its harness to ask: anything
    /// but the default (allow, no rules) decides requests in cinch.
    pub fn needs_asking(&self) -> bool {
        self.mode != ApprovalMode::Allow || !self.allow.is_empty() || !self.deny.is_empty()
    }

    /// What the policy makes of a request for `tool` of `kind` with `input`.
    pub fn verdict(&self, tool: &str, kind: &str, input: Option<&str>) -> Verdict {
        let matches = |rules: &[String]| {
            rules
                .iter()
                .any(|rule| Rule::parse(rule).is_ok_and(|rule| rule.matches(tool, kind, input)))
        };
        if matches(&self.deny) {
            return Verdict::Decided(Decision::Deny);
        }
        if matches(&self.allow) {
            return Verdict::Decided(Decision::Allow);
        }
        match self.mode {
            ApprovalMode::Allow => Verdict::Decided(Decision::Allow),
            ApprovalMode::Deny => Verdict::Decided(Decision::Deny),
            ApprovalMode::Ask => Verdict::Ask,
        }
    }

    /// How long a request waits.
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(u64::from(
            self.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
        ))
    }

    /// What the deadline decides.
    pub fn on_timeout(&self) -> Decision {
        self.on_timeout.unwrap_or(Decision::Deny)
    }

    /// An allow rule for `tool` with exactly `input` (a decision's
    /// `scope: session`), glob characters in it matched as themselves.
    pub fn allow_rule_for(tool: &str, input: Option<&str>) -> String {
        match input {
            Some(input) => {
                let literal: String = input
                    .trim()
                    .chars()
                    .map(|c| {
                        if matches!(c, '*' | '?' | '(' | ')') {
                            '?'
                        } else {
                            c
                        }
                    })
                    .collect();
                format!("{tool}({literal})")
            }
            None => tool.to_owned(),
        }
    }
}

/// Whether `text` matches `pattern`: `*` any run of characters, `?` any one.
fn glob(pattern: &str, text: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && (pattern[p] == '?' || pattern[p] == text[t]) {
            p += 1;
            t += 1;
        } else if p < pattern.len() && pattern[p] == '*' {
            star = Some((p, t));
            p += 1;
        } else if let Some((at, from)) = star {
            p = at + 1;
            t = from + 1;
            star = Some((at, from + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(mode: ApprovalMode, allow: &[&str], deny: &[&str]) -> ApprovalPolicy {
        ApprovalPolicy {
            mode,
            allow: allow.iter().map(|rule| (*rule).to_owned()).collect(),
            deny: deny.iter().map(|rule| (*rule).to_owned()).collect(),
            ..ApprovalPolicy::default()
        }
    }

    #[test]
    fn deny_rules_win_then_allow_rules_then_the_mode() {
        let policy = policy(
            ApprovalMode::Ask,
            &["Read", "Bash(git status*)", "shell(echo *)"],
            &["Bash(git push*)", "Write(.env*)"],
        );
        let verdict = |tool, kind, input| policy.verdict(tool, kind, input);
        let (allow, deny) = (
            Verdict::Decided(Decision::Allow),
            Verdict::Decided(Decision::Deny),
        );
        assert_eq!(verdict("Read", "read", Some("src/main.rs")), allow);
        assert_eq!(verdict("bash", "shell", Some("git status --short")), allow);
        assert_eq!(verdict("Bash", "shell", Some("git push origin main")), deny);
        assert_eq!(verdict("Write", "edit", Some(".env.local")), deny);
        assert_eq!(verdict("Write", "edit", Some("src/.env")), Verdict::Ask);
        assert_eq!(
            verdict("execute", "shell", Some("echo hello > out.txt")),
            allow
        );
        assert_eq!(
            verdict("Bash", "shell", None),
            Verdict::Ask,
            "a pattern needs an input"
        );
        assert_eq!(verdict("Bash", "shell", Some("ls")), Verdict::Ask);
    }

    #[test]
    fn rules_are_checked_and_globs_match_runs() {
        let bad = policy(ApprovalMode::Ask, &["Bash(git"], &["", "(x)"]);
        let fields: Vec<String> = bad.check().into_iter().map(|(field, _)| field).collect();
        assert_eq!(fields, ["allow[0]", "deny[0]", "deny[1]"]);
        assert!(glob("a*b?d", "a-x-bcd"));
        assert!(!glob("a*b?d", "a-x-bd"));
        assert!(glob("*", ""));
        let rule = ApprovalPolicy::allow_rule_for("Bash", Some("rm *.txt"));
        assert_eq!(rule, "Bash(rm ?.txt)");
        assert!(
            policy(ApprovalMode::Ask, &[&rule], &[]).verdict("Bash", "shell", Some("rm *.txt"))
                == Verdict::Decided(Decision::Allow)
        );
    }
}
