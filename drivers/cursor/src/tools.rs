//! `tool_call` lines: which tool, what it is about, how it ended.
//!
//! The tool is named by the key of its object: `{"shellToolCall": {"args":
//! {...}, "result": {...}}}` is `shell`. Some builds send
//! `{"function": {"name", "arguments"}}` instead, with the arguments as a JSON
//! string. A result is keyed by how the call ended: `success`, or `failure`,
//! `rejected`, `error`, `timeout`, `permissionDenied`, `fileNotFound`.

use std::collections::HashMap;

use cinch_driver_sdk::json::{self, bool_at, str_at};
use cinch_driver_sdk::{Event, ToolPhase, ToolUse, Value};

/// A tool call that has started.
pub(crate) struct PendingTool {
    name: String,
    detail: Option<String>,
}

/// The tool inside a `tool_call` object.
struct Call<'a> {
    name: &'a str,
    /// The object holding `args` and `result`.
    body: &'a Value<'a>,
    args: Option<&'a Value<'a>>,
}

/// A `tool_call/started` line: its `call_id` and `tool_call`.
pub(crate) fn started(
    call_id: Option<&str>,
    tool_call: &Value,
    tools: &mut HashMap<String, PendingTool>,
) -> Event {
    let call = call_of(tool_call);
    let name = call.as_ref().map_or("tool", |call| call.name).to_owned();
    let args = call.as_ref().and_then(|call| call.args);
    let detail = args.and_then(|args| detail(&name, args));
    let id = id_of(call_id, tool_call, args);
    if let Some(id) = &id {
        let pending = PendingTool {
            name: name.clone(),
            detail: detail.clone(),
        };
        tools.insert(id.clone(), pending);
    }
    Event::ToolUse(ToolUse {
        id,
        name,
        detail,
        phase: ToolPhase::Started,
    })
}

/// A `tool_call/completed` line. Lines from some builds come without their
/// `started` line or without `args`: the result names what it can.
pub(crate) fn completed(
    call_id: Option<&str>,
    tool_call: &Value,
    tools: &mut HashMap<String, PendingTool>,
) -> Event {
    let call = call_of(tool_call);
    let args = call.as_ref().and_then(|call| call.args);
    let result = call
        .as_ref()
        .and_then(|call| call.body.get("result"))
        .or_else(|| tool_call.get("result"));
    let id = id_of(call_id, tool_call, args);
    let (name, detail) = match id.as_ref().and_then(|id| tools.remove(id)) {
        Some(pending) => (pending.name, pending.detail),
        None => {
            let name = call.as_ref().map_or("tool", |call| call.name).to_owned();
            let detail = args
                .and_then(|args| detail(&name, args))
                .or_else(|| result.and_then(outcome_body).and_then(json::tool_detail));
            (name, detail)
        }
    };
    Event::ToolUse(ToolUse {
        id,
        name,
        detail,
        phase: phase(result),
    })
}

/// Finds the tool in a `tool_call` object.
fn call_of<'a>(tool_call: &'a Value<'a>) -> Option<Call<'a>> {
    let object = tool_call.as_object()?;
    // Beside the tool's key there may be others (`toolCallId`, `startedAtMs`).
    let keyed = object.iter().find_map(|(key, body)| {
        let name = key
            .strip_suffix("ToolCall")
            .filter(|name| !name.is_empty())?;
        body.is_object().then(|| Call {
            name,
            body,
            args: body.get("args"),
        })
    });
    keyed.or_else(|| {
        let function = object.get("function").filter(|f| f.is_object())?;
        Some(Call {
            name: str_at(function, &["name"]).unwrap_or("function"),
            body: function,
            args: function.get("arguments"),
        })
    })
}

/// The call's id: `call_id` (it may hold a newline), else the id inside.
fn id_of(call_id: Option<&str>, tool_call: &Value, args: Option<&Value>) -> Option<String> {
    call_id
        .or_else(|| str_at(tool_call, &["toolCallId"]))
        .or_else(|| args.and_then(|args| str_at(args, &["toolCallId"])))
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
}

/// What a call is about, from its arguments (an object or a JSON string).
fn detail(name: &str, args: &Value) -> Option<String> {
    match args {
        Value::String(text) => json::parse_embedded(text).and_then(|args| detail_of(name, &args)),
        _ => detail_of(name, args),
    }
}

fn detail_of(name: &str, args: &Value) -> Option<String> {
    // The SDK's order puts `path` first; for a search the pattern says more.
    let preferred = match name {
        "grep" => "pattern",
        "glob" => "globPattern",
        "semSearch" => "query",
        "mcp" => return mcp_detail(args),
        _ => return json::tool_detail(args),
    };
    str_at(args, &[preferred])
        .filter(|text| !text.trim().is_empty())
        .map(str::to_owned)
        .or_else(|| json::tool_detail(args))
}

/// An MCP call as `provider/tool`, else the name it gives.
fn mcp_detail(args: &Value) -> Option<String> {
    let tool = str_at(args, &["toolName"]).filter(|name| !name.is_empty());
    match (str_at(args, &["providerIdentifier"]), tool) {
        (Some(provider), Some(tool)) if !provider.is_empty() => Some(format!("{provider}/{tool}")),
        (_, tool) => str_at(args, &["name"])
            .filter(|name| !name.is_empty())
            .or(tool)
            .map(str::to_owned),
    }
}

/// How a call ended: `success` is done (unless it says `isError`), any other
/// outcome failed. A call without a result is taken as done.
fn phase(result: Option<&Value>) -> ToolPhase {
    let Some(result) = result.and_then(Value::as_object) else {
        return ToolPhase::Completed;
    };
    match result.get("success") {
        Some(success) if bool_at(success, &["isError"]) => ToolPhase::Failed,
        Some(_) => ToolPhase::Completed,
        None if result.keys().any(|key| key != "isBackground") => ToolPhase::Failed,
        None => ToolPhase::Completed,
    }
}

/// The object under a result's outcome key (`rejected: {command, ...}`).
fn outcome_body<'v, 'a>(result: &'v Value<'a>) -> Option<&'v Value<'a>> {
    result
        .as_object()?
        .iter()
        .find(|(key, body)| *key != "isBackground" && body.is_object())
        .map(|(_, body)| body)
}
