//! Turns the server follows and each run's live events. A turn's progress
//! becomes `tool.progress` events of its run; sessions add their status and
//! message changes. Events are numbered per run and stored, and streams see
//! an event only once it is stored, so a stream resumes with `Last-Event-ID`
//! across restarts too: what a client was sent keeps its number. A turn
//! followed again after a restart re-reads its log from the start; what its
//! run already holds of it is not published again.
//!
//! On SQLite this node is the database's only writer: it numbers events as
//! they are published and keeps the newest in memory. On PostgreSQL every node
//! writes the same runs (a session's turn on one node, a message posted on
//! another), so the database numbers them as it stores them ([`Numbering`]),
//! and what a node holds in memory is what it read back: when it is told
//! another node stored some ([`Runs::read_back`], from `sessions::nodes`), after
//! storing its own, and on each new stream. A stream's ids are then the same
//! on every node, and `Last-Event-ID` resumes on any.

mod event;
mod events;
mod history;
mod pump;
mod writer;

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{mpsc, watch};

use crate::webhooks::{EventKind, Webhooks};
use cinch_base::sync::lock;
use cinch_engine::engine::Turn;
use cinch_engine::engine::result::TurnResult;
use cinch_store::{AccountId, RunKey, Store};
use event::Numbering;
pub(crate) use event::{EventName, RunEvent};
pub(crate) use events::RunEvents;
use writer::{Job, Pending};

/// Runs whose events stay in memory before dormant ones are dropped.
const KEPT_RUNS: usize = 256;

/// When the runs in memory are looked over for dormant ones: once they are
/// a quarter more than the last look left, and at least [`KEPT_RUNS`].
/// Looking at every new run once more than [`KEPT_RUNS`] were all active
/// made the 1,000th session's start look over 999 others, half a million
/// looks for 1,000 sessions; now about five a new run, while the dormant
/// runs kept meanwhile stay within a quarter of those active.
#[derive(Debug)]
struct Sweep {
    next_at: AtomicUsize,
}

impl Sweep {
    fn new() -> Self {
        Self {
            next_at: AtomicUsize::new(KEPT_RUNS),
        }
    }

    /// Drops the runs of `runs` that are `dormant` when they have grown to
    /// the next look's size.
    fn maybe<K, V>(&self, runs: &mut HashMap<K, V>, dormant: impl Fn(&V) -> bool) {
        if runs.len() < self.next_at.load(Ordering::Relaxed) {
            return;
        }
        runs.retain(|_, run| !dormant(run));
        self.next_at.store(
            (runs.len() + runs.len() / 4).max(KEPT_RUNS),
            Ordering::Relaxed,
        );
    }
}

/// What the server knows of a turn it follows.
#[derive(Debug, Clone, Default)]
pub struct LiveState {
    /// The harness session, once reported.
    pub session_id: Option<String>,
    /// The result once the turn has ended, or why it could not be had.
    pub outcome: Option<Result<Arc<TurnResult>, String>>,
    /// Whether the result is in the database already (its session need
    /// not store it again).
    pub result_stored: bool,
}

/// A permission request of a followed turn, on its way to the conductor.
#[derive(Debug, Clone)]
pub struct AskedApproval {
    /// The turn's call.
    pub call: CallRef,
    /// The turn.
    pub turn_id: String,
    /// Its harness.
    pub harness: String,
    /// The request, masked of the turn's secrets.
    pub request: cinch_driver_sdk::PermissionRequest,
}

/// Which call of which run a followed turn is.
#[derive(Debug, Clone)]
pub struct CallRef {
    /// The account.
    pub account_id: AccountId,
    /// The run.
    pub run_id: String,
    /// The call.
    pub call_id: String,
}

/// The turns the server follows, by turn id, and the runs' events, by
/// account and run.
pub struct Runs {
    store: Store,
    webhooks: Webhooks,
    turns: Mutex<HashMap<String, watch::Sender<LiveState>>>,
    runs: Arc<RunMap>,
    /// When `runs` is next looked over for dormant ones (under its lock).
    sweep: Sweep,
    /// The runs' stored events no longer in memory, for late streams.
    history: Arc<history::History>,
    numbering: Numbering,
    writer: mpsc::UnboundedSender<Job>,
    closing: watch::Sender<bool>,
    /// Where followed turns' permission requests go, and where they wait
    /// until the conductor takes them (see [`Runs::take_approvals`]).
    approvals: mpsc::UnboundedSender<AskedApproval>,
    asked: Mutex<Option<mpsc::UnboundedReceiver<AskedApproval>>>,
}

/// The runs whose events are in memory.
pub(super) type RunMap = tokio::sync::Mutex<HashMap<RunKey, Arc<RunEvents>>>;

impl Runs {
    /// Runs whose events are stored in `store`. Must be called inside a
    /// Tokio runtime: a task (or a thread, see [`writer::start`]) writes
    /// the events.
    pub fn new(store: Store, webhooks: Webhooks) -> std::io::Result<Self> {
        let (writer, queue) = mpsc::unbounded_channel();
        let runs = Arc::new(RunMap::default());
        let numbering = Numbering::of(&store);
        writer::start(store.clone(), queue, runs.clone())?;
        let (approvals, asked) = mpsc::unbounded_channel();
        let history = Arc::new(history::History::new(store.clone()));
        Ok(Self {
            approvals,
            asked: Mutex::new(Some(asked)),
            store,
            webhooks,
            turns: Mutex::default(),
            runs,
            sweep: Sweep::new(),
            history,
            numbering,
            writer,
            closing: watch::Sender::new(false),
        })
    }

    /// Adds an event to the account's run (see [`RunEvents::publish`]),
    /// without reading the run's events when the database numbers them.
    pub async fn publish(
        &self,
        account_id: &AccountId,
        run_id: &str,
        name: EventName,
        data: Value,
    ) {
        let run = RunKey {
            account_id: account_id.to_owned(),
            run_id: run_id.to_owned(),
        };
        if self.numbering == Numbering::Database {
            let _ = self.writer.send(Job::Store(Pending {
                run,
                name,
                data: data.to_string().into(),
                numbered: None,
            }));
            return;
        }
        match self.events(account_id, run_id).await {
            Ok(events) => events.publish(name, &data),
            Err(error) => tracing::error!(run = %run_id, "publishing {}: {error:#}", name.as_str()),
        }
    }

    /// Reads back what the database holds of the run past what this node
    /// has in memory, when it has the run in memory: another node stored
    /// events of it.
    pub async fn read_back(&self, run: &RunKey) {
        let events = self.runs.lock().await.get(run).cloned();
        if let Some(events) = events {
            events.read_back(&self.store).await;
        }
    }

    /// Reads back every run in memory that a stream or a followed turn
    /// holds (`all`: every one): notices about them may have been missed.
    pub async fn read_back_held(&self, all: bool) {
        let held: Vec<Arc<RunEvents>> = self
            .runs
            .lock()
            .await
            .values()
            .filter(|events| all || events.is_held())
            .cloned()
            .collect();
        for events in held {
            events.read_back(&self.store).await;
        }
    }

    /// Where the accounts' events are sent.
    pub fn webhooks(&self) -> &Webhooks {
        &self.webhooks
    }

    /// The run's events, read back from the database the first time.
    /// On PostgreSQL what it holds is read back first: a notice from
    /// another node may have been missed.
    pub async fn events(
        &self,
        account_id: &AccountId,
        run_id: &str,
    ) -> anyhow::Result<Arc<RunEvents>> {
        let key = RunKey {
            account_id: account_id.to_owned(),
            run_id: run_id.to_owned(),
        };
        let mut runs = self.runs.lock().await;
        if let Some(events) = runs.get(&key).cloned() {
            drop(runs);
            if self.numbering == Numbering::Database {
                events.read_back(&self.store).await;
            }
            return Ok(events);
        }
        let newest = self
            .store
            .newest_events(account_id, run_id, events::KEPT_EVENTS)
            .await?;
        let events = Arc::new(RunEvents::new(
            key.clone(),
            self.numbering,
            self.history.clone(),
            newest,
            self.writer.clone(),
        ));
        self.sweep.maybe(&mut runs, |events| events.is_dormant());
        runs.insert(key, events.clone());
        Ok(events)
    }

    /// The state of a followed turn, watched; `None` when it is not followed.
    pub fn watch(&self, turn_id: &str) -> Option<watch::Receiver<LiveState>> {
        lock(&self.turns).get(turn_id).map(watch::Sender::subscribe)
    }

    /// Follows `turn`: its progress goes to its run's events as the engine
    /// reads it, its session and result to its live state (a thread of its
    /// own waits for the end). A turn followed
    /// before (by a server since restarted) carries on after what its run
    /// already holds of it; a turn this server follows already (attached
    /// twice at once) is not followed again: the live state is shared.
    pub async fn follow(
        &self,
        call: CallRef,
        turn: Turn,
    ) -> anyhow::Result<watch::Receiver<LiveState>> {
        let events = self.events(&call.account_id, &call.run_id).await?;
        let approvals = self.approvals.clone();
        let published = events.published_of(&call.call_id).await?;
        let state = {
            let mut turns = lock(&self.turns);
            if let Some(followed) = turns.get(turn.id()) {
                return Ok(followed.subscribe());
            }
            let state = watch::Sender::new(LiveState::default());
            turns.insert(turn.id().to_owned(), state.clone());
            state
        };
        let receiver = state.subscribe();
        // The result outlives the turn's files, which go with its run's log;
        // webhooks hear of the end once (not again from a restarted server).
        let store = self.store.clone();
        let webhooks = (!published.1).then(|| self.webhooks.clone());
        let (ended, result) = tokio::sync::oneshot::channel::<Arc<TurnResult>>();
        let stored = call.clone();
        let run_events = events.clone();
        let outcome = state.clone();
        tokio::spawn(async move {
            let Ok(result) = result.await else {
                outcome.send_modify(|state| {
                    state.outcome = Some(Err("the turn's follower stopped".to_owned()))
                });
                return;
            };
            // The end event is stored before the result: a server killed in
            // between follows the turn again (no stored result) and
            // publishes the end then, rather than never. The outcome is
            // shown only once stored, so whoever waits for it (`?wait=true`)
            // reads it back everywhere.
            run_events.flushed().await;
            let recorded = store
                .record_call_result(&stored.account_id, &stored.run_id, &stored.call_id, &result)
                .await;
            if let Err(error) = &recorded {
                tracing::error!(call = %stored.call_id, "storing the turn's result: {error}");
            }
            outcome.send_modify(|state| {
                state.outcome = Some(Ok(result.clone()));
                state.result_stored = recorded.is_ok();
            });
            if let Some(webhooks) = webhooks {
                webhooks.notify(
                    &stored.account_id,
                    EventKind::TurnEnded,
                    json!({"run_id": stored.run_id, "call_id": stored.call_id, "result": *result}),
                );
            }
        });
        std::thread::Builder::new()
            .name(format!("follow-{}", turn.id()))
            .spawn(move || {
                let result = pump::pump(&call, turn, &state, &events, published, approvals);
                let _ = ended.send(result);
            })?;
        Ok(receiver)
    }

    /// The permission requests of the turns followed here, from the first;
    /// `None` once taken.
    pub fn take_approvals(&self) -> Option<mpsc::UnboundedReceiver<AskedApproval>> {
        lock(&self.asked).take()
    }

    /// Whether the server is shutting down, watched.
    pub fn closing(&self) -> watch::Receiver<bool> {
        self.closing.subscribe()
    }

    /// Ends every live event stream (the server is shutting down).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;

    /// Adds `count` runs, each active or not as `active` says, looking
    /// over the map as a new run does; returns how many runs were looked
    /// at and the most the map held.
    fn add_runs(
        sweep: &Sweep,
        runs: &mut HashMap<usize, bool>,
        count: usize,
        active: impl Fn(usize) -> bool,
    ) -> (usize, usize) {
        let looked = Cell::new(0);
        let mut most = 0;
        for n in 0..count {
            sweep.maybe(runs, |active| {
                looked.set(looked.get() + 1);
                !active
            });
            runs.insert(n, active(n));
            most = most.max(runs.len());
        }
        (looked.get(), most)
    }

    #[test]
    fn runs_are_looked_over_in_proportion_to_those_made() {
        let sweep = Sweep::new();
        let mut runs = HashMap::new();
        let (looked, most) = add_runs(&sweep, &mut runs, 1_000, |_| true);
        assert!(looked <= 5 * 1_000, "{looked} looks for 1,000 active runs");
        assert_eq!(most, 1_000);
    }

    #[test]
    fn dormant_runs_go_once_the_map_has_grown_a_quarter() {
        let sweep = Sweep::new();
        let mut runs = HashMap::new();
        // Every other run is dormant from the start: the map holds the
        // active ones and at most a quarter more, or KEPT_RUNS.
        let (_, most) = add_runs(&sweep, &mut runs, 4_000, |n| n % 2 == 0);
        let active = runs.values().filter(|active| **active).count();
        assert_eq!(active, 2_000);
        assert!(
            most <= active + active / 4 + 1,
            "{most} runs held for {active} active"
        );
        assert!(runs.len() < 4_000);
    }
}
