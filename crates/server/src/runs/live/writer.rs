//! The one writer of run events: stores them in the order they were
//! published, a batch at a time, then shows them to streams.
//!
//! On SQLite a batch is appended to the store's event log (one `write`, see
//! `cinch_store::EventLog`) and shown at once; every [`SEAL_EVERY`] (or
//! once a run has [`SEAL_AT_EVENTS`] in it) the log is sealed and handed to
//! a thread that indexes its events into `run_events`, after which the runs
//! may let them go from memory. On
//! PostgreSQL the database numbers each run's events as it stores them in
//! `run_events`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{mpsc, oneshot};

use super::RunMap;
use super::event::{EventName, Reached};
use cinch_store::{EventLog, NewEvent, RunKey, SealedEvents, Store};

/// An event on its way to the database.
pub(super) struct Pending {
    pub(super) run: RunKey,
    pub(super) name: EventName,
    /// Its data, JSON text.
    pub(super) data: Arc<str>,
    /// Its number and how far its run's events have got, when this node
    /// numbers events.
    pub(super) numbered: Option<(u64, Arc<Reached>)>,
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

/// How long the appender of a SQLite store's event log, on its own thread,
/// gives other turns' events to join a batch instead of [`GATHER`]. A
/// tokio timer's grain is a millisecond, so a batch's first event waited
/// 1–2 ms, most of a line's median, while an append costs one `write`
/// however few events it holds. At 200 sessions, side by side: the median
/// 0.7 ms against 1.6–1.8 ms and the p99 over the whole run 4.9–5.4 ms
/// against 7.1–8.9 ms, for 8–10% more CPU a line (more, smaller batches
/// wake the streams more often; at 250 µs it was 30% more).
const GATHER_ON_THREAD: Duration = Duration::from_micros(500);

/// How the writer gives other turns' events a moment to join a batch.
#[derive(Debug, Clone, Copy)]
enum Gathering {
    /// As a task of the server's runtime, on its timer, for [`GATHER`].
    OnTimer,
    /// Asleep on a thread of its own, for [`GATHER_ON_THREAD`].
    OnThread,
}

/// Events coming this soon after the last batch mean a busy node.
const BUSY: Duration = Duration::from_millis(20);

/// How long a SQLite store's event log is appended to before its events are
/// indexed. Each run's events go to a page of their own in `run_events`'
/// index, written once an indexing for however many of them came: at 1,000
/// sessions × 10 lines a second, indexed every millisecond or so as they
/// came, the pages written grew the database's log by 60 MB a second for
/// 2.5 MB of events. A run keeps this long of its events in memory.
const SEAL_EVERY: Duration = Duration::from_secs(1);

/// The most events of one run the open log holds before it is sealed, so
/// that a fast run's memory does not hold a second of its events: one
/// turn writing 2,500 lines a second grew `cinch serve` by 1.4 MiB more
/// than when its events were indexed as they came.
const SEAL_AT_EVENTS: usize = 256;

/// How long an indexing that failed waits before it tries again, at first
/// and at most (doubling in between).
const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MOST: Duration = Duration::from_secs(10);

/// Starts the writer of `store`'s run events: with a SQLite store's event
/// log, on threads of its own (its calls block), else as a task.
pub(super) fn start(
    store: Store,
    queue: mpsc::UnboundedReceiver<Job>,
    runs: Arc<RunMap>,
) -> std::io::Result<()> {
    let Some(log) = store.event_log().cloned() else {
        tokio::spawn(store_events(store, queue, runs));
        return Ok(());
    };
    let (sealed, to_index) = std::sync::mpsc::channel();
    let indexing = log.clone();
    std::thread::Builder::new()
        .name("run-events-indexer".to_owned())
        .spawn(move || index_sealed(&indexing, &to_index))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()?;
    std::thread::Builder::new()
        .name("run-events-writer".to_owned())
        .spawn(move || runtime.block_on(log_events(store, log, queue, sealed)))?;
    Ok(())
}

/// What [`gather`] found.
enum Gathered {
    /// Jobs to do.
    Jobs,
    /// None came before the time given.
    Nothing,
    /// The queue is closed and empty: the server is gone.
    Closed,
}

/// Waits for the next jobs (at most until `until`, when given); while
/// events keep coming (the last batch was stored less than [`BUSY`] ago),
/// gives the ones other turns are writing a moment to join: a statement
/// per line cost more than the line. A lone event is taken at once.
async fn gather(
    queue: &mut mpsc::UnboundedReceiver<Job>,
    jobs: &mut Vec<Job>,
    last_stored: Option<Instant>,
    until: Option<Instant>,
    gathering: Gathering,
) -> Gathered {
    let received = match until {
        Some(until) => {
            let until = tokio::time::Instant::from_std(until);
            match tokio::time::timeout_at(until, queue.recv_many(jobs, STORE_BATCH)).await {
                Ok(received) => received,
                Err(_) => return Gathered::Nothing,
            }
        }
        None => queue.recv_many(jobs, STORE_BATCH).await,
    };
    if received == 0 {
        return Gathered::Closed;
    }
    let busy = last_stored.is_some_and(|at| at.elapsed() < BUSY);
    if busy && jobs.len() < STORE_BATCH {
        match gathering {
            Gathering::OnTimer => tokio::time::sleep(GATHER).await,
            Gathering::OnThread => std::thread::sleep(GATHER_ON_THREAD),
        }
        while jobs.len() < STORE_BATCH {
            match queue.try_recv() {
                Ok(job) => jobs.push(job),
                Err(_) => break,
            }
        }
    }
    Gathered::Jobs
}

/// Splits `jobs` into the events to store and the flushes to answer once
/// they are.
fn split(jobs: &mut Vec<Job>, batch: &mut Vec<Pending>, flushes: &mut Vec<oneshot::Sender<()>>) {
    for job in jobs.drain(..) {
        match job {
            Job::Store(pending) => batch.push(pending),
            Job::Flush(done) => flushes.push(done),
        }
    }
}

/// Stores events for the database to number (PostgreSQL), as many as
/// wait, then shows them to streams; answers flushes once what came before
/// them is stored.
async fn store_events(store: Store, mut queue: mpsc::UnboundedReceiver<Job>, runs: Arc<RunMap>) {
    let mut jobs = Vec::with_capacity(STORE_BATCH);
    let mut batch = Vec::with_capacity(STORE_BATCH);
    let mut flushes = Vec::new();
    let mut last_stored: Option<Instant> = None;
    while let Gathered::Jobs =
        gather(&mut queue, &mut jobs, last_stored, None, Gathering::OnTimer).await
    {
        split(&mut jobs, &mut batch, &mut flushes);
        store_unnumbered(&store, &mut batch, &runs).await;
        last_stored = Some(Instant::now());
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
    }
}

/// The runs whose events went to the open log, and the newest number of
/// each: what they may let go of once it is indexed.
#[derive(Default)]
struct Unindexed {
    runs: HashMap<RunKey, (Arc<Reached>, u64, usize)>,
    /// When the first of them was appended.
    since: Option<Instant>,
    /// The most events one run has in the open log.
    most_of_a_run: usize,
}

impl Unindexed {
    /// Whether the open log is due to be sealed.
    fn due(&self) -> bool {
        self.most_of_a_run >= SEAL_AT_EVENTS
            || self
                .since
                .is_some_and(|since| since.elapsed() >= SEAL_EVERY)
    }

    /// The runs, with the newest number of each, to be let go of once the
    /// log is indexed; none are left.
    fn take(&mut self) -> Vec<(Arc<Reached>, u64)> {
        self.since = None;
        self.most_of_a_run = 0;
        self.runs
            .drain()
            .map(|(_, (reached, newest, _))| (reached, newest))
            .collect()
    }
}

/// A sealed log on its way to the indexer, with the runs it holds.
struct Sealed {
    logs: Vec<SealedEvents>,
    runs: Vec<(Arc<Reached>, u64)>,
}

/// Appends events this node numbered to the store's log, as many as wait in
/// one `write`, then shows them to streams; answers flushes once what came
/// before them is stored; seals the log for the indexer every
/// [`SEAL_EVERY`], or sooner once a run has [`SEAL_AT_EVENTS`] in it.
async fn log_events(
    store: Store,
    log: EventLog,
    mut queue: mpsc::UnboundedReceiver<Job>,
    to_index: std::sync::mpsc::Sender<Sealed>,
) {
    let mut jobs = Vec::with_capacity(STORE_BATCH);
    let mut batch = Vec::with_capacity(STORE_BATCH);
    let mut flushes = Vec::new();
    let mut unindexed = Unindexed::default();
    let mut last_stored: Option<Instant> = None;
    loop {
        let seal_at = unindexed.since.map(|since| since + SEAL_EVERY);
        let gathered = gather(
            &mut queue,
            &mut jobs,
            last_stored,
            seal_at,
            Gathering::OnThread,
        )
        .await;
        if let Gathered::Jobs = gathered {
            split(&mut jobs, &mut batch, &mut flushes);
            append(&store, &log, &mut batch, &mut unindexed).await;
            last_stored = Some(Instant::now());
            for done in flushes.drain(..) {
                let _ = done.send(());
            }
        }
        let closed = matches!(gathered, Gathered::Closed);
        if closed || unindexed.due() {
            let _ = to_index.send(Sealed {
                logs: log.seal(),
                runs: unindexed.take(),
            });
        }
        if closed {
            return;
        }
    }
}

/// Appends a batch to the log and moves its runs' newest stored number on.
/// A batch the log cannot take (a full disk) goes to `run_events` as it
/// is, or else is shown all the same: live streams carry on; only a
/// resume across a restart misses it.
async fn append(
    store: &Store,
    log: &EventLog,
    batch: &mut Vec<Pending>,
    unindexed: &mut Unindexed,
) {
    let rows = rows_of(batch);
    if let Err(error) = log.append(&rows) {
        tracing::warn!(
            events = rows.len(),
            "appending run events to their log failed, storing them in the database: {error}"
        );
        store_rows(store, &rows).await;
    }
    drop(rows);
    for pending in batch.drain(..) {
        let Some((seq, reached)) = pending.numbered else {
            continue;
        };
        reached.stored_through(seq);
        // Those stored past the log too: their run's earlier events may
        // wait in the log.
        unindexed.since.get_or_insert_with(Instant::now);
        let (_, newest, events) = unindexed
            .runs
            .entry(pending.run)
            .or_insert((reached, seq, 0));
        *newest = seq;
        *events += 1;
        unindexed.most_of_a_run = unindexed.most_of_a_run.max(*events);
    }
}

/// The rows of the events of `batch` this node numbered.
fn rows_of(batch: &[Pending]) -> Vec<NewEvent<'_>> {
    batch
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
        .collect()
}

/// Indexes each sealed log in turn (trying again while the database fails:
/// its events stay in memory and in the log meanwhile), then lets its runs
/// drop them from memory.
fn index_sealed(log: &EventLog, sealed: &std::sync::mpsc::Receiver<Sealed>) {
    while let Ok(Sealed { logs, runs }) = sealed.recv() {
        for events in &logs {
            let mut wait = RETRY_FIRST;
            while let Err(error) = log.index(events) {
                tracing::error!(
                    "indexing run events (kept in memory and in their log; trying again in {wait:?}): {error}"
                );
                std::thread::sleep(wait);
                wait = (wait * 2).min(RETRY_MOST);
            }
        }
        for (reached, seq) in runs {
            reached.indexed_through(seq);
        }
        log.checkpoint_if_due();
    }
}

/// Stores `rows` in `run_events` together, or else one by one.
async fn store_rows(store: &Store, rows: &[NewEvent<'_>]) {
    if let Err(error) = store.append_events(rows).await {
        tracing::warn!(
            events = rows.len(),
            "storing run events together failed, storing them one by one: {error}"
        );
        for row in rows {
            if let Err(error) = store.append_events(std::slice::from_ref(row)).await {
                // Shown all the same: live streams carry on; only a
                // resume across a restart misses it.
                tracing::error!(run = %row.run_id, seq = row.seq, "storing an event: {error}");
            }
        }
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
