//! The contract's data, as plain Rust. These mirror the records of
//! `wit/<version>/driver.wit` one for one; the host and native callers use
//! them directly and the component glue converts them at the boundary.

use serde::Serialize;

/// How the brief reaches the CLI. It never goes on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BriefDelivery {
    /// The host pipes the prompt file to the CLI's standard input.
    Stdin,
    /// The command's arguments name the prompt file; stdin is empty.
    PromptFile,
    /// The host keeps the CLI's stdin open and writes the lines the parser
    /// gives ([`crate::Parser::opening`], [`Fed::replies`],
    /// [`crate::Parser::stop`]); the brief reaches the CLI only through them.
    Conversation,
}

/// Where a harness can resume one of its sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResumeScope {
    /// Only from the directory the session started in.
    SameDirectory,
    /// From any directory.
    Anywhere,
}

/// A login the CLI keeps in a file under HOME.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoginProbe {
    /// Path relative to HOME.
    pub path: String,
    /// JSON pointer to the account's name or email inside the file.
    pub account_pointer: Option<String>,
}

/// A settings file the host writes under HOME before a turn, when no file
/// is there yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HomeFile {
    /// Path relative to HOME.
    pub path: String,
    /// What the file holds.
    pub contents: String,
}

/// A named harness a driver runs besides its own name: another program
/// speaking the same protocol, with its own setup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HarnessProfile {
    /// Short lowercase identifier: `opencode`.
    pub name: String,
    /// Name shown to people: `OpenCode`.
    pub display_name: String,
    /// The program to run, looked up on PATH.
    pub program: String,
    /// Arguments before any the driver's command adds.
    pub args: Vec<String>,
    /// Arguments that make the program print its version.
    pub version_args: Vec<String>,
    /// Environment variables that carry a credential, in order of preference.
    pub secret_env: Vec<String>,
    /// Files under HOME that hold a login.
    pub login_files: Vec<LoginProbe>,
    /// Environment variables set for every turn, as (name, value).
    pub set_env: Vec<(String, String)>,
    /// Settings files written under HOME when missing.
    pub home_files: Vec<HomeFile>,
    /// Model names the harness accepts; empty when any name goes.
    pub models: Vec<String>,
    /// The model used when a turn names none.
    pub default_model: Option<String>,
}

/// What the host needs to know about a harness before any turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Info {
    /// Short lowercase identifier: `claude`.
    pub name: String,
    /// Name shown to people: `Claude Code`.
    pub display_name: String,
    /// The program to run, looked up on PATH.
    pub program: String,
    /// Arguments that make the program print its version.
    pub version_args: Vec<String>,
    /// Where the CLI keeps session state, relative to HOME.
    pub state_dir: Option<String>,
    /// Paths relative to the repository removed before a start.
    pub managed_config: Vec<String>,
    /// Environment variables that carry a credential, in order of preference.
    pub secret_env: Vec<String>,
    /// Files under HOME that hold a login.
    pub login_files: Vec<LoginProbe>,
    /// Model names the harness accepts; empty when any name goes.
    pub models: Vec<String>,
    /// The model used when a turn names none.
    pub default_model: Option<String>,
    /// Effort vocabulary; empty when the harness has no such knob.
    pub efforts: Vec<String>,
    /// The effort used when a turn names none.
    pub default_effort: Option<String>,
    /// How the brief reaches the CLI.
    pub brief: BriefDelivery,
    /// Where a session can be resumed.
    pub resume: ResumeScope,
    /// Named harnesses this driver runs besides its own name.
    pub harnesses: Vec<HarnessProfile>,
}

/// How a conversation driver answers the agent's permission requests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionPolicy {
    /// The answer for a tool that no entry of `deny_tools` matches.
    pub default_allow: bool,
    /// A tool is denied when its kind, title or name contains one of these
    /// (case-insensitive).
    pub deny_tools: Vec<String>,
}

impl Default for PermissionPolicy {
    /// Everything allowed: harnesses run unattended.
    fn default() -> Self {
        Self {
            default_allow: true,
            deny_tools: Vec::new(),
        }
    }
}

impl PermissionPolicy {
    /// Whether a tool described by `names` (its kind, title, name, in any
    /// order) may run.
    pub fn allows(&self, names: &[&str]) -> bool {
        let denied = self.deny_tools.iter().any(|deny| {
            let deny = deny.to_lowercase();
            !deny.is_empty() && names.iter().any(|name| name.to_lowercase().contains(&deny))
        });
        !denied && self.default_allow
    }
}

/// One turn to start.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Turn {
    /// Absolute path of the prompt file holding the brief.
    pub prompt_file: String,
    /// The repository the CLI runs in.
    pub workdir: String,
    /// The model, when the turn names one.
    pub model: Option<String>,
    /// The effort, when the turn names one.
    pub effort: Option<String>,
    /// The harness session to resume.
    pub session_id: Option<String>,
    /// The brief's text, for a driver that sends it in a conversation.
    pub brief: String,
    /// The harness profile's name (the driver's own name when none).
    pub harness: String,
    /// How permission requests are answered.
    pub permissions: PermissionPolicy,
    /// The host decides permission requests: the parser reports each as an
    /// [`Event::PermissionRequest`] and answers it in [`crate::Parser::decide`]
    /// (contract 0.3.0); `permissions` then goes unused.
    pub ask: bool,
    /// With `session_id`: start a new harness session holding that one's
    /// conversation, leaving that one as it was (a fork; contract 0.3.0).
    pub fork: bool,
}

/// How to start the CLI for a turn. The host spawns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Command {
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// Environment variables to set, as (name, value).
    pub set_env: Vec<(String, String)>,
    /// Environment variables to remove.
    pub remove_env: Vec<String>,
    /// How the brief reaches the CLI.
    pub brief: BriefDelivery,
}

/// Token counts and cost, as far as the harness reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Input tokens, as the harness counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Tokens the model wrote.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// Input tokens read from the model's cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cached_input_tokens: Option<u64>,
    /// The cost in US dollars, as the harness reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

/// Where a tool call is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ToolPhase {
    /// The call began.
    Started,
    /// The call ended well.
    Completed,
    /// The call ended in an error.
    Failed,
}

/// A tool call the harness made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ToolUse {
    /// The harness's id for the call, so that started and completed pair up.
    pub id: Option<String>,
    /// The tool's name as the harness calls it.
    pub name: String,
    /// Its command, path, pattern, URL, description or query.
    pub detail: Option<String>,
    /// Where the call is in its life.
    pub phase: ToolPhase,
}

/// Why a line gave no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SkipReason {
    /// The line is not JSON.
    NotJson,
    /// JSON of a shape or type the driver does not know.
    Unknown,
}

/// How the driver answered one permission request of the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionAnswer {
    /// The tool as the request names it.
    pub tool: String,
    /// Whether it may run.
    pub allowed: bool,
}

/// A choice the agent offers with a permission request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionOption {
    /// The agent's id for it.
    pub id: String,
    /// Its label.
    pub name: String,
    /// `allow_once`, `allow_always`, `reject_once`, `reject_always` or the
    /// agent's own word.
    pub kind: String,
}

/// A permission request waiting for the host's decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PermissionRequest {
    /// Names the request for [`crate::Parser::decide`]; stable when the log
    /// is read again.
    pub key: String,
    /// The tool as the agent names it.
    pub tool: String,
    /// `shell`, `edit`, `read`, `fetch`, `mcp` or `other`.
    pub kind: String,
    /// One line saying what the tool would do.
    pub title: String,
    /// The command, path or diff preview.
    pub input: Option<String>,
    /// The choices the agent offers.
    pub options: Vec<PermissionOption>,
}

/// One entry of the agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PlanEntry {
    /// What the step is.
    pub content: String,
    /// `pending`, `in_progress`, `completed` or the agent's own word.
    pub status: String,
}

/// One thing that happened, as parsed from the CLI's output.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", content = "data", rename_all = "kebab-case")]
pub enum Event {
    /// The harness has started.
    Started {
        /// The model it runs, when it says.
        model: Option<String>,
        /// Its session id, when it says.
        session_id: Option<String>,
    },
    /// The session id, when reported apart from `Started`.
    Session(String),
    /// A whole assistant message.
    AssistantMessage(String),
    /// A streamed piece of an assistant message.
    AssistantDelta(String),
    /// The model's reasoning.
    Thinking(String),
    /// A tool call.
    ToolUse(ToolUse),
    /// A file the harness changed.
    FileChange {
        /// The file, as the harness names it.
        path: String,
        /// `add`, `update`, `delete` or the harness's own word.
        kind: String,
    },
    /// Token counts and cost.
    Usage(Usage),
    /// A notice that does not end the turn.
    Warning(String),
    /// An error the harness reported.
    Error(String),
    /// The harness's final message, when it gives one as such.
    FinalMessage(String),
    /// An event the driver recognised but does not classify, by its type.
    Other(String),
    /// A line the driver could not use; counted, never fatal.
    Skipped {
        /// Why it gave no event.
        reason: SkipReason,
        /// The line's type when it had one, for counting.
        kind: Option<String>,
    },
    /// The driver answered a permission request.
    Permission(PermissionAnswer),
    /// The agent's plan, whole, as it stands now.
    Plan(Vec<PlanEntry>),
    /// The agent asks permission and waits for the host's decision.
    PermissionRequest(PermissionRequest),
}

/// What one batch of lines gave.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Fed {
    /// The events, in order.
    pub events: Vec<Event>,
    /// Lines to write to the CLI's stdin, in order.
    pub replies: Vec<String>,
    /// The turn's answer has arrived: the host closes stdin and ends the CLI.
    pub done: bool,
}

/// How a turn ended, as far as the CLI's output tells.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Outcome {
    /// The harness's final message.
    pub final_message: Option<String>,
    /// The session to resume.
    pub session_id: Option<String>,
    /// Whether the turn ended in error.
    pub is_error: bool,
    /// What went wrong, in the harness's words.
    pub error: Option<String>,
    /// Token counts and cost for the turn.
    pub usage: Option<Usage>,
}
