//! Cursor Agent (`cursor-agent -p --output-format stream-json`).
//!
//! `system/init` names the session and the model (a display name such as
//! `Auto`); `thinking` streams deltas closed by `completed`; `tool_call`
//! lines bracket each call with `started` and `completed`; `result` closes the
//! turn. Every line carries `session_id`. A run that fails before the agent
//! starts (no login) prints no `result`, only stderr.
//!
//! Assistant text comes in three shapes:
//! - a whole segment without `model_call_id` or `timestamp_ms`: the text the
//!   turn ends with (the final message);
//! - a whole segment with `model_call_id`: flushed before a tool call;
//! - with `--stream-partial-output`, deltas: `timestamp_ms` and no
//!   `model_call_id`. Each segment of deltas is then followed by a recap in
//!   one of the two whole shapes that repeats it; the recap is not a new
//!   message.
//!
//! `result.result` concatenates every segment with no separator, so it is not
//! the final message.

mod tools;

use std::collections::HashMap;

use cinch_driver_sdk::json::str_at;
use cinch_driver_sdk::session::SessionId;
use cinch_driver_sdk::{
    BriefDelivery, Command, Driver, Event, Info, LoginProbe, Outcome, Parser, ResumeScope, Turn,
    Usage, Value, export_driver, loose, text,
};
use serde::Deserialize;

use tools::PendingTool;

/// The models `cursor-agent --model` takes; `auto`, its default, lets
/// Cursor pick per request.
const MODELS: [&str; 16] = [
    "auto",
    "composer-1.5",
    "composer-1",
    "opus-4.6-thinking",
    "opus-4.6",
    "opus-4.5-thinking",
    "opus-4.5",
    "sonnet-4.5-thinking",
    "sonnet-4.5",
    "gpt-5.3-codex",
    "gpt-5.2-codex",
    "gpt-5.2",
    "gpt-5.1-codex-max",
    "gemini-3-pro",
    "gemini-3-flash",
    "grok",
];

/// The Cursor Agent driver.
pub struct Cursor;

impl Driver for Cursor {
    type Parser = CursorParser;

    fn info() -> Info {
        Info {
            name: "cursor".into(),
            display_name: "Cursor Agent".into(),
            program: "cursor-agent".into(),
            version_args: vec!["--version".into()],
            state_dir: Some(".cursor".into()),
            managed_config: vec![".cursor/cli.json".into()],
            secret_env: vec!["CURSOR_API_KEY".into()],
            login_files: vec![LoginProbe {
                path: ".cursor/cli-config.json".into(),
                account_pointer: Some("/authInfo/email".into()),
            }],
            models: MODELS.map(String::from).to_vec(),
            default_model: Some(MODELS[0].into()),
            // Cursor takes no effort: a model's variants carry it in their names.
            efforts: vec![],
            default_effort: None,
            brief: BriefDelivery::PromptFile,
            resume: ResumeScope::Anywhere,
            harnesses: vec![],
        }
    }

    fn command(turn: &Turn) -> Command {
        let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--force"]
            .map(String::from)
            .into();
        if let Some(model) = &turn.model {
            args.extend(["--model".into(), model.clone()]);
        }
        if let Some(session) = &turn.session_id {
            args.extend(["--resume".into(), session.clone()]);
        }
        // cursor-agent takes its prompt only as an argument; the brief stays
        // off the command line, so the argument points at the prompt file.
        args.push(format!("Read the task in {} and do it.", turn.prompt_file));
        Command {
            args,
            set_env: vec![],
            remove_env: vec![],
            brief: BriefDelivery::PromptFile,
        }
    }
}

/// Reads one Cursor Agent turn.
#[derive(Default)]
pub struct CursorParser {
    /// Whether `Started` went out.
    started: bool,
    /// The session id last reported.
    session: SessionId,
    /// Thinking deltas not yet reported.
    thinking: String,
    /// Assistant deltas not yet reported as a whole message.
    pending: String,
    /// All delta text of the current segment, reported or not, to recognise its recap.
    segment: String,
    /// The segment a tool call closed, in case its recap comes after the call.
    closed_segment: String,
    /// The last whole segment without `model_call_id`.
    last_final: Option<String>,
    /// Whether any assistant text came at all.
    saw_text: bool,
    /// Tool calls waiting for their result, by call id.
    tools: HashMap<String, PendingTool>,
    /// What the `result` line said.
    result: Option<TurnResult>,
}

/// The turn's end as the `result` line tells it.
struct TurnResult {
    failed: bool,
    final_message: Option<String>,
    error: Option<String>,
    usage: Option<Usage>,
}

/// The fields of a line the parser reads; the rest is skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: loose::Str<'a>,
    #[serde(borrow)]
    subtype: loose::Str<'a>,
    timestamp_ms: loose::Given,
    model_call_id: loose::Present,
    #[serde(borrow)]
    session_id: loose::Str<'a>,
    #[serde(borrow)]
    model: loose::Str<'a>,
    #[serde(borrow)]
    text: loose::Str<'a>,
    #[serde(borrow)]
    message: loose::Obj<Message<'a>>,
    #[serde(borrow)]
    call_id: loose::Str<'a>,
    /// Keyed by the tool's name: read as a whole.
    #[serde(borrow)]
    tool_call: loose::Member<'a>,
    is_error: loose::Bool,
    #[serde(borrow)]
    result: loose::Str<'a>,
    /// A string or an object with a `message`.
    #[serde(borrow)]
    error: loose::Member<'a>,
    usage: loose::Obj<Counts>,
    attempt: loose::U64,
}

/// An assistant line's message.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    content: loose::List<loose::Obj<Block<'a>>>,
}

/// A content block of a message.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Block<'a> {
    #[serde(borrow)]
    text: loose::Str<'a>,
}

/// A result's token counts.
#[derive(Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct Counts {
    input_tokens: loose::U64,
    output_tokens: loose::U64,
    cache_read_tokens: loose::U64,
    cache_write_tokens: loose::U64,
}

impl Parser for CursorParser {
    fn line(&mut self, line: &str, out: &mut Vec<Event>) {
        if let Some(line) = loose::parse_line::<Line>(line).object(out) {
            self.read(&line, out);
        }
    }

    fn finish(&mut self, exit_code: Option<i32>, stderr_tail: &str) -> Outcome {
        let stderr = || text::stderr_error(stderr_tail, &[]);
        let (is_error, error, final_message, usage) = match &self.result {
            Some(result) => {
                let is_error = result.failed || exit_code != Some(0);
                let error = is_error.then(|| {
                    result
                        .error
                        .clone()
                        .or_else(stderr)
                        .unwrap_or_else(|| text::exit_text(exit_code))
                });
                (is_error, error, result.final_message.clone(), result.usage)
            }
            // No result: the CLI never finished its turn (a missing login
            // ends it this way, with exit 1 and a line on stderr).
            None => {
                let error = stderr().unwrap_or_else(|| match exit_code {
                    Some(0) => "the CLI ended without a result".to_owned(),
                    _ => text::exit_text(exit_code),
                });
                (true, Some(error), self.final_text(), None)
            }
        };
        Outcome {
            final_message,
            session_id: self.session.get().map(str::to_owned),
            is_error,
            error,
            usage,
        }
    }
}

impl CursorParser {
    fn read(&mut self, line: &Line, out: &mut Vec<Event>) {
        let kind = line.kind.get();
        let delta = kind == Some("assistant") && line.timestamp_ms.0 && !line.model_call_id.0;
        // A run of deltas ends at the first line of another kind.
        if kind != Some("thinking") {
            self.flush_thinking(out);
        }
        if !delta {
            self.flush_pending(out);
        }
        if kind == Some("system") && line.subtype.get() == Some("init") && !self.started {
            self.started = true;
            let session_id = line.session_id.nonblank().map(str::to_owned);
            self.session.set(session_id.clone());
            out.push(Event::Started {
                model: line.model.nonblank().map(str::to_owned),
                session_id,
            });
            return;
        }
        self.session.note(line.session_id.get(), out);
        match kind {
            Some("assistant") if delta => self.delta(line, out),
            Some("assistant") => self.assistant(line, out),
            Some("thinking") => match line.subtype.get() {
                Some("delta") => {
                    if let Some(text) = line.text.get() {
                        self.thinking.push_str(text);
                    }
                }
                Some("completed") => self.flush_thinking(out),
                _ => out.push(Event::Other("thinking".into())),
            },
            Some("tool_call") => self.tool_call(line, out),
            Some("result") => self.result(line, out),
            Some("retry") => out.push(Event::Warning(retry_notice(line))),
            Some("system") => {
                let subtype = line.subtype.get().unwrap_or_default();
                out.push(Event::Other(format!("system/{subtype}")));
            }
            Some(kind @ ("user" | "connection" | "interaction_query")) => {
                out.push(Event::Other(kind.to_owned()));
            }
            _ => out.push(loose::unknown(kind)),
        }
    }

    fn flush_thinking(&mut self, out: &mut Vec<Event>) {
        if self.thinking.trim().is_empty() {
            self.thinking.clear();
        } else {
            out.push(Event::Thinking(std::mem::take(&mut self.thinking)));
        }
    }

    fn flush_pending(&mut self, out: &mut Vec<Event>) {
        if self.pending.trim().is_empty() {
            self.pending.clear();
        } else {
            out.push(Event::AssistantMessage(std::mem::take(&mut self.pending)));
        }
    }

    /// The final message so far: an open segment of deltas (no tool call or
    /// flush closed it), else the last whole segment without `model_call_id`.
    fn final_text(&self) -> Option<String> {
        if self.segment.trim().is_empty() {
            self.last_final.clone()
        } else {
            Some(self.segment.clone())
        }
    }

    fn delta(&mut self, line: &Line, out: &mut Vec<Event>) {
        let text = message_text(line);
        if text.is_empty() {
            return out.push(Event::Other("assistant".into()));
        }
        self.saw_text = true;
        self.closed_segment.clear();
        self.pending.push_str(&text);
        self.segment.push_str(&text);
        out.push(Event::AssistantDelta(text));
    }

    fn assistant(&mut self, line: &Line, out: &mut Vec<Event>) {
        let text = message_text(line);
        if text.trim().is_empty() {
            return out.push(Event::Other("assistant".into()));
        }
        self.saw_text = true;
        let recap = same_text(&text, &self.segment) || same_text(&text, &self.closed_segment);
        self.segment.clear();
        self.closed_segment.clear();
        // A flush before a tool call is progress, never the final message.
        if !line.model_call_id.0 {
            self.last_final = Some(text.clone());
        }
        out.push(if recap {
            Event::Other("assistant-recap".into())
        } else {
            Event::AssistantMessage(text)
        });
    }

    fn tool_call(&mut self, line: &Line, out: &mut Vec<Event>) {
        let call_id = line.call_id.get();
        let tool_call = line.tool_call.get().unwrap_or(&Value::Null);
        match line.subtype.get() {
            Some("started") => {
                // The text before a call is not the final message.
                if !self.segment.is_empty() {
                    self.closed_segment = std::mem::take(&mut self.segment);
                }
                out.push(tools::started(call_id, tool_call, &mut self.tools));
            }
            Some("completed") => out.push(tools::completed(call_id, tool_call, &mut self.tools)),
            _ => out.push(Event::Other("tool_call".into())),
        }
    }

    fn result(&mut self, line: &Line, out: &mut Vec<Event>) {
        let failed = line.is_error.0
            || line
                .subtype
                .get()
                .is_some_and(|subtype| subtype != "success");
        let error = failed.then(|| error_text(line));
        if let Some(error) = &error {
            out.push(Event::Error(error.clone()));
        }
        // `result` is every segment glued together: a stand-in only for a
        // build that printed no assistant text at all.
        let final_message = self.final_text().or_else(|| {
            (!self.saw_text)
                .then(|| line.result.nonblank().map(str::to_owned))
                .flatten()
        });
        if let Some(text) = &final_message {
            out.push(Event::FinalMessage(text.clone()));
        }
        let usage = usage_of(line);
        if let Some(usage) = usage {
            out.push(Event::Usage(usage));
        }
        self.result = Some(TurnResult {
            failed,
            final_message,
            error,
            usage,
        });
    }
}

/// The text blocks of an assistant line, concatenated.
fn message_text(line: &Line) -> String {
    let blocks = line.message.get().map(|message| &message.content.0);
    blocks
        .into_iter()
        .flatten()
        .filter_map(|block| block.get()?.text.get())
        .collect()
}

/// Whether `text` repeats `segment`, ignoring surrounding whitespace.
fn same_text(text: &str, segment: &str) -> bool {
    !segment.is_empty() && text.trim() == segment.trim()
}

/// The error a failed result names.
fn error_text(line: &Line) -> String {
    let error = line.error.get();
    error
        .and_then(Value::as_str)
        .or_else(|| error.and_then(|error| str_at(error, &["message"])))
        .or_else(|| line.result.get())
        .filter(|text| !text.trim().is_empty())
        .map_or_else(|| "the turn ended in error".to_owned(), str::to_owned)
}

/// A `retry` line as one notice: `retry starting (attempt 2)`.
fn retry_notice(line: &Line) -> String {
    let mut notice = String::from("retry");
    if let Some(subtype) = line.subtype.get().filter(|s| !s.is_empty()) {
        notice.push(' ');
        notice.push_str(subtype);
    }
    if let Some(attempt) = line.attempt.0 {
        notice.push_str(&format!(" (attempt {attempt})"));
    }
    notice
}

/// The result's token counts. Cursor counts fresh, cache-read and
/// cache-write input apart, as Anthropic does; `input_tokens` here is their
/// sum, so that it means the whole prompt as it does for the other harnesses.
fn usage_of(line: &Line) -> Option<Usage> {
    let usage = line.usage.get()?;
    let input = [
        usage.input_tokens.0,
        usage.cache_read_tokens.0,
        usage.cache_write_tokens.0,
    ];
    Some(Usage {
        input_tokens: input
            .iter()
            .any(Option::is_some)
            .then(|| input.iter().flatten().sum()),
        output_tokens: usage.output_tokens.0,
        cached_input_tokens: usage.cache_read_tokens.0,
        cost_usd: None,
    })
}

#[cfg(test)]
mod tests;

export_driver!(Cursor);
