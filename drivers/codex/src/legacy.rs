//! Codex before about 0.44: `{"id","msg":{"type":...}}` protocol events.
//!
//! There is no session id in this format, and no `turn.failed`: an `error`
//! event is how a turn failed (retries came as `stream_error`). Streaming
//! deltas are followed by the whole message, so they are not joined.

use cinch_driver_sdk::{Event, SkipReason, ToolPhase, Value, json};

use crate::CodexParser;
use cinch_driver_sdk::calls::Call;

impl CodexParser {
    /// One legacy event, `msg` being its body.
    pub(crate) fn legacy(&mut self, msg: &Value, out: &mut Vec<Event>) {
        let kind = json::kind(msg).unwrap_or_default();
        match kind {
            "task_started" if !self.started => {
                self.started = true;
                out.push(Event::Started {
                    model: None,
                    session_id: None,
                });
            }
            "session_configured" => match json::string_at(msg, &["session_id"]) {
                Some(id) => self.session(json::string_at(msg, &["model"]), id, out),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "agent_message" => match json::string_at(msg, &["message"]) {
                Some(text) => {
                    self.final_message = Some(text.clone());
                    out.push(Event::AssistantMessage(text));
                }
                None => out.push(Event::Other(kind.to_owned())),
            },
            "agent_reasoning" => match json::string_at(msg, &["text"]) {
                Some(text) => out.push(Event::Thinking(text)),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "exec_command_begin" => {
                let call = Call {
                    name: "shell".into(),
                    detail: json::tool_detail(msg),
                };
                self.calls.start(call_id(msg), call, out);
            }
            "exec_command_end" => {
                let exit_code = json::at(msg, &["exit_code"]).and_then(Value::as_i64);
                let phase = if exit_code.is_some_and(|code| code != 0) {
                    ToolPhase::Failed
                } else {
                    ToolPhase::Completed
                };
                self.calls.finish(call_id(msg), None, phase, out);
            }
            "mcp_tool_call_begin" => {
                let call = mcp_call(msg);
                self.calls.start(call_id(msg), call, out);
            }
            "mcp_tool_call_end" => {
                let failed = json::at(msg, &["result", "Err"]).is_some()
                    || json::bool_at(msg, &["result", "Ok", "isError"]);
                let phase = if failed {
                    ToolPhase::Failed
                } else {
                    ToolPhase::Completed
                };
                self.calls
                    .finish(call_id(msg), Some(mcp_call(msg)), phase, out);
            }
            "web_search_begin" => {
                let call = web_search(msg);
                self.calls.start(call_id(msg), call, out);
            }
            "web_search_end" => {
                let call = web_search(msg);
                self.calls
                    .finish(call_id(msg), Some(call), ToolPhase::Completed, out);
            }
            "patch_apply_begin" => {
                if let Some(id) = call_id(msg) {
                    self.patches.insert(id, patch_changes(msg));
                }
                out.push(Event::Other(kind.to_owned()));
            }
            "patch_apply_end" => self.patch_applied(msg, out),
            "token_count" => {
                // Later builds nest the totals under info.total_token_usage.
                let usage = json::at(msg, &["info", "total_token_usage"]).unwrap_or(msg);
                self.usage(usage, out);
            }
            "task_complete" => match json::string_at(msg, &["last_agent_message"]) {
                Some(text) => {
                    self.final_message = Some(text.clone());
                    out.push(Event::FinalMessage(text));
                }
                None => out.push(Event::Other(kind.to_owned())),
            },
            "error" => self.fail(json::string_at(msg, &["message"]), out),
            "stream_error" => match json::string_at(msg, &["message"]) {
                Some(message) => out.push(Event::Warning(message)),
                None => out.push(Event::Other(kind.to_owned())),
            },
            "turn_aborted" => {
                let reason = json::str_at(msg, &["reason"]).unwrap_or("unknown reason");
                out.push(Event::Warning(format!("turn aborted: {reason}")));
            }
            "task_started"
            | "agent_message_delta"
            | "agent_reasoning_delta"
            | "agent_reasoning_raw_content"
            | "agent_reasoning_raw_content_delta"
            | "agent_reasoning_section_break"
            | "exec_command_output_delta"
            | "background_event"
            | "turn_diff"
            | "plan_update"
            | "user_message"
            | "shutdown_complete" => out.push(Event::Other(kind.to_owned())),
            _ => out.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind: (!kind.is_empty()).then(|| kind.to_owned()),
            }),
        }
    }

    /// `patch_apply_end`: the announced changes applied, or did not.
    fn patch_applied(&mut self, msg: &Value, out: &mut Vec<Event>) {
        let changes = call_id(msg)
            .and_then(|id| self.patches.remove(&id))
            .unwrap_or_default();
        if !json::bool_at(msg, &["success"]) {
            let paths: Vec<&str> = changes.iter().map(|(path, _)| path.as_str()).collect();
            return out.push(Event::Warning(format!(
                "file change failed: {}",
                paths.join(", ")
            )));
        }
        if changes.is_empty() {
            return out.push(Event::Other("patch_apply_end".into()));
        }
        for (path, kind) in changes {
            out.push(Event::FileChange { path, kind });
        }
    }
}

fn call_id(msg: &Value) -> Option<String> {
    json::string_at(msg, &["call_id"])
}

fn mcp_call(msg: &Value) -> Call {
    let tool = json::str_at(msg, &["invocation", "tool"]).unwrap_or("mcp");
    let name = match json::str_at(msg, &["invocation", "server"]) {
        Some(server) if !server.is_empty() => format!("{server}.{tool}"),
        _ => tool.to_owned(),
    };
    Call {
        name,
        detail: json::at(msg, &["invocation", "arguments"]).and_then(crate::arguments_detail),
    }
}

fn web_search(msg: &Value) -> Call {
    Call {
        name: "web_search".into(),
        detail: json::string_at(msg, &["query"]),
    }
}

/// The (path, kind) pairs of `patch_apply_begin.changes`, a map from path to
/// a change tagged either `{"type": "add", ...}` or `{"add": {...}}`.
fn patch_changes(msg: &Value) -> Vec<(String, String)> {
    let Some(changes) = msg.get("changes").and_then(Value::as_object) else {
        return Vec::new();
    };
    changes
        .iter()
        .map(|(path, change)| {
            let kind = json::str_at(change, &["type"])
                .or_else(|| change.as_object()?.keys().next())
                .unwrap_or("change");
            (path.to_owned(), kind.to_owned())
        })
        .collect()
}
