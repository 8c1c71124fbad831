//! An approval as the API and the live events show it.

use serde::Serialize;

use cinch_base::timestamp::Timestamp;
use cinch_store::{self as store, ApprovalId, ApprovalStatus, SessionId, TaskId};

/// An agent's permission request, waiting for or given a decision.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Approval {
    /// Its id.
    #[schema(value_type = String)]
    pub id: ApprovalId,
    /// The session whose turn asked.
    #[schema(value_type = String)]
    pub session_id: SessionId,
    /// That session's task.
    #[schema(value_type = String)]
    pub task_id: TaskId,
    /// The turn that asked.
    pub turn_id: String,
    /// The harness.
    pub harness: String,
    /// The tool as the agent names it.
    pub tool: String,
    /// `shell`, `edit`, `read`, `fetch`, `mcp`, `other`, or `question`: the
    /// agent asks the user something (answered with `{"answer": "..."}`).
    pub kind: String,
    /// One line saying what the tool would do.
    pub title: String,
    /// The command, path or diff preview, the turn's secrets masked.
    pub input: Option<String>,
    /// The choices the agent offered.
    pub options: Vec<ApprovalOption>,
    /// `pending`, `allowed`, `denied`, `answered` (a question),
    /// `expired` (the deadline decided) or `cancelled` (the turn ended first).
    pub status: ApprovalStatus,
    /// `allow` or `deny`, once decided.
    pub decision: Option<String>,
    /// Who decided: a member's or agent's id, `policy` or `timeout`.
    pub decided_by: Option<String>,
    /// The note given with the decision.
    pub message: Option<String>,
    /// A question's answer, once answered.
    pub answer: Option<String>,
    /// When the agent asked (RFC 3339).
    #[schema(value_type = String)]
    pub requested_at: Timestamp,
    /// When its deadline decides it, while it is pending (RFC 3339).
    #[schema(value_type = Option<String>)]
    pub deadline: Option<Timestamp>,
    /// When it was decided (RFC 3339).
    #[schema(value_type = Option<String>)]
    pub decided_at: Option<Timestamp>,
}

/// A choice the agent offered.
#[derive(Debug, Clone, Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ApprovalOption {
    /// The agent's id for it.
    pub id: String,
    /// Its label.
    pub name: String,
    /// `allow_once`, `allow_always`, `reject_once`, `reject_always` or the agent's word.
    pub kind: String,
}

impl From<store::Approval> for Approval {
    fn from(row: store::Approval) -> Self {
        Self {
            options: serde_json::from_str(&row.options_json).unwrap_or_default(),
            id: row.id,
            session_id: row.session_id,
            task_id: row.task_id,
            turn_id: row.turn_id,
            harness: row.harness,
            tool: row.tool,
            kind: row.kind,
            title: row.title,
            input: row.input,
            status: row.status,
            decision: row.decision,
            decided_by: row.decided_by,
            answer: row
                .message
                .clone()
                .filter(|_| row.status == ApprovalStatus::Answered),
            message: row
                .message
                .filter(|_| row.status != ApprovalStatus::Answered),
            requested_at: row.requested_at,
            deadline: row.deadline,
            decided_at: row.decided_at,
        }
    }
}
