//! Which node runs a session: taking its lease before moving it on, the
//! heartbeat that renews the leases held, taking over the sessions of a node
//! that stopped, fencing a node that lost a lease, and draining on shutdown.
//!
//! The lease is what makes one node the session's only writer. A node takes
//! it before it boots, waits or runs a turn; its heartbeat renews it; another
//! node takes it only once it ran out (the node died or lost the database)
//! or was given back (the node drained), with the next generation. A node
//! whose heartbeat finds the generation moved on stops what it runs for the
//! session and writes to it no more: its saves are conditioned on the
//! generation it held.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use cinch_base::sync::lock;

use super::{Conductor, Result, Wake};
use crate::runs::live::EventName;
use cinch_engine::engine::result::TurnResult;
use cinch_engine::turn_dir::{FileLock, TurnDir, turns_dir};
use cinch_store::{
    AccountId, Claim, CloseReason, Session, SessionId, SessionStatus, TakenFrom, TurnOutcome,
    TurnState,
};

/// The detail of a turn whose node went away: the harness's state went
/// with it (the seed's wording for a machine that restarted).
pub(super) const NODE_LOST_DETAIL: &str =
    "The harness's state is gone: the machine restarted or its container was recreated.";

/// Whether this node may move a session on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hold {
    /// It holds the session's lease.
    Ours,
    /// It just took the session over from another node: the session was
    /// changed (its turn interrupted, its work tree to be rebuilt), so look
    /// again.
    TookOver,
    /// Another node holds it, or this node lost it: hands off.
    NotOurs,
}

impl Conductor {
    /// This node's id.
    pub fn node_id(&self) -> &str {
        &self.settings.node_id
    }

    /// Whether this node lost the session's lease to another (it never
    /// writes to the session again).
    pub(super) fn is_fenced(&self, session_id: &SessionId) -> bool {
        lock(&self.lost).contains(session_id)
    }

    /// The generation of the session's lease this node holds, if it holds it.
    pub(super) fn held_generation(&self, session_id: &SessionId) -> Option<i64> {
        lock(&self.leases).get(session_id).copied()
    }

    /// Whether the node is draining: it takes no work any more.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Takes the session's lease unless this node holds it already; when it
    /// comes from another node, takes the session over.
    pub(super) async fn hold(self: &Arc<Self>, session: &mut Session) -> Result<Hold> {
        if self.is_fenced(&session.id) || self.is_draining() {
            return Ok(Hold::NotOurs);
        }
        if self.held_generation(&session.id).is_some() {
            return Ok(Hold::Ours);
        }
        let claim = self
            .store
            .claim_lease(&session.id, self.node_id(), self.settings.lease_ttl)
            .await?;
        match claim {
            Claim::OwnedBy(node) => {
                tracing::debug!(session = %session.id, owner = %node, "another node runs the session");
                Ok(Hold::NotOurs)
            }
            Claim::Held { generation, from } => {
                lock(&self.leases).insert(session.id.clone(), generation);
                match from {
                    TakenFrom::Node(previous) => {
                        self.take_over(session, &previous).await?;
                        Ok(Hold::TookOver)
                    }
                    TakenFrom::Nobody | TakenFrom::Itself => Ok(Hold::Ours),
                }
            }
        }
    }

    /// Makes the session this node's after `previous` let its lease run out
    /// or gave it back: the turn it was running is recorded `interrupted`
    /// (its harness's state stayed on that node), and the work tree is to be
    /// rebuilt here before the next turn, which starts a new harness session.
    async fn take_over(&self, session: &mut Session, previous: &str) -> Result<()> {
        tracing::warn!(session = %session.id, from = %previous, "taking the session over from another node");
        let was_running = session.status == SessionStatus::Running;
        if let Some(turn_id) = session.current_turn.take()
            && let Some(message) = self
                .store
                .turn_message(&session.account_id, &session.id, &turn_id)
                .await?
            && let Some(mut view) = message.turn_view()
            && view.status == TurnState::Running
        {
            // Kept as the call's result before the lost node's follower, if
            // it lives on (fenced), can keep the stopped turn's: the first
            // result kept stands.
            let lost = TurnResult::interrupted(turn_id.clone(), String::new(), NODE_LOST_DETAIL);
            self.store
                .record_call_result(
                    &session.account_id,
                    session.id.as_str(),
                    &view.call_id,
                    &lost,
                )
                .await?;
            view.status = TurnState::Interrupted;
            view.result = Some(TurnOutcome {
                detail: Some(NODE_LOST_DETAIL.to_owned()),
                ..TurnOutcome::default()
            });
            let message = self
                .store
                .update_message(&message.id, NODE_LOST_DETAIL, &view.to_value())
                .await?;
            self.publish_message(&session.account_id, EventName::MessageUpdated, &message)
                .await;
        }
        self.runner.slots().release(session.id.as_str());
        if matches!(
            session.status,
            SessionStatus::Running | SessionStatus::Booting
        ) {
            session.status = SessionStatus::Idle;
        }
        if was_running {
            session.close_reason = Some(CloseReason::TurnInterrupted);
            session.error_message = Some(format!(
                "The last turn was interrupted: node {previous}, which ran it, stopped renewing its lease, and node {} took the session over. {NODE_LOST_DETAIL} The transcript is kept; send a message to carry on.",
                self.node_id()
            ));
        }
        session.workspace = None;
        session.harness_session_id = None;
        session.moved_from_node = Some(previous.to_owned());
        session.rebuilt_from = None;
        self.save(session).await
    }

    /// Renews every lease this node holds; a lease another node took is
    /// lost: what runs here for that session is stopped.
    pub(super) async fn heartbeat(&self) {
        let held: Vec<(SessionId, i64)> = lock(&self.leases)
            .iter()
            .map(|(session, generation)| (session.clone(), *generation))
            .collect();
        match self
            .store
            .renew_leases(self.node_id(), &held, self.settings.lease_ttl)
            .await
        {
            Ok(lost) => {
                for session_id in lost {
                    self.fence(&session_id).await;
                }
            }
            Err(error) => tracing::error!("renewing the sessions' leases: {error}"),
        }
        self.runner.slots().renew().await;
    }

    /// Renews the session's lease before a turn starts, on a shared
    /// database: false, and the session fenced, when another node took it
    /// meanwhile (a free node claimed its wait).
    pub(super) async fn confirm_lease(&self, session_id: &SessionId) -> Result<bool> {
        let Some(generation) = self.held_generation(session_id) else {
            return Ok(true);
        };
        if !self.store.is_shared() {
            return Ok(true);
        }
        let renewed = self
            .store
            .renew_lease(
                session_id,
                self.node_id(),
                generation,
                self.settings.lease_ttl,
            )
            .await?;
        if !renewed {
            self.fence(session_id).await;
        }
        Ok(renewed)
    }

    /// Whether the session's `turn` runs on this node (its supervisor alive).
    pub(super) fn runs_turn_here(&self, session_id: &SessionId, turn: &str) -> bool {
        self.local_running_turns(Some(session_id))
            .iter()
            .any(|running| running == turn)
    }

    /// Stops writing to a session another node took, and stops its turns here.
    pub(super) async fn fence(&self, session_id: &SessionId) {
        lock(&self.leases).remove(session_id);
        lock(&self.lost).insert(session_id.clone());
        tracing::warn!(session = %session_id, "another node took the session over: this node stops what it runs for it and writes to it no more");
        for turn in self.local_running_turns(Some(session_id)) {
            if let Err(error) = self.stop_turn(turn.clone()).await {
                tracing::error!(session = %session_id, %turn, "stopping the turn: {error}");
            }
        }
    }

    /// The turns running on this node (their supervisor alive), of
    /// `session_id` or of every session, as (turn id, session id).
    fn local_running_turns(&self, session_id: Option<&SessionId>) -> Vec<String> {
        self.local_running_turns_with_session()
            .into_iter()
            .filter(|(_, run)| session_id.is_none_or(|id| id == run))
            .map(|(turn, _)| turn)
            .collect()
    }

    fn local_running_turns_with_session(&self) -> Vec<(String, SessionId)> {
        let Ok(listing) = std::fs::read_dir(turns_dir(&self.home)) else {
            return Vec::new();
        };
        listing
            .filter_map(std::result::Result::ok)
            .filter_map(|entry| TurnDir::open(&entry.path()).ok())
            .filter(|(turn, _)| {
                !turn.result().exists() && FileLock::is_held(&turn.supervisor_lock())
            })
            .map(|(_, launch)| (launch.turn, SessionId::from(launch.run)))
            .collect()
    }

    /// After a restart: stops the turns still running here for sessions
    /// another node took over meanwhile, and never writes to those.
    pub(super) async fn stop_strays(&self) -> Result<()> {
        for (turn, session_id) in self.local_running_turns_with_session() {
            let Some(lease) = self.store.lease(&session_id).await? else {
                continue;
            };
            if lease.node_id != self.node_id() {
                tracing::warn!(session = %session_id, %turn, owner = %lease.node_id, "stopping a turn of a session another node took over");
                lock(&self.lost).insert(session_id.clone());
                if let Err(error) = self.stop_turn(turn.clone()).await {
                    tracing::error!(session = %session_id, %turn, "stopping the turn: {error}");
                }
            }
        }
        Ok(())
    }

    /// Takes over the open sessions whose node let their lease run out or
    /// gave it back.
    pub(super) async fn adopt_orphans(self: &Arc<Self>) -> Result<()> {
        if self.is_draining() {
            return Ok(());
        }
        for orphan in self.store.orphaned_sessions(self.node_id()).await? {
            let guard = self.session_lock(&orphan.session_id);
            let held = guard.lock().await;
            let Some(mut session) = self
                .store
                .session(&orphan.account_id, &orphan.session_id)
                .await?
            else {
                continue;
            };
            if self.hold(&mut session).await? == Hold::TookOver {
                drop(held);
                self.kick(&session.account_id, &session.id, Wake::Progress);
            }
        }
        Ok(())
    }

    /// On a shared database, takes sessions that wait for a turn slot on
    /// other nodes while this one has slots free, the longest waits first:
    /// each is taken over as after a failure (its work tree rebuilt here)
    /// and moved on at once.
    pub(super) async fn claim_waits(self: &Arc<Self>) -> Result<()> {
        if !self.store.is_shared() || self.is_draining() {
            return Ok(());
        }
        let free = self.runner.slots().free();
        if free == 0 {
            return Ok(());
        }
        let claimed = self
            .store
            .claim_waiting(
                self.node_id(),
                free,
                self.settings.lease_ttl,
                self.settings.max_turns_per_account,
            )
            .await?;
        for wait in claimed {
            tracing::info!(session = %wait.session_id, from = %wait.from_node, "taking a waiting session from a node with no slot free");
            let guard = self.session_lock(&wait.session_id);
            let held = guard.lock().await;
            // It may have been this node's once and lost: it is again.
            lock(&self.lost).remove(&wait.session_id);
            lock(&self.leases).insert(wait.session_id.clone(), wait.generation);
            let Some(mut session) = self
                .store
                .session(&wait.account_id, &wait.session_id)
                .await?
            else {
                continue;
            };
            self.take_over(&mut session, &wait.from_node).await?;
            drop(held);
            self.kick(&wait.account_id, &wait.session_id, Wake::Progress);
        }
        Ok(())
    }

    /// Moves on the sessions this node holds for which another node took a
    /// message (polling; a notification may come sooner through
    /// [`Conductor::message_posted_elsewhere`]).
    pub(super) async fn run_messages_posted_elsewhere(self: &Arc<Self>) -> Result<()> {
        for session in self.store.held_sessions_with_queue(self.node_id()).await? {
            self.kick(&session.account_id, &session.session_id, Wake::Message);
        }
        Ok(())
    }

    /// Another node took a message for the session: when this node runs it,
    /// it delivers the message now.
    pub fn message_posted_elsewhere(
        self: &Arc<Self>,
        account_id: &AccountId,
        session_id: &SessionId,
    ) {
        if self.held_generation(session_id).is_some() {
            self.kick(account_id, session_id, Wake::Message);
        }
    }

    /// Gives the session's lease back (it closed): the node that reopens it
    /// takes it at once.
    pub(super) async fn give_back(&self, session_id: &SessionId) -> Result<()> {
        let Some(generation) = lock(&self.leases).remove(session_id) else {
            return Ok(());
        };
        self.store
            .release_lease(session_id, self.node_id(), generation)
            .await?;
        Ok(())
    }

    /// Stops taking work, lets running turns finish for up to `grace`, then
    /// stops what still runs and gives every lease back, so that other nodes
    /// take the sessions over at once.
    pub async fn drain(&self, grace: Duration) {
        self.draining.store(true, Ordering::SeqCst);
        let deadline = std::time::Instant::now() + grace;
        while self.runner.slots().held() > 0 && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let held: Vec<(SessionId, i64)> = lock(&self.leases).drain().collect();
        tracing::info!(
            "draining: giving back {} session lease(s), {} turn(s) still running",
            held.len(),
            self.runner.slots().held()
        );
        for (session_id, generation) in held {
            // A turn that just ended is recorded under this lock: let it finish.
            let guard = self.session_lock(&session_id);
            let _recorded = guard.lock().await;
            lock(&self.lost).insert(session_id.clone());
            for turn in self.local_running_turns(Some(&session_id)) {
                if let Err(error) = self.stop_turn(turn.clone()).await {
                    tracing::error!(session = %session_id, %turn, "stopping the turn: {error}");
                }
            }
            if let Err(error) = self
                .store
                .release_lease(&session_id, self.node_id(), generation)
                .await
            {
                tracing::error!(session = %session_id, "giving the lease back: {error}");
            }
        }
    }
}
