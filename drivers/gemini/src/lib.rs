//! Gemini CLI (`gemini --output-format stream-json`).
//!
//! Events: `init` (the session id, on that line only, and the model),
//! `message` (the user's echo; the assistant's text in `delta` pieces),
//! `tool_use` / `tool_result` paired by `tool_id`, `error` (a warning, or an
//! error that fails the turn) and `result` (status and token counts, but no
//! text). The final message is the assistant text after the last tool
//! result. On an API error gemini exits with the HTTP status mod 256.

use cinch_driver_sdk::calls::{Call, ToolCalls};
use cinch_driver_sdk::{
    BriefDelivery, Command, Driver, Event, Info, LoginProbe, Outcome, Parser, ResumeScope,
    ToolPhase, Turn, Usage, export_driver, json, loose, text,
};
use serde::Deserialize;

/// Lines gemini prints on most runs; they never explain a failure.
const NOISE: &[&str] = &[
    "YOLO mode is enabled",
    "Approval mode overridden",
    "Warning: Basic terminal detected",
    "Warning: 256-color support not detected",
    "Ripgrep is not available",
    "[STARTUP]",
    "Loaded cached credentials",
];

/// The Gemini CLI driver.
pub struct Gemini;

/// The models `gemini --model` takes (0.61.0): its aliases (`auto`, its
/// default, routes each request), then the ids it knows and the 2.5
/// models the API still serves.
const MODELS: [&str; 18] = [
    "auto",
    "pro",
    "flash",
    "flash-lite",
    "gemini-3.1-pro-preview",
    "gemini-3-pro-preview",
    "gemini-3-flash-preview",
    "gemini-3.8-flash",
    "gemini-3.5-flash",
    "gemini-3-flash",
    "gemini-3.5-flash-lite",
    "gemini-3.1-flash-lite",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "gemini-2.5-flash-lite",
    "gemma-4-31b-it",
    "gemma-4-26b-a4b-it",
    "gemini-3.1-pro-preview-customtools",
];

/// Reads one Gemini CLI turn.
#[derive(Default)]
pub struct GeminiParser {
    started: bool,
    session_id: Option<String>,
    /// The assistant deltas of the message being streamed.
    run: String,
    /// The whole assistant messages since the last tool result; with `run`,
    /// the final message so far.
    reply: String,
    calls: ToolCalls,
    usage: Option<Usage>,
    /// Set when the turn failed; the text is empty when gemini gave none.
    failure: Option<String>,
}

impl Driver for Gemini {
    type Parser = GeminiParser;

    fn info() -> Info {
        Info {
            name: "gemini".into(),
            display_name: "Gemini CLI".into(),
            program: "gemini".into(),
            version_args: vec!["--version".into()],
            state_dir: Some(".gemini".into()),
            // .gemini/settings.json holds the user's choice of auth: it stays.
            managed_config: vec![],
            secret_env: vec!["GEMINI_API_KEY".into(), "GOOGLE_API_KEY".into()],
            login_files: vec![
                LoginProbe {
                    path: ".gemini/oauth_creds.json".into(),
                    account_pointer: None,
                },
                LoginProbe {
                    path: ".gemini/google_accounts.json".into(),
                    account_pointer: Some("/active".into()),
                },
            ],
            models: MODELS.map(String::from).to_vec(),
            default_model: Some(MODELS[0].into()),
            efforts: vec![],
            default_effort: None,
            brief: BriefDelivery::Stdin,
            resume: ResumeScope::SameDirectory,
            harnesses: vec![],
        }
    }

    fn command(turn: &Turn) -> Command {
        // Without -p, gemini takes a piped stdin as the prompt and runs
        // non-interactively.
        let mut args = ["--output-format", "stream-json", "--yolo"]
            .map(String::from)
            .to_vec();
        if let Some(model) = &turn.model {
            args.extend(["-m".to_owned(), model.clone()]);
        }
        if let Some(session_id) = &turn.session_id {
            args.extend(["--resume".to_owned(), session_id.clone()]);
        }
        Command {
            args,
            // Headless gemini refuses to run in a folder it does not trust.
            set_env: vec![("GEMINI_CLI_TRUST_WORKSPACE".into(), "true".into())],
            remove_env: vec![],
            brief: BriefDelivery::Stdin,
        }
    }
}

/// The fields of a line the parser reads; the rest is skipped unread.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: loose::Str<'a>,
    #[serde(borrow)]
    role: loose::Str<'a>,
    delta: loose::Bool,
    #[serde(borrow)]
    content: loose::Str<'a>,
    #[serde(borrow)]
    session_id: loose::Str<'a>,
    #[serde(borrow)]
    model: loose::Str<'a>,
    #[serde(borrow)]
    tool_name: loose::Str<'a>,
    #[serde(borrow)]
    tool_id: loose::Str<'a>,
    #[serde(borrow)]
    parameters: loose::Member<'a>,
    #[serde(borrow)]
    status: loose::Str<'a>,
    #[serde(borrow)]
    message: loose::Str<'a>,
    #[serde(borrow)]
    severity: loose::Str<'a>,
    #[serde(borrow)]
    error: loose::Obj<ErrorBody<'a>>,
    stats: loose::Obj<Stats>,
}

/// A failed result's `error`.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ErrorBody<'a> {
    #[serde(borrow)]
    message: loose::Str<'a>,
}

/// A result's token counts.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Stats {
    input_tokens: loose::U64,
    output_tokens: loose::U64,
    cached: loose::U64,
}

impl Parser for GeminiParser {
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
                .or_else(|| http_error(exit_code?))
                .or_else(|| text::stderr_error(stderr_tail, NOISE))
                .unwrap_or_else(|| text::exit_text(exit_code))
        });
        // A message still streaming when gemini stopped counts too.
        let reply = [self.reply.as_str(), self.run.as_str()].concat();
        Outcome {
            final_message: Some(reply).filter(|reply| !reply.trim().is_empty()),
            session_id: self.session_id.clone(),
            is_error,
            error,
            usage: self.usage,
        }
    }
}

impl GeminiParser {
    fn read(&mut self, line: &Line, out: &mut Vec<Event>) {
        let kind = line.kind.get().unwrap_or_default();
        let role = line.role.get();
        if kind == "message" && role == Some("assistant") && line.delta.0 {
            if let Some(text) = line.content.get().filter(|text| !text.is_empty()) {
                self.run.push_str(text);
                out.push(Event::AssistantDelta(text.to_owned()));
            }
            return;
        }
        // Anything else ends the message being streamed.
        self.end_run(out);
        match kind {
            "init" => self.init(line, out),
            "message" if role == Some("assistant") => {
                // A whole message, as quiet builds print it.
                match line.content.non_empty() {
                    Some(text) => {
                        self.reply.push_str(&text);
                        out.push(Event::AssistantMessage(text));
                    }
                    None => out.push(Event::Other(kind.to_owned())),
                }
            }
            "message" if role == Some("user") => out.push(Event::Other("user-message".into())),
            "message" => out.push(Event::Other(kind.to_owned())),
            "tool_use" => {
                let call = Call {
                    name: line.tool_name.non_empty().unwrap_or_else(|| "tool".into()),
                    detail: line.parameters.get().and_then(json::tool_detail),
                };
                self.calls.start(line.tool_id.non_empty(), call, out);
            }
            "tool_result" => {
                let phase = match line.status.get() {
                    Some("success") => ToolPhase::Completed,
                    _ => ToolPhase::Failed,
                };
                self.calls
                    .finish(line.tool_id.non_empty(), None, phase, out);
                // Only what the assistant says after its last tool result
                // is its final message.
                self.reply.clear();
            }
            "error" => {
                let message = line.message.non_empty();
                match (line.severity.get(), message) {
                    (Some("warning"), Some(message)) => out.push(Event::Warning(message)),
                    (Some("warning"), None) => out.push(Event::Other(kind.to_owned())),
                    (_, message) => self.fail(message, out),
                }
            }
            "result" => self.result(line, out),
            _ => out.push(loose::unknown(line.kind.get())),
        }
    }

    /// A run of deltas has ended: it was one whole message.
    fn end_run(&mut self, out: &mut Vec<Event>) {
        if !self.run.is_empty() {
            self.reply.push_str(&self.run);
            out.push(Event::AssistantMessage(std::mem::take(&mut self.run)));
        }
    }

    fn init(&mut self, line: &Line, out: &mut Vec<Event>) {
        let session_id = line.session_id.non_empty();
        if let Some(id) = &session_id {
            self.session_id = Some(id.clone());
        }
        if !self.started {
            self.started = true;
            out.push(Event::Started {
                model: line.model.non_empty(),
                session_id,
            });
        } else if let Some(id) = session_id {
            out.push(Event::Session(id));
        } else {
            out.push(Event::Other("init".into()));
        }
    }

    /// The turn failed, with gemini's reason when it gave one. A later
    /// reason replaces an earlier one: the last is closest to the end.
    fn fail(&mut self, message: Option<String>, out: &mut Vec<Event>) {
        if let Some(message) = &message {
            out.push(Event::Error(message.clone()));
        }
        if message.is_some() || self.failure.is_none() {
            self.failure = Some(message.unwrap_or_default());
        }
    }

    fn result(&mut self, line: &Line, out: &mut Vec<Event>) {
        let mut quiet = true;
        if let Some(stats) = line.stats.get() {
            let usage = Usage {
                input_tokens: stats.input_tokens.0,
                output_tokens: stats.output_tokens.0,
                cached_input_tokens: stats.cached.0,
                cost_usd: None,
            };
            self.usage = Some(usage);
            out.push(Event::Usage(usage));
            quiet = false;
        }
        if line.status.get() == Some("error") {
            let message = line.error.get().and_then(|error| error.message.non_empty());
            self.fail(message, out);
            quiet = false;
        }
        if quiet {
            out.push(Event::Other("result".into()));
        }
    }
}

/// HTTP statuses gemini's API errors end with; it exits with the status
/// mod 256 (401 gives 145, 500 gives 244).
const HTTP_STATUSES: &[i32] = &[400, 401, 403, 404, 408, 409, 429, 500, 502, 503, 504];

/// The HTTP error an exit code stands for, if it is one of those.
fn http_error(exit_code: i32) -> Option<String> {
    let status = HTTP_STATUSES
        .iter()
        .find(|status| *status % 256 == exit_code)?;
    Some(format!("HTTP {status} (exit code {exit_code})"))
}

export_driver!(Gemini);

#[cfg(test)]
mod tests;
