//! The conductor's background work: recovery after a restart, the retries
//! of waits for a slot, and the sweeps of idle sessions and old keys.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::machine::{Recovery, recovery};
use super::ownership::Hold;
use super::{Conductor, KEY_SWEEP_INTERVAL, Result, Wake, seconds_since};
use crate::service::ServiceError;
use cinch_engine::engine::result::minutes_or_seconds;
use cinch_store::{CloseReason, Session, SessionStatus};

impl Conductor {
    /// Picks up after a restart: turns that were running are followed again
    /// (or end interrupted), sessions caught booting boot again, and waits
    /// that outlived the wait limit while the server was down are closed.
    /// Only the sessions whose lease is this node's, or ran out, are
    /// touched: other nodes' stay theirs; and turns still running here for
    /// sessions another node took over meanwhile are stopped.
    pub async fn recover(self: &Arc<Self>) -> Result<()> {
        self.stop_strays().await?;
        self.close_overlong_waits().await?;
        for mut session in self
            .store
            .sessions_in(&[SessionStatus::Running, SessionStatus::Booting])
            .await?
        {
            match self.hold(&mut session).await? {
                Hold::Ours => {}
                Hold::NotOurs => continue,
                Hold::TookOver => {
                    self.kick(&session.account_id, &session.id, Wake::Progress);
                    continue;
                }
            }
            match recovery(session.status, session.current_turn.as_deref()) {
                Recovery::Reattach(turn_id) => self.reattach(session, turn_id).await?,
                Recovery::Settle => {
                    let mut session = session;
                    session.status = SessionStatus::Idle;
                    self.save(&mut session).await?;
                    self.kick(&session.account_id, &session.id, Wake::Progress);
                }
            }
        }
        Ok(())
    }

    pub(super) async fn reattach(
        self: &Arc<Self>,
        session: Session,
        turn_id: String,
    ) -> Result<()> {
        self.runner.slots().hold(session.id.as_str());
        let message = self
            .store
            .turn_message(&session.account_id, &session.id, &turn_id)
            .await?;
        let Some(message) = message else {
            self.runner.slots().release(session.id.as_str());
            let mut session = session;
            session.status = SessionStatus::Idle;
            session.current_turn = None;
            return self.save(&mut session).await;
        };
        let call_id = message
            .turn_view()
            .map(|view| view.call_id)
            .unwrap_or_default();
        let environment = self.environment_of(&session).await?;
        let secrets: Vec<String> = environment
            .map(|e| e.secrets.into_values().collect())
            .unwrap_or_default();
        let engine = self.engine.clone();
        let attach_id = turn_id.clone();
        let attached = tokio::task::spawn_blocking(move || engine.attach(&attach_id, &secrets))
            .await
            .map_err(|error| ServiceError::Internal(error.into()))?;
        match attached {
            Ok(turn) => {
                tracing::info!(session = %session.id, turn = %turn_id, "following a turn again after a restart");
                self.follow_turn(&session, call_id, turn, message).await
            }
            Err(error) => {
                self.finish_turn(
                    &session.account_id,
                    &session.id,
                    message,
                    Err(format!("{error:#}")),
                    false,
                )
                .await?;
                Ok(())
            }
        }
    }

    /// Kicks the waiting sessions once a turn has ended (its slot is
    /// free), sharing the listing with the other turns ending meanwhile:
    /// at most one listing runs and one more waits, however many turns end
    /// together (a listing each cost the server as much as the rest of a
    /// turn's end when hundreds ended at once).
    pub(super) async fn kick_waiting_after_end(self: &Arc<Self>) {
        if self.waiting_kicks.asked.swap(true, Ordering::SeqCst) {
            // The one asked for lists after this turn's slot was freed.
            return;
        }
        let _listing = self.waiting_kicks.listing.lock().await;
        self.waiting_kicks.asked.store(false, Ordering::SeqCst);
        self.kick_waiting().await;
    }

    pub(super) async fn kick_waiting(self: &Arc<Self>) {
        match self.store.sessions_in(&[SessionStatus::Waiting]).await {
            Ok(sessions) => {
                for session in sessions {
                    self.kick(&session.account_id, &session.id, Wake::Progress);
                }
            }
            Err(error) => tracing::error!("listing waiting sessions: {error}"),
        }
    }

    /// Runs forever: retries waiting sessions, closes idle ones past their
    /// task's idle timeout, and forgets old idempotency keys.
    pub async fn run_background(self: Arc<Self>) {
        self.hear_approvals();
        let mut since_retry = Duration::ZERO;
        let mut since_key_sweep = KEY_SWEEP_INTERVAL;
        // Apart from the sweeps, so that a slow sweep never lets a lease run out.
        let beating = self.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(beating.settings.lease_ttl / 3).await;
                beating.heartbeat().await;
            }
        });
        loop {
            tokio::time::sleep(self.settings.sweep_interval).await;
            since_retry += self.settings.sweep_interval;
            since_key_sweep += self.settings.sweep_interval;
            if self.is_draining() {
                continue;
            }
            if let Err(error) = self.adopt_orphans().await {
                tracing::error!("taking over the sessions of nodes that stopped: {error}");
            }
            if let Err(error) = self.run_messages_posted_elsewhere().await {
                tracing::error!("looking for messages other nodes took: {error}");
            }
            if since_retry >= self.settings.retry_interval {
                since_retry = Duration::ZERO;
                if let Err(error) = self.claim_waits().await {
                    tracing::error!("taking waiting sessions from busy nodes: {error}");
                }
                self.kick_waiting().await;
            }
            if since_key_sweep >= KEY_SWEEP_INTERVAL {
                since_key_sweep = Duration::ZERO;
                if let Err(error) = self.store.sweep_keys().await {
                    tracing::error!("forgetting old idempotency keys: {error}");
                }
            }
            if let Err(error) = self.close_idle().await {
                tracing::error!("closing idle sessions: {error}");
            }
            if let Err(error) = self.close_overlong_waits().await {
                tracing::error!("closing waits past the wait limit: {error}");
            }
        }
    }

    /// Closes every wait for a turn slot past the wait limit, whether or not
    /// a retry came round.
    pub(super) async fn close_overlong_waits(&self) -> Result<()> {
        let limit = self.settings.wait_limit.as_secs() as i64;
        for waiting in self.store.sessions_in(&[SessionStatus::Waiting]).await? {
            let waited = waiting.waiting_since.map(seconds_since);
            if waited.is_none_or(|waited| waited < limit) {
                continue;
            }
            let guard = self.session_lock(&waiting.id);
            let _held = guard.lock().await;
            let Some(mut session) = self.store.session(&waiting.account_id, &waiting.id).await?
            else {
                continue;
            };
            if session.status == SessionStatus::Waiting {
                self.close_if_overlong(&mut session).await?;
            }
        }
        Ok(())
    }

    /// Closes a waiting session whose wait reached the wait limit, and says
    /// whether it did: `resource_exhausted` when its retries ran to the
    /// limit, `waiting_timeout` when the wait outlived any retry schedule
    /// (cinch was down, or no retry came). Its queued messages stay queued:
    /// the message that resumes the session delivers them with it.
    pub(super) async fn close_if_overlong(&self, session: &mut Session) -> Result<bool> {
        let Some(waited) = session.waiting_since.map(seconds_since) else {
            return Ok(false);
        };
        let limit = self.settings.wait_limit.as_secs() as i64;
        if waited < limit {
            return Ok(false);
        }
        // The last retry of the schedule comes at most a retry interval after
        // the limit, and this sweep a sweep interval after that.
        let schedule_end = self.settings.wait_limit
            + self.settings.retry_interval
            + self.settings.sweep_interval
            + Duration::from_secs(1);
        let limit_text = minutes_or_seconds(self.settings.wait_limit.as_millis() as u64);
        let (reason, message) = if waited <= schedule_end.as_secs() as i64 {
            (
                CloseReason::ResourceExhausted,
                match self.settings.max_turns_per_account {
                    None => format!(
                        "No turn slot came free in {} ({} turns may run at once). Your queued messages are kept: send a message to try again with them, or raise the cap with `cinch serve --max-turns`.",
                        limit_text, self.settings.max_turns
                    ),
                    Some(per_account) => format!(
                        "No turn slot came free in {} ({} turns may run at once, {per_account} of them an account's). Your queued messages are kept: send a message to try again with them, or raise the caps with `cinch serve --max-turns` and `--max-turns-per-account`.",
                        limit_text, self.settings.max_turns
                    ),
                },
            )
        } else {
            (
                CloseReason::WaitingTimeout,
                format!(
                    "The wait for a turn slot outlasted its retry schedule ({}; cinch was stopped or could not retry). Your queued messages are kept: send a message to try again with them.",
                    how_long_waited(waited)
                ),
            )
        };
        tracing::info!(session = %session.id, ?reason, "closing a wait for a turn slot after {waited} s");
        self.close_with(session, reason, Some(message)).await?;
        Ok(true)
    }

    pub(super) async fn close_idle(&self) -> Result<()> {
        for idle in self.store.idle_sessions().await? {
            let idle_for = seconds_since(idle.last_activity_at);
            if idle_for < idle.idle_timeout_seconds {
                continue;
            }
            let guard = self.session_lock(&idle.session_id);
            let _held = guard.lock().await;
            let Some(mut session) = self
                .store
                .session(&idle.account_id, &idle.session_id)
                .await?
            else {
                continue;
            };
            if session.status == SessionStatus::Idle
                && self.store.queued_messages(&session.id).await?.is_empty()
            {
                tracing::info!(session = %session.id, "closing an idle session after {idle_for} s");
                // After a turn that went well the attempt is done; after a
                // recovery (a failed or interrupted turn) it merely timed out,
                // and what to do next stays in error_message.
                let reason = match session.close_reason {
                    None => CloseReason::Completed,
                    Some(_) => CloseReason::IdleTimeout,
                };
                let keep = session.error_message.take();
                self.close_with(&mut session, reason, keep).await?;
            }
        }
        Ok(())
    }
}

/// How long a wait of `seconds` lasted, as its close message tells it: in
/// whole minutes from a minute on, in seconds below.
fn how_long_waited(seconds: i64) -> String {
    let ms = seconds.max(0) as u64 * 1000;
    minutes_or_seconds(if ms >= 60_000 { ms - ms % 60_000 } else { ms })
}

/// The listings of waiting sessions turns' ends ask for (see
/// [`Conductor::kick_waiting_after_end`]).
#[derive(Default)]
pub(super) struct WaitingKicks {
    /// Whether a listing is asked for that has not begun.
    asked: AtomicBool,
    /// Held by the listing under way.
    listing: tokio::sync::Mutex<()>,
}
