//! Progress lines: what people watch while a turn runs.
//!
//! The host renders them from the drivers' events, identically for every
//! driver: the harness starting (with its model), the first line of each
//! assistant message, and each tool use or file change as
//! `<tool>: <first line of its detail>`, each answer to a permission request,
//! the plan's progress, plus the harness's warnings and errors. Each line is
//! redacted and then cut to [`MAX_CHARS`].

use std::collections::HashSet;

use cinch_driver_sdk::text::first_line;
use cinch_driver_sdk::{Event, PlanEntry, ToolUse};

use crate::redact::Redactor;

/// The longest progress line, in characters.
pub(crate) const MAX_CHARS: usize = 240;

/// Renders one turn's events into progress lines.
pub(crate) struct ProgressRenderer {
    display_name: String,
    redactor: Redactor,
    /// Tool calls already shown, so that started and completed give one line.
    tools_seen: HashSet<String>,
}

impl ProgressRenderer {
    /// A renderer for the harness called `display_name`.
    pub(crate) fn new(display_name: &str, redactor: Redactor) -> Self {
        Self {
            display_name: display_name.to_owned(),
            redactor,
            tools_seen: HashSet::new(),
        }
    }

    /// `text` with the turn's secrets masked.
    pub(crate) fn redact(&self, text: &str) -> String {
        self.redactor.redact(text)
    }

    /// The progress line for `event`, if it gives one.
    pub(crate) fn render(&mut self, event: &Event) -> Option<String> {
        let line = match event {
            Event::Started {
                model: Some(model), ..
            } => format!("{} started ({model})", self.display_name),
            Event::Started { model: None, .. } => format!("{} started", self.display_name),
            Event::AssistantMessage(text) => first_line(text)?.to_owned(),
            Event::ToolUse(tool) => self.tool_line(tool)?,
            Event::FileChange { path, kind } => format!("{kind}: {path}"),
            Event::Warning(text) => format!("warning: {}", first_line(text)?),
            Event::Error(text) => format!("error: {}", first_line(text)?),
            Event::Permission(answer) => format!(
                "{}: {}",
                if answer.allowed { "allowed" } else { "denied" },
                first_line(&answer.tool).unwrap_or("a tool")
            ),
            Event::Plan(entries) => plan_line(entries)?,
            Event::PermissionRequest(request) => format!(
                "waiting for approval: {}",
                first_line(&request.title).unwrap_or(&request.tool)
            ),
            _ => return None,
        };
        Some(cut(self.redactor.redact(line), MAX_CHARS))
    }

    fn tool_line(&mut self, tool: &ToolUse) -> Option<String> {
        if let Some(id) = &tool.id
            && !self.tools_seen.insert(id.clone())
        {
            return None;
        }
        Some(match tool.detail.as_deref().and_then(first_line) {
            Some(detail) => format!("{}: {detail}", tool.name),
            None => tool.name.clone(),
        })
    }
}

/// Where a step of the agent's plan stands. The driver contract carries it
/// as text (`pending`, `in_progress`, `completed` or the agent's own word):
/// it is read here, where the host uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StepStatus {
    /// Not started.
    Pending,
    /// Under way.
    InProgress,
    /// Done.
    Completed,
    /// The agent's own word, which the host does not know.
    Other,
}

impl StepStatus {
    /// The status `entry` gives its step.
    fn of(entry: &PlanEntry) -> Self {
        match entry.status.as_str() {
            "pending" => Self::Pending,
            "in_progress" => Self::InProgress,
            "completed" => Self::Completed,
            _ => Self::Other,
        }
    }
}

/// `plan: <done>/<all> done`, and the step in progress when there is one.
fn plan_line(entries: &[PlanEntry]) -> Option<String> {
    if entries.is_empty() {
        return None;
    }
    let done = entries
        .iter()
        .filter(|entry| StepStatus::of(entry) == StepStatus::Completed)
        .count();
    let summary = format!("plan: {done}/{} done", entries.len());
    Some(
        match entries
            .iter()
            .find(|entry| StepStatus::of(entry) == StepStatus::InProgress)
            .and_then(|entry| first_line(&entry.content))
        {
            Some(current) => format!("{summary}, now: {current}"),
            None => summary,
        },
    )
}

/// `text` cut to at most `max` characters, ending in `…` when cut.
pub fn cut(mut text: String, max: usize) -> String {
    if text.char_indices().nth(max).is_some() {
        let keep = text
            .char_indices()
            .nth(max - 1)
            .map_or(text.len(), |(at, _)| at);
        text.truncate(keep);
        text.push('…');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_driver_sdk::ToolPhase;

    fn tool(id: &str, phase: ToolPhase) -> Event {
        Event::ToolUse(ToolUse {
            id: Some(id.into()),
            name: "Bash".into(),
            detail: Some("echo hi\necho more".into()),
            phase,
        })
    }

    fn plan_entry(content: &str, status: &str) -> PlanEntry {
        PlanEntry {
            content: content.into(),
            status: status.into(),
        }
    }

    #[test]
    fn a_tool_call_started_and_completed_gives_one_line() {
        let mut renderer = ProgressRenderer::new("Claude Code", Redactor::default());
        assert_eq!(
            renderer.render(&tool("t1", ToolPhase::Started)).as_deref(),
            Some("Bash: echo hi")
        );
        assert_eq!(renderer.render(&tool("t1", ToolPhase::Completed)), None);
        assert_eq!(
            renderer
                .render(&tool("t2", ToolPhase::Completed))
                .as_deref(),
            Some("Bash: echo hi")
        );
    }

    #[test]
    fn deltas_give_no_line_and_messages_give_their_first_line() {
        let mut renderer = ProgressRenderer::new("Gemini CLI", Redactor::default());
        assert_eq!(renderer.render(&Event::AssistantDelta("par".into())), None);
        assert_eq!(
            renderer
                .render(&Event::AssistantMessage("\nDone.\nDetails".into()))
                .as_deref(),
            Some("Done.")
        );
        let started = Event::Started {
            model: Some("gemini-2.5-flash".into()),
            session_id: None,
        };
        assert_eq!(
            renderer.render(&started).as_deref(),
            Some("Gemini CLI started (gemini-2.5-flash)")
        );
    }

    #[test]
    fn permission_answers_and_plans_give_a_line_each() {
        use cinch_driver_sdk::PermissionAnswer;
        let mut renderer = ProgressRenderer::new("Qwen Code", Redactor::default());
        let answer = |allowed| {
            Event::Permission(PermissionAnswer {
                tool: "echo hello > out.txt".into(),
                allowed,
            })
        };
        assert_eq!(
            renderer.render(&answer(true)).as_deref(),
            Some("allowed: echo hello > out.txt")
        );
        assert_eq!(
            renderer.render(&answer(false)).as_deref(),
            Some("denied: echo hello > out.txt")
        );
        let plan = Event::Plan(vec![
            plan_entry("Read the code", "completed"),
            plan_entry("Fix the bug\nin detail", "in_progress"),
            plan_entry("Test", "pending"),
        ]);
        assert_eq!(
            renderer.render(&plan).as_deref(),
            Some("plan: 1/3 done, now: Fix the bug")
        );
        assert_eq!(renderer.render(&Event::Plan(vec![])), None);
    }

    #[test]
    fn a_step_in_the_agents_own_word_is_neither_done_nor_current() {
        let mut renderer = ProgressRenderer::new("Qwen Code", Redactor::default());
        let plan = Event::Plan(vec![
            plan_entry("Read the code", "completed"),
            plan_entry("Ask for access", "blocked"),
        ]);
        assert_eq!(renderer.render(&plan).as_deref(), Some("plan: 1/2 done"));
    }

    #[test]
    fn lines_are_redacted_then_cut() {
        let mut renderer = ProgressRenderer::new("x", Redactor::new(["sk-live-123456".to_owned()]));
        let long = format!("sk-live-123456 {}", "é".repeat(400));
        let line = renderer.render(&Event::AssistantMessage(long)).unwrap();
        assert!(line.starts_with("[redacted] é"));
        assert_eq!(line.chars().count(), MAX_CHARS);
        assert!(line.ends_with('…'));
    }
}
