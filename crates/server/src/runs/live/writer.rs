//! The one writer of run events: stores them in the order they were
//! published, a batch per transaction, then shows them to streams.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot, watch};

use super::RunMap;
use super::event::{EventName, Numbering};
use cinch_store::{NewEvent, RunKey, Store};

/// An event on its way to the database.
pub(super) struct Pending {
    pub(super) run: RunKey,
    pub(super) name: EventName,
    /// Its data, JSON text.
    pub(super) data: Arc<str>,
    /// Its number and its run's newest stored number (moved on once it is
    /// stored), when this node numbers events.
    pub(super) numbered: Option<(u64, watch::Sender<u64>)>,
}

/// What the writer is asked to do, in order.
pub(super) enum Job {
    /// Store an event.
    Store(Pending),
    /// Answer once every event asked before is stored.
    Flush(oneshot::Sender<()>),
}

/// Events stored in one transaction, at most.
const STORE_BATCH: usize = 256;

/// How long a batch waits for more events once its first has come, when
/// the last batch was stored less than [`BUSY`] ago.
const GATHER: Duration = Duration::from_millis(1);

/// Events coming this soon after the last batch mean a busy node.
const BUSY: Duration = Duration::from_millis(20);

/// Starts the writer of `store`'s run events: on a thread of its own when
/// the store writes in place (its writes block), else as a task.
pub(super) fn start(
    store: Store,
    queue: mpsc::UnboundedReceiver<Job>,
    runs: Arc<RunMap>,
) -> std::io::Result<()> {
    if !store.writes_in_place() {
        tokio::spawn(store_events(store, queue, runs));
        return Ok(());
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("run-events-writer".to_owned())
        .spawn(move || runtime.block_on(store_events(store, queue, runs)))?;
    Ok(())
}

/// Stores events in the order they were published, as many as wait in one
/// transaction, then shows them to streams; answers flushes once what came
/// before them is stored.
async fn store_events(store: Store, mut queue: mpsc::UnboundedReceiver<Job>, runs: Arc<RunMap>) {
    let mut jobs = Vec::with_capacity(STORE_BATCH);
    let mut batch = Vec::with_capacity(STORE_BATCH);
    let mut flushes = Vec::new();
    let numbering = Numbering::of(&store);
    let mut last_stored: Option<Instant> = None;
    while queue.recv_many(&mut jobs, STORE_BATCH).await > 0 {
        let busy = last_stored.is_some_and(|at| at.elapsed() < BUSY);
        if busy && jobs.len() < STORE_BATCH {
            // While events keep coming, a moment for the ones other turns
            // are writing to join this batch: a statement per line cost more
            // than the line. A lone event is stored at once.
            tokio::time::sleep(GATHER).await;
            while jobs.len() < STORE_BATCH {
                match queue.try_recv() {
                    Ok(job) => jobs.push(job),
                    Err(_) => break,
                }
            }
        }
        for job in jobs.drain(..) {
            match job {
                Job::Store(pending) => batch.push(pending),
                Job::Flush(done) => flushes.push(done),
            }
        }
        match numbering {
            Numbering::Here => store_numbered(&store, &mut batch).await,
            Numbering::Database => store_unnumbered(&store, &mut batch, &runs).await,
        }
        last_stored = Some(Instant::now());
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
        if numbering == Numbering::Here {
            store.checkpoint_if_due();
        }
    }
}

/// Stores events this node numbered, then moves their runs' newest stored
/// number on.
async fn store_numbered(store: &Store, batch: &mut Vec<Pending>) {
    let rows: Vec<NewEvent<'_>> = batch
        .iter()
        .filter_map(|pending| {
            let (seq, _) = pending.numbered.as_ref()?;
            Some(NewEvent {
                account_id: &pending.run.account_id,
                run_id: &pending.run.run_id,
                seq: *seq as i64,
                name: pending.name.as_str(),
                data: &pending.data,
            })
        })
        .collect();
    if let Err(error) = store.append_events(&rows).await {
        tracing::warn!(
            events = rows.len(),
            "storing run events together failed, storing them one by one: {error}"
        );
        for row in &rows {
            if let Err(error) = store.append_events(std::slice::from_ref(row)).await {
                // Shown all the same: live streams carry on; only a
                // resume across a restart misses it.
                tracing::error!(run = %row.run_id, seq = row.seq, "storing an event: {error}");
            }
        }
    }
    for pending in batch.drain(..) {
        let Some((seq, stored)) = pending.numbered else {
            continue;
        };
        stored.send_if_modified(|stored| {
            let newer = seq > *stored;
            if newer {
                *stored = seq;
            }
            newer
        });
    }
}

/// Stores events for the database to number, each run's in one
/// transaction, then reads the runs in memory back (which shows them to
/// streams, with whatever other nodes stored in between).
async fn store_unnumbered(store: &Store, batch: &mut Vec<Pending>, runs: &RunMap) {
    let mut by_run: Vec<(RunKey, Vec<(&str, &str)>)> = Vec::new();
    for pending in batch.iter() {
        let event = (pending.name.as_str(), &*pending.data);
        match by_run.iter_mut().find(|(run, _)| *run == pending.run) {
            Some((_, events)) => events.push(event),
            None => by_run.push((pending.run.clone(), vec![event])),
        }
    }
    for (run, events) in &by_run {
        if let Err(error) = store.append_numbered_events(run, events).await {
            // Nothing else holds them: streams on every node miss them.
            tracing::error!(run = %run.run_id, events = events.len(), "storing events: {error}");
        }
        let held = runs.lock().await.get(run).cloned();
        if let Some(held) = held {
            held.read_back(store).await;
        }
    }
    batch.clear();
}
