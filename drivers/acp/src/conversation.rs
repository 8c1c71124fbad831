//! One turn's conversation with an ACP agent: what the driver sends, and
//! what it makes of what the agent says.

use cinch_driver_sdk::calls::{Call, ToolCalls};
use cinch_driver_sdk::serde_json::json;
use cinch_driver_sdk::{
    Event, Fed, Outcome, Parser, PermissionAnswer, PermissionOption, PermissionPolicy,
    PermissionRequest, PlanEntry, SkipReason, ToolPhase, Turn, Usage, Value, json as path, text,
};

use crate::profiles;
use crate::rpc::{self, Incoming, Request};

/// Why the agent ended its answer to the prompt (ACP's `stopReason`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum StopReason {
    EndTurn,
    MaxTokens,
    MaxTurnRequests,
    Refusal,
    Cancelled,
    /// A reason this driver does not know; the turn is not failed for it.
    Other,
}

impl StopReason {
    fn of(reason: Option<&str>) -> Self {
        match reason {
            Some("end_turn") => Self::EndTurn,
            Some("max_tokens") => Self::MaxTokens,
            Some("max_turn_requests") => Self::MaxTurnRequests,
            Some("refusal") => Self::Refusal,
            Some("cancelled") => Self::Cancelled,
            _ => Self::Other,
        }
    }

    /// The error a reason means, when it means one.
    fn error(&self) -> Option<&'static str> {
        match self {
            Self::EndTurn | Self::Other => None,
            Self::MaxTokens => Some("the model reached its output token limit"),
            Self::MaxTurnRequests => Some("the turn reached its limit of model requests"),
            Self::Refusal => Some("the model refused"),
            Self::Cancelled => Some("cancelled"),
        }
    }
}

/// A tool call announced as pending with nothing but a generic title
/// (claude-agent-acp's "Terminal", opencode's "bash"): it is started once an
/// update or a permission request says what it does.
struct Announced {
    name: String,
    detail: Option<String>,
}

/// A permission request waiting for the host's decision.
struct Waiting {
    /// The request's id, as it came.
    id: cinch_driver_sdk::serde_json::Value,
    /// The options that allow and that reject, when offered.
    allow: Option<String>,
    reject: Option<String>,
}

/// Usage as each agent reports it.
#[derive(Default)]
struct Tally {
    /// The prompt answer's `usage` (opencode, claude) or
    /// `_meta.quota.token_count` (gemini).
    answer: Option<Usage>,
    /// The sum of the `_meta.usage` of qwen's empty message chunks, one per
    /// model request.
    chunks: Option<Usage>,
    /// The last `usage_update`'s cost in USD (opencode: the session's so far;
    /// claude: the prompt's).
    cost_usd: Option<f64>,
}

impl Tally {
    fn usage(&self) -> Option<Usage> {
        let tokens = self.answer.or(self.chunks);
        match (tokens, self.cost_usd) {
            (None, None) => None,
            (tokens, cost_usd) => Some(Usage {
                cost_usd,
                ..tokens.unwrap_or_default()
            }),
        }
    }
}

/// Reads (and conducts) one turn of an ACP agent.
#[derive(Default)]
pub struct AcpParser {
    /// The harness's name: a few agents have ways of their own.
    harness: String,
    workdir: String,
    brief: String,
    /// The session the turn resumes with `session/load`.
    resume: Option<String>,
    model: Option<String>,
    permissions: PermissionPolicy,
    /// Permission requests wait for the host's decision.
    ask: bool,
    /// The permission requests waiting for the host's decision, by key: the
    /// request's JSON-RPC id and the agent's options.
    waiting: std::collections::BTreeMap<String, Waiting>,
    /// History may be replayed: the turn resumes a session, or the turn is
    /// not known (a log read on its own).
    may_replay: bool,
    session_id: Option<String>,
    session_answered: bool,
    prompt_sent: bool,
    stopping: bool,
    /// The agent is replaying the loaded session's history.
    replaying: bool,
    /// This turn's own output has begun.
    live: bool,
    done: bool,
    /// The assistant chunks of the message being streamed.
    run: String,
    /// The last of them.
    last_chunk: String,
    /// The assistant text since the last tool event; with `run`, the final
    /// message so far.
    reply: String,
    calls: ToolCalls,
    announced: std::collections::BTreeMap<String, Announced>,
    tally: Tally,
    /// Why the turn failed, once it did.
    failure: Option<String>,
}

impl AcpParser {
    /// The parser for `turn`.
    pub fn new(turn: &Turn) -> Self {
        let known = !turn.brief.is_empty() || turn.session_id.is_some();
        Self {
            harness: turn.harness.clone(),
            workdir: turn.workdir.clone(),
            brief: turn.brief.clone(),
            resume: turn.session_id.clone(),
            model: turn.model.clone(),
            permissions: turn.permissions.clone(),
            ask: turn.ask,
            may_replay: turn.session_id.is_some() || !known,
            replaying: turn.session_id.is_some(),
            ..Self::default()
        }
    }

    fn line(&mut self, line: &str, fed: &mut Fed) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let Ok(value) = Value::parse(line) else {
            fed.events.push(Event::Skipped {
                reason: SkipReason::NotJson,
                kind: None,
            });
            return;
        };
        match rpc::classify(&value) {
            Incoming::Request { id, method, params } => self.request(id, method, params, fed),
            Incoming::Notification {
                method: "session/update",
                params: Some(params),
            } => self.update(params, &mut fed.events),
            Incoming::Notification { method, .. } => fed.events.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some(method.to_owned()),
            }),
            Incoming::Response { request, answer } => self.response(request, answer, fed),
            Incoming::Other => fed.events.push(cinch_driver_sdk::unknown(&value)),
        }
    }

    /// A request of the agent: permission requests are answered by the
    /// turn's policy, anything else (files, terminals: the driver offered
    /// neither) is refused.
    fn request(&mut self, id: &Value, method: &str, params: Option<&Value>, fed: &mut Fed) {
        if method != "session/request_permission" {
            let message = format!("Method not found: {method}");
            fed.replies
                .push(rpc::refuse(id, rpc::METHOD_NOT_FOUND, &message));
            fed.events.push(Event::Other(format!("request {method}")));
            return;
        }
        self.live_output();
        self.end_run(&mut fed.events);
        let tool = params.and_then(|params| params.get("toolCall"));
        let names = tool.map(tool_names).unwrap_or_default();
        if let Some(tool) = tool {
            self.start_tool(tool, &mut fed.events);
        }
        let options = params
            .and_then(|params| params.get("options"))
            .and_then(Value::as_array)
            .unwrap_or_default();
        if self.ask {
            let request = permission_request(id, tool, options);
            self.waiting.insert(
                request.key.clone(),
                Waiting {
                    id: rpc::echo(id),
                    allow: choose(options, true),
                    reject: choose(options, false),
                },
            );
            fed.events.push(Event::PermissionRequest(request));
            return;
        }
        let allowed = self
            .permissions
            .allows(&names.iter().map(String::as_str).collect::<Vec<_>>());
        fed.replies.push(permission_answer(id, options, allowed));
        let tool = names
            .into_iter()
            .rev()
            .find(|name| !name.is_empty())
            .unwrap_or_else(|| "a tool".to_owned());
        fed.events
            .push(Event::Permission(PermissionAnswer { tool, allowed }));
    }

    fn update(&mut self, params: &Value, out: &mut Vec<Event>) {
        let Some(update) = params.get("update") else {
            out.push(cinch_driver_sdk::unknown(params));
            return;
        };
        let kind = path::str_at(update, &["sessionUpdate"]).unwrap_or_default();
        if kind == "user_message_chunk" {
            // Only a loaded session's history holds the user's messages: a
            // live turn never echoes its prompt.
            if self.may_replay && !self.live {
                self.replaying = true;
            }
            out.push(Event::Other(kind.to_owned()));
            return;
        }
        let history = matches!(
            kind,
            "agent_message_chunk"
                | "agent_thought_chunk"
                | "tool_call"
                | "tool_call_update"
                | "plan"
        );
        if self.replaying {
            if history {
                out.push(Event::Other("replay".into()));
                return;
            }
            // Gemini replays part of the history after its answer to
            // `session/load` and then announces its commands.
            if self.session_answered {
                self.replaying = false;
            }
        }
        match kind {
            "agent_message_chunk" => self.message_chunk(update, out),
            "agent_thought_chunk" => {
                self.live_output();
                match path::string_at(update, &["content", "text"]) {
                    Some(thought) => out.push(Event::Thinking(thought)),
                    None => out.push(Event::Other(kind.to_owned())),
                }
            }
            "tool_call" => {
                self.live_output();
                self.end_run(out);
                self.tool_call(update, out);
            }
            "tool_call_update" => {
                self.live_output();
                self.end_run(out);
                self.tool_update(update, out);
            }
            "plan" => {
                self.live_output();
                self.end_run(out);
                let entries = update
                    .get("entries")
                    .and_then(Value::as_array)
                    .unwrap_or_default()
                    .iter()
                    .map(|entry| PlanEntry {
                        content: path::string_at(entry, &["content"]).unwrap_or_default(),
                        status: path::string_at(entry, &["status"]).unwrap_or_default(),
                    })
                    .collect();
                out.push(Event::Plan(entries));
            }
            "usage_update" => {
                if path::str_at(update, &["cost", "currency"]) == Some("USD") {
                    self.tally.cost_usd = path::f64_at(update, &["cost", "amount"]);
                }
                out.push(Event::Other(kind.to_owned()));
            }
            "available_commands_update"
            | "current_mode_update"
            | "config_option_update"
            | "session_info_update" => out.push(Event::Other(kind.to_owned())),
            _ => out.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind: Some(kind.to_owned()).filter(|kind| !kind.is_empty()),
            }),
        }
    }

    fn message_chunk(&mut self, update: &Value, out: &mut Vec<Event>) {
        self.live_output();
        if let Some(usage) = update.get("_meta").and_then(|meta| meta.get("usage")) {
            let add = |sum: Option<u64>, key: &str| match path::u64_at(usage, &[key]) {
                Some(n) => Some(sum.unwrap_or(0) + n),
                None => sum,
            };
            let sum = self.tally.chunks.unwrap_or_default();
            self.tally.chunks = Some(Usage {
                input_tokens: add(sum.input_tokens, "inputTokens"),
                output_tokens: add(sum.output_tokens, "outputTokens"),
                cached_input_tokens: add(sum.cached_input_tokens, "cachedReadTokens"),
                cost_usd: None,
            });
        }
        match path::str_at(update, &["content", "text"]).filter(|text| !text.is_empty()) {
            Some(text) => {
                self.run.push_str(text);
                text.clone_into(&mut self.last_chunk);
                out.push(Event::AssistantDelta(text.to_owned()));
            }
            None => out.push(Event::Other("agent_message_chunk".into())),
        }
    }

    fn tool_call(&mut self, update: &Value, out: &mut Vec<Event>) {
        let Some(id) = path::string_at(update, &["toolCallId"]) else {
            out.push(Event::Other("tool_call".into()));
            return;
        };
        let status = path::str_at(update, &["status"]);
        let has_input = update.get("rawInput").and_then(path::tool_detail).is_some();
        if status == Some("pending") && !has_input && !self.calls.is_open(&id) {
            let call = describe(update, None);
            self.announced.insert(
                id,
                Announced {
                    name: call.name,
                    detail: call.detail,
                },
            );
            out.push(Event::Other("tool_call".into()));
            return;
        }
        self.start_tool(update, out);
        self.tool_status(&id, update, status, out);
    }

    fn tool_update(&mut self, update: &Value, out: &mut Vec<Event>) {
        let Some(id) = path::string_at(update, &["toolCallId"]) else {
            out.push(Event::Other("tool_call_update".into()));
            return;
        };
        let status = path::str_at(update, &["status"]);
        if !matches!(status, Some("completed" | "failed")) {
            if self.announced.contains_key(&id) || !self.calls.is_open(&id) {
                self.start_tool(update, out);
            } else {
                out.push(Event::Other("tool_call_update".into()));
            }
            return;
        }
        self.tool_status(&id, update, status, out);
    }

    /// Ends the call `id` when `status` says it ended.
    fn tool_status(
        &mut self,
        id: &str,
        update: &Value,
        status: Option<&str>,
        out: &mut Vec<Event>,
    ) {
        let phase = match status {
            Some("completed") => ToolPhase::Completed,
            Some("failed") => ToolPhase::Failed,
            _ => return,
        };
        let earlier = self.announced.remove(id);
        let stated = describe(update, earlier.as_ref());
        self.calls
            .finish(Some(id.to_owned()), Some(stated), phase, out);
        self.reply.clear();
    }

    /// Starts the call a `tool_call`, update or permission request names,
    /// unless it has started already.
    fn start_tool(&mut self, tool: &Value, out: &mut Vec<Event>) {
        let Some(id) = path::string_at(tool, &["toolCallId"]) else {
            return;
        };
        if self.calls.is_open(&id) {
            return;
        }
        let earlier = self.announced.remove(&id);
        let call = describe(tool, earlier.as_ref());
        self.calls.start(Some(id), call, out);
        self.reply.clear();
    }

    fn response(
        &mut self,
        request: Option<Request>,
        answer: Result<&Value, &Value>,
        fed: &mut Fed,
    ) {
        let Some(request) = request else {
            fed.events.push(Event::Other("response".into()));
            return;
        };
        match (request, answer) {
            (Request::Initialize, Ok(_)) => fed.events.push(Event::Other("initialize".into())),
            (Request::Session, Ok(result)) => self.session_answer(result, fed),
            (Request::Prompt, Ok(result)) => {
                let reason = StopReason::of(path::str_at(result, &["stopReason"]));
                self.tally.answer = answer_usage(result);
                if let Some(error) = reason.error() {
                    self.fail(error.to_owned(), &mut fed.events);
                } else if let Some(error) =
                    profiles::failure_notice(&self.harness, &self.last_chunk)
                {
                    let error = error.to_owned();
                    self.fail(error, &mut fed.events);
                }
                self.end_turn(&mut fed.events);
            }
            (request, Err(error)) => {
                let said = rpc::describe_error(error);
                let error = match request {
                    Request::Initialize => format!("the agent refused to initialize: {said}"),
                    Request::Session if self.resume.is_some() => {
                        format!("the agent could not load the session: {said}")
                    }
                    Request::Session => format!("the agent could not start a session: {said}"),
                    Request::Prompt => said,
                };
                self.fail(error, &mut fed.events);
                self.end_turn(&mut fed.events);
            }
        }
    }

    /// The answer to `session/new` or `session/load`: the session is known,
    /// so the brief goes out.
    fn session_answer(&mut self, result: &Value, fed: &mut Fed) {
        self.session_answered = true;
        self.replaying = false;
        let session_id = path::string_at(result, &["sessionId"]).or_else(|| self.resume.clone());
        let Some(session_id) = session_id else {
            let error = "the agent's answer to session/new named no session".to_owned();
            self.fail(error, &mut fed.events);
            self.end_turn(&mut fed.events);
            return;
        };
        self.session_id = Some(session_id.clone());
        fed.events.push(Event::Started {
            model: self.model.clone().or_else(|| session_model(result)),
            session_id: Some(session_id.clone()),
        });
        if !self.stopping && !self.prompt_sent {
            self.prompt_sent = true;
            let prompt = json!({
                "sessionId": session_id,
                "prompt": [{"type": "text", "text": self.brief}],
            });
            fed.replies
                .push(rpc::request(Request::Prompt, "session/prompt", prompt));
        }
    }

    fn live_output(&mut self) {
        if !self.replaying {
            self.live = true;
        }
    }

    /// A run of chunks has ended: it was one whole message.
    fn end_run(&mut self, out: &mut Vec<Event>) {
        if !self.run.is_empty() {
            self.reply.push_str(&self.run);
            out.push(Event::AssistantMessage(std::mem::take(&mut self.run)));
        }
    }

    /// The turn's answer has come: what is still open is closed.
    fn end_turn(&mut self, out: &mut Vec<Event>) {
        self.end_run(out);
        for (id, announced) in std::mem::take(&mut self.announced) {
            let call = Call {
                name: announced.name,
                detail: announced.detail,
            };
            self.calls
                .finish(Some(id), Some(call), ToolPhase::Failed, out);
        }
        self.calls.finish_all(ToolPhase::Failed, out);
        if let Some(usage) = self.tally.usage() {
            out.push(Event::Usage(usage));
        }
        self.done = true;
    }

    /// The turn failed; the first reason stands.
    fn fail(&mut self, error: String, out: &mut Vec<Event>) {
        out.push(Event::Error(error.clone()));
        self.failure.get_or_insert(error);
    }
}

impl Parser for AcpParser {
    fn event(&mut self, value: &Value, out: &mut Vec<Event>) {
        // Reached only through `Parser::line`; `feed` reads lines itself.
        out.push(cinch_driver_sdk::unknown(value));
    }

    fn opening(&mut self) -> Vec<String> {
        let initialize = json!({
            "protocolVersion": rpc::PROTOCOL_VERSION,
            "clientCapabilities": {
                "fs": {"readTextFile": false, "writeTextFile": false},
                "terminal": false,
            },
            "clientInfo": {"name": "cinch", "version": env!("CARGO_PKG_VERSION")},
        });
        let session = match &self.resume {
            Some(id) => rpc::request(
                Request::Session,
                "session/load",
                json!({"sessionId": id, "cwd": self.workdir, "mcpServers": []}),
            ),
            None => rpc::request(
                Request::Session,
                "session/new",
                json!({"cwd": self.workdir, "mcpServers": []}),
            ),
        };
        vec![
            rpc::request(Request::Initialize, "initialize", initialize),
            session,
        ]
    }

    fn feed(&mut self, lines: &[String]) -> Fed {
        let mut fed = Fed::default();
        for line in lines {
            self.line(line, &mut fed);
        }
        fed.done = self.done;
        fed
    }

    fn decide(&mut self, key: &str, allow: bool, _message: Option<&str>) -> Vec<String> {
        // ACP's answer carries no note: the decision's message reaches the
        // agent only through the conversation's record.
        match self.waiting.remove(key) {
            Some(waiting) => {
                let option = if allow { waiting.allow } else { waiting.reject };
                vec![rpc::answer_echoed(waiting.id, outcome(option))]
            }
            None => Vec::new(),
        }
    }

    fn stop(&mut self) -> Vec<String> {
        self.stopping = true;
        match &self.session_id {
            Some(id) if self.prompt_sent && !self.done => {
                vec![rpc::notification(
                    "session/cancel",
                    json!({"sessionId": id}),
                )]
            }
            _ => Vec::new(),
        }
    }

    fn finish(&mut self, exit_code: Option<i32>, stderr_tail: &str) -> Outcome {
        let error = self.failure.clone().or_else(|| {
            (!self.done).then(|| {
                let why = text::stderr_error(stderr_tail, &[])
                    .unwrap_or_else(|| text::exit_text(exit_code));
                format!("the agent ended without answering the prompt: {why}")
            })
        });
        let reply = [self.reply.as_str(), self.run.as_str()].concat();
        Outcome {
            final_message: Some(reply).filter(|reply| !reply.trim().is_empty()),
            session_id: self.session_id.clone(),
            is_error: error.is_some(),
            error,
            usage: self.tally.usage(),
        }
    }
}

/// The tool a `tool_call`, update or permission request describes, over what
/// an earlier announcement said.
fn describe(tool: &Value, earlier: Option<&Announced>) -> Call {
    let name = path::string_at(tool, &["_meta", "claudeCode", "toolName"])
        .or_else(|| path::string_at(tool, &["_meta", "toolName"]))
        .or_else(|| path::string_at(tool, &["kind"]))
        .or_else(|| earlier.map(|earlier| earlier.name.clone()))
        .unwrap_or_else(|| "tool".to_owned());
    let detail = tool
        .get("rawInput")
        .and_then(path::tool_detail)
        .or_else(|| path::string_at(tool, &["title"]))
        .or_else(|| earlier.and_then(|earlier| earlier.detail.clone()));
    Call { name, detail }
}

/// The names a permission policy matches a tool by: its kind, its title and
/// what it runs or touches.
fn tool_names(tool: &Value) -> Vec<String> {
    let call = describe(tool, None);
    [
        path::string_at(tool, &["kind"]),
        Some(call.name),
        path::string_at(tool, &["title"]),
        call.detail,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// The answer to the permission request `id`: the option that allows or
/// rejects, or `cancelled` when the agent offered none that does.
fn permission_answer(id: &Value, options: &[Value], allowed: bool) -> String {
    rpc::answer(id, outcome(choose(options, allowed)))
}

/// A permission answer's result: the option chosen, or `cancelled`.
fn outcome(option: Option<String>) -> cinch_driver_sdk::serde_json::Value {
    let outcome = match option {
        Some(option) => json!({"outcome": "selected", "optionId": option}),
        None => json!({"outcome": "cancelled"}),
    };
    json!({ "outcome": outcome })
}

/// The permission request `id` for the host to decide: keyed by its id as
/// JSON (the same when the log is read again), its tool described.
fn permission_request(id: &Value, tool: Option<&Value>, options: &[Value]) -> PermissionRequest {
    let call = tool.map(|tool| describe(tool, None));
    let acp_kind = tool.and_then(|tool| path::str_at(tool, &["kind"]));
    let name = call
        .as_ref()
        .map(|call| call.name.clone())
        .unwrap_or_else(|| "tool".to_owned());
    let kind = tool_kind(&name, acp_kind);
    let stated_title = tool.and_then(|tool| path::string_at(tool, &["title"]));
    // A shell tool's title is its command when the request gives no input.
    let input = tool
        .and_then(|tool| tool.get("rawInput"))
        .and_then(|raw| wrapped_script(raw).or_else(|| path::tool_detail(raw)))
        .or_else(|| stated_title.clone().filter(|_| kind == "shell"));
    let title = stated_title
        .or_else(|| input.clone())
        .unwrap_or_else(|| name.clone());
    PermissionRequest {
        key: rpc::echo(id).to_string(),
        kind: kind.to_owned(),
        tool: name,
        title,
        input,
        options: options
            .iter()
            .map(|option| PermissionOption {
                id: path::string_at(option, &["optionId"]).unwrap_or_default(),
                name: path::string_at(option, &["name"]).unwrap_or_default(),
                kind: path::string_at(option, &["kind"]).unwrap_or_default(),
            })
            .collect(),
    }
}

/// The script of a command given as a shell running it (codex-acp's
/// `["/bin/bash", "-lc", "echo hi"]` is `echo hi`): what the agent wants run,
/// which a rule such as `shell(echo *)` is written against.
fn wrapped_script(raw_input: &Value) -> Option<String> {
    let Value::Array(argv) = raw_input.get("command")? else {
        return None;
    };
    let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
    let [shell, flag, script] = words.as_slice() else {
        return None;
    };
    let shell = shell.rsplit('/').next().unwrap_or(shell);
    let is_shell = matches!(shell, "sh" | "bash" | "zsh" | "dash");
    let runs_script = flag.len() > 1 && flag.starts_with('-') && flag.ends_with('c');
    (is_shell && runs_script && !script.trim().is_empty()).then(|| (*script).to_owned())
}

/// The approval kind of a tool from its name and ACP's `kind`.
fn tool_kind(name: &str, acp_kind: Option<&str>) -> &'static str {
    if name.starts_with("mcp__") {
        return "mcp";
    }
    match acp_kind {
        Some("execute") => "shell",
        Some("edit" | "delete" | "move") => "edit",
        Some("read" | "search") => "read",
        Some("fetch") => "fetch",
        _ => "other",
    }
}

/// The option that answers a permission request: allowing once (else
/// always), or rejecting once (else always).
fn choose(options: &[Value], allowed: bool) -> Option<String> {
    let kinds: &[&str] = if allowed {
        &["allow_once", "allow_always"]
    } else {
        &["reject_once", "reject_always"]
    };
    kinds.iter().find_map(|kind| {
        options
            .iter()
            .find(|option| path::str_at(option, &["kind"]) == Some(kind))
            .and_then(|option| path::string_at(option, &["optionId"]))
    })
}

/// The model a session's answer names as current.
fn session_model(result: &Value) -> Option<String> {
    path::string_at(result, &["models", "currentModelId"]).or_else(|| {
        result
            .get("configOptions")
            .and_then(Value::as_array)?
            .iter()
            .find(|option| path::str_at(option, &["id"]) == Some("model"))
            .and_then(|option| path::string_at(option, &["currentValue"]))
    })
}

/// The token counts of the prompt's answer: `usage` (opencode, claude) or
/// gemini's `_meta.quota.token_count`.
fn answer_usage(result: &Value) -> Option<Usage> {
    if let Some(usage) = result.get("usage").filter(|usage| usage.is_object()) {
        return Some(Usage {
            input_tokens: path::u64_at(usage, &["inputTokens"]),
            output_tokens: path::u64_at(usage, &["outputTokens"]),
            cached_input_tokens: path::u64_at(usage, &["cachedReadTokens"]),
            cost_usd: None,
        });
    }
    let count = path::at(result, &["_meta", "quota", "token_count"])?;
    Some(Usage {
        input_tokens: path::u64_at(count, &["input_tokens"]),
        output_tokens: path::u64_at(count, &["output_tokens"]),
        cached_input_tokens: None,
        cost_usd: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_driver_sdk::serde_json::{self, Value as Json};

    fn turn(session_id: Option<&str>, deny: &[&str]) -> Turn {
        Turn {
            workdir: "/repo".into(),
            brief: "Do it".into(),
            harness: "qwen".into(),
            session_id: session_id.map(str::to_owned),
            permissions: PermissionPolicy {
                default_allow: true,
                deny_tools: deny.iter().map(|d| (*d).to_owned()).collect(),
            },
            ..Turn::default()
        }
    }

    fn json(line: &str) -> Json {
        serde_json::from_str(line).unwrap()
    }

    fn feed(parser: &mut AcpParser, line: &str) -> Fed {
        parser.feed(&[line.to_owned()])
    }

    const PERMISSION: &str = r#"{"jsonrpc":"2.0","id":ID,"method":"session/request_permission","params":{"sessionId":"s","options":[{"optionId":"always","kind":"allow_always"},{"optionId":"once","kind":"allow_once"},{"optionId":"no","kind":"reject_once"}],"toolCall":{"toolCallId":"t1","kind":"execute","title":"rm -rf build","rawInput":{"command":"rm -rf build"}}}}"#;

    #[test]
    fn the_prompt_waits_for_the_session_and_a_load_resumes() {
        let mut parser = AcpParser::new(&turn(Some("old"), &[]));
        let opening = parser.opening();
        assert_eq!(json(&opening[0])["method"], "initialize");
        assert_eq!(json(&opening[1])["method"], "session/load");
        assert_eq!(json(&opening[1])["params"]["sessionId"], "old");
        assert!(
            feed(&mut parser, r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
                .replies
                .is_empty()
        );
        let fed = feed(&mut parser, r#"{"jsonrpc":"2.0","id":2,"result":{}}"#);
        let prompt = json(&fed.replies[0]);
        assert_eq!(prompt["method"], "session/prompt");
        assert_eq!(prompt["id"], 3);
        assert_eq!(prompt["params"]["sessionId"], "old");
        assert_eq!(prompt["params"]["prompt"][0]["text"], "Do it");
        assert!(!fed.done);
        let fed = feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
        );
        assert!(fed.done);
        assert!(!parser.finish(None, "").is_error);
    }

    #[test]
    fn permissions_follow_the_policy_and_echo_the_id() {
        for (id, deny, option) in [("0", &[][..], "once"), (r#""a-b""#, &["RM "][..], "no")] {
            let mut parser = AcpParser::new(&turn(None, deny));
            let fed = feed(&mut parser, &PERMISSION.replace("ID", id));
            let reply = json(&fed.replies[0]);
            assert_eq!(reply["id"], json(id));
            assert_eq!(reply["result"]["outcome"]["optionId"], option);
            assert!(fed.events.contains(&Event::Permission(PermissionAnswer {
                tool: "rm -rf build".into(),
                allowed: deny.is_empty(),
            })));
        }
    }

    #[test]
    fn an_asking_turn_reports_the_request_and_answers_the_decision_once() {
        let mut parser = AcpParser::new(&Turn {
            ask: true,
            ..turn(None, &["rm"])
        });
        let fed = feed(&mut parser, &PERMISSION.replace("ID", r#""p-1""#));
        assert!(
            fed.replies.is_empty(),
            "nothing answered before the decision"
        );
        let request = fed
            .events
            .iter()
            .find_map(|event| match event {
                Event::PermissionRequest(request) => Some(request.clone()),
                _ => None,
            })
            .expect("a permission request");
        assert_eq!(request.key, r#""p-1""#);
        assert_eq!(request.kind, "shell");
        assert_eq!(request.input.as_deref(), Some("rm -rf build"));
        assert_eq!(request.options.len(), 3);
        let lines = parser.decide(&request.key, false, None);
        let reply = json(&lines[0]);
        assert_eq!(reply["id"], "p-1");
        assert_eq!(reply["result"]["outcome"]["optionId"], "no");
        assert!(parser.decide(&request.key, true, None).is_empty(), "once");
        let mut parser = AcpParser::new(&Turn {
            ask: true,
            ..turn(None, &[])
        });
        feed(&mut parser, &PERMISSION.replace("ID", "4"));
        let reply = json(&parser.decide("4", true, Some("go"))[0]);
        assert_eq!(reply["result"]["outcome"]["optionId"], "once");
    }

    #[test]
    fn a_command_run_through_a_shell_is_asked_about_as_its_script() {
        let mut parser = AcpParser::new(&Turn {
            ask: true,
            ..turn(None, &[])
        });
        // As codex-acp asks: the command as argv, a shell running the script.
        let codex = PERMISSION.replace("ID", r#""u-1""#).replace(
            r#""rawInput":{"command":"rm -rf build"}"#,
            r#""rawInput":{"command":["/bin/bash","-lc","rm -rf build"],"cwd":"/repo"}"#,
        );
        let fed = feed(&mut parser, &codex);
        let request = fed
            .events
            .iter()
            .find_map(|event| match event {
                Event::PermissionRequest(request) => Some(request.clone()),
                _ => None,
            })
            .expect("a permission request");
        assert_eq!(request.input.as_deref(), Some("rm -rf build"));
        // An argv that is not a shell running a script stays whole.
        let argv = Value::parse(r#"{"command":["git","-c","x=y"]}"#).unwrap();
        assert_eq!(wrapped_script(&argv), None);
    }

    #[test]
    fn other_requests_are_refused_and_stop_cancels_the_prompt() {
        let mut parser = AcpParser::new(&turn(None, &[]));
        assert!(
            parser.stop().is_empty(),
            "nothing to cancel before the prompt"
        );
        let fed = feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}"#,
        );
        assert!(fed.replies.is_empty(), "a stopped turn sends no prompt");
        let mut parser = AcpParser::new(&turn(None, &[]));
        let fed = feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{}}"#,
        );
        assert_eq!(json(&fed.replies[0])["error"]["code"], -32601);
        feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s9"}}"#,
        );
        let cancel = json(&parser.stop()[0]);
        assert_eq!(cancel["method"], "session/cancel");
        assert_eq!(cancel["params"]["sessionId"], "s9");
        assert!(cancel.get("id").is_none());
    }

    #[test]
    fn a_tool_left_open_is_closed_as_failed_when_the_turn_ends() {
        let mut parser = AcpParser::new(&turn(None, &[]));
        feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}"#,
        );
        let call = r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"t","status":"in_progress","kind":"execute","rawInput":{"command":"sleep 30"}}}}"#;
        feed(&mut parser, call);
        let fed = feed(
            &mut parser,
            r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"cancelled"}}"#,
        );
        assert!(fed.events.iter().any(|event| matches!(
            event,
            Event::ToolUse(tool) if tool.phase == ToolPhase::Failed && tool.detail.as_deref() == Some("sleep 30")
        )));
        let outcome = parser.finish(None, "");
        assert_eq!(outcome.error.as_deref(), Some("cancelled"));
    }

    /// Copilot CLI's notice of a failure, its last chunk, fails a turn it
    /// ended with `end_turn`; the same words from another agent, or before
    /// the model's answer, do not.
    #[test]
    fn copilots_error_notice_fails_its_turn() {
        let chunk = |text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"agent_message_chunk","content":{{"type":"text","text":"{text}"}}}}}}}}"#
            )
        };
        let run = |harness: &str, chunks: &[&str]| {
            let mut parser = AcpParser::new(&Turn {
                harness: harness.into(),
                ..turn(None, &[])
            });
            feed(
                &mut parser,
                r#"{"jsonrpc":"2.0","id":2,"result":{"sessionId":"s"}}"#,
            );
            for text in chunks {
                feed(&mut parser, &chunk(text));
            }
            feed(
                &mut parser,
                r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
            );
            parser.finish(Some(0), "")
        };
        let refused = [
            "Info: Retrying...",
            "Error: Authentication failed (HTTP 401).",
        ];
        let outcome = run("copilot", &refused);
        assert!(outcome.is_error);
        assert_eq!(
            outcome.error.as_deref(),
            Some("Authentication failed (HTTP 401).")
        );
        assert!(!run("kilo", &refused).is_error);
        let answered = run("copilot", &["Error: 401 at first", ", then do", "ne"]);
        assert!(!answered.is_error);
        assert_eq!(
            answered.final_message.as_deref(),
            Some("Error: 401 at first, then done")
        );
    }
}
