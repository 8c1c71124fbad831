//! Scripts: what the mock model answers, turn by turn.

use std::time::Duration;

/// The command the built-in `s2` scenario asks the CLI's shell tool to run.
pub const SHELL_COMMAND: &str = "echo hello > out.txt";

/// The built-in `s2` scenario's final answer, after the shell tool ran.
pub const S2_ANSWER: &str = "I ran the command; out.txt now contains hello.";

/// The start of the built-in `s4` scenario's answer to a resumed session that had one
/// earlier model turn.
pub const S4_RESUMED: &str = "resumed: history had 1 earlier model turn(s)";

/// How long the built-in `slow` scenario keeps the model call waiting.
pub const SLOW_WAIT: Duration = Duration::from_secs(60);

/// One model turn of a script.
#[derive(Clone, Debug, PartialEq)]
pub enum Turn {
    /// Answer with this text and end the turn. `{n_model}` and `{n_user}` are replaced with
    /// the number of model turns and of user messages in the request's history, so that a
    /// resumed session can show that its history was sent again.
    Text(String),
    /// Call the CLI's own shell tool (whichever of its offered tools runs a command) with this
    /// command line.
    Shell(String),
    /// Call the offered tool whose name ends with `suffix` with these arguments: CLIs name
    /// an MCP server's tool with their own prefix (`mcp__<server>__<tool>` for Claude Code).
    Tool {
        /// The end of the tool's name.
        suffix: String,
        /// Its arguments, a JSON object.
        args: serde_json::Value,
    },
    /// Fail with this HTTP status and the API's usual error body for it.
    Error(u16),
    /// Wait this long, then play the inner turn. The wait ends early, without an answer, when
    /// the client disconnects or the server is dropped.
    Sleep(Duration, Box<Turn>),
}

impl Turn {
    /// A [`Turn::Text`].
    pub fn text(text: impl Into<String>) -> Self {
        Turn::Text(text.into())
    }

    /// A [`Turn::Shell`].
    pub fn shell(command: impl Into<String>) -> Self {
        Turn::Shell(command.into())
    }

    /// A [`Turn::Tool`].
    pub fn tool(suffix: impl Into<String>, args: serde_json::Value) -> Self {
        Turn::Tool {
            suffix: suffix.into(),
            args,
        }
    }

    /// A [`Turn::Sleep`] before `then`.
    pub fn sleep(wait: Duration, then: Turn) -> Self {
        Turn::Sleep(wait, Box::new(then))
    }
}

/// A named script, chosen by a request through its URL path prefix `/sc/<name>/`.
///
/// Which turn a request gets is the number of model turns already in its history, not a
/// counter, so retries, side requests and resumed sessions all play the right turn; past the
/// end of the script, the last turn is played again.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The name in the URL.
    pub name: String,
    /// The turns in order.
    pub turns: Vec<Turn>,
}

impl Scenario {
    /// A scenario of these turns.
    pub fn new(name: impl Into<String>, turns: Vec<Turn>) -> Self {
        Scenario {
            name: name.into(),
            turns,
        }
    }

    /// The turn for a request whose history holds `model_turns` model turns.
    pub(crate) fn turn(&self, model_turns: usize) -> Option<&Turn> {
        self.turns.get(model_turns).or(self.turns.last())
    }
}

/// The scenarios every server knows:
/// - `s1`: answers "done";
/// - `s2`: runs [`SHELL_COMMAND`] through the CLI's shell tool, then answers [`S2_ANSWER`];
/// - `s3`: HTTP 401; `s3_500`: HTTP 500;
/// - `s4`: turn 0 "done", turn 1 a text that counts the history (starts with [`S4_RESUMED`]
///   after one earlier turn);
/// - `slow`: waits [`SLOW_WAIT`], then answers "done".
pub fn builtin_scenarios() -> Vec<Scenario> {
    vec![
        Scenario::new("s1", vec![Turn::text("done")]),
        Scenario::new(
            "s2",
            vec![Turn::shell(SHELL_COMMAND), Turn::text(S2_ANSWER)],
        ),
        Scenario::new("s3", vec![Turn::Error(401)]),
        Scenario::new("s3_500", vec![Turn::Error(500)]),
        Scenario::new(
            "s4",
            vec![
                Turn::text("done"),
                Turn::text(
                    "resumed: history had {n_model} earlier model turn(s) and {n_user} user message(s)",
                ),
            ],
        ),
        Scenario::new("slow", vec![Turn::sleep(SLOW_WAIT, Turn::text("done"))]),
    ]
}
