//! What this node hears from the other nodes sharing its PostgreSQL
//! database, the moment they commit: a run's new events, read back into the
//! runs this node has in memory so that its streams show them live; and a
//! message posted for a session, which the conductor moves on here. A
//! notice is lost while the connection is down: the runs streamed here are
//! read back on reconnecting, and every [`POLL_INTERVAL`] whatever happens.
//! On SQLite there is no other node and nothing to hear.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::Conductor;
use crate::runs::live::Runs;
use cinch_store::{AccountId, ApprovalId, Notice, SessionId, SessionWake, Store};

/// How often the runs streamed here are read back without a notice: the
/// fallback for notices lost, not the way events normally arrive.
pub(crate) const POLL_INTERVAL: Duration = Duration::from_secs(5);

/// How long to wait before listening again after the connection failed.
const RELISTEN_AFTER: Duration = Duration::from_secs(1);

/// This process, as the wakes it sends name it: it leaves its own be.
fn this_node() -> &'static str {
    static NODE: OnceLock<String> = OnceLock::new();
    NODE.get_or_init(|| {
        cinch_store::random_hex(8).unwrap_or_else(|_| std::process::id().to_string())
    })
}

/// Starts listening to the other nodes (nothing on SQLite): their runs'
/// events go to `runs`, their wakes to `conductor`.
pub fn hear_other_nodes(store: &Store, runs: Arc<Runs>, conductor: Arc<Conductor>) {
    if !store.is_shared() {
        return;
    }
    tokio::spawn(poll(runs.clone()));
    let store = store.clone();
    tokio::spawn(listen(store, runs, move |wake| conductor.woken(wake)));
}

/// Reads back the runs streamed here every [`POLL_INTERVAL`].
async fn poll(runs: Arc<Runs>) {
    let mut ticks = tokio::time::interval(POLL_INTERVAL);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        runs.read_back_held(false).await;
    }
}

/// Listens for notices forever, listening again when the connection fails.
async fn listen(store: Store, runs: Arc<Runs>, woken: impl Fn(&SessionWake)) {
    loop {
        let mut listener = match store.listen().await {
            Ok(Some(listener)) => listener,
            Ok(None) => return,
            Err(error) => {
                tracing::warn!("listening to the other nodes: {error}");
                tokio::time::sleep(RELISTEN_AFTER).await;
                continue;
            }
        };
        // Whatever was stored while nobody listened.
        runs.read_back_held(true).await;
        loop {
            match listener.next().await {
                Ok(Notice::RunEvents(run)) => {
                    let runs = runs.clone();
                    tokio::spawn(async move { runs.read_back(&run).await });
                }
                Ok(Notice::Wake(wake)) if wake.from != this_node() => woken(&wake),
                Ok(Notice::Wake(_)) => {}
                Ok(Notice::Reconnected) => runs.read_back_held(true).await,
                Err(error) => {
                    tracing::warn!("hearing the other nodes: {error}");
                    tokio::time::sleep(RELISTEN_AFTER).await;
                    break;
                }
            }
        }
    }
}

impl Conductor {
    /// Tells the other nodes that a message came for the session, so that
    /// the one running it moves it on at once (nothing on SQLite).
    pub async fn wake_on_other_nodes(&self, account_id: &AccountId, session_id: &SessionId) {
        let wake = SessionWake {
            account_id: account_id.to_owned(),
            session_id: session_id.to_owned(),
            from: this_node().to_owned(),
            stop_turn: None,
            approval: None,
        };
        if let Err(error) = self.store.notify_wake(&wake).await {
            tracing::warn!(session = %session_id, "telling the other nodes of a message: {error}");
        }
    }

    /// Tells the node running the approval's turn that it was decided here,
    /// so that it answers the agent at once.
    pub(super) async fn decided_on_other_nodes(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        approval_id: &ApprovalId,
    ) -> super::Result<()> {
        let wake = SessionWake {
            account_id: account_id.to_owned(),
            session_id: session_id.to_owned(),
            from: this_node().to_owned(),
            stop_turn: None,
            approval: Some(approval_id.to_owned()),
        };
        Ok(self.store.notify_wake(&wake).await?)
    }

    /// Asks the node running the session's `turn` to stop it (an abort
    /// taken on a node that does not run it).
    pub(super) async fn stop_on_other_nodes(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        turn: &str,
    ) -> super::Result<()> {
        let wake = SessionWake {
            account_id: account_id.to_owned(),
            session_id: session_id.to_owned(),
            from: this_node().to_owned(),
            stop_turn: Some(turn.to_owned()),
            approval: None,
        };
        Ok(self.store.notify_wake(&wake).await?)
    }

    /// Another node took a request for the session: a message is delivered
    /// now when this node holds the session's lease; a turn to stop is
    /// stopped when it runs here.
    fn woken(self: &Arc<Self>, wake: &SessionWake) {
        if let Some(approval) = wake.approval.clone() {
            let this = self.clone();
            let account = wake.account_id.clone();
            tokio::spawn(async move { this.deliver_decided(&account, &approval).await });
            return;
        }
        let Some(turn) = wake.stop_turn.clone() else {
            self.message_posted_elsewhere(&wake.account_id, &wake.session_id);
            return;
        };
        if !self.runs_turn_here(&wake.session_id, &turn) {
            return;
        }
        let this = self.clone();
        tokio::spawn(async move {
            tracing::info!(%turn, "stopping a turn as another node was asked to");
            if let Err(error) = this.stop_turn(turn.clone()).await {
                tracing::error!(%turn, "stopping a turn another node was asked to stop: {error}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::runs::live::EventName;
    use crate::webhooks::Webhooks;
    use cinch_store::create_postgres_database;

    /// Two nodes' stores over one new database on the PostgreSQL server
    /// `CINCH_TEST_DATABASE` names, with an account; `None` without one.
    async fn two_nodes() -> Option<(Store, Store, AccountId, tempfile::TempDir)> {
        let server = std::env::var("CINCH_TEST_DATABASE")
            .ok()
            .filter(|url| !url.is_empty());
        let Some(server) = server else {
            eprintln!("skipped: CINCH_TEST_DATABASE names no PostgreSQL server");
            return None;
        };
        let name = format!("cinch_unit_{}", cinch_store::random_hex(8).unwrap());
        let url = create_postgres_database(&server, &name).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let key = cinch_store::SecretsKey::generate().unwrap();
        let one = Store::open_postgres(&url).await.unwrap();
        let one = one.unlock_secrets(&key).await.unwrap();
        let two = Store::open_postgres(&url).await.unwrap();
        let two = two.unlock_secrets(&key).await.unwrap();
        one.bootstrap().await.unwrap();
        let account = one.find_account(None).await.unwrap().id;
        Some((one, two, account, dir))
    }

    fn runs_on(store: &Store) -> Arc<Runs> {
        Arc::new(
            Runs::new(store.clone(), Webhooks::new(store.clone(), false, false))
                .expect("starting the run events writer"),
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_wake_reaches_the_other_nodes_and_not_its_own() {
        let Some((one, two, account, _dir)) = two_nodes().await else {
            return;
        };
        let (woken, mut heard) = mpsc::unbounded_channel();
        tokio::spawn(listen(two.clone(), runs_on(&two), move |wake| {
            let _ = woken.send(wake.clone());
        }));
        let wake = |from: &str| SessionWake {
            account_id: account.clone(),
            session_id: "ses_1".to_owned().into(),
            from: from.to_owned(),
            stop_turn: None,
            approval: None,
        };
        // Sent until the listener, starting meanwhile, hears one.
        let first = loop {
            one.notify_wake(&wake("node-one")).await.unwrap();
            if let Ok(Some(first)) =
                tokio::time::timeout(Duration::from_millis(200), heard.recv()).await
            {
                break first;
            }
        };
        assert_eq!(first, wake("node-one"));
        while heard.try_recv().is_ok() {}

        // This process's own wake is left be; the next one is heard.
        one.notify_wake(&wake(this_node())).await.unwrap();
        one.notify_wake(&wake("node-three")).await.unwrap();
        let next = tokio::time::timeout(Duration::from_secs(10), heard.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(next, wake("node-three"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_nodes_writing_one_run_get_one_numbering_and_the_same_events() {
        let Some((one, two, account, _dir)) = two_nodes().await else {
            return;
        };
        let (first, second) = (runs_on(&one), runs_on(&two));
        for (store, runs) in [(&one, &first), (&two, &second)] {
            tokio::spawn(listen(store.clone(), runs.clone(), |_| {}));
        }
        let run = "ses_shared";
        let held = [
            first.events(&account, run).await.unwrap(),
            second.events(&account, run).await.unwrap(),
        ];
        let publishing = |runs: Arc<Runs>, node: &'static str| {
            let account = account.clone();
            tokio::spawn(async move {
                for n in 0..150 {
                    runs.publish(
                        &account,
                        run,
                        EventName::MessageCreated,
                        json!({"node": node, "n": n}),
                    )
                    .await;
                    if n % 10 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        };
        let writers = [
            publishing(first.clone(), "one"),
            publishing(second.clone(), "two"),
        ];
        for writer in writers {
            writer.await.unwrap();
        }

        // Both nodes' streams come to 300 events, live (the writers store
        // what was published in the background).
        for events in &held {
            let mut latest = events.latest();
            tokio::time::timeout(Duration::from_secs(10), latest.wait_for(|seq| *seq >= 300))
                .await
                .unwrap()
                .unwrap();
        }

        // Stored once each, numbered 1 to 300, each node's in its order.
        let stored = one.events(&account, run).await.unwrap();
        let seqs: Vec<i64> = stored.iter().map(|event| event.seq).collect();
        assert_eq!(seqs, (1..=300).collect::<Vec<i64>>());
        for node in ["one", "two"] {
            let order: Vec<i64> = stored
                .iter()
                .map(|event| serde_json::from_str::<serde_json::Value>(&event.data).unwrap())
                .filter(|data| data["node"] == node)
                .map(|data| data["n"].as_i64().unwrap())
                .collect();
            assert_eq!(order, (0..150).collect::<Vec<i64>>(), "node {node}");
        }
        // Both nodes' streams hold what is stored.
        for events in &held {
            let seen: Vec<(u64, String)> = events
                .after(0, usize::MAX)
                .await
                .unwrap()
                .iter()
                .map(|event| (event.seq, event.data.to_string()))
                .collect();
            let expected: Vec<(u64, String)> = stored
                .iter()
                .map(|event| (event.seq as u64, event.data.clone()))
                .collect();
            assert_eq!(seen, expected);
        }
    }

    /// How long after an event is stored on one node another node's
    /// streams have it, told by NOTIFY or by the poll alone: median, p99.
    /// A benchmark, run by hand: `cargo test -p cinch --lib
    /// event_latency_across_nodes -- --ignored --nocapture` with
    /// `CINCH_TEST_DATABASE` set.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "a benchmark"]
    async fn event_latency_across_nodes() {
        for notices in [true, false] {
            let Some((one, two, account, _dir)) = two_nodes().await else {
                return;
            };
            let (writer, reader) = (runs_on(&one), runs_on(&two));
            if notices {
                tokio::spawn(listen(two.clone(), reader.clone(), |_| {}));
            } else {
                tokio::spawn(poll(reader.clone()));
            }
            let run = "run-latency";
            let written = writer.events(&account, run).await.unwrap();
            let read = reader.events(&account, run).await.unwrap();
            let (mut stored, mut seen) = (written.latest(), read.latest());
            let (mut own, mut other) = (Vec::new(), Vec::new());
            // The poll alone takes seconds an event.
            let count = if notices { 200 } else { 20 };
            for n in 0..count {
                // Events come apart, as a turn's do, at any point of the
                // poll's beat.
                let gap = if notices { 37 } else { (n * 1237) % 5000 };
                tokio::time::sleep(Duration::from_millis(gap)).await;
                let at = Instant::now();
                writer
                    .publish(&account, run, EventName::ToolProgress, json!({"n": n}))
                    .await;
                stored.wait_for(|seq| *seq > n).await.unwrap();
                own.push(at.elapsed());
                seen.wait_for(|seq| *seq > n).await.unwrap();
                other.push(at.elapsed());
            }
            let (own, other) = (percentiles(own), percentiles(other));
            eprintln!(
                "{}: published to stored and shown on its node: median {:?}, p99 {:?}; \
                 to shown on the other node: median {:?}, p99 {:?}",
                if notices { "NOTIFY" } else { "poll only" },
                own.0,
                own.1,
                other.0,
                other.1
            );
        }
    }

    /// The median and the 99th percentile of `samples`.
    fn percentiles(mut samples: Vec<Duration>) -> (Duration, Duration) {
        samples.sort();
        (
            samples[samples.len() / 2],
            samples[(samples.len() * 99 / 100).min(samples.len() - 1)],
        )
    }
}
