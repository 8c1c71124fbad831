//! The four model APIs the CLIs speak: how each one's request shows its history, its tools and
//! a JSON-schema constraint, and how each one's answers, tool calls and errors look on the wire.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::http::Response;

/// A model API.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Api {
    /// Anthropic Messages (`POST .../v1/messages`, `.../v1/messages/count_tokens`): Claude Code.
    Anthropic,
    /// OpenAI Responses (`POST .../responses`): Codex.
    OpenAiResponses,
    /// OpenAI Chat Completions (`POST .../chat/completions`): OpenAI-compatible CLIs.
    OpenAiChat,
    /// Gemini (`...:streamGenerateContent?alt=sse`, `:generateContent`, `:countTokens`).
    Gemini,
}

/// What a request's conversation so far holds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct History {
    /// Model turns: runs of consecutive model entries, so that one turn's several items (text
    /// plus parallel tool calls) count once.
    pub model_turns: usize,
    /// User messages, not counting those that only carry tool results.
    pub user_messages: usize,
}

/// What to answer with.
pub(crate) enum Reply {
    Text(String),
    Tool { name: String, args: Value },
}

/// Everything about a request that shapes the answer.
pub(crate) struct Call {
    pub api: Api,
    pub stream: bool,
    pub model: String,
    pub history: History,
}

/// Qwen Code puts this fake model turn at the start of every conversation; it is not a turn
/// of the script.
const QWEN_SETUP_ACK: &str = "Got it. Thanks for the context!";

/// Counts model turns and user messages; `is_model` and `is_user` classify one entry.
fn count(
    entries: &[Value],
    is_model: impl Fn(&Value) -> bool,
    is_user: impl Fn(&Value) -> bool,
) -> History {
    let mut h = History {
        model_turns: 0,
        user_messages: 0,
    };
    let mut in_model_run = false;
    for e in entries {
        let model = is_model(e);
        if model && !in_model_run {
            h.model_turns += 1;
        }
        in_model_run = model;
        if is_user(e) {
            h.user_messages += 1;
        }
    }
    h
}

fn role(e: &Value) -> &str {
    e.get("role").and_then(Value::as_str).unwrap_or("")
}

fn array(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// The conversation history of a model request.
pub(crate) fn history(api: Api, body: &Value) -> History {
    match api {
        Api::Anthropic => count(
            array(body.get("messages")),
            |m| role(m) == "assistant",
            |m| {
                role(m) == "user"
                    && match m.get("content") {
                        Some(Value::Array(blocks)) => blocks
                            .iter()
                            .any(|b| b.get("type").and_then(Value::as_str) != Some("tool_result")),
                        _ => true,
                    }
            },
        ),
        Api::OpenAiResponses => {
            if body.get("input").is_some_and(Value::is_string) {
                return History {
                    model_turns: 0,
                    user_messages: 1,
                };
            }
            let kind = |i: &Value| -> String {
                i.get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("message")
                    .to_string()
            };
            count(
                array(body.get("input")),
                |i| match kind(i).as_str() {
                    "message" => role(i) == "assistant",
                    "function_call" | "custom_tool_call" | "local_shell_call" | "reasoning"
                    | "web_search_call" => true,
                    _ => false,
                },
                |i| kind(i) == "message" && role(i) == "user",
            )
        }
        Api::OpenAiChat => count(
            array(body.get("messages")),
            |m| {
                role(m) == "assistant"
                    && m.get("content").and_then(Value::as_str) != Some(QWEN_SETUP_ACK)
            },
            |m| role(m) == "user",
        ),
        Api::Gemini => count(
            array(body.get("contents")),
            |c| role(c) == "model",
            |c| {
                role(c) == "user"
                    && !array(c.get("parts"))
                        .iter()
                        .any(|p| p.get("functionResponse").is_some())
            },
        ),
    }
}

/// The names of the tools a request offers the model.
pub(crate) fn tool_names(api: Api, body: &Value) -> Vec<String> {
    let tools = array(body.get("tools"));
    let names: Vec<Option<&str>> = match api {
        Api::Anthropic => tools.iter().map(|t| t["name"].as_str()).collect(),
        // Built-in tools (web_search, local_shell) have a type and no name.
        Api::OpenAiResponses => tools
            .iter()
            .map(|t| t["name"].as_str().or(t["type"].as_str()))
            .collect(),
        Api::OpenAiChat => tools
            .iter()
            .map(|t| t["function"]["name"].as_str())
            .collect(),
        Api::Gemini => tools
            .iter()
            .flat_map(|t| array(t.get("functionDeclarations")))
            .map(|f| f["name"].as_str())
            .collect(),
    };
    names.into_iter().flatten().map(str::to_string).collect()
}

/// The JSON schema the answer must follow, when the request constrains it.
pub(crate) fn json_schema(api: Api, body: &Value) -> Option<&Value> {
    let candidates = match api {
        Api::Anthropic => [
            body.pointer("/output_format/schema"),
            body.pointer("/output_config/format/schema"),
        ],
        Api::OpenAiResponses => [body.pointer("/text/format/schema"), None],
        Api::OpenAiChat => [body.pointer("/response_format/json_schema/schema"), None],
        Api::Gemini => [
            body.pointer("/generationConfig/responseJsonSchema"),
            body.pointer("/generationConfig/responseSchema"),
        ],
    };
    candidates.into_iter().flatten().find(|s| !s.is_null())
}

/// A value that satisfies `schema`, for side requests that want JSON.
pub(crate) fn fill_schema(schema: &Value) -> Value {
    if let Some(first) = array(schema.get("enum")).first() {
        return first.clone();
    }
    for alternatives in ["anyOf", "oneOf"] {
        if let Some(first) = array(schema.get(alternatives)).first() {
            return fill_schema(first);
        }
    }
    let kind = match &schema["type"] {
        // ["string", "null"] and the like.
        Value::Array(kinds) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|k| *k != "null")
            .unwrap_or("null")
            .to_ascii_lowercase(),
        Value::String(k) => k.to_ascii_lowercase(),
        _ if schema.get("properties").is_some() => "object".into(),
        _ => "string".into(),
    };
    match kind.as_str() {
        "object" => Value::Object(
            schema["properties"]
                .as_object()
                .into_iter()
                .flatten()
                .map(|(k, v)| (k.clone(), fill_schema(v)))
                .collect(),
        ),
        "array" => json!([]),
        "number" | "integer" => json!(0),
        "boolean" => json!(false),
        "null" => Value::Null,
        _ => json!("ok"),
    }
}

/// The call of the CLI's shell tool running `command`, or `None` when no offered tool runs
/// commands. Each CLI names its tool and its arguments its own way.
pub(crate) fn shell_call(api: Api, tools: &[String], command: &str) -> Option<Reply> {
    let has = |n: &str| tools.iter().any(|t| t == n);
    let (name, args) = if api == Api::OpenAiResponses {
        if has("exec_command") {
            ("exec_command", json!({ "cmd": command }))
        } else if has("shell_command") {
            ("shell_command", json!({ "command": command }))
        } else if has("shell") {
            ("shell", json!({ "command": ["bash", "-lc", command] }))
        } else {
            return None;
        }
    } else if has("run_commands") {
        // Cline's: a list of command lines.
        ("run_commands", json!({ "commands": [command] }))
    } else if has("Execute") {
        // Droid's: the model rates the command's risk.
        (
            "Execute",
            json!({ "command": command, "riskLevel": "low",
                    "riskLevelReason": "It writes one small file in the working directory." }),
        )
    } else {
        let name = ["Bash", "bash", "run_shell_command", "shell"]
            .into_iter()
            .find(|n| has(n))?;
        (
            name,
            json!({ "command": command, "description": "Run a shell command for the mock model" }),
        )
    };
    Some(Reply::Tool {
        name: name.to_string(),
        args,
    })
}

/// An id no other answer of this process has, so that sessions resumed across servers never
/// see two messages with one id.
fn fresh_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{prefix}{nanos:08x}{n:04x}")
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Splits a text in two on a character boundary, so that every answer arrives in more than
/// one delta and a client that forgets to concatenate them shows.
fn halves(text: &str) -> (&str, &str) {
    let mid = (text.len() / 2..=text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text.split_at(mid)
}

fn sse(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

/// Token counts: fixed, but growing with the history so that a resumed turn's usage differs.
fn usage(history: History) -> (u64, u64) {
    (100 + history.model_turns as u64, 7)
}

/// The answer to a model request, in the API's own shape.
pub(crate) fn answer(call: &Call, reply: Reply) -> Response {
    match call.api {
        Api::Anthropic => anthropic(call, reply),
        Api::OpenAiResponses => openai_responses(call, reply),
        Api::OpenAiChat => openai_chat(call, reply),
        Api::Gemini => gemini(call, reply),
    }
}

fn anthropic(call: &Call, reply: Reply) -> Response {
    let (input, output) = usage(call.history);
    let id = fresh_id("msg_mock_");
    let (block, stop) = match &reply {
        Reply::Text(text) => (json!({ "type": "text", "text": text }), "end_turn"),
        Reply::Tool { name, args } => (
            json!({ "type": "tool_use", "id": fresh_id("toolu_mock_"), "name": name, "input": args }),
            "tool_use",
        ),
    };
    let usage = json!({
        "input_tokens": input, "output_tokens": output,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
    });
    let request_id = fresh_id("req_mock_");
    if !call.stream {
        let message = json!({
            "id": id, "type": "message", "role": "assistant", "model": call.model,
            "content": [block], "stop_reason": stop, "stop_sequence": null, "usage": usage,
        });
        return Response::json(200, &message).with_header("request-id", &request_id);
    }
    let mut start_usage = usage.clone();
    start_usage["output_tokens"] = json!(1);
    let mut events = vec![
        sse(
            "message_start",
            &json!({ "type": "message_start", "message": {
                "id": id, "type": "message", "role": "assistant", "model": call.model,
                "content": [], "stop_reason": null, "stop_sequence": null, "usage": start_usage,
            }}),
        ),
        sse("ping", &json!({ "type": "ping" })),
    ];
    let deltas: Vec<Value> = match &reply {
        Reply::Text(text) => {
            let (a, b) = halves(text);
            events.push(sse(
                "content_block_start",
                &json!({ "type": "content_block_start", "index": 0,
                         "content_block": { "type": "text", "text": "" } }),
            ));
            [a, b]
                .into_iter()
                .filter(|p| !p.is_empty())
                .map(|p| json!({ "type": "text_delta", "text": p }))
                .collect()
        }
        Reply::Tool { args, .. } => {
            let mut started = block.clone();
            started["input"] = json!({});
            events.push(sse(
                "content_block_start",
                &json!({ "type": "content_block_start", "index": 0, "content_block": started }),
            ));
            vec![json!({ "type": "input_json_delta", "partial_json": args.to_string() })]
        }
    };
    for delta in deltas {
        events.push(sse(
            "content_block_delta",
            &json!({ "type": "content_block_delta", "index": 0, "delta": delta }),
        ));
    }
    events.push(sse(
        "content_block_stop",
        &json!({ "type": "content_block_stop", "index": 0 }),
    ));
    events.push(sse(
        "message_delta",
        &json!({ "type": "message_delta",
                 "delta": { "stop_reason": stop, "stop_sequence": null },
                 "usage": { "output_tokens": output } }),
    ));
    events.push(sse("message_stop", &json!({ "type": "message_stop" })));
    Response::events(events).with_header("request-id", &request_id)
}

fn openai_responses(call: &Call, reply: Reply) -> Response {
    let (input, output) = usage(call.history);
    let item = match &reply {
        Reply::Text(text) => json!({
            "type": "message", "id": fresh_id("msg_mock_"), "role": "assistant",
            "status": "completed",
            "content": [{ "type": "output_text", "text": text, "annotations": [] }],
        }),
        Reply::Tool { name, args } => {
            let call_id = fresh_id("call_mock_");
            json!({
                "type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id,
                "name": name, "arguments": args.to_string(), "status": "completed",
            })
        }
    };
    let base = json!({
        "id": fresh_id("resp_mock_"), "object": "response", "created_at": now_secs(),
        "model": call.model, "status": "in_progress", "output": [],
    });
    let mut done = base.clone();
    done["status"] = json!("completed");
    done["output"] = json!([item]);
    done["usage"] = json!({
        "input_tokens": input, "input_tokens_details": { "cached_tokens": 0 },
        "output_tokens": output, "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": input + output,
    });
    let request_id = fresh_id("req_mock_");
    if !call.stream {
        return Response::json(200, &done).with_header("x-request-id", &request_id);
    }
    let mut in_progress = item.clone();
    in_progress["status"] = json!("in_progress");
    let mut payloads = vec![
        json!({ "type": "response.created", "response": base }),
        json!({ "type": "response.output_item.added", "output_index": 0, "item": in_progress }),
    ];
    if let Reply::Text(text) = &reply {
        let (a, b) = halves(text);
        for piece in [a, b].into_iter().filter(|p| !p.is_empty()) {
            payloads.push(json!({
                "type": "response.output_text.delta", "item_id": item["id"],
                "output_index": 0, "content_index": 0, "delta": piece,
            }));
        }
    }
    payloads.push(json!({ "type": "response.output_item.done", "output_index": 0, "item": item }));
    payloads.push(json!({ "type": "response.completed", "response": done }));
    let events = payloads
        .into_iter()
        .enumerate()
        .map(|(seq, mut p)| {
            p["sequence_number"] = json!(seq);
            let kind = p["type"].as_str().unwrap_or("").to_string();
            sse(&kind, &p)
        })
        .collect();
    Response::events(events).with_header("x-request-id", &request_id)
}

fn openai_chat(call: &Call, reply: Reply) -> Response {
    let (input, output) = usage(call.history);
    let (message, finish) = match &reply {
        Reply::Text(text) => (json!({ "role": "assistant", "content": text }), "stop"),
        Reply::Tool { name, args } => (
            json!({ "role": "assistant", "content": null, "tool_calls": [{
                "id": fresh_id("call_mock_"), "type": "function",
                "function": { "name": name, "arguments": args.to_string() },
            }]}),
            "tool_calls",
        ),
    };
    let usage = json!({
        "prompt_tokens": input, "completion_tokens": output, "total_tokens": input + output,
    });
    let id = fresh_id("chatcmpl-mock");
    let created = now_secs();
    if !call.stream {
        return Response::json(
            200,
            &json!({
                "id": id, "object": "chat.completion", "created": created, "model": call.model,
                "choices": [{ "index": 0, "message": message, "finish_reason": finish }],
                "usage": usage,
            }),
        );
    }
    let chunk = |delta: Value, finish: Value, usage: Value| {
        let mut c = json!({
            "id": id, "object": "chat.completion.chunk", "created": created, "model": call.model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        if !usage.is_null() {
            c["usage"] = usage;
        }
        format!("data: {c}\n\n")
    };
    let mut deltas = Vec::new();
    match &reply {
        Reply::Text(text) => {
            let (a, b) = halves(text);
            deltas.push(json!({ "role": "assistant", "content": a }));
            if !b.is_empty() {
                deltas.push(json!({ "content": b }));
            }
        }
        Reply::Tool { .. } => {
            let mut delta = message.clone();
            delta["tool_calls"][0]["index"] = json!(0);
            deltas.push(delta);
        }
    }
    let mut events: Vec<String> = deltas
        .into_iter()
        .map(|d| chunk(d, Value::Null, Value::Null))
        .collect();
    events.push(chunk(json!({}), json!(finish), usage));
    events.push("data: [DONE]\n\n".into());
    Response::events(events)
}

fn gemini(call: &Call, reply: Reply) -> Response {
    let (input, output) = usage(call.history);
    let response_id = fresh_id("mock-");
    let candidate = |parts: Value, finish: bool| {
        let mut c = json!({ "content": { "role": "model", "parts": parts }, "index": 0 });
        if finish {
            c["finishReason"] = json!("STOP");
        }
        c
    };
    let payload = |candidate: Value, with_usage: bool| {
        let mut p = json!({
            "candidates": [candidate], "modelVersion": call.model, "responseId": response_id,
        });
        if with_usage {
            p["usageMetadata"] = json!({
                "promptTokenCount": input, "candidatesTokenCount": output,
                "totalTokenCount": input + output,
            });
        }
        p
    };
    let whole = match &reply {
        Reply::Text(text) => json!([{ "text": text }]),
        Reply::Tool { name, args } => json!([{ "functionCall": { "name": name, "args": args } }]),
    };
    if !call.stream {
        return Response::json(200, &payload(candidate(whole, true), true));
    }
    let pieces: Vec<Value> = match &reply {
        Reply::Text(text) if text.len() > 1 => {
            let (a, b) = halves(text);
            vec![json!([{ "text": a }]), json!([{ "text": b }])]
        }
        _ => vec![whole],
    };
    let last = pieces.len().saturating_sub(1);
    let events = pieces
        .into_iter()
        .enumerate()
        .map(|(i, parts)| {
            let p = payload(candidate(parts, i == last), i == last);
            // The Gemini API separates its events with CRLF pairs.
            format!("data: {p}\r\n\r\n")
        })
        .collect();
    Response::events(events)
}

/// The API's own error body for `status`: the scripted errors use each API's usual text, and
/// the mock's own complaints (bad request, unknown scenario) pass `message`.
pub(crate) fn error(api: Api, status: u16, message: Option<&str>) -> Response {
    match api {
        Api::Anthropic => {
            let (kind, default) = match status {
                400 => ("invalid_request_error", "Invalid request"),
                401 => ("authentication_error", "invalid x-api-key"),
                403 => ("permission_error", "Permission denied"),
                404 => ("not_found_error", "Not found"),
                429 => ("rate_limit_error", "Rate limited"),
                529 => ("overloaded_error", "Overloaded"),
                _ => ("api_error", "Internal server error"),
            };
            Response::json(
                status,
                &json!({ "type": "error",
                         "error": { "type": kind, "message": message.unwrap_or(default) } }),
            )
            .with_header("request-id", &fresh_id("req_mock_"))
        }
        Api::OpenAiResponses | Api::OpenAiChat => {
            let (kind, code, default) = match status {
                401 => (
                    "invalid_request_error",
                    "invalid_api_key",
                    "Incorrect API key provided: mock. (cinch mock model)",
                ),
                429 => (
                    "rate_limit_error",
                    "rate_limit_exceeded",
                    "Rate limit reached. (cinch mock model)",
                ),
                400..=499 => (
                    "invalid_request_error",
                    "invalid_request",
                    "Invalid request. (cinch mock model)",
                ),
                _ => (
                    "server_error",
                    "server_error",
                    "The server had an error processing your request. (cinch mock model)",
                ),
            };
            Response::json(
                status,
                &json!({ "error": { "message": message.unwrap_or(default), "type": kind,
                                    "param": null, "code": code } }),
            )
            .with_header("x-request-id", &fresh_id("req_mock_"))
        }
        Api::Gemini => {
            let (kind, default) = match status {
                400 => ("INVALID_ARGUMENT", "Invalid request. (cinch mock model)"),
                401 => (
                    "UNAUTHENTICATED",
                    "API key not valid. Please pass a valid API key. (cinch mock model)",
                ),
                403 => ("PERMISSION_DENIED", "Permission denied. (cinch mock model)"),
                404 => ("NOT_FOUND", "Not found. (cinch mock model)"),
                429 => ("RESOURCE_EXHAUSTED", "Quota exceeded. (cinch mock model)"),
                503 => ("UNAVAILABLE", "The model is overloaded. (cinch mock model)"),
                _ => (
                    "INTERNAL",
                    "An internal error has occurred. (cinch mock model)",
                ),
            };
            Response::json(
                status,
                &json!({ "error": { "code": status, "message": message.unwrap_or(default),
                                    "status": kind } }),
            )
        }
    }
}
