//! `cinch-mcp-echo`: the smallest MCP server that the real CLIs accept, over
//! stdio (JSON-RPC 2.0, one message a line). It offers one tool,
//! [`TOOL`](cinch_fake_cli::mcp::TOOL), which answers
//! [`ANSWER_PREFIX`](cinch_fake_cli::mcp::ANSWER_PREFIX) followed by its `text`
//! argument. When [`MARKER_ENV`](cinch_fake_cli::mcp::MARKER_ENV) names a file,
//! it appends a line there for each `tools/list` (`tools/list`) and each call
//! (`tools/call <text>`), so a test can tell that the harness really ran the
//! server, listed its tools and called the tool.

use std::fs::OpenOptions;
use std::io::{self, BufRead, Write};

use cinch_fake_cli::mcp::{ANSWER_PREFIX, MARKER_ENV, TOOL};
use serde_json::{Value, json};

/// The protocol version answered when the client names none.
const DEFAULT_PROTOCOL: &str = "2025-06-18";

fn main() {
    let stdin = io::stdin();
    let mut stdout = io::stdout().lock();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim().is_empty() {
            continue;
        }
        let Some(reply) = answer(&line) else {
            continue;
        };
        // A client that hung up ends the server, as its stdin closing would.
        if writeln!(stdout, "{reply}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            break;
        }
    }
}

/// The reply to one message; `None` for notifications (which have no id).
fn answer(line: &str) -> Option<Value> {
    let message: Value = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(error) => {
            return Some(json!({
                "jsonrpc": "2.0",
                "id": null,
                "error": {"code": -32700, "message": format!("not JSON: {error}")},
            }));
        }
    };
    let id = message.get("id").cloned()?;
    let method = message["method"].as_str().unwrap_or_default();
    let params = &message["params"];
    let result = match method {
        "initialize" => Ok(json!({
            "protocolVersion": params["protocolVersion"].as_str().unwrap_or(DEFAULT_PROTOCOL),
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {"name": "cinch-mcp-echo", "version": env!("CARGO_PKG_VERSION")},
        })),
        "ping" => Ok(json!({})),
        "tools/list" => note("tools/list").map(|()| {
            json!({"tools": [{
                "name": TOOL,
                "description": "Echoes its text back, prefixed, and notes that it was called.",
                "inputSchema": {
                    "type": "object",
                    "properties": {"text": {"type": "string", "description": "The text to echo"}},
                    "required": ["text"],
                },
            }]})
        }),
        "tools/call" => call(params),
        other => Err((-32601, format!("no method {other}"))),
    };
    Some(match result {
        Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
        Err((code, message)) => {
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
        }
    })
}

/// Appends `line` to the marker file, when there is one.
fn note(line: &str) -> Result<(), (i64, String)> {
    let Some(marker) = std::env::var_os(MARKER_ENV) else {
        return Ok(());
    };
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&marker)
        .and_then(|mut file| writeln!(file, "{line}"))
        .map_err(|error| {
            (
                -32603,
                format!("cannot write {}: {error}", marker.to_string_lossy()),
            )
        })
}

/// Runs the tool: the echo, and the marker line.
fn call(params: &Value) -> Result<Value, (i64, String)> {
    let name = params["name"].as_str().unwrap_or_default();
    if name != TOOL {
        return Err((-32602, format!("no tool {name}")));
    }
    let text = params["arguments"]["text"].as_str().unwrap_or_default();
    note(&format!("tools/call {text}"))?;
    Ok(json!({"content": [{"type": "text", "text": format!("{ANSWER_PREFIX}{text}")}]}))
}
