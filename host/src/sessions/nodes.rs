//! What this node hears from the other nodes sharing its PostgreSQL
//! database, the moment they commit: a run's new events, read back into the
//! runs this node has in memory so that its streams show them live; and a
//! message posted for a session, which the conductor moves on here. A
//! notice is lost while the connection is down: the runs streamed here are
//! read back on reconnecting, and every [`POLL_INTERVAL`] whatever happens.
//! On SQLite there is no other node and nothing to hear.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::live::Runs;
use super::{Conductor, Wake};
use crate::store::{Notice, SessionWake, Store};

/// How often the runs streamed here are read back without a notice: the
/// fallback for notices lost, not the way events normally arrive.
pub const POLL_INTERVAL: Duration = Duration::from_secs(5);

/// How long to wait before listening again after the connection failed.
const RELISTEN_AFTER: Duration = Duration::from_secs(1);

/// This process, as the wakes it sends name it: it leaves its own be.
fn this_node() -> &'static str {
    static NODE: OnceLock<String> = OnceLock::new();
    NODE.get_or_init(|| {
        crate::store::random_hex(8).unwrap_or_else(|_| std::process::id().to_string())
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
    pub async fn wake_on_other_nodes(&self, account_id: &str, session_id: &str) {
        let wake = SessionWake {
            account_id: account_id.to_owned(),
            session_id: session_id.to_owned(),
            from: this_node().to_owned(),
        };
        if let Err(error) = self.store.notify_wake(&wake).await {
            tracing::warn!(session = %session_id, "telling the other nodes of a message: {error}");
        }
    }

    /// Another node took a message for the session: it is moved on as if
    /// posted here; whether this node runs it is the lifecycle's call.
    fn woken(self: &Arc<Self>, wake: &SessionWake) {
        self.kick(&wake.account_id, &wake.session_id, Wake::Message);
    }
}
