//! Approvals as stored: one row per permission request of a turn (the same
//! request read again is the same row), decided once: the first decision's
//! conditional update wins, and every later one reads who decided. Also
//! each session's own approval policy.

use cinch_base::timestamp::Timestamp;

use super::{AccountId, ApprovalId, Page, PerBackend, Result, SessionId, Store, TaskId, on_pool};
use crate::approval_policy::{ApprovalPolicy, Decision};

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Decided: the tool may run.
    Allowed,
    /// Decided: the tool may not run.
    Denied,
    /// A question the user answered (its answer is the approval's message).
    Answered,
    /// Its deadline decided it (`decision` says how).
    Expired,
    /// Its turn ended first.
    Cancelled,
}

impl ApprovalStatus {
    pub(super) const ALL: [Self; 6] = [
        Self::Pending,
        Self::Allowed,
        Self::Denied,
        Self::Answered,
        Self::Expired,
        Self::Cancelled,
    ];

    /// Its name as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Allowed => "allowed",
            Self::Denied => "denied",
            Self::Answered => "answered",
            Self::Expired => "expired",
            Self::Cancelled => "cancelled",
        }
    }

    /// The status a decision gives.
    pub fn of(decision: Decision) -> Self {
        match decision {
            Decision::Allow => Self::Allowed,
            Decision::Deny => Self::Denied,
        }
    }
}

super::text_column!(ApprovalStatus);

super::rows::row_struct! {
    /// An approval as stored.
    #[derive(Debug, Clone)]
    pub struct Approval {
        /// Its id (`apr_…`).
        pub id: ApprovalId,
        /// Its account.
        pub account_id: AccountId,
        /// The session whose turn asked.
        pub session_id: SessionId,
        /// That session's task.
        pub task_id: TaskId,
        /// The turn that asked.
        pub turn_id: String,
        /// The request's key within the turn (the driver's).
        pub request_key: String,
        /// The harness.
        pub harness: String,
        /// The tool as the agent names it.
        pub tool: String,
        /// `shell`, `edit`, `read`, `fetch`, `mcp`, `other`, or `question`
        /// (the agent asks the user something).
        pub kind: String,
        /// One line saying what the tool would do.
        pub title: String,
        /// The command, path or diff preview, masked of the turn's secrets.
        pub input: Option<String>,
        /// The options the agent offered, as JSON.
        pub options_json: String,
        /// Where it stands.
        pub status: ApprovalStatus,
        /// `allow` or `deny`, once decided.
        pub decision: Option<String>,
        /// Who decided: a member's or agent's id, `policy` or `timeout`.
        pub decided_by: Option<String>,
        /// The note given with the decision; a question's answer.
        pub message: Option<String>,
        /// When the agent asked (RFC 3339).
        pub requested_at: Timestamp,
        /// When the deadline decides it (RFC 3339), while it may.
        pub deadline: Option<Timestamp>,
        /// When it was decided (RFC 3339).
        pub decided_at: Option<Timestamp>,
    }
}

/// A request to store.
#[derive(Debug, Clone)]
pub struct NewApproval {
    /// Its session.
    pub session_id: SessionId,
    /// Its task.
    pub task_id: TaskId,
    /// The turn that asked.
    pub turn_id: String,
    /// The request's key within the turn.
    pub request_key: String,
    /// The harness.
    pub harness: String,
    /// The tool.
    pub tool: String,
    /// Its kind.
    pub kind: String,
    /// Its title.
    pub title: String,
    /// Its input, masked.
    pub input: Option<String>,
    /// The options, as JSON.
    pub options_json: String,
    /// Its deadline (RFC 3339).
    pub deadline: Option<Timestamp>,
    /// Decided at once by the policy, when it was.
    pub decided: Option<Decision>,
}

/// A decision to record.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The status it gives.
    pub status: ApprovalStatus,
    /// `allow` or `deny`.
    pub decision: Decision,
    /// Who decided.
    pub decided_by: String,
    /// A note.
    pub message: Option<String>,
}

/// Which approvals a listing shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApprovalFilter<'a> {
    /// Only the pending (`Some(true)`) or only the decided (`Some(false)`).
    pub pending: Option<bool>,
    /// Only this session's.
    pub session_id: Option<&'a SessionId>,
    /// Only this task's.
    pub task_id: Option<&'a TaskId>,
}

macro_rules! columns {
    () => {
        "id, account_id, session_id, task_id, turn_id, request_key, harness, tool, kind, title, \
         input, options_json, status, decision, decided_by, message, requested_at, deadline, \
         decided_at"
    };
}

const COLUMNS: &str = columns!();

/// The turn's (`$1`) approvals waiting for a decision.
const TURN_PENDING: PerBackend<&str> = PerBackend::same(concat!(
    "SELECT ",
    columns!(),
    " FROM approvals WHERE turn_id = $1 AND status = 'pending'"
));

/// The session's (`$1`) own approval policy, as stored.
const SESSION_POLICY: PerBackend<&str> =
    PerBackend::same("SELECT approvals_json FROM sessions WHERE id = $1");

super::rows::row_struct! {
    /// A session's own approval policy, as stored (none: the environment's).
    struct SessionPolicy {
        approvals_json: Option<String>,
    }
}

impl Store {
    /// Stores the request unless its turn stored it already; the approval
    /// either way, and whether it is new.
    pub async fn insert_approval(
        &self,
        account_id: &AccountId,
        new: NewApproval,
    ) -> Result<(Approval, bool)> {
        let id = ApprovalId::generate()?;
        let at = Timestamp::now();
        let (status, decision, decided_by, decided_at) = match new.decided {
            Some(decision) => (
                ApprovalStatus::of(decision),
                Some(decision.as_str()),
                Some("policy"),
                Some(at),
            ),
            None => (ApprovalStatus::Pending, None, None, None),
        };
        let inserted = on_pool!(self, |pool| sqlx::query(
            "INSERT INTO approvals (id, account_id, session_id, task_id, turn_id, request_key, \
             harness, tool, kind, title, input, options_json, status, decision, decided_by, \
             requested_at, deadline, decided_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, \
             $10, $11, $12, $13, $14, $15, $16, $17, $18) \
             ON CONFLICT (turn_id, request_key) DO NOTHING"
        )
        .bind(&id)
        .bind(account_id)
        .bind(&new.session_id)
        .bind(&new.task_id)
        .bind(&new.turn_id)
        .bind(&new.request_key)
        .bind(&new.harness)
        .bind(&new.tool)
        .bind(&new.kind)
        .bind(&new.title)
        .bind(&new.input)
        .bind(&new.options_json)
        .bind(status)
        .bind(decision)
        .bind(decided_by)
        .bind(at)
        .bind(new.deadline.filter(|_| new.decided.is_none()))
        .bind(decided_at)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        let approval: Approval = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM approvals WHERE turn_id = $1 AND request_key = $2"
        ))
        .bind(&new.turn_id)
        .bind(&new.request_key)
        .fetch_one(pool)
        .await)?;
        Ok((approval, inserted == 1))
    }

    /// The account's approval `id`.
    pub async fn approval(
        &self,
        account_id: &AccountId,
        id: &ApprovalId,
    ) -> Result<Option<Approval>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM approvals WHERE account_id = $1 AND id = $2"
        ))
        .bind(account_id)
        .bind(id)
        .fetch_optional(pool)
        .await)?)
    }

    /// A page of the account's approvals, newest first, before `cursor`.
    pub async fn approvals(
        &self,
        account_id: &AccountId,
        filter: ApprovalFilter<'_>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Approval>> {
        let rows: Vec<Approval> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM approvals WHERE account_id = $1 AND ($2 = '' OR id < $2) \
             AND ($3 = '' OR ($3 = 'pending') = (status = 'pending')) \
             AND ($4 = '' OR session_id = $4) AND ($5 = '' OR task_id = $5) \
             ORDER BY id DESC LIMIT $6"
        ))
        .bind(account_id)
        .bind(cursor.unwrap_or(""))
        .bind(match filter.pending {
            Some(true) => "pending",
            Some(false) => "resolved",
            None => "",
        })
        .bind(filter.session_id.map_or("", SessionId::as_str))
        .bind(filter.task_id.map_or("", TaskId::as_str))
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?;
        Ok(Page::from_rows(rows, limit, |approval| {
            approval.id.as_str()
        }))
    }

    /// Records `decided` on the approval `id` if it is still pending;
    /// whether this decision was the one recorded.
    pub async fn decide_approval(
        &self,
        account_id: &AccountId,
        id: &ApprovalId,
        decided: &Decided,
    ) -> Result<bool> {
        let changed = on_pool!(self, |pool| sqlx::query(
            "UPDATE approvals SET status = $3, decision = $4, decided_by = $5, message = $6, \
             decided_at = $7 WHERE account_id = $1 AND id = $2 AND status = 'pending'"
        )
        .bind(account_id)
        .bind(id)
        .bind(decided.status)
        .bind(decided.decision.as_str())
        .bind(&decided.decided_by)
        .bind(&decided.message)
        .bind(Timestamp::now())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(changed == 1)
    }

    /// Cancels the turn's pending approvals (it ended); the ones cancelled.
    pub async fn cancel_turn_approvals(&self, turn_id: &str) -> Result<Vec<Approval>> {
        // Read as each turn ends.
        let pending: Vec<Approval> = self.read_rows(&TURN_PENDING, &[turn_id.into()]).await?;
        let mut cancelled = Vec::new();
        for mut approval in pending {
            let changed = on_pool!(self, |pool| sqlx::query(
                "UPDATE approvals SET status = 'cancelled', decided_at = $2 \
                 WHERE id = $1 AND status = 'pending'"
            )
            .bind(&approval.id)
            .bind(Timestamp::now())
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))?;
            if changed == 1 {
                approval.status = ApprovalStatus::Cancelled;
                cancelled.push(approval);
            }
        }
        Ok(cancelled)
    }

    /// The session's own approval policy, when it has one.
    pub async fn session_approvals(
        &self,
        session_id: &SessionId,
    ) -> Result<Option<ApprovalPolicy>> {
        // Read as each turn starts.
        let stored: Option<SessionPolicy> = self
            .read_row(&SESSION_POLICY, &[session_id.as_str().into()])
            .await?;
        Ok(stored
            .and_then(|stored| stored.approvals_json)
            .map(|json| serde_json::from_str(&json))
            .transpose()?)
    }

    /// Sets the session's own approval policy.
    pub async fn set_session_approvals(
        &self,
        session_id: &SessionId,
        policy: &ApprovalPolicy,
    ) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "UPDATE sessions SET approvals_json = $2 WHERE id = $1"
        )
        .bind(session_id)
        .bind(serde_json::to_string(policy)?)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }
}
