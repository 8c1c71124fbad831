//! Shared pieces of cinch's end-to-end tests and benchmarks: where the
//! recorded logs are, and how to run one through a driver natively or as a
//! sandboxed component.

use std::path::{Path, PathBuf};

use cinch_driver_sdk::{Driver, Turn};
use cinch_engine::drivers::Registry;
use cinch_engine::reading::parse::{Native, TurnParser};
use cinch_engine::reading::replay::{Exit, Report, replay};
use cinch_engine::redact::Redactor;
use cinch_runtime::{DriverFailure, Limits, Runtime};
use serde_json::{Value, json};

/// Paths of the deliberately broken test components.
pub mod test_drivers {
    include!(concat!(env!("OUT_DIR"), "/test_drivers.rs"));
}

/// The built-in drivers, by name.
pub const DRIVERS: &[&str] = &["acp", "claude", "codex", "cursor", "gemini"];

/// This crate's directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The recorded runs copied into the project.
pub fn recorded_dir() -> PathBuf {
    crate_dir().join("fixtures/recorded")
}

/// The public captures, read in place from `../shared` (never copied).
/// `None` when `../shared` is not beside the checkout.
pub fn public_dir() -> Option<PathBuf> {
    let dir = crate_dir().join("../../shared/fixtures/public");
    dir.is_dir().then_some(dir)
}

/// Which driver reads logs of the CLI a fixture folder is named for.
/// Amp and Qwen Code print Claude Code's format.
pub fn driver_for(cli: &str) -> Option<&'static str> {
    match cli {
        "claude" | "amp" | "qwen" => Some("claude"),
        "codex" => Some("codex"),
        "cursor" => Some("cursor"),
        "gemini" => Some("gemini"),
        _ => None,
    }
}

/// One log to test a driver on.
#[derive(Debug, Clone)]
pub struct Fixture {
    /// `recorded` or `public`.
    pub source: &'static str,
    /// The CLI folder it sits in.
    pub cli: String,
    /// The log's file stem.
    pub name: String,
    /// The raw log.
    pub log: PathBuf,
    /// How the CLI exited (0 and no stderr when not recorded).
    pub exit: Exit,
}

impl Fixture {
    /// Where the golden report of this fixture is kept.
    pub fn golden(&self) -> PathBuf {
        crate_dir()
            .join("golden")
            .join(self.source)
            .join(&self.cli)
            .join(format!("{}.json", self.name))
    }
}

/// Every `.jsonl` log under `dir/<cli>/`, with its `.exit` and `.stderr`.
pub fn fixtures(source: &'static str, dir: &Path) -> Vec<Fixture> {
    let mut found = Vec::new();
    let Ok(clis) = std::fs::read_dir(dir) else {
        return found;
    };
    for cli in clis.filter_map(Result::ok).filter(|e| e.path().is_dir()) {
        let cli_name = cli.file_name().to_string_lossy().into_owned();
        let Ok(files) = std::fs::read_dir(cli.path()) else {
            continue;
        };
        for file in files.filter_map(Result::ok).map(|e| e.path()) {
            if file.extension().is_none_or(|ext| ext != "jsonl") {
                continue;
            }
            let read = |ext: &str| std::fs::read_to_string(file.with_extension(ext)).ok();
            let code =
                read("exit").map(|text| text.trim().parse().expect("an .exit file holds a number"));
            found.push(Fixture {
                source,
                cli: cli_name.clone(),
                name: file.file_stem().unwrap().to_string_lossy().into_owned(),
                exit: Exit {
                    code: Some(code.unwrap_or(0)),
                    stderr_tail: read("stderr").unwrap_or_default(),
                },
                log: file,
            });
        }
    }
    found.sort_by(|a, b| (&a.cli, &a.name).cmp(&(&b.cli, &b.name)));
    found
}

/// A runtime with the default limits and its own compile cache.
pub fn runtime(cache: &Path) -> Runtime {
    Runtime::new(Some(cache.to_path_buf()), Limits::default()).expect("creating the runtime")
}

/// The built-in drivers, loaded.
pub fn registry(runtime: &Runtime) -> Registry {
    Registry::load(runtime, None).expect("loading the built-in drivers")
}

/// The native parser of the built-in driver `name`.
pub fn native_parser(name: &str) -> Box<dyn TurnParser> {
    fn of<D: Driver>() -> Box<dyn TurnParser>
    where
        D::Parser: 'static,
    {
        Box::new(Native(D::Parser::default()))
    }
    match name {
        "acp" => of::<cinch_driver_acp::Acp>(),
        "claude" => of::<cinch_driver_claude::Claude>(),
        "codex" => of::<cinch_driver_codex::Codex>(),
        "cursor" => of::<cinch_driver_cursor::Cursor>(),
        "gemini" => of::<cinch_driver_gemini::Gemini>(),
        other => panic!("no native driver named {other}"),
    }
}

/// The display name of the built-in driver `name`, natively.
pub fn native_display_name(name: &str) -> String {
    match name {
        "acp" => cinch_driver_acp::Acp::info().display_name,
        "claude" => cinch_driver_claude::Claude::info().display_name,
        "codex" => cinch_driver_codex::Codex::info().display_name,
        "cursor" => cinch_driver_cursor::Cursor::info().display_name,
        "gemini" => cinch_driver_gemini::Gemini::info().display_name,
        other => panic!("no native driver named {other}"),
    }
}

/// `log` through the native driver `name`.
pub fn replay_native(name: &str, log: &[u8], exit: &Exit) -> Report {
    let mut parser = native_parser(name);
    replay(
        name,
        &native_display_name(name),
        parser.as_mut(),
        log,
        exit,
        &Redactor::default(),
    )
}

/// `log` through the component of driver `name`.
pub fn replay_wasm(registry: &Registry, name: &str, log: &[u8], exit: &Exit) -> Report {
    let driver = registry.get(name).expect("a built-in driver");
    let mut session = driver.session().expect("a fresh driver instance");
    let info = driver.info();
    replay(
        &info.name,
        &info.display_name,
        &mut session,
        log,
        exit,
        &Redactor::default(),
    )
}

/// The ACP transcripts, read in place from `../shared/fixtures/acp`; `None`
/// when `../shared` is not beside the checkout.
pub fn acp_dir() -> Option<PathBuf> {
    let dir = crate_dir().join("../../shared/fixtures/acp");
    dir.is_dir().then_some(dir)
}

/// Who wrote a line of an ACP transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The recording client (`"dir": "out"`): what a driver must write.
    Client,
    /// The agent (`"dir": "in"`): what a driver reads.
    Agent,
}

/// One recorded ACP conversation with a real agent.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// The agent's folder: `gemini`, `qwen`, `claude-agent-acp`, ...
    pub agent: String,
    /// The scenario: the file's stem.
    pub name: String,
    /// Every message, in the order the client saw them.
    pub messages: Vec<(Side, Value)>,
    /// The agent's stderr, when it wrote any.
    pub stderr: String,
}

impl Transcript {
    /// Reads `<agent>/<scenario>.jsonl` and its `.stderr`.
    pub fn read(path: &Path) -> Self {
        let text = std::fs::read_to_string(path).expect("a readable transcript");
        let messages = text
            .lines()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                let mut record: Value = serde_json::from_str(line).expect("a JSON record");
                let side = match record["dir"].as_str() {
                    Some("out") => Side::Client,
                    Some("in") => Side::Agent,
                    other => panic!("{}: a record with dir {other:?}", path.display()),
                };
                (side, record["msg"].take())
            })
            .collect();
        Self {
            agent: path
                .parent()
                .and_then(Path::file_name)
                .unwrap()
                .to_string_lossy()
                .into_owned(),
            name: path.file_stem().unwrap().to_string_lossy().into_owned(),
            messages,
            stderr: std::fs::read_to_string(path.with_extension("stderr")).unwrap_or_default(),
        }
    }

    /// Where the golden report of this transcript is kept.
    pub fn golden(&self) -> PathBuf {
        crate_dir()
            .join("golden/acp")
            .join(&self.agent)
            .join(format!("{}.json", self.name))
    }

    /// The acp driver's harness profile for the agent recorded.
    pub fn harness(&self) -> &'static str {
        match self.agent.as_str() {
            "gemini" => "gemini-acp",
            "qwen" => "qwen",
            "opencode" => "opencode",
            "claude-agent-acp" => "claude-acp",
            "codex-acp" => "codex-acp",
            other => panic!("no acp harness profile for {other}"),
        }
    }

    /// The turn the recording client ran: its directory, its brief and the
    /// session it loaded.
    pub fn turn(&self) -> Turn {
        let sent = |method: &str| {
            self.client_lines()
                .find(|message| message["method"] == method)
                .map(|message| &message["params"])
        };
        let (session, load) = match sent("session/load") {
            Some(params) => (params, true),
            None => (
                sent("session/new").expect("a session/new or session/load"),
                false,
            ),
        };
        Turn {
            prompt_file: "/tmp/cinch-turn/prompt.md".into(),
            workdir: session["cwd"].as_str().unwrap().to_owned(),
            session_id: load.then(|| session["sessionId"].as_str().unwrap().to_owned()),
            brief: sent("session/prompt").expect("a session/prompt")["prompt"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned(),
            harness: self.harness().to_owned(),
            ..Turn::default()
        }
    }

    /// What the client wrote.
    pub fn client_lines(&self) -> impl Iterator<Item = &Value> {
        self.messages
            .iter()
            .filter(|(side, _)| *side == Side::Client)
            .map(|(_, message)| message)
    }

    /// The agent's standard output: its lines, one JSON object each.
    pub fn agent_log(&self) -> Vec<u8> {
        self.messages
            .iter()
            .filter(|(side, _)| *side == Side::Agent)
            .flat_map(|(_, message)| {
                let mut line = serde_json::to_vec(message).unwrap();
                line.push(b'\n');
                line
            })
            .collect()
    }

    /// How the turn ended for the host: it ends the agent itself (no exit
    /// code), and keeps its stderr.
    pub fn exit(&self) -> Exit {
        Exit {
            code: None,
            stderr_tail: self.stderr.clone(),
        }
    }
}

/// Every transcript under `dir/<agent>/`.
pub fn acp_transcripts(dir: &Path) -> Vec<Transcript> {
    let mut found: Vec<Transcript> = std::fs::read_dir(dir)
        .expect("the ACP fixtures")
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.is_dir())
        .flat_map(|agent| std::fs::read_dir(agent).unwrap().filter_map(Result::ok))
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "jsonl"))
        .map(|path| Transcript::read(&path))
        .collect();
    found.sort_by(|a, b| (&a.agent, &a.name).cmp(&(&b.agent, &b.name)));
    found
}

/// Plays the agent's side of `transcript` to `parser`, one line at a time,
/// and asks it to stop where the recording client cancelled: every line the
/// parser wrote, in order (its opening, its replies, its stop lines).
pub fn converse(
    parser: &mut dyn TurnParser,
    transcript: &Transcript,
) -> Result<Vec<String>, DriverFailure> {
    let mut sent = parser.opening()?;
    for (side, message) in &transcript.messages {
        match side {
            Side::Agent => sent.extend(parser.feed(&[message.to_string()])?.replies),
            Side::Client if message["method"] == "session/cancel" => sent.extend(parser.stop()?),
            Side::Client => {}
        }
    }
    Ok(sent)
}

/// What a client's line is, in the terms a driver must match the recording
/// client in: request ids and methods, the session, directory and prompt
/// they name, and the option or error each answer gives. Client names and
/// versions and the order of keys do not count.
pub fn client_line_kind(message: &Value) -> Value {
    let params = &message["params"];
    json!({
        "id": message["id"],
        "method": message["method"],
        "sessionId": params["sessionId"],
        "cwd": params["cwd"],
        "protocolVersion": params["protocolVersion"],
        "prompt": params["prompt"],
        "answer": message["result"]["outcome"],
        "error": message["error"]["code"],
    })
}

/// The display name the acp driver's `harness` profile gives.
pub fn acp_display_name(info: &cinch_driver_sdk::Info, harness: &str) -> String {
    info.harnesses
        .iter()
        .find(|profile| profile.name == harness)
        .map(|profile| profile.display_name.clone())
        .unwrap_or_else(|| info.display_name.clone())
}
