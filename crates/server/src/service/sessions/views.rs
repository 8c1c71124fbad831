//! What a session and a message look like to clients: the API's answers,
//! and the live events and webhooks that carry them. Store rows are not
//! these: a row is converted here.

use serde::Serialize;
use serde_json::value::RawValue;

use cinch_base::timestamp::Timestamp;
use cinch_store::{
    self as store, AccountId, AgentId, CloseReason, EnvironmentId, ForkMode, MessageId,
    MessageKind, RebuiltFrom, SessionId, SessionStatus, TaskId, UsageTotals,
};

/// Where a fork was forked from.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct ForkedFrom {
    /// The source session.
    #[schema(value_type = String)]
    pub session_id: SessionId,
    /// Its turn the fork starts after: the fork's work tree is that turn's
    /// end checkpoint, its conversation the messages up to it.
    pub turn_id: String,
}

/// A session.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Session {
    /// Its id; also the run id of its turns.
    #[schema(value_type = String)]
    pub id: SessionId,
    /// The account it belongs to.
    #[schema(value_type = String)]
    pub account_id: AccountId,
    /// Its task.
    #[schema(value_type = String)]
    pub task_id: TaskId,
    /// The agent it runs as (its harnesses' HOME is that agent's).
    #[schema(value_type = String)]
    pub agent_id: AgentId,
    /// Its title.
    pub title: String,
    /// Where it is in its life.
    pub status: SessionStatus,
    /// Its environment.
    #[schema(value_type = Option<String>)]
    pub environment_id: Option<EnvironmentId>,
    /// The branch its workspace is on.
    pub branch_name: String,
    /// The branch that one started from.
    pub base_branch: Option<String>,
    /// Whether what a turn changed is committed on the branch.
    pub auto_commit: bool,
    /// The harness (a driver's name).
    pub harness: String,
    /// Who makes the harness's models.
    pub vendor: String,
    /// The model it runs, when not the harness's default.
    pub harness_model: Option<String>,
    /// The effort it runs at, when not the harness's default.
    pub harness_effort: Option<String>,
    /// The harness's own session id, once reported; later turns resume it.
    pub harness_session_id: Option<String>,
    /// The workspace's path, once made.
    pub workspace: Option<String>,
    /// The engine turn running now.
    pub current_turn: Option<String>,
    /// When the wait for capacity began; only while `waiting`.
    #[schema(value_type = Option<String>)]
    pub waiting_since: Option<Timestamp>,
    /// Attempts to get capacity so far in this wait.
    pub retries: i64,
    /// Why it stopped, or the recovery that left it idle.
    pub close_reason: Option<CloseReason>,
    /// What went wrong and what to do next.
    pub error_message: Option<String>,
    /// When it last started or ended a turn or took a message.
    #[schema(value_type = String)]
    pub last_activity_at: Timestamp,
    /// The node it was taken over from, until its next turn starts: that
    /// turn starts a new harness session, briefed with the conversation.
    pub moved_from_node: Option<String>,
    /// What its work tree was rebuilt from when another node took it over.
    pub rebuilt_from: Option<RebuiltFrom>,
    /// For a fork: the session and turn it was forked from.
    pub forked_from: Option<ForkedFrom>,
    /// For a fork: `native` when the harness forked the source's own
    /// session, `brief` when a new one was given the conversation.
    pub fork_mode: Option<ForkMode>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// When it last changed (RFC 3339).
    #[schema(value_type = String)]
    pub updated_at: Timestamp,
    /// The tokens and cost of its turns.
    pub usage: UsageTotals,
}

impl From<store::Session> for Session {
    fn from(row: store::Session) -> Self {
        Self {
            id: row.id,
            account_id: row.account_id,
            task_id: row.task_id,
            agent_id: row.agent_id,
            title: row.title,
            status: row.status,
            environment_id: row.environment_id,
            branch_name: row.branch_name,
            base_branch: row.base_branch,
            auto_commit: row.auto_commit,
            harness: row.harness,
            vendor: row.vendor,
            harness_model: row.harness_model,
            harness_effort: row.harness_effort,
            harness_session_id: row.harness_session_id,
            workspace: row.workspace,
            current_turn: row.current_turn,
            waiting_since: row.waiting_since,
            retries: row.retries,
            close_reason: row.close_reason,
            error_message: row.error_message,
            last_activity_at: row.last_activity_at,
            moved_from_node: row.moved_from_node,
            rebuilt_from: row.rebuilt_from,
            forked_from: row.forked_from_session.zip(row.forked_from_turn).map(
                |(session_id, turn_id)| ForkedFrom {
                    session_id,
                    turn_id,
                },
            ),
            fork_mode: row.fork_mode,
            created_at: row.created_at,
            updated_at: row.updated_at,
            usage: row.usage,
        }
    }
}

// The store writes the message listing's JSON itself (`messages_json`), in
// this same shape.
/// A message.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(crate) struct Message {
    /// Its id.
    #[schema(value_type = String)]
    pub id: MessageId,
    /// Its session.
    #[schema(value_type = String)]
    pub session_id: SessionId,
    /// Its session's task.
    #[schema(value_type = String)]
    pub task_id: TaskId,
    /// Its place in the conversation; null while it is queued.
    pub sequence: Option<i64>,
    /// What it is.
    #[serde(rename = "type")]
    pub kind: MessageKind,
    /// Its text.
    pub content: String,
    /// An assistant message's turn: its call, status and, once ended, result.
    /// Kept as stored text: listing messages copies it out without parsing it.
    #[schema(value_type = Option<Object>)]
    pub turn: Option<Box<RawValue>>,
    /// When it was created (RFC 3339).
    #[schema(value_type = String)]
    pub created_at: Timestamp,
    /// For a message a fork inherited from its source: the fork point,
    /// `{"session_id", "turn_id"}`; null for the session's own messages.
    #[schema(value_type = Option<Object>)]
    pub forked_from: Option<Box<RawValue>>,
}

impl From<store::Message> for Message {
    fn from(row: store::Message) -> Self {
        Self {
            id: row.id,
            session_id: row.session_id,
            task_id: row.task_id,
            sequence: row.sequence,
            kind: row.kind,
            content: row.content,
            turn: row.turn,
            created_at: row.created_at,
            forked_from: row.forked_from,
        }
    }
}
