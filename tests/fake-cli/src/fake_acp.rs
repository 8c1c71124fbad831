//! `cinch-fake-acp`: a small ACP agent (JSON-RPC 2.0, one message a line on
//! stdin and stdout) for the edge cases real agents do not show on demand.
//! What it does is set by the JSON script in `FAKE_ACP_SCRIPT`
//! ([`SCRIPT_ENV`](cinch_fake_cli::acp::SCRIPT_ENV)), a path or the script
//! itself; see [`AcpScript`](cinch_fake_cli::acp::AcpScript) for its fields.
//!
//! It answers `initialize`, `session/new` and `session/load`; on
//! `session/prompt` it streams a tool call and a message, asks permission
//! when told to, and answers `end_turn`, or hangs until `session/cancel`
//! (answering `cancelled`, unless told to ignore it). Every line it reads is
//! appended to the script's `record` file, so a test can tell nothing reached
//! it twice.

use std::fs::OpenOptions;
use std::io::{self, BufRead, Write};
use std::time::Duration;

use cinch_fake_cli::acp::{AcpScript, SCRIPT_ENV};
use serde_json::{Value, json};

const SESSION: &str = "fake-acp-session-1";

fn main() {
    if std::env::args().skip(1).any(|arg| arg == "--version") {
        println!("cinch-fake-acp 0.0.1");
        return;
    }
    let script = match load() {
        Ok(script) => script,
        Err(error) => {
            eprintln!("cinch-fake-acp: {error}");
            std::process::exit(2);
        }
    };
    if script.ignore_sigterm {
        // SAFETY: setting a signal's disposition to ignore.
        unsafe { libc::signal(libc::SIGTERM, libc::SIG_IGN) };
    }
    let mut agent = Agent {
        out: io::stdout(),
        script,
        prompt: None,
    };
    for line in io::stdin().lock().lines() {
        let Ok(line) = line else { break };
        agent.record(&line);
        if agent.script.never_answer {
            continue;
        }
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        agent.handle(&message);
    }
    if agent.script.outlive_stdin {
        // Like claude-agent-acp and codex-acp: EOF on stdin does not end it.
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
}

fn load() -> Result<AcpScript, String> {
    let Some(value) = std::env::var_os(SCRIPT_ENV) else {
        return Ok(AcpScript::default());
    };
    let value = value.to_string_lossy().into_owned();
    let text = if value.trim_start().starts_with('{') {
        value
    } else {
        std::fs::read_to_string(&value).map_err(|error| format!("reading {value}: {error}"))?
    };
    serde_json::from_str(&text).map_err(|error| format!("parsing the script: {error}"))
}

struct Agent {
    out: io::Stdout,
    script: AcpScript,
    /// The id of the prompt being worked on.
    prompt: Option<Value>,
}

impl Agent {
    fn send(&mut self, message: Value) {
        let mut out = self.out.lock();
        let _ = writeln!(out, "{message}").and_then(|()| out.flush());
    }

    fn send_raw(&mut self, text: &str) {
        let mut out = self.out.lock();
        let _ = writeln!(out, "{text}").and_then(|()| out.flush());
    }

    fn record(&self, line: &str) {
        let Some(path) = &self.script.record else {
            return;
        };
        if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = writeln!(file, "{line}");
        }
    }

    fn update(&mut self, update: Value) {
        self.send(json!({
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION, "update": update}
        }));
    }

    fn handle(&mut self, message: &Value) {
        let id = message.get("id").cloned();
        match (message["method"].as_str(), id) {
            (Some("initialize"), Some(id)) => self.send(json!({
                "jsonrpc": "2.0", "id": id,
                "result": {
                    "protocolVersion": 1,
                    "agentCapabilities": {"loadSession": true},
                    "agentInfo": {"name": "cinch-fake-acp", "version": "0.0.1"},
                    "authMethods": []
                }
            })),
            (Some("session/new"), Some(id)) => {
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": {"sessionId": SESSION}}))
            }
            (Some("session/load"), Some(id)) => {
                self.send(json!({"jsonrpc": "2.0", "id": id, "result": null}))
            }
            (Some("session/prompt"), Some(id)) => self.prompt(id),
            (Some("session/cancel"), None) => {
                if !self.script.ignore_cancel
                    && let Some(id) = self.prompt.take()
                {
                    self.update(json!({
                        "sessionUpdate": "tool_call_update",
                        "toolCallId": "call-1", "status": "failed"
                    }));
                    self.send(
                        json!({"jsonrpc": "2.0", "id": id, "result": {"stopReason": "cancelled"}}),
                    );
                }
            }
            (Some(_), Some(id)) => self.send(json!({
                "jsonrpc": "2.0", "id": id,
                "error": {"code": -32601, "message": "method not found"}
            })),
            // The answer to our permission request.
            (None, Some(_)) => {
                let option = message["result"]["outcome"]["optionId"]
                    .as_str()
                    .unwrap_or("none")
                    .to_owned();
                self.answer(&format!("permission answered: {option}"));
            }
            (_, None) => {}
        }
    }

    fn prompt(&mut self, id: Value) {
        self.prompt = Some(id);
        self.update(json!({
            "sessionUpdate": "tool_call", "toolCallId": "call-1",
            "title": "echo hello > out.txt", "kind": "execute", "status": "pending"
        }));
        if self.script.malformed_line {
            self.send_raw("{\"jsonrpc\": \"2.0\", \"method\": \"session/upd");
        }
        if self.script.hang {
            // Until session/cancel (or a signal).
            return;
        }
        if self.script.ask_permission {
            if let Some(gate) = &self.script.permission_gate {
                while !gate.exists() {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            self.send(json!({
                "jsonrpc": "2.0", "id": 0, "method": "session/request_permission",
                "params": {
                    "sessionId": SESSION,
                    "toolCall": {"toolCallId": "call-1", "title": "echo hello > out.txt", "kind": "execute"},
                    "options": [
                        {"optionId": "allow-once", "name": "Allow", "kind": "allow_once"},
                        {"optionId": "reject-once", "name": "Reject", "kind": "reject_once"}
                    ]
                }
            }));
            return;
        }
        self.answer("no permission asked");
    }

    /// Runs the tool (writes out.txt), says `note` and ends the prompt.
    fn answer(&mut self, note: &str) {
        let Some(id) = self.prompt.take() else {
            return;
        };
        let allowed = !note.ends_with("reject-once");
        if allowed {
            let _ = std::fs::write("out.txt", "hello\n");
        }
        self.update(json!({
            "sessionUpdate": "tool_call_update", "toolCallId": "call-1",
            "status": if allowed { "completed" } else { "failed" }
        }));
        let text = format!("{} ({note})", self.script.answer);
        self.update(json!({
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": text}
        }));
        self.send(json!({
            "jsonrpc": "2.0", "id": id,
            "result": {"stopReason": "end_turn", "usage": {"inputTokens": 10, "outputTokens": 3, "totalTokens": 13}}
        }));
    }
}
