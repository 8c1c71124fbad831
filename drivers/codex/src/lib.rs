//! Codex (`codex exec --json`).
//!
//! Codex 0.44 and later print thread events: `thread.started` (the session
//! id, on that line only), `turn.*`, and `item.started/updated/completed`
//! around typed items. Older builds printed protocol events
//! `{"id","msg":{"type":...}}` after a config summary and a `{"prompt"}` line;
//! [`legacy`] reads those. Every line says which format it is in, so the
//! parser needs no mode.
//!
//! Only `turn.failed` ends a turn in error: top-level `error` lines are
//! retry notices (`Reconnecting... 2/5`) or errors codex recovers from.

mod legacy;

use std::collections::HashMap;

use cinch_driver_sdk::calls::{Call, ToolCalls};
use cinch_driver_sdk::{
    BriefDelivery, Command, Driver, Event, Info, LoginProbe, Outcome, Parser, ResumeScope,
    SkipReason, ToolPhase, Turn, Usage, Value, export_driver, json, loose, text,
};
use serde::Deserialize;

/// Lines codex prints on every run; they never explain a failure.
const NOISE: &[&str] = &[
    "Reading additional input from stdin",
    "WARNING: proceeding, even though we could not create PATH aliases",
];

/// The models of codex's bundled catalog (0.171.0) that it lists, by its
/// own priority: the first is what it runs when none is named. cinch names
/// them with their vendor, as the tasks API does (`openai/gpt-5.6-sol`);
/// codex itself takes the bare slug.
const MODELS: [&str; 11] = [
    "openai/gpt-6.2-sol",
    "openai/gpt-6.2-astra",
    "openai/gpt-6.1-terra",
    "openai/gpt-6.1-sol",
    "openai/gpt-6-astra",
    "openai/gpt-6-sol",
    "openai/gpt-6-luna",
    "openai/gpt-5.6-sol",
    "openai/gpt-5.6-terra",
    "openai/gpt-5.6-luna",
    "openai/gpt-5.5",
];

/// How cinch's model ids start; codex's own do not.
const VENDOR_PREFIX: &str = "openai/";

/// The values of `model_reasoning_effort` codex takes (0.171.0).
const EFFORTS: [&str; 6] = ["minimal", "low", "medium", "high", "xhigh", "max"];

/// Codex's documented default effort.
const DEFAULT_EFFORT: &str = "medium";

/// The Codex driver.
pub struct Codex;

/// Reads one Codex turn.
#[derive(Default)]
pub struct CodexParser {
    started: bool,
    session_id: Option<String>,
    final_message: Option<String>,
    usage: Option<Usage>,
    /// Set when the turn failed; the text is empty when codex gave none.
    failure: Option<String>,
    /// The last top-level `error`: what went wrong when codex exits non-zero
    /// without a `turn.failed`.
    last_error: Option<String>,
    calls: ToolCalls,
    /// Legacy patches announced by `patch_apply_begin`, by call id, as
    /// (path, kind): they are reported once `patch_apply_end` says they applied.
    patches: HashMap<String, Vec<(String, String)>>,
}

impl Driver for Codex {
    type Parser = CodexParser;

    fn info() -> Info {
        Info {
            name: "codex".into(),
            display_name: "Codex".into(),
            program: "codex".into(),
            version_args: vec!["--version".into()],
            state_dir: Some(".codex".into()),
            managed_config: vec![],
            secret_env: vec!["OPENAI_API_KEY".into(), "CODEX_API_KEY".into()],
            // auth.json holds tokens, not an account name.
            login_files: vec![LoginProbe {
                path: ".codex/auth.json".into(),
                account_pointer: None,
            }],
            models: MODELS.map(String::from).to_vec(),
            default_model: Some(MODELS[0].into()),
            efforts: EFFORTS.map(String::from).to_vec(),
            default_effort: Some(DEFAULT_EFFORT.into()),
            brief: BriefDelivery::Stdin,
            resume: ResumeScope::Anywhere,
            harnesses: vec![],
        }
    }

    fn command(turn: &Turn) -> Command {
        let mut args = vec!["exec".to_owned()];
        if turn.session_id.is_some() {
            args.push("resume".into());
        }
        args.extend(
            [
                "--json",
                "--dangerously-bypass-approvals-and-sandbox",
                "--skip-git-repo-check",
            ]
            .map(String::from),
        );
        if let Some(model) = &turn.model {
            let slug = model.strip_prefix(VENDOR_PREFIX).unwrap_or(model);
            args.extend(["-m".to_owned(), slug.to_owned()]);
        }
        if let Some(effort) = &turn.effort {
            // `-c` takes a TOML value; a JSON string literal is a valid one.
            let value = cinch_driver_sdk::serde_json::Value::from(effort.as_str());
            args.extend(["-c".to_owned(), format!("model_reasoning_effort={value}")]);
        }
        if let Some(session_id) = &turn.session_id {
            args.push(session_id.clone());
        }
        // `-` makes codex read the prompt from stdin.
        args.push("-".into());
        Command {
            args,
            set_env: vec![],
            remove_env: vec![],
            brief: BriefDelivery::Stdin,
        }
    }
}

/// The fields of a line the parser reads; the rest is skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Line<'a> {
    /// A legacy event's body.
    #[serde(borrow)]
    msg: loose::Member<'a>,
    #[serde(rename = "type", borrow)]
    kind: loose::Str<'a>,
    #[serde(borrow)]
    thread_id: loose::Str<'a>,
    #[serde(borrow)]
    item: loose::Only<'a, ItemKeys>,
    #[serde(borrow)]
    usage: loose::Member<'a>,
    #[serde(borrow)]
    error: loose::Obj<ErrorBody<'a>>,
    #[serde(borrow)]
    message: loose::Str<'a>,
    /// The legacy prompt echo.
    prompt: loose::Given,
    /// The legacy config summary's.
    #[serde(borrow)]
    model: loose::Member<'a>,
    workdir: loose::Given,
}

/// A failed turn's `error`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    message: loose::Str<'a>,
}

/// What an item's readers look at; a command's output is skipped.
struct ItemKeys;

impl loose::Keys for ItemKeys {
    fn keeps(key: &str) -> bool {
        const READ: &[&str] = &[
            "id",
            "type",
            "text",
            "message",
            "tool",
            "server",
            "arguments",
            "action",
            "status",
            "exit_code",
            "error",
            "changes",
        ];
        READ.contains(&key) || json::DETAIL_KEYS.contains(&key)
    }
}

impl Parser for CodexParser {
    fn line(&mut self, line: &str, out: &mut Vec<Event>) {
        if let Some(line) = loose::parse_line::<Line>(line).object(out) {
            self.read(&line, out);
        }
    }

    fn finish(&mut self, exit_code: Option<i32>, stderr_tail: &str) -> Outcome {
        let is_error = self.failure.is_some() || exit_code != Some(0);
        let error = is_error.then(|| {
            self.failure
                .clone()
                .filter(|text| !text.is_empty())
                .or_else(|| self.last_error.clone())
                .or_else(|| text::stderr_error(stderr_tail, NOISE))
                .unwrap_or_else(|| text::exit_text(exit_code))
        });
        Outcome {
            final_message: self.final_message.clone(),
            session_id: self.session_id.clone(),
            is_error,
            error,
            usage: self.usage,
        }
    }
}

/// Where an item is in its life, by the event that carries it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Started,
    Updated,
    Completed,
}

impl CodexParser {
    fn read(&mut self, line: &Line, out: &mut Vec<Event>) {
        if let Some(msg) = line.msg.get().filter(|msg| msg.is_object()) {
            return self.legacy(msg, out);
        }
        let Some(kind) = line.kind.get() else {
            return self.untyped(line, out);
        };
        match kind {
            "thread.started" => match line.thread_id.non_empty() {
                Some(id) => self.session(None, id, out),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "item.started" => self.item(Stage::Started, kind, line, out),
            "item.updated" => self.item(Stage::Updated, kind, line, out),
            "item.completed" => self.item(Stage::Completed, kind, line, out),
            "turn.completed" => match line.usage.get() {
                Some(usage) => self.usage(usage, out),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "turn.failed" => {
                let message = line.error.get().and_then(|error| error.message.non_empty());
                self.fail(message, out);
            }
            "error" => match line.message.non_empty() {
                Some(message) => {
                    self.last_error = Some(message.clone());
                    out.push(Event::Warning(message));
                }
                None => out.push(Event::Other(kind.to_owned())),
            },
            "turn.started" | "item.plan.delta" | "request_user_input" => {
                out.push(Event::Other(kind.to_owned()));
            }
            _ => out.push(loose::unknown(Some(kind))),
        }
    }

    /// The session is known: the first time, that is the start.
    fn session(&mut self, model: Option<String>, id: String, out: &mut Vec<Event>) {
        self.session_id = Some(id.clone());
        if self.started {
            out.push(Event::Session(id));
        } else {
            self.started = true;
            out.push(Event::Started {
                model,
                session_id: Some(id),
            });
        }
    }

    /// The turn failed, with codex's reason when it gave one.
    fn fail(&mut self, message: Option<String>, out: &mut Vec<Event>) {
        if let Some(message) = &message {
            out.push(Event::Error(message.clone()));
        }
        self.failure = Some(message.unwrap_or_default());
    }

    /// Token counts: codex reports the thread's running total, which is
    /// what the outcome keeps.
    fn usage(&mut self, usage: &Value, out: &mut Vec<Event>) {
        let usage = Usage {
            input_tokens: json::u64_at(usage, &["input_tokens"]),
            output_tokens: json::u64_at(usage, &["output_tokens"]),
            cached_input_tokens: json::u64_at(usage, &["cached_input_tokens"]),
            cost_usd: None,
        };
        self.usage = Some(usage);
        out.push(Event::Usage(usage));
    }

    /// A line without a `type`: the legacy config summary or prompt echo.
    fn untyped(&mut self, line: &Line, out: &mut Vec<Event>) {
        if line.prompt.0 {
            out.push(Event::Other("prompt".into()));
        } else if line.model.get().is_some() || line.workdir.0 {
            // The config summary names the model; the session id never shows.
            if self.started {
                out.push(Event::Other("config".into()));
            } else {
                self.started = true;
                out.push(Event::Started {
                    model: line
                        .model
                        .get()
                        .and_then(Value::as_str)
                        .filter(|model| !model.is_empty())
                        .map(str::to_owned),
                    session_id: None,
                });
            }
        } else {
            out.push(loose::unknown(None));
        }
    }

    fn item(&mut self, stage: Stage, event: &str, line: &Line, out: &mut Vec<Event>) {
        let Some(item) = line.item.get() else {
            return out.push(loose::unknown(Some(event)));
        };
        let kind = json::str_at(item, &["type"]).unwrap_or_default();
        let completed = stage == Stage::Completed;
        match kind {
            "agent_message" if completed => match json::string_at(item, &["text"]) {
                Some(text) => {
                    self.final_message = Some(text.clone());
                    out.push(Event::AssistantMessage(text));
                }
                None => out.push(Event::Other(kind.to_owned())),
            },
            "reasoning" if completed => match json::string_at(item, &["text"]) {
                Some(text) => out.push(Event::Thinking(text)),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "command_execution" | "mcp_tool_call" | "web_search" | "collab_tool_call" => {
                self.tool_item(stage, kind, item, out);
            }
            "file_change" if completed => file_changes(item, out),
            "error" if completed => match json::string_at(item, &["message"]) {
                Some(message) => out.push(Event::Warning(message)),
                None => out.push(Event::Other(kind.to_owned())),
            },
            // Partial forms of the above, and items that carry nothing the
            // host shows.
            "agent_message" | "reasoning" | "file_change" | "error" | "todo_list" | "plan" => {
                out.push(Event::Other(kind.to_owned()));
            }
            _ => out.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind: (!kind.is_empty()).then(|| format!("item:{kind}")),
            }),
        }
    }

    /// An item that is a tool call: a shell command, an MCP tool, a web
    /// search or a subagent ("collab") call.
    fn tool_item(&mut self, stage: Stage, kind: &str, item: &Value, out: &mut Vec<Event>) {
        let id = json::string_at(item, &["id"]);
        match stage {
            Stage::Started => self.calls.start(id, tool_call(kind, item), out),
            Stage::Updated => out.push(Event::Other(kind.to_owned())),
            Stage::Completed => {
                let phase = if failed(item) {
                    ToolPhase::Failed
                } else {
                    ToolPhase::Completed
                };
                self.calls
                    .finish(id, Some(tool_call(kind, item)), phase, out);
            }
        }
    }
}

/// The host's view of a tool item.
fn tool_call(kind: &str, item: &Value) -> Call {
    match kind {
        "command_execution" => Call {
            name: "shell".into(),
            detail: json::tool_detail(item),
        },
        "mcp_tool_call" => {
            let tool = json::str_at(item, &["tool"]).unwrap_or("mcp");
            let name = match json::str_at(item, &["server"]) {
                Some(server) if !server.is_empty() => format!("{server}.{tool}"),
                _ => tool.to_owned(),
            };
            Call {
                name,
                detail: item.get("arguments").and_then(arguments_detail),
            }
        }
        "web_search" => Call {
            name: "web_search".into(),
            detail: json::tool_detail(item)
                .or_else(|| item.get("action").and_then(json::tool_detail)),
        },
        _ => Call {
            name: json::string_at(item, &["tool"]).unwrap_or_else(|| kind.to_owned()),
            detail: json::tool_detail(item),
        },
    }
}

/// The detail of tool arguments given as an object or as JSON in a string.
fn arguments_detail(arguments: &Value) -> Option<String> {
    match arguments {
        Value::String(text) => json::parse_embedded(text).and_then(|args| json::tool_detail(&args)),
        _ => json::tool_detail(arguments),
    }
}

/// Whether a completed tool item failed: its status says so, a command
/// exited non-zero, or it carries an error.
fn failed(item: &Value) -> bool {
    let status = json::str_at(item, &["status"]).unwrap_or_default();
    let exit_code = json::at(item, &["exit_code"]).and_then(Value::as_i64);
    matches!(status, "failed" | "declined")
        || exit_code.is_some_and(|code| code != 0)
        || item.get("error").is_some_and(|error| !error.is_null())
}

/// A completed `file_change` item: one event per changed file, or a warning
/// when the patch did not apply.
fn file_changes(item: &Value, out: &mut Vec<Event>) {
    let changes = item.get("changes").and_then(Value::as_array);
    let changes = changes.unwrap_or_default();
    if json::str_at(item, &["status"]) == Some("failed") {
        let paths: Vec<&str> = changes
            .iter()
            .filter_map(|change| json::str_at(change, &["path"]))
            .collect();
        return out.push(Event::Warning(format!(
            "file change failed: {}",
            paths.join(", ")
        )));
    }
    if changes.is_empty() {
        return out.push(Event::Other("file_change".into()));
    }
    for change in changes {
        let Some(path) = json::string_at(change, &["path"]) else {
            continue;
        };
        // Newer builds give the kind as an object: {"type": "update", ...}.
        let kind = json::str_at(change, &["kind"])
            .or_else(|| json::str_at(change, &["kind", "type"]))
            .unwrap_or("change");
        out.push(Event::FileChange {
            path,
            kind: kind.to_owned(),
        });
    }
}

export_driver!(Codex);

#[cfg(test)]
mod tests;
