//! Claude Code (`claude -p --output-format stream-json --verbose`).
//!
//! Amp (`amp -x --stream-json`) and Qwen Code (`qwen --output-format
//! stream-json`) print the same format, so this parser reads their logs too.
//!
//! Every line carries `session_id`. `system/init` names the model;
//! `assistant` lines hold one content block each (text, thinking, tool_use);
//! `user` lines hold the tool results; `result` closes the turn with the final
//! text, the usage and whether the turn failed. A line whose
//! `parent_tool_use_id` is set comes from a subagent.
//!
//! A turn that asks (approvals) runs as a conversation instead: the brief
//! goes as a stream-json user message on stdin, Claude's own permission
//! prompts stay on and come as `can_use_tool` control requests
//! (`--permission-prompt-tool stdio`), each reported for the host to decide
//! and answered with a `control_response`; the `result` line ends it.
//! Claude's questions to the user (its `AskUserQuestion` tool) come the same
//! way and are reported as questions ([`question`]).

use std::collections::{HashMap, HashSet};

use serde::Deserialize;

use cinch_driver_sdk::json::{self, str_at};
use cinch_driver_sdk::serde_json::{self, Value as Json, json};
use cinch_driver_sdk::session::SessionId;
use cinch_driver_sdk::{
    BriefDelivery, Command, Driver, Event, Fed, Info, LoginProbe, Outcome, Parser,
    PermissionRequest, ResumeScope, SkipReason, ToolPhase, ToolUse, Turn, Usage, Value,
    export_driver, loose, text,
};

/// The models `claude --model` takes (2.1.197): its aliases, which follow
/// the newest model of their family, then the ids of its bundled catalog.
const MODELS: [&str; 14] = [
    "opus",
    "sonnet",
    "haiku",
    "fable",
    "claude-fable-5",
    "claude-opus-4-8",
    "claude-opus-4-7",
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-sonnet-5",
    "claude-sonnet-4-6",
    "claude-sonnet-4-5",
    "claude-haiku-4-5",
];

/// What `claude` runs without `--model` on a subscription that has Opus.
const DEFAULT_MODEL: &str = "opus";

/// The levels `claude --effort` takes (2.1.197).
const EFFORTS: [&str; 5] = ["low", "medium", "high", "xhigh", "max"];

/// The effort the catalog gives most models.
const DEFAULT_EFFORT: &str = "high";

/// The Claude Code driver.
pub struct Claude;

impl Driver for Claude {
    type Parser = ClaudeParser;

    fn info() -> Info {
        Info {
            name: "claude".into(),
            display_name: "Claude Code".into(),
            program: "claude".into(),
            version_args: vec!["--version".into()],
            state_dir: Some(".claude".into()),
            managed_config: vec![".claude/settings.local.json".into()],
            secret_env: vec!["ANTHROPIC_API_KEY".into(), "CLAUDE_CODE_OAUTH_TOKEN".into()],
            login_files: vec![
                LoginProbe {
                    path: ".claude/.credentials.json".into(),
                    account_pointer: None,
                },
                LoginProbe {
                    path: ".claude.json".into(),
                    account_pointer: Some("/oauthAccount/emailAddress".into()),
                },
            ],
            models: MODELS.map(String::from).to_vec(),
            default_model: Some(DEFAULT_MODEL.into()),
            efforts: EFFORTS.map(String::from).to_vec(),
            default_effort: Some(DEFAULT_EFFORT.into()),
            brief: BriefDelivery::Stdin,
            resume: ResumeScope::SameDirectory,
            harnesses: vec![],
        }
    }

    fn command(turn: &Turn) -> Command {
        let mut args: Vec<String> = if turn.ask {
            [
                "-p",
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-prompt-tool",
                "stdio",
            ]
            .map(String::from)
            .into()
        } else {
            [
                "-p",
                "--output-format",
                "stream-json",
                "--verbose",
                "--dangerously-skip-permissions",
            ]
            .map(String::from)
            .into()
        };
        if let Some(model) = &turn.model {
            args.extend(["--model".into(), model.clone()]);
        }
        if let Some(effort) = &turn.effort {
            args.extend(["--effort".into(), effort.clone()]);
        }
        if let Some(session) = &turn.session_id {
            args.extend(["--resume".into(), session.clone()]);
            if turn.fork {
                // A new session id with the resumed conversation: the source
                // session's file is left as it was.
                args.push("--fork-session".into());
            }
        }
        Command {
            args,
            // As root, --dangerously-skip-permissions refuses to run without it.
            set_env: vec![("IS_SANDBOX".into(), "1".into())],
            // Set when cinch itself runs inside Claude Code; the child would
            // take itself for a nested session.
            remove_env: vec!["CLAUDECODE".into(), "CLAUDE_CODE_ENTRYPOINT".into()],
            brief: if turn.ask {
                BriefDelivery::Conversation
            } else {
                BriefDelivery::Stdin
            },
        }
    }

    fn parser(turn: &Turn) -> ClaudeParser {
        ClaudeParser {
            ask: turn.ask,
            brief: turn.brief.clone(),
            ..ClaudeParser::default()
        }
    }
}

/// Reads one Claude Code turn.
#[derive(Default)]
pub struct ClaudeParser {
    /// Whether `Started` went out.
    started: bool,
    /// The session id last reported.
    session: SessionId,
    /// Tool calls waiting for their result, by id, so the result line names them too.
    tools: HashMap<String, PendingTool>,
    /// The main agent's last text, the final message when no `result` gives one.
    last_text: Option<String>,
    /// The text of the last synthetic error message (a failed API call).
    reported_error: Option<String>,
    /// What the `result` line said.
    result: Option<TurnResult>,
    /// Refusals of the credential in a row.
    refusals: u32,
    /// The API refused the credential again after Claude Code had its
    /// chance to refresh it: it would retry for minutes without a way to
    /// succeed, so the turn's answer is in.
    refused: Option<String>,
    /// The turn asks: a conversation whose permission requests the host decides.
    ask: bool,
    /// The brief, the conversation's first message.
    brief: String,
    /// Permission requests waiting for the host's decision: the tool's
    /// input (an allow hands it back), by request id.
    waiting: HashMap<String, Json>,
    /// Those of `waiting` that are questions to the user (AskUserQuestion).
    questions: HashSet<String>,
}

/// A tool call that has started.
struct PendingTool {
    name: String,
    detail: Option<String>,
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
    #[serde(borrow)]
    session_id: loose::Str<'a>,
    #[serde(borrow)]
    model: loose::Str<'a>,
    #[serde(borrow)]
    message: loose::Obj<Message<'a>>,
    /// A code on a synthetic message, the error text of a retry.
    #[serde(borrow)]
    error: loose::Member<'a>,
    parent_tool_use_id: loose::Present,
    is_error: loose::Bool,
    #[serde(borrow)]
    result: loose::Str<'a>,
    #[serde(borrow)]
    errors: loose::Member<'a>,
    api_error_status: loose::U64,
    usage: loose::Obj<Counts>,
    total_cost_usd: loose::F64,
    attempt: loose::U64,
    max_retries: loose::U64,
    error_status: loose::U64,
}

/// The message of an `assistant` or `user` line.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Message<'a> {
    #[serde(borrow)]
    content: loose::List<loose::Obj<Block<'a>>>,
}

/// A content block: text, thinking, a tool call or a tool's result.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Block<'a> {
    #[serde(rename = "type", borrow)]
    kind: loose::Str<'a>,
    #[serde(borrow)]
    text: loose::Str<'a>,
    #[serde(borrow)]
    thinking: loose::Str<'a>,
    #[serde(borrow)]
    id: loose::Str<'a>,
    #[serde(borrow)]
    name: loose::Str<'a>,
    #[serde(borrow)]
    input: loose::Member<'a>,
    #[serde(borrow)]
    tool_use_id: loose::Str<'a>,
    is_error: loose::Bool,
    /// Only its `type` is read (a server tool's result).
    #[serde(borrow)]
    content: loose::Obj<Typed<'a>>,
}

/// An object of which only the `type` is read.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Typed<'a> {
    #[serde(rename = "type", borrow)]
    kind: loose::Str<'a>,
}

/// A result's token counts.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Counts {
    input_tokens: loose::U64,
    output_tokens: loose::U64,
    cache_creation_input_tokens: loose::U64,
    cache_read_input_tokens: loose::U64,
}

impl Parser for ClaudeParser {
    fn line(&mut self, line: &str, out: &mut Vec<Event>) {
        let Some(ref value) = loose::parse_line::<Line>(line).object(out) else {
            return;
        };
        match value.kind.get() {
            Some("system") => self.system(value, out),
            Some("assistant") => {
                self.note_session(value, out);
                self.assistant(value, out);
            }
            Some("user") => {
                self.note_session(value, out);
                self.user(value, out);
            }
            Some("result") => {
                self.note_session(value, out);
                self.result(value, out);
            }
            Some("control_request") if self.ask => self.control_request(line, out),
            Some(
                kind @ ("stream_event"
                | "rate_limit_event"
                | "tool_progress"
                | "tool_use_summary"
                | "auth_status"
                | "prompt_suggestion"
                | "keep_alive"
                | "control_request"
                | "control_response"
                | "control_cancel_request"),
            ) => {
                self.note_session(value, out);
                out.push(Event::Other(kind.to_owned()));
            }
            kind => out.push(loose::unknown(kind)),
        }
    }

    /// Done once the credential is refused for good (see [`ClaudeParser::refused`]):
    /// the host then ends the CLI instead of waiting out its retries; in a
    /// conversation (a turn that asks), once its result is in: stdin
    /// closes and Claude exits.
    fn feed(&mut self, lines: &[String]) -> Fed {
        let mut events = Vec::with_capacity(lines.len());
        for line in lines {
            self.line(line, &mut events);
        }
        Fed {
            events,
            replies: Vec::new(),
            done: self.refused.is_some() || (self.ask && self.result.is_some()),
        }
    }

    fn opening(&mut self) -> Vec<String> {
        if !self.ask {
            return Vec::new();
        }
        let message = json!({"type": "user", "message": {"role": "user", "content": self.brief}});
        vec![message.to_string()]
    }

    fn decide(&mut self, key: &str, allow: bool, message: Option<&str>) -> Vec<String> {
        let Some(input) = self.waiting.remove(key) else {
            return Vec::new();
        };
        let response = match (self.questions.remove(key), allow, message) {
            // Claude reads the user's answer from the input it is allowed with.
            (true, true, Some(answer)) => {
                json!({"behavior": "allow", "updatedInput": question::answered(&input, answer)})
            }
            (true, _, _) => json!({"behavior": "deny", "message": question::UNANSWERED}),
            (false, true, _) => json!({"behavior": "allow", "updatedInput": input}),
            (false, false, _) => {
                json!({"behavior": "deny", "message": message.unwrap_or("The user refused this tool.")})
            }
        };
        let answer = json!({"type": "control_response", "response": {
            "subtype": "success", "request_id": key, "response": response}});
        vec![answer.to_string()]
    }

    fn finish(&mut self, exit_code: Option<i32>, stderr_tail: &str) -> Outcome {
        let (turn_failed, turn_error, final_message, usage) = match &self.result {
            Some(result) => (
                result.failed,
                result.error.clone(),
                result.final_message.clone(),
                result.usage,
            ),
            // Every turn ends with a result line: without one the CLI was
            // killed or its output was cut, and what the stream said so far
            // is all there is.
            None => (
                true,
                self.refused.clone().or_else(|| self.reported_error.clone()),
                self.last_text.clone(),
                None,
            ),
        };
        let is_error = turn_failed || exit_code != Some(0);
        let error = is_error.then(|| {
            turn_error
                .or_else(|| text::stderr_error(stderr_tail, &[]))
                .unwrap_or_else(|| match (&self.result, exit_code) {
                    (None, Some(0)) => NO_RESULT.to_owned(),
                    _ => text::exit_text(exit_code),
                })
        });
        Outcome {
            final_message,
            session_id: self.session.get().map(str::to_owned),
            is_error,
            error,
            usage,
        }
    }
}

impl ClaudeParser {
    /// A control request of Claude's: `can_use_tool` is a permission request
    /// for the host to decide; any other is noted.
    fn control_request(&mut self, line: &str, out: &mut Vec<Event>) {
        let Ok(value) = serde_json::from_str::<Json>(line) else {
            out.push(Event::Other("control_request".into()));
            return;
        };
        let request = &value["request"];
        let (Some(id), Some("can_use_tool")) =
            (value["request_id"].as_str(), request["subtype"].as_str())
        else {
            out.push(Event::Other("control_request".into()));
            return;
        };
        let tool = request["tool_name"].as_str().unwrap_or("tool").to_owned();
        let input = request["input"].clone();
        if tool == question::TOOL
            && let Some(asked) = question::request(id, &input)
        {
            self.waiting.insert(id.to_owned(), input);
            self.questions.insert(id.to_owned());
            out.push(Event::PermissionRequest(asked));
            return;
        }
        let detail = ["command", "file_path", "path", "pattern", "url", "query"]
            .iter()
            .find_map(|key| input[*key].as_str())
            .map(str::to_owned);
        let title = request["description"]
            .as_str()
            .or_else(|| input["description"].as_str())
            .map(str::to_owned)
            .or_else(|| detail.clone())
            .unwrap_or_else(|| tool.clone());
        self.waiting.insert(id.to_owned(), input);
        out.push(Event::PermissionRequest(PermissionRequest {
            key: id.to_owned(),
            kind: tool_kind(&tool).to_owned(),
            tool,
            title,
            input: detail,
            options: Vec::new(),
        }));
    }

    /// Reports a session id that the host has not heard of yet.
    fn note_session(&mut self, value: &Line, out: &mut Vec<Event>) {
        self.session.note(value.session_id.get(), out);
    }

    fn system(&mut self, value: &Line, out: &mut Vec<Event>) {
        let subtype = value.subtype.get().unwrap_or_default();
        if subtype == "init" && !self.started {
            self.started = true;
            let session_id = nonblank(&value.session_id);
            self.session.set(session_id.clone());
            out.push(Event::Started {
                model: nonblank(&value.model),
                session_id,
            });
            return;
        }
        self.note_session(value, out);
        match subtype {
            "api_retry" if self.refused.is_none() && is_refused_credential(value) => {
                self.refusals += 1;
                // The first refusal may be an expired login or a key helper's
                // stale key, which Claude Code renews before it asks again.
                if self.refusals < REFUSALS_TO_END {
                    out.push(Event::Warning(retry_notice(value)));
                    return;
                }
                let refusal = refusal_text(value);
                self.refused = Some(refusal.clone());
                out.push(Event::Error(refusal));
            }
            "api_retry" => {
                self.refusals = 0;
                out.push(Event::Warning(retry_notice(value)));
            }
            "init"
            | "status"
            | "thinking_tokens"
            | "compact_boundary"
            | "files_persisted"
            | "informational"
            | "local_command_output" => {
                out.push(Event::Other(format!("system/{subtype}")));
            }
            _ if subtype.starts_with("hook_") || subtype.starts_with("task_") => {
                out.push(Event::Other(format!("system/{subtype}")));
            }
            _ => out.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some(format!("system/{subtype}")),
            }),
        }
    }

    fn assistant(&mut self, value: &Line, out: &mut Vec<Event>) {
        let message = value.message.get();
        if let Some(code) = value.error.get().filter(|error| !error.is_null()) {
            // A synthetic message standing for a failed API call
            // (authentication_failed, rate_limit, ...): its text is the error.
            let text = message_text(message)
                .or_else(|| code.as_str().map(str::to_owned))
                .unwrap_or_else(|| "API error".to_owned());
            self.reported_error = Some(text.clone());
            out.push(Event::Error(text));
            return;
        }
        let subagent = value.parent_tool_use_id.0;
        let before = out.len();
        for block in content(message) {
            match block.kind.get() {
                Some("text") => {
                    let Some(text) = block.text.nonblank() else {
                        continue;
                    };
                    if subagent {
                        out.push(Event::Other("subagent-message".into()));
                    } else {
                        self.last_text = Some(text.to_owned());
                        out.push(Event::AssistantMessage(text.to_owned()));
                    }
                }
                Some("thinking") if !subagent => {
                    if let Some(thinking) = block.thinking.nonblank() {
                        out.push(Event::Thinking(thinking.to_owned()));
                    }
                }
                Some("tool_use" | "server_tool_use" | "mcp_tool_use") => {
                    self.tool_started(block, out);
                }
                // Server-side tools (web search, fetch) answer in the same message.
                Some(kind) if kind.ends_with("_tool_result") => {
                    let failed = block
                        .content
                        .get()
                        .and_then(|content| content.kind.get())
                        .is_some_and(|kind| kind.ends_with("_error"));
                    self.tool_finished(block, failed, out);
                }
                _ => {}
            }
        }
        if out.len() == before {
            out.push(Event::Other("assistant".into()));
        }
    }

    fn user(&mut self, value: &Line, out: &mut Vec<Event>) {
        let before = out.len();
        for block in content(value.message.get()) {
            if block.kind.get() == Some("tool_result") {
                self.tool_finished(block, block.is_error.0, out);
            }
        }
        // The prompt echo, or a subagent's brief.
        if out.len() == before {
            out.push(Event::Other("user".into()));
        }
    }

    fn tool_started(&mut self, block: &Block, out: &mut Vec<Event>) {
        let id = nonblank(&block.id);
        let name = block.name.get().unwrap_or("tool").to_owned();
        let detail = block.input.get().and_then(json::tool_detail);
        if let Some(id) = &id {
            let pending = PendingTool {
                name: name.clone(),
                detail: detail.clone(),
            };
            self.tools.insert(id.clone(), pending);
        }
        out.push(Event::ToolUse(ToolUse {
            id,
            name,
            detail,
            phase: ToolPhase::Started,
        }));
    }

    fn tool_finished(&mut self, block: &Block, failed: bool, out: &mut Vec<Event>) {
        let id = nonblank(&block.tool_use_id);
        let pending = id.as_ref().and_then(|id| self.tools.remove(id));
        let (name, detail) = match pending {
            Some(tool) => (tool.name, tool.detail),
            None => ("tool".to_owned(), None),
        };
        out.push(Event::ToolUse(ToolUse {
            id,
            name,
            detail,
            phase: if failed {
                ToolPhase::Failed
            } else {
                ToolPhase::Completed
            },
        }));
    }

    fn result(&mut self, value: &Line, out: &mut Vec<Event>) {
        // Without a subtype, only is_error tells.
        let subtype = value.subtype.get();
        let failed = value.is_error.0 || subtype.is_some_and(|s| s != "success");
        let mut stated = nonblank(&value.result);
        // API failures (401, 500) put their message in `result`: then it is
        // the error, not a final message.
        let mut stated_is_error = false;
        let error = failed.then(|| {
            errors_text(value)
                .or_else(|| {
                    stated_is_error = stated.is_some();
                    stated.take()
                })
                .or_else(|| self.reported_error.clone())
                .or_else(|| {
                    value
                        .api_error_status
                        .0
                        .map(|status| format!("API error (HTTP {status})"))
                })
                .unwrap_or_else(|| subtype_text(subtype.unwrap_or_default()))
        });
        if let Some(error) = &error
            && self.reported_error.as_ref() != Some(error)
        {
            out.push(Event::Error(error.clone()));
        }
        if let Some(text) = &stated {
            out.push(Event::FinalMessage(text.clone()));
        }
        let usage = usage_of(value);
        if let Some(usage) = usage {
            out.push(Event::Usage(usage));
        }
        // Without a stated text, the main agent's last words are the final
        // message, unless the stated text was the error itself.
        let final_message = if stated_is_error {
            None
        } else {
            stated.or_else(|| self.last_text.clone())
        };
        self.result = Some(TurnResult {
            failed,
            final_message,
            error,
            usage,
        });
    }
}

/// The content blocks of a message that are objects.
fn content<'v, 'a>(message: Option<&'v Message<'a>>) -> impl Iterator<Item = &'v Block<'a>> {
    message
        .into_iter()
        .flat_map(|message| &message.content.0)
        .filter_map(loose::Obj::get)
}

/// A message's text blocks joined, when there is any text.
fn message_text(message: Option<&Message>) -> Option<String> {
    let text: Vec<&str> = content(message)
        .filter(|block| block.kind.get() == Some("text"))
        .filter_map(|block| block.text.get())
        .collect();
    Some(text.join("\n")).filter(|text| !text.trim().is_empty())
}

/// The string, when present and not blank.
/// The approval kind of Claude Code's tool `name`.
fn tool_kind(name: &str) -> &'static str {
    match name {
        _ if name.starts_with("mcp__") => "mcp",
        "Bash" | "BashOutput" | "KillShell" => "shell",
        "Edit" | "MultiEdit" | "Write" | "NotebookEdit" => "edit",
        "Read" | "Glob" | "Grep" | "LS" => "read",
        "WebFetch" | "WebSearch" => "fetch",
        _ => "other",
    }
}

fn nonblank(text: &loose::Str) -> Option<String> {
    text.nonblank().map(str::to_owned)
}

/// The `errors` list of a result, joined on one line.
fn errors_text(value: &Line) -> Option<String> {
    let errors: Vec<&str> = value
        .errors
        .get()?
        .as_array()?
        .iter()
        .filter_map(|error| error.as_str().or_else(|| str_at(error, &["message"])))
        .filter(|error| !error.trim().is_empty())
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// What a failed result's subtype means, for a result that gives no text.
fn subtype_text(subtype: &str) -> String {
    match subtype {
        "error_max_turns" => "reached the maximum number of turns".into(),
        "error_max_budget_usd" => "reached the maximum budget".into(),
        "error_during_execution" => "error during execution".into(),
        "" | "success" => "the turn ended in error".into(),
        other => other.replace('_', " "),
    }
}

/// Refusals of the credential in a row that end the turn: the second, since
/// Claude Code renews a login's token or a key helper's key after the first.
const REFUSALS_TO_END: u32 = 2;

/// HTTP's status for a refused credential.
const UNAUTHORIZED: u64 = 401;

/// Claude Code's word for an API error caused by the credential.
const AUTHENTICATION_FAILED: &str = "authentication_failed";

/// Whether a retry is of a request the API refused for its credential.
fn is_refused_credential(value: &Line) -> bool {
    value.error_status.0 == Some(UNAUTHORIZED)
        || value.error.get().and_then(Value::as_str) == Some(AUTHENTICATION_FAILED)
}

/// A refused credential as the turn's error: Claude Code's own word for it
/// and the status, and why the turn ends at once.
fn refusal_text(value: &Line) -> String {
    let word = value
        .error
        .get()
        .and_then(Value::as_str)
        .filter(|word| !word.is_empty())
        .unwrap_or(AUTHENTICATION_FAILED);
    let status = value
        .error_status
        .0
        .map(|status| format!(", HTTP {status}"))
        .unwrap_or_default();
    format!(
        "API error: {word}{status}: the model's API refused the credential (the API key or login). Claude Code retries that for minutes, so the turn ends once it is refused again: check the key this turn was given."
    )
}

/// `system/api_retry` as one line: `API retry 2/10: overloaded (HTTP 529)`.
fn retry_notice(value: &Line) -> String {
    let mut notice = String::from("API retry");
    match (value.attempt.0, value.max_retries.0) {
        (Some(attempt), Some(max)) => notice.push_str(&format!(" {attempt}/{max}")),
        (Some(attempt), None) => notice.push_str(&format!(" {attempt}")),
        _ => {}
    }
    if let Some(error) = value
        .error
        .get()
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        notice.push_str(": ");
        notice.push_str(error);
    }
    if let Some(status) = value.error_status.0 {
        notice.push_str(&format!(" (HTTP {status})"));
    }
    notice
}

/// The result's token counts and cost. Anthropic counts fresh, cache-write
/// and cache-read input apart; `input_tokens` here is their sum, so that it
/// means the whole prompt as it does for the other harnesses.
fn usage_of(value: &Line) -> Option<Usage> {
    let usage = value.usage.get();
    let cost_usd = value.total_cost_usd.0;
    if usage.is_none() && cost_usd.is_none() {
        return None;
    }
    let count = |field: fn(&Counts) -> loose::U64| usage.and_then(|usage| field(usage).0);
    let input = [
        count(|usage| usage.input_tokens),
        count(|usage| usage.cache_creation_input_tokens),
        count(|usage| usage.cache_read_input_tokens),
    ];
    Some(Usage {
        input_tokens: input
            .iter()
            .any(Option::is_some)
            .then(|| input.iter().flatten().sum()),
        output_tokens: count(|usage| usage.output_tokens),
        cached_input_tokens: count(|usage| usage.cache_read_input_tokens),
        cost_usd,
    })
}

/// The error for a process that ended badly without saying why.
/// The error of a turn whose output ended without a result line.
const NO_RESULT: &str = "the output ended before Claude Code reported a result";

mod question;
#[cfg(test)]
mod tests;

export_driver!(Claude);
