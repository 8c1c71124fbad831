//! The approvals of sessions' turns: a permission request a turn reports
//! is decided by the session's policy or stored and published to wait for a
//! person (SSE `approval.requested`, the webhook), with a deadline; a
//! decision taken on any node is stored first (the first one wins), told
//! to the session's conversation, and handed to the node running the turn,
//! which leaves it for the turn's follower to answer the agent with. A turn
//! that ends cancels what it still waits for.
//!
//! A request read again after a restart is the same row (its turn and key),
//! so nothing is asked twice: a pending one gets its deadline again, a
//! decided one is answered (the engine answers a request once).

use cinch_store::ApprovalId;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::{Conductor, Result};
use crate::approvals::can_ask;
use crate::approvals::view::Approval as ApprovalView;
use crate::runs::live::{AskedApproval, EventName};
use crate::service::ServiceError;
use crate::webhooks::EventKind;
use cinch_base::timestamp::Timestamp;
use cinch_engine::engine::conversation::Answer;
use cinch_store::approval_policy::{ApprovalPolicy, Decision, Verdict};
use cinch_store::{
    AccountId, Approval, ApprovalStatus, Decided, Environment, MessageKind, NewApproval, Session,
    SessionId,
};

/// Who decided when the deadline did (a rule's decision is `policy`'s).
const BY_TIMEOUT: &str = "timeout";

/// The kind of an approval that is a question to the user: answered, never
/// decided by a rule.
const QUESTION: &str = "question";

/// How long a decision applies to the session beyond its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DecisionScope {
    /// This request only.
    #[default]
    Once,
    /// This request, and the same tool with the same input for the rest of
    /// the session (an allow rule added to the session's policy).
    Session,
}

impl Conductor {
    /// The approval policy a turn of `session` runs under: its own, else its
    /// environment's, else none (nothing is asked).
    pub(super) async fn approval_policy(
        &self,
        session: &Session,
        environment: Option<&Environment>,
    ) -> Result<ApprovalPolicy> {
        if let Some(policy) = self.store.session_approvals(&session.id).await? {
            return Ok(policy);
        }
        Ok(environment
            .and_then(|environment| environment.approvals.clone())
            .unwrap_or_default())
    }

    /// Refuses a policy that needs asking on a harness that cannot ask,
    /// naming the harnesses that can.
    pub(super) fn check_policy_fits(&self, policy: &ApprovalPolicy, harness: &str) -> Result<()> {
        if !policy.needs_asking() || can_ask(&self.engine.registry(), harness) {
            return Ok(());
        }
        let able = crate::approvals::harnesses_that_ask(&self.engine.registry());
        Err(ServiceError::invalid_field(
            "approvals",
            format!(
                "harness `{harness}` cannot ask for approval (it runs with its permissions off); \
                 use one that can: {}, or set approvals.mode to `allow` with no rules",
                if able.is_empty() {
                    "none is installed".to_owned()
                } else {
                    able.join(", ")
                }
            ),
        ))
    }

    /// Takes the permission requests of the turns this node follows, for
    /// as long as the node runs.
    pub fn hear_approvals(self: &Arc<Self>) {
        let Some(mut asked) = self.runs.take_approvals() else {
            return;
        };
        let this = self.clone();
        tokio::spawn(async move {
            while let Some(asked) = asked.recv().await {
                let turn = asked.turn_id.clone();
                if let Err(error) = this.approval_asked(asked).await {
                    tracing::error!(%turn, "taking the agent's permission request: {error}");
                }
            }
        });
    }

    async fn approval_asked(self: &Arc<Self>, asked: AskedApproval) -> Result<()> {
        let account_id = asked.call.account_id.clone();
        let Some(session) = self
            .store
            .session(&account_id, &SessionId::from(asked.call.run_id.clone()))
            .await?
        else {
            return Ok(());
        };
        let environment = self.environment_of(&session).await?;
        let policy = self.approval_policy(&session, environment.as_ref()).await?;
        let request = asked.request;
        let decided = match policy.verdict(&request.tool, &request.kind, request.input.as_deref()) {
            // A rule can allow or deny a tool, but only a person can answer.
            _ if request.kind == QUESTION => None,
            Verdict::Decided(decision) => Some(decision),
            Verdict::Ask => None,
        };
        let deadline = Timestamp::now() + Duration::from_secs(policy.timeout().as_secs());
        let options: Vec<crate::approvals::view::ApprovalOption> = request
            .options
            .iter()
            .map(|option| crate::approvals::view::ApprovalOption {
                id: option.id.clone(),
                name: option.name.clone(),
                kind: option.kind.clone(),
            })
            .collect();
        let (approval, created) = self
            .store
            .insert_approval(
                &account_id,
                NewApproval {
                    session_id: session.id.clone(),
                    task_id: session.task_id.clone(),
                    turn_id: asked.turn_id.clone(),
                    request_key: request.key.clone(),
                    harness: asked.harness.clone(),
                    tool: request.tool.clone(),
                    kind: request.kind.clone(),
                    title: request.title.clone(),
                    input: request.input.clone(),
                    options_json: serde_json::to_string(&options)
                        .map_err(|error| ServiceError::Internal(error.into()))?,
                    deadline: Some(deadline),
                    decided,
                },
            )
            .await?;
        if created {
            let view = json!(ApprovalView::from(approval.clone()));
            if approval.status == ApprovalStatus::Pending {
                self.publish(
                    &account_id,
                    session.id.as_str(),
                    EventName::ApprovalRequested,
                    view.clone(),
                )
                .await;
                self.runs
                    .webhooks()
                    .notify(&account_id, EventKind::ApprovalRequested, view);
            } else {
                self.record_decision(&session, &approval).await?;
            }
        }
        match approval.status {
            ApprovalStatus::Pending => self.arm_deadline(approval, policy.timeout()),
            ApprovalStatus::Cancelled => {}
            _ => self.answer_agent(&approval).await,
        }
        Ok(())
    }

    /// Decides the approval when its deadline comes, unless someone did.
    fn arm_deadline(self: &Arc<Self>, approval: Approval, fallback: Duration) {
        let wait = approval
            .deadline
            .map(|deadline| deadline.saturating_duration_since(Timestamp::now()))
            .unwrap_or(fallback);
        let this = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            if let Err(error) = this.expire(&approval).await {
                tracing::error!(approval = %approval.id, "deciding an approval at its deadline: {error}");
            }
        });
    }

    async fn expire(self: &Arc<Self>, approval: &Approval) -> Result<()> {
        let Some(session) = self
            .store
            .session(&approval.account_id, &approval.session_id)
            .await?
        else {
            return Ok(());
        };
        let environment = self.environment_of(&session).await?;
        let policy = self.approval_policy(&session, environment.as_ref()).await?;
        let decided = Decided {
            status: ApprovalStatus::Expired,
            decision: policy.on_timeout(),
            decided_by: BY_TIMEOUT.to_owned(),
            message: None,
        };
        if self
            .store
            .decide_approval(&approval.account_id, &approval.id, &decided)
            .await?
        {
            self.decided(&session, &approval.id).await?;
        }
        Ok(())
    }

    /// Records `decision` by `decided_by` on the account's approval `id`.
    /// The first decision wins: the same one again is answered with the
    /// approval; a different one, or one on a turn that ended, conflicts.
    pub async fn decide_approval(
        self: &Arc<Self>,
        account_id: &AccountId,
        id: &ApprovalId,
        decision: Decision,
        scope: DecisionScope,
        message: Option<String>,
        decided_by: &str,
    ) -> Result<ApprovalView> {
        let approval = self.approval(account_id, id).await?;
        if approval.kind == QUESTION {
            return Err(ServiceError::invalid_field(
                "decision",
                format!(
                    "approval {id} is a question ({}): answer it with {{\"answer\": \"...\"}}, not a decision",
                    approval.title
                ),
            ));
        }
        if approval.status == ApprovalStatus::Pending {
            let decided = Decided {
                status: ApprovalStatus::of(decision),
                decision,
                decided_by: decided_by.to_owned(),
                message: message.clone(),
            };
            if self.store.decide_approval(account_id, id, &decided).await? {
                let session = self
                    .store
                    .session(account_id, &approval.session_id)
                    .await?
                    .ok_or_else(|| {
                        ServiceError::NotFound(format!("no session {}", approval.session_id))
                    })?;
                if scope == DecisionScope::Session && decision == Decision::Allow {
                    self.allow_for_session(&session, &approval).await?;
                }
                return self.decided(&session, id).await.map(ApprovalView::from);
            }
        }
        let approval = self.approval(account_id, id).await?;
        match (
            approval.status,
            approval.decision.as_deref().and_then(Decision::parse),
        ) {
            (ApprovalStatus::Cancelled, _) => Err(ServiceError::Conflict(format!(
                "approval {id} can no longer be decided: its turn ended before anyone did"
            ))),
            (_, Some(recorded)) if recorded == decision => Ok(approval.into()),
            (status, recorded) => Err(ServiceError::Conflict(format!(
                "approval {id} was already decided: {} by {} at {} ({}); the first decision stands",
                recorded.map_or("decided", Decision::as_str),
                approval.decided_by.as_deref().unwrap_or("someone"),
                approval
                    .decided_at
                    .map_or("an earlier time".into(), |at| at.to_string()),
                status.as_str(),
            ))),
        }
    }

    /// Records `answer` by `answered_by` to the account's question `id`. The
    /// first answer wins: the same answer again is answered with the
    /// question; another, or one once the turn ended, conflicts.
    pub async fn answer_question(
        self: &Arc<Self>,
        account_id: &AccountId,
        id: &ApprovalId,
        answer: String,
        answered_by: &str,
    ) -> Result<ApprovalView> {
        let approval = self.approval(account_id, id).await?;
        if approval.kind != QUESTION {
            return Err(ServiceError::invalid_field(
                "answer",
                format!(
                    "approval {id} asks permission for a tool ({}), it is not a question: \
                     send {{\"decision\": \"allow\"}} or {{\"decision\": \"deny\"}}",
                    approval.tool
                ),
            ));
        }
        if approval.status == ApprovalStatus::Pending {
            let decided = Decided {
                status: ApprovalStatus::Answered,
                decision: Decision::Allow,
                decided_by: answered_by.to_owned(),
                message: Some(answer.clone()),
            };
            if self.store.decide_approval(account_id, id, &decided).await? {
                let session = self
                    .store
                    .session(account_id, &approval.session_id)
                    .await?
                    .ok_or_else(|| {
                        ServiceError::NotFound(format!("no session {}", approval.session_id))
                    })?;
                return self.decided(&session, id).await.map(ApprovalView::from);
            }
        }
        let approval = self.approval(account_id, id).await?;
        match approval.status {
            ApprovalStatus::Answered if approval.message.as_deref() == Some(answer.as_str()) => {
                Ok(approval.into())
            }
            ApprovalStatus::Cancelled => Err(ServiceError::Conflict(format!(
                "question {id} can no longer be answered: its turn ended before anyone did"
            ))),
            status => Err(ServiceError::Conflict(format!(
                "question {id} was already {} by {} at {}; the first answer stands",
                status.as_str(),
                approval.decided_by.as_deref().unwrap_or("someone"),
                approval
                    .decided_at
                    .map_or("an earlier time".into(), |at| at.to_string()),
            ))),
        }
    }

    /// The account's approval `id`.
    pub async fn approval(&self, account_id: &AccountId, id: &ApprovalId) -> Result<Approval> {
        self.store
            .approval(account_id, id)
            .await?
            .ok_or_else(|| ServiceError::NotFound(format!("no approval {id} in this account")))
    }

    /// The approval `id` was just decided: told to the conversation and to
    /// the session's streams, and handed to the node running its turn.
    async fn decided(self: &Arc<Self>, session: &Session, id: &ApprovalId) -> Result<Approval> {
        let approval = self.approval(&session.account_id, id).await?;
        self.record_decision(session, &approval).await?;
        if self.store.is_shared() && !self.runs_turn_here(&session.id, &approval.turn_id) {
            self.decided_on_other_nodes(&session.account_id, &session.id, id)
                .await?;
        } else {
            self.answer_agent(&approval).await;
        }
        Ok(approval)
    }

    /// Another node decided the approval `id`: its agent is answered here
    /// when its turn runs here.
    pub(super) async fn deliver_decided(self: &Arc<Self>, account_id: &AccountId, id: &ApprovalId) {
        match self.store.approval(account_id, id).await {
            Ok(Some(approval)) if self.runs_turn_here(&approval.session_id, &approval.turn_id) => {
                self.answer_agent(&approval).await;
            }
            Ok(_) => {}
            Err(error) => tracing::error!(approval = %id, "reading a decided approval: {error}"),
        }
    }

    /// The decision as a message of the session and an
    /// `approval.resolved` event.
    async fn record_decision(&self, session: &Session, approval: &Approval) -> Result<()> {
        let what = match approval.status {
            ApprovalStatus::Allowed => "allowed",
            ApprovalStatus::Denied => "denied",
            ApprovalStatus::Answered => "answered",
            ApprovalStatus::Expired if approval.kind == QUESTION => "unanswered at its deadline",
            ApprovalStatus::Expired if approval.decision.as_deref() == Some("allow") => {
                "allowed at its deadline"
            }
            ApprovalStatus::Expired => "denied at its deadline",
            ApprovalStatus::Cancelled => "cancelled (the turn ended)",
            ApprovalStatus::Pending => return Ok(()),
        };
        let by = approval.decided_by.as_deref().unwrap_or("cinch");
        let mut text = format!("{} {what} by {by}: {}", approval.tool, approval.title);
        if let Some(note) = approval.message.as_deref().filter(|note| !note.is_empty()) {
            text.push_str(&format!(" — {note}"));
        }
        let message = self
            .store
            .add_message(session, MessageKind::Approval, &text, None, true)
            .await?;
        self.publish_message(&session.account_id, EventName::MessageCreated, &message)
            .await;
        self.publish(
            &session.account_id,
            session.id.as_str(),
            EventName::ApprovalResolved,
            json!(ApprovalView::from(approval.clone())),
        )
        .await;
        Ok(())
    }

    /// Leaves the decision for the turn's follower, which answers the
    /// agent once; nothing when the turn has ended.
    async fn answer_agent(&self, approval: &Approval) {
        let Some(decision) = approval.decision.as_deref().and_then(Decision::parse) else {
            return;
        };
        let answer = Answer {
            key: approval.request_key.clone(),
            allow: decision == Decision::Allow,
            message: approval.message.clone(),
        };
        let engine = self.engine.clone();
        let turn = approval.turn_id.clone();
        let answered = tokio::task::spawn_blocking(move || engine.answer(&turn, &answer)).await;
        if let Ok(Err(error)) = answered {
            tracing::info!(approval = %approval.id, "the agent was not answered: {error:#}");
        }
    }

    /// An allow rule for the approval's tool and input, added to the
    /// session's own policy (a copy of the one it ran under).
    async fn allow_for_session(&self, session: &Session, approval: &Approval) -> Result<()> {
        let environment = self.environment_of(session).await?;
        let mut policy = self.approval_policy(session, environment.as_ref()).await?;
        let rule = ApprovalPolicy::allow_rule_for(&approval.tool, approval.input.as_deref());
        if !policy.allow.contains(&rule) {
            policy.allow.push(rule);
        }
        Ok(self
            .store
            .set_session_approvals(&session.id, &policy)
            .await?)
    }

    /// The turn ended: what it still waited for is cancelled.
    pub(super) async fn turn_ended_approvals(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        turn_id: &str,
    ) -> Result<()> {
        let cancelled = self.store.cancel_turn_approvals(turn_id).await?;
        if cancelled.is_empty() {
            return Ok(());
        }
        let Some(session) = self.store.session(account_id, session_id).await? else {
            return Ok(());
        };
        for approval in cancelled {
            self.record_decision(&session, &approval).await?;
        }
        Ok(())
    }
}

impl Conductor {
    /// Whether the approval's turn would ask for `policy` (see
    /// [`ApprovalPolicy::needs_asking`]).
    pub(super) fn turn_asks(&self, policy: &ApprovalPolicy, harness: &str) -> bool {
        policy.needs_asking() && can_ask(&self.engine.registry(), harness)
    }

    /// A page of the account's approvals.
    pub async fn approvals(
        &self,
        account_id: &AccountId,
        filter: cinch_store::ApprovalFilter<'_>,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<cinch_store::Page<Approval>> {
        Ok(self
            .store
            .approvals(account_id, filter, cursor, limit)
            .await?)
    }
}
