//! Runs' history: their stored events no longer in memory, read from the
//! store a page at a time for the streams that come late (and for a turn
//! followed again, to count what its run holds of it).
//!
//! A page is read once for all the streams that want it at the same time,
//! and kept a while for those that follow: streams that start together (a
//! page of clients reconnecting, a run's watchers) read the same pages, so
//! hundreds of them cost one query a page, not one each. The pages kept are
//! bounded for the whole server, and the reads go to the store's own
//! connections, a few at a time, so the requests' pool (and the health
//! probe on it) never waits behind them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use anyhow::Context as _;
use tokio::sync::{OnceCell, Semaphore};

use super::RunEvent;
use cinch_base::sync::lock;
use cinch_store::{RunKey, Store};

/// Events in a page: page `n` holds those numbered `n * PAGE + 1` to
/// `(n + 1) * PAGE`. Big enough that a stream far behind makes few reads,
/// small enough that a stalled stream holds little.
pub(super) const PAGE: u64 = 512;

/// The most memory the pages kept take, counted as their events' data and
/// what holds it: a few pages of a few runs.
const KEPT_BYTES: usize = 4 * 1024 * 1024;

/// History reads at once; the rest wait their turn.
const READS_AT_ONCE: usize = 2;

/// A page of a run's history, in order, shared by the streams reading it.
pub(super) type Page = Arc<[RunEvent]>;

/// The runs' history pages read lately, and the reads under way.
pub(super) struct History {
    store: Store,
    pages: Mutex<Pages>,
    reads: Semaphore,
}

/// A page by its run and number.
type PageKey = (RunKey, u64);

#[derive(Default)]
struct Pages {
    /// Each page kept or being read; one read fills it for every waiter.
    by_key: HashMap<PageKey, Arc<OnceCell<Page>>>,
    /// The pages read, with their size, the oldest read first: let go of
    /// first once past [`KEPT_BYTES`].
    read: VecDeque<(PageKey, usize)>,
    /// The size of the pages in `read`.
    bytes: usize,
}

impl History {
    /// The history of the runs stored in `store`.
    pub(super) fn new(store: Store) -> Self {
        Self {
            store,
            pages: Mutex::default(),
            reads: Semaphore::new(READS_AT_ONCE),
        }
    }

    /// The events of `run`'s page number `page` numbered up to `indexed`
    /// (through which the run's events are all in the store's
    /// `run_events`). A page wholly indexed is read once for every caller
    /// and kept; the newest, partly indexed one is read for this caller
    /// alone.
    pub(super) async fn page(&self, run: &RunKey, page: u64, indexed: u64) -> anyhow::Result<Page> {
        let (after, through) = (page * PAGE, (page + 1) * PAGE);
        if through > indexed {
            return self.read(run, after, indexed).await;
        }
        let key = (run.clone(), page);
        let cell = lock(&self.pages)
            .by_key
            .entry(key.clone())
            .or_default()
            .clone();
        let read = cell
            .get_or_try_init(|| async {
                let events = self.read(run, after, through).await?;
                self.kept(key.clone(), &events);
                anyhow::Ok(events)
            })
            .await;
        match read {
            Ok(events) => Ok(events.clone()),
            Err(error) => {
                let mut pages = lock(&self.pages);
                let failed =
                    |kept: &Arc<OnceCell<Page>>| Arc::ptr_eq(kept, &cell) && kept.get().is_none();
                if pages.by_key.get(&key).is_some_and(failed) {
                    pages.by_key.remove(&key);
                }
                Err(error)
            }
        }
    }

    /// Reads `run`'s events numbered after `after` and up to `through`.
    async fn read(&self, run: &RunKey, after: u64, through: u64) -> anyhow::Result<Page> {
        let _turn = self
            .reads
            .acquire()
            .await
            .context("the history reads' semaphore is closed")?;
        let stored = self
            .store
            .history(&run.account_id, &run.run_id, after as i64, through as i64)
            .await
            .with_context(|| {
                format!(
                    "reading the events of run {} after {after} up to {through}",
                    run.run_id
                )
            })?;
        Ok(stored.into_iter().filter_map(RunEvent::read).collect())
    }

    /// Counts a page just read among those kept, and lets go of the oldest
    /// read past [`KEPT_BYTES`] (streams reading them hold on to them).
    fn kept(&self, key: PageKey, events: &[RunEvent]) {
        let size: usize = events
            .iter()
            .map(|event| std::mem::size_of::<RunEvent>() + event.data.len())
            .sum();
        let mut pages = lock(&self.pages);
        pages.read.push_back((key, size));
        pages.bytes += size;
        while pages.bytes > KEPT_BYTES {
            let Some((oldest, size)) = pages.read.pop_front() else {
                break;
            };
            pages.bytes -= size;
            pages.by_key.remove(&oldest);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cinch_store::NewEvent;

    /// A store holding `count` events of one run, each a line `width`
    /// characters wide, and the run.
    async fn run_of(count: i64, width: usize) -> (Store, RunKey, tempfile::TempDir) {
        let (store, dir) = cinch_store::test_store().await;
        let (account, _) = store.create_account("history").await.unwrap();
        let run = RunKey {
            account_id: account.id.clone(),
            run_id: "run".to_owned(),
        };
        let data: Vec<String> = (1..=count)
            .map(|seq| format!(r#"{{"lines":["{seq:>width$}"]}}"#))
            .collect();
        let events: Vec<NewEvent<'_>> = data
            .iter()
            .zip(1..)
            .map(|(data, seq)| NewEvent {
                account_id: &run.account_id,
                run_id: &run.run_id,
                seq,
                name: "tool.progress",
                data,
            })
            .collect();
        for chunk in events.chunks(100) {
            store.append_events(chunk).await.unwrap();
        }
        (store, run, dir)
    }

    #[tokio::test]
    async fn streams_reading_a_page_at_once_read_it_once() {
        let (store, run, _dir) = run_of(1200, 10).await;
        let history = History::new(store);
        let stored = 1200;
        let pages: Vec<Page> =
            futures_util::future::join_all((0..50).map(|_| history.page(&run, 1, stored)))
                .await
                .into_iter()
                .map(Result::unwrap)
                .collect();
        let seqs: Vec<u64> = pages[0].iter().map(|event| event.seq).collect();
        assert_eq!(seqs, (PAGE + 1..=2 * PAGE).collect::<Vec<_>>());
        assert!(
            pages.iter().all(|page| Arc::ptr_eq(page, &pages[0])),
            "the page was read more than once"
        );
        // Kept for those that come later.
        let later = history.page(&run, 1, stored).await.unwrap();
        assert!(Arc::ptr_eq(&later, &pages[0]));
        // The newest page is not all stored: read as it is, and not kept.
        let newest = history.page(&run, 2, stored).await.unwrap();
        assert_eq!(newest.first().map(|event| event.seq), Some(2 * PAGE + 1));
        assert_eq!(newest.last().map(|event| event.seq), Some(stored));
        let again = history.page(&run, 2, stored).await.unwrap();
        assert!(!Arc::ptr_eq(&newest, &again));
    }

    #[tokio::test]
    async fn the_pages_kept_stay_within_their_bound() {
        let (store, run, _dir) = run_of(40 * PAGE as i64, 400).await;
        let history = History::new(store);
        for page in 0..40 {
            let events = history.page(&run, page, 40 * PAGE).await.unwrap();
            assert_eq!(events.len() as u64, PAGE);
        }
        let pages = lock(&history.pages);
        assert!(pages.bytes <= KEPT_BYTES, "{} bytes kept", pages.bytes);
        assert_eq!(pages.by_key.len(), pages.read.len());
        assert!(pages.read.len() < 40, "every page kept");
    }
}
