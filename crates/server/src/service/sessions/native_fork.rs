//! Native forks: a fork on its source's harness, where the harness can fork
//! one of its own sessions (Claude Code's `--resume ID --fork-session`, an
//! ACP agent's `session/fork`), continues the conversation as the harness
//! holds it instead of retelling it in a brief. Claude Code resumes only a
//! session it finds under its project folder for the working directory, and
//! a fork runs in a work tree of its own: the source's session file is copied
//! there, cut after the fork's turn. An ACP agent forks a session as it
//! stands, so only the session's latest turn forks natively (the session
//! file of claude-agent-acp, which keeps Claude Code's, is placed as it is). Whatever stands
//! in the way (another harness, a harness that cannot fork, a session file
//! not on this node, later turns) makes the fork a `brief` one, with the
//! reason.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Conductor;
use cinch_engine::drivers::Registry;
use cinch_store::{AccountId, ForkMode, Message, Session, SessionId, TurnView};

/// The contract whose turn record carries `fork`.
const FORKING_CONTRACT: &str = "0.3.0";

/// Claude Code's state directory under HOME: the one layout of session files
/// cinch knows how to place a session in.
const CLAUDE_STATE: &str = ".claude";

/// Where Claude Code keeps its sessions under its state directory, one folder
/// per working directory.
const PROJECTS: &str = "projects";

/// The longest project folder name Claude Code uses as it is; a longer one
/// ends in a hash of its own making, which cinch does not reproduce.
const LONGEST_PROJECT_NAME: usize = 200;

/// Why a fork on its source's harness is a `brief` one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BriefReason {
    /// The harness's driver does not fork its sessions (or not where cinch
    /// knows how to place one).
    HarnessCannotFork(String),
    /// The turn forked at recorded no harness session.
    NoHarnessSession,
    /// The harness session's file is not on this node.
    SessionFileMissing(String),
    /// The session file holds fewer turns than the session ran after the
    /// fork's turn: cinch cannot tell where that turn ends in it.
    TurnNotFound(String),
    /// The work tree's path is longer than Claude Code names a folder after.
    PathTooLong,
    /// The harness session ran turns after the fork's turn, and the agent
    /// forks a session only as it stands.
    LaterTurns(usize),
    /// The source's turns could not be read.
    Store(String),
    /// Copying the session file failed.
    Copy(String),
}

impl fmt::Display for BriefReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::HarnessCannotFork(harness) => {
                write!(f, "the {harness} harness does not fork its sessions")
            }
            Self::NoHarnessSession => write!(f, "that turn recorded no harness session"),
            Self::SessionFileMissing(session) => write!(
                f,
                "the harness session {session} has no session file on this node"
            ),
            Self::TurnNotFound(session) => write!(
                f,
                "the session file of harness session {session} does not hold the turns cinch ran in it"
            ),
            Self::LaterTurns(turns) => write!(
                f,
                "the agent forks its session only as it stands, and that session ran {turns} turn(s) after this one"
            ),
            Self::PathTooLong => write!(f, "the work tree's path is too long to place a session"),
            Self::Store(error) => write!(f, "the source's turns could not be read: {error}"),
            Self::Copy(error) => write!(f, "the session file could not be copied: {error}"),
        }
    }
}

/// The harness session a fork resumes, and where its file is.
pub(super) struct NativeSource {
    /// The harness session's id.
    pub harness_session: String,
    /// Its session file, to place cut in the fork's work tree; none for an
    /// agent that forks the session where it keeps it.
    pub file: Option<PathBuf>,
    /// How many turns the session ran after the fork's turn: the copy leaves
    /// them out.
    pub later_turns: usize,
}

/// How a harness forks one of its sessions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ForkWay {
    /// Its command resumes a session as a fork, from the session file cinch
    /// places in Claude Code's layout.
    Command,
    /// Its agent forks a session in the conversation (ACP's `session/fork`).
    Conversation,
}

/// How harness `name` forks its sessions natively, if it does as far as cinch
/// can tell: its driver (of a contract whose turn carries `fork`) changes its
/// command for a fork (and it keeps sessions in Claude Code's layout), or
/// what it says first in a conversation.
fn fork_way(registry: &Registry, name: &str) -> Option<ForkWay> {
    let harness = registry.harness(name).ok()?;
    if harness.driver.contract_version() < FORKING_CONTRACT {
        return None;
    }
    let resume = cinch_driver_sdk::Turn {
        harness: name.to_owned(),
        session_id: Some("session".to_owned()),
        ..cinch_driver_sdk::Turn::default()
    };
    let fork = cinch_driver_sdk::Turn {
        fork: true,
        ..resume.clone()
    };
    let args = |turn| {
        harness
            .driver
            .command(turn)
            .map(|command| command.args)
            .ok()
    };
    let opening = |turn| {
        harness
            .driver
            .session_for(turn)
            .and_then(|mut session| session.opening())
            .ok()
    };
    if harness.info.resume == cinch_driver_sdk::ResumeScope::SameDirectory
        && harness.info.state_dir.as_deref() == Some(CLAUDE_STATE)
        && args(&fork).is_some_and(|forked| Some(forked) != args(&resume))
    {
        return Some(ForkWay::Command);
    }
    opening(&fork)
        .is_some_and(|forked| Some(forked) != opening(&resume))
        .then_some(ForkWay::Conversation)
}

/// The session file of `session` started in `workdir`, under `home`.
fn session_file(
    home: &Path,
    workdir: &Path,
    session: &str,
) -> std::result::Result<PathBuf, BriefReason> {
    let workdir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    let project: String = workdir
        .display()
        .to_string()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    if project.len() > LONGEST_PROJECT_NAME {
        return Err(BriefReason::PathTooLong);
    }
    Ok(home
        .join(CLAUDE_STATE)
        .join(PROJECTS)
        .join(project)
        .join(format!("{session}.jsonl")))
}

/// Whether a line of a session file is a prompt: a user's message that
/// opens a turn, not a tool's result or a note of the CLI's own.
fn is_prompt(line: &str) -> bool {
    let Ok(entry) = serde_json::from_str::<Value>(line) else {
        return false;
    };
    let flag = |name: &str| entry[name].as_bool().unwrap_or(false);
    if entry["type"] != "user"
        || flag("isMeta")
        || flag("isSidechain")
        || flag("isCompactSummary")
        || !entry["toolUseResult"].is_null()
    {
        return false;
    }
    match &entry["message"]["content"] {
        Value::String(_) => true,
        Value::Array(parts) => !parts.iter().any(|part| part["type"] == "tool_result"),
        _ => false,
    }
}

/// The session file's text without its last `later_turns` turns (each from
/// its prompt on); none when it holds fewer prompts than that.
fn cut(text: &str, later_turns: usize) -> Option<&str> {
    if later_turns == 0 {
        return Some(text);
    }
    let mut starts = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if is_prompt(line) {
            starts.push(offset);
        }
        offset += line.len();
    }
    let index = starts.len().checked_sub(later_turns)?;
    // The first prompt is the fork's own turn's or an earlier one's: at least
    // that one stays.
    (index > 0).then(|| &text[..starts[index]])
}

impl Conductor {
    /// How a fork at `view` (a turn of a session on `harness`) onto `harness`
    /// begins: `native` when the harness forks and the session file is here.
    pub(super) async fn fork_mode_for(
        &self,
        account_id: &AccountId,
        view: &TurnView,
        harness: &str,
    ) -> (ForkMode, Option<BriefReason>) {
        if view.harness != harness {
            return (ForkMode::Brief, None);
        }
        match self.native_source(account_id, view).await {
            Ok(_) => (ForkMode::Native, None),
            Err(reason) => (ForkMode::Brief, Some(reason)),
        }
    }

    /// The harness session the turn `view` ended in, with its file and the
    /// turns the session ran after it.
    async fn native_source(
        &self,
        account_id: &AccountId,
        view: &TurnView,
    ) -> std::result::Result<NativeSource, BriefReason> {
        let way = fork_way(&self.engine.registry(), &view.harness)
            .ok_or_else(|| BriefReason::HarnessCannotFork(view.harness.clone()))?;
        let harness_session = view
            .result
            .as_ref()
            .and_then(|result| result.session_id.clone())
            .or_else(|| view.session_id.clone())
            .ok_or(BriefReason::NoHarnessSession)?;
        // The session that ran the turn holds its later turns and its agent's
        // home holds the file.
        let owner = self
            .store
            .session(account_id, &SessionId::from(view.run_id.clone()))
            .await
            .ok()
            .flatten()
            .ok_or_else(|| BriefReason::SessionFileMissing(harness_session.clone()))?;
        let conversation = self
            .delivered_messages(&owner)
            .await
            .map_err(|error| BriefReason::Store(error.to_string()))?;
        let later_turns = conversation
            .iter()
            .filter_map(Message::turn_view)
            .skip_while(|turn| turn.turn_id != view.turn_id)
            .skip(1)
            .filter(|turn| turn.session_id.as_deref() == Some(harness_session.as_str()))
            .count();
        let file = session_file(
            &self.runner.agent_home(&owner.agent_id),
            Path::new(&view.workspace),
            &harness_session,
        );
        let file = match (way, file) {
            (ForkWay::Command, Ok(file)) if file.is_file() => Some(file),
            (ForkWay::Command, Ok(_)) => {
                return Err(BriefReason::SessionFileMissing(harness_session));
            }
            (ForkWay::Command, Err(reason)) => return Err(reason),
            // The agent forks the session as it stands. claude-agent-acp adds
            // `/model` commands to its session file at every resume, so
            // cinch cannot tell where a turn ends in it to cut it back.
            (ForkWay::Conversation, _) if later_turns > 0 => {
                return Err(BriefReason::LaterTurns(later_turns));
            }
            // An agent that keeps Claude Code's session files
            // (claude-agent-acp) finds the session only under the fork's work
            // tree's folder, where it goes as it is.
            (ForkWay::Conversation, Ok(file)) if file.is_file() => Some(file),
            (ForkWay::Conversation, _) => None,
        };
        Ok(NativeSource {
            harness_session,
            file,
            later_turns,
        })
    }

    /// For a native fork's first turn: places the source's harness session
    /// where the harness finds it from the fork's work tree, cut after the
    /// fork's turn, and gives the session to resume as a fork.
    pub(super) async fn place_native_fork(
        &self,
        session: &Session,
    ) -> std::result::Result<String, BriefReason> {
        let (Some(source_id), Some(turn_id), Some(workspace)) = (
            &session.forked_from_session,
            &session.forked_from_turn,
            &session.workspace,
        ) else {
            return Err(BriefReason::NoHarnessSession);
        };
        let view = self
            .store
            .turn_message(&session.account_id, source_id, turn_id)
            .await
            .ok()
            .flatten()
            .and_then(|message| message.turn_view())
            .ok_or(BriefReason::NoHarnessSession)?;
        let source = self.native_source(&session.account_id, &view).await?;
        let Some(file) = &source.file else {
            return Ok(source.harness_session);
        };
        let text = std::fs::read_to_string(file)
            .map_err(|_| BriefReason::SessionFileMissing(source.harness_session.clone()))?;
        let kept = cut(&text, source.later_turns)
            .ok_or_else(|| BriefReason::TurnNotFound(source.harness_session.clone()))?;
        let target = session_file(
            &self.runner.agent_home(&session.agent_id),
            Path::new(workspace),
            &source.harness_session,
        )?;
        let copy = || -> anyhow::Result<()> {
            if let Some(folder) = target.parent() {
                cinch_engine::home::create_private_dir(folder)?;
            }
            cinch_engine::turn_dir::write_private(&target, kept.as_bytes())
        };
        copy().map_err(|error| BriefReason::Copy(format!("{error:#}")))?;
        Ok(source.harness_session)
    }

    /// Why a fork on its source's harness that is a `brief` one from the
    /// start does not fork the source's harness session: for its brief.
    pub(super) async fn brief_reason(&self, session: &Session) -> Option<BriefReason> {
        let (Some(source_id), Some(turn_id)) =
            (&session.forked_from_session, &session.forked_from_turn)
        else {
            return None;
        };
        let view = self
            .store
            .turn_message(&session.account_id, source_id, turn_id)
            .await
            .ok()
            .flatten()
            .and_then(|message| message.turn_view())?;
        let (_, reason) = self
            .fork_mode_for(&session.account_id, &view, &session.harness)
            .await;
        reason
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT_ONE: &str = r#"{"type":"user","message":{"role":"user","content":"one"}}"#;
    const ANSWER: &str = r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}"#;
    const TOOL_RESULT: &str = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t"}]},"toolUseResult":{}}"#;
    const PROMPT_TWO: &str =
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"two"}]}}"#;

    #[test]
    fn a_cut_leaves_out_the_later_turns_from_their_prompts_on() {
        let text = [PROMPT_ONE, ANSWER, TOOL_RESULT, ANSWER, PROMPT_TWO, ANSWER]
            .map(|line| format!("{line}\n"))
            .concat();
        assert_eq!(cut(&text, 0), Some(text.as_str()));
        let first = [PROMPT_ONE, ANSWER, TOOL_RESULT, ANSWER]
            .map(|line| format!("{line}\n"))
            .concat();
        assert_eq!(cut(&text, 1), Some(first.as_str()));
        // Cutting every prompt away would leave nothing of the fork's turn.
        assert_eq!(cut(&text, 2), None);
        assert_eq!(cut(&text, 3), None);
    }

    #[test]
    fn a_project_folder_names_the_work_tree_with_dashes() {
        let file = session_file(Path::new("/h"), Path::new("/no/such/w_t.1"), "abc").unwrap();
        assert_eq!(
            file,
            Path::new("/h/.claude/projects/-no-such-w-t-1/abc.jsonl")
        );
        let long = format!("/{}", "a".repeat(LONGEST_PROJECT_NAME));
        assert_eq!(
            session_file(Path::new("/h"), Path::new(&long), "abc"),
            Err(BriefReason::PathTooLong)
        );
    }
}
