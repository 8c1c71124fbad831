//! Approvals: the agents' permission requests of an account, and the
//! decisions on them.

use axum::extract::{Path, State};
use serde::Deserialize;

use super::extract::{Caller, Json, PageParams, Query};
use super::problem::Problem;
use super::{AppState, Envelope};
use crate::approvals::view::Approval;
use crate::service::sessions::DecisionScope;
use cinch_store::approval_policy::Decision;
use cinch_store::{AccountId, ApprovalFilter, ApprovalId, SessionId, TaskId, TokenOwner};

/// The longest note a decision may carry, in characters.
const MAX_MESSAGE_CHARS: usize = 4000;

/// Which approvals a listing shows.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct ApprovalQuery {
    /// `pending`: only those waiting; `resolved`: only those decided or cancelled.
    #[param(inline)]
    pub status: Option<StatusFilter>,
    /// Only this session's.
    pub session_id: Option<String>,
    /// Only this task's.
    pub task_id: Option<String>,
}

/// Waiting or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub(super) enum StatusFilter {
    /// Waiting for a decision.
    Pending,
    /// Decided, expired or cancelled.
    Resolved,
}

/// A decision on an approval: `decision` (with `scope` and `message`) for a
/// permission request, `answer` for a question (`kind: "question"`).
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct DecisionBody {
    /// `allow` or `deny` (a permission request).
    pub decision: Option<Decision>,
    /// `once` (the default) or `session`: the same tool with the same input
    /// is allowed without asking for the rest of the session.
    pub scope: Option<DecisionScope>,
    /// A note, recorded with the decision in the session's conversation.
    #[schema(max_length = 4000)]
    pub message: Option<String>,
    /// The answer to a question.
    #[schema(max_length = 4000)]
    pub answer: Option<String>,
}

impl DecisionBody {
    /// What the body asks for: a decision or an answer, never both.
    fn verdict(self) -> Result<Verdict, Problem> {
        match (self.decision, self.answer) {
            (Some(_), Some(_)) => Err(Problem::invalid_field(
                "answer",
                "send `decision` to decide a permission request or `answer` to answer a question, not both",
            )),
            (None, None) => Err(Problem::invalid_field(
                "decision",
                "required: `decision` (`allow` or `deny`) for a permission request, or `answer` for a question",
            )),
            (None, Some(answer)) => {
                if self.scope.is_some() || self.message.is_some() {
                    let field = if self.scope.is_some() {
                        "scope"
                    } else {
                        "message"
                    };
                    return Err(Problem::invalid_field(
                        field,
                        "an answer takes no scope or message: send only `answer`",
                    ));
                }
                let answer = answer.trim().to_owned();
                if answer.is_empty() {
                    return Err(Problem::invalid_field("answer", "must not be blank"));
                }
                check_length("answer", &answer)?;
                Ok(Verdict::Answer(answer))
            }
            (Some(decision), None) => {
                if let Some(message) = &self.message {
                    check_length("message", message)?;
                }
                Ok(Verdict::Decision {
                    decision,
                    scope: self.scope.unwrap_or_default(),
                    message: self.message.filter(|message| !message.trim().is_empty()),
                })
            }
        }
    }
}

/// A decision's body, checked.
enum Verdict {
    Decision {
        decision: Decision,
        scope: DecisionScope,
        message: Option<String>,
    },
    Answer(String),
}

fn check_length(field: &str, text: &str) -> Result<(), Problem> {
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(Problem::invalid_field(
            field,
            format!("at most {MAX_MESSAGE_CHARS} characters"),
        ));
    }
    Ok(())
}

/// The account's approvals, newest first.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/approvals",
    params(("account" = String, Path, description = "The account"), ApprovalQuery, PageParams),
    responses(
        (status = 200, body = Envelope<Vec<Approval>>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "approvals"
)]
pub(super) async fn list_approvals(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(query): Query<ApprovalQuery>,
    Query(page): Query<PageParams>,
) -> Result<axum::Json<Envelope<Vec<Approval>>>, Problem> {
    caller.account(&account)?;
    let session_id = query.session_id.map(SessionId::from);
    let task_id = query.task_id.map(TaskId::from);
    let filter = ApprovalFilter {
        pending: query.status.map(|status| status == StatusFilter::Pending),
        session_id: session_id.as_ref(),
        task_id: task_id.as_ref(),
    };
    let page = app
        .conductor
        .approvals(&account, filter, page.cursor()?, page.limit()?)
        .await?;
    Ok(Envelope::page(
        page.items.into_iter().map(Into::into).collect(),
        page.next_cursor,
    ))
}

/// One approval.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/approvals/{approval}",
    params(
        ("account" = String, Path, description = "The account"),
        ("approval" = String, Path, description = "The approval"),
    ),
    responses(
        (status = 200, body = Envelope<Approval>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "approvals"
)]
pub(super) async fn get_approval(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, approval)): Path<(AccountId, ApprovalId)>,
) -> Result<axum::Json<Envelope<Approval>>, Problem> {
    caller.account(&account)?;
    let approval = app.conductor.approval(&account, &approval).await?;
    Ok(Envelope::of(approval.into()))
}

/// Decides an approval (`decision`), or answers a question (`answer`). The
/// first decision wins: the same decision again answers 200, a different one
/// 409 naming who decided; so does a decision on an approval whose turn has
/// ended. A `decision` on a question or an `answer` on a permission request
/// is a 422 saying which to send.
#[utoipa::path(
    post,
    path = "/v1/accounts/{account}/approvals/{approval}/decision",
    params(
        ("account" = String, Path, description = "The account"),
        ("approval" = String, Path, description = "The approval"),
    ),
    request_body = DecisionBody,
    responses(
        (status = 200, body = Envelope<Approval>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 409, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "approvals"
)]
pub(super) async fn decide_approval(
    State(app): State<AppState>,
    caller: Caller,
    Path((account, approval)): Path<(AccountId, ApprovalId)>,
    Json(body): Json<DecisionBody>,
) -> Result<axum::Json<Envelope<Approval>>, Problem> {
    caller.account(&account)?;
    let verdict = body.verdict()?;
    let decided_by = match &caller.0.owner {
        TokenOwner::Member(id) => id.clone(),
        TokenOwner::Agent(id) => id.to_string(),
    };
    let approval = match verdict {
        Verdict::Decision {
            decision,
            scope,
            message,
        } => {
            app.conductor
                .decide_approval(&account, &approval, decision, scope, message, &decided_by)
                .await?
        }
        Verdict::Answer(answer) => {
            app.conductor
                .answer_question(&account, &approval, answer, &decided_by)
                .await?
        }
    };
    Ok(Envelope::of(approval))
}
