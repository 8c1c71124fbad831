//! A turn's live events, numbered, for any number of subscribers and
//! listeners.
//!
//! Each subscriber reads them at its own pace from its own position: a slow
//! subscriber never holds up the turn and never loses its place; it only
//! falls behind, and can see by how much. What every subscriber has read is
//! let go but for the newest few, so a turn's memory does not grow with its
//! length.
//! A listener is handed each event as it is published, on the publishing
//! thread: nothing has to be woken for it, which is what a server moving
//! many turns' lines on wants.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use serde::Serialize;

use super::result::Status;

/// One event of a turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnEvent {
    /// 1 for the turn's first event, then one more for each.
    pub seq: u64,
    /// Milliseconds since the epoch.
    pub at_ms: u64,
    /// What happened.
    #[serde(flatten)]
    pub kind: TurnEventKind,
}

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum TurnEventKind {
    /// A progress line (redacted, cut to 240 characters).
    Progress {
        /// The line.
        line: String,
    },
    /// The harness reported its session id.
    Session {
        /// The id.
        session_id: String,
    },
    /// The agent asks permission; the turn waits for
    /// [`crate::engine::Engine::answer`].
    Approval {
        /// The request, masked of the turn's secrets.
        request: cinch_driver_sdk::PermissionRequest,
    },
    /// The turn has ended with this status.
    Ended {
        /// How it ended.
        status: Status,
    },
}

/// Handed the events of each publication, in order, on the publishing
/// thread and under the log's lock: it must be quick and must not use the
/// log it listens to. The last events it is handed end with
/// [`TurnEventKind::Ended`].
pub type Listener = Box<dyn FnMut(&[TurnEvent]) + Send>;

/// Events kept for subscribers and listeners that come late, besides what a
/// subscriber has not read yet: once a first subscriber or listener has
/// come, a turn's events are not all held for its life, however long it
/// runs. Whoever needs a whole history reads it where it was stored (the
/// server's run events).
const KEPT: usize = 256;

#[derive(Default)]
struct Shared {
    /// The newest events: those some subscriber has not read yet, and at
    /// least the last [`KEPT`].
    events: VecDeque<TurnEvent>,
    /// How many events were published in all.
    published: u64,
    closed: bool,
    listeners: Vec<Listener>,
    /// Each subscriber's next event's number, by subscriber.
    positions: HashMap<u64, u64>,
    /// The next subscriber's key in `positions`.
    next_subscriber: u64,
    /// Whether a subscriber or listener has come: until then every event
    /// is kept for the first (it is handed the turn from its start).
    read: bool,
    /// Subscribers waiting for events: without any, a publication wakes
    /// no one (a wake is a system call even when nobody waits).
    waiting: usize,
}

impl Shared {
    /// The kept events after number `after`.
    fn after(&self, after: u64) -> impl Iterator<Item = &TurnEvent> {
        let first = self
            .events
            .front()
            .map_or(self.published + 1, |event| event.seq);
        let skip = after.saturating_sub(first - 1);
        self.events
            .iter()
            .skip(usize::try_from(skip).unwrap_or(usize::MAX))
    }

    /// Lets go of the events every subscriber has read, past the last [`KEPT`].
    fn trim(&mut self) {
        if !self.read {
            return;
        }
        let kept_from = self.published.saturating_sub(KEPT as u64) + 1;
        let unread_from = self.positions.values().copied().min().unwrap_or(u64::MAX);
        let keep_from = kept_from.min(unread_from);
        while self
            .events
            .front()
            .is_some_and(|event| event.seq < keep_from)
        {
            self.events.pop_front();
        }
    }
}

/// The publishing side; clones share the same events.
#[derive(Clone, Default)]
pub(crate) struct EventLog {
    shared: Arc<(Mutex<Shared>, Condvar)>,
}

impl EventLog {
    /// An empty log.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        cinch_base::sync::lock(&self.shared.0)
    }

    /// Appends an event, hands it to the listeners and wakes the
    /// subscribers; returns its number.
    pub(crate) fn publish(&self, kind: TurnEventKind) -> u64 {
        self.publish_all([kind])
    }

    /// Appends events, hands them to the listeners together and wakes the
    /// subscribers once; returns the number of the last (of the last
    /// before them when there are none).
    pub(crate) fn publish_all(&self, kinds: impl IntoIterator<Item = TurnEventKind>) -> u64 {
        let mut shared = self.lock();
        let first = shared.events.len();
        let at_ms = crate::turn_dir::now_ms();
        for kind in kinds {
            shared.published += 1;
            let seq = shared.published;
            shared.events.push_back(TurnEvent { seq, at_ms, kind });
        }
        let Shared {
            events,
            listeners,
            waiting,
            published,
            ..
        } = &mut *shared;
        let last = *published;
        let fresh = events.len() > first;
        if fresh {
            let batch = &events.make_contiguous()[first..];
            for listener in listeners.iter_mut() {
                listener(batch);
            }
        }
        let wake = fresh && *waiting > 0;
        shared.trim();
        drop(shared);
        if wake {
            self.shared.1.notify_all();
        }
        last
    }

    /// No more events will come; the listeners are let go.
    pub(crate) fn close(&self) {
        let mut shared = self.lock();
        shared.closed = true;
        shared.listeners.clear();
        drop(shared);
        self.shared.1.notify_all();
    }

    /// Hands `listener` the kept events after number `after` (0: from the
    /// oldest kept) at once, then each publication as it comes. On a closed
    /// log it only gets what there is.
    pub(crate) fn listen(&self, after: u64, mut listener: Listener) {
        let mut shared = self.lock();
        let backlog: Vec<TurnEvent> = shared.after(after).cloned().collect();
        if !backlog.is_empty() {
            listener(&backlog);
        }
        if !shared.closed {
            shared.listeners.push(listener);
        }
        shared.read = true;
        shared.trim();
    }

    /// A subscriber that starts after event number `after` (0: from the
    /// start), or from the oldest kept event when those before it are gone.
    /// Events it has not read are kept for it until it is dropped.
    pub(crate) fn subscribe(&self, after: u64) -> Subscription {
        let mut shared = self.lock();
        let oldest = shared
            .events
            .front()
            .map_or(shared.published + 1, |event| event.seq);
        let next = (after + 1).max(oldest);
        let key = shared.next_subscriber;
        shared.next_subscriber += 1;
        shared.positions.insert(key, next);
        shared.read = true;
        drop(shared);
        Subscription {
            log: self.clone(),
            key,
            next,
        }
    }

    /// How many events there are so far.
    pub(crate) fn len(&self) -> u64 {
        self.lock().published
    }
}

/// One subscriber's position in a turn's events.
pub struct Subscription {
    log: EventLog,
    key: u64,
    next: u64,
}

/// What a subscriber gets when it asks for more.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// The events after its position (it has moved past them).
    Events(Vec<TurnEvent>),
    /// Nothing new within the wait.
    Idle,
    /// The turn has ended and the subscriber has seen everything.
    Closed,
}

impl Subscription {
    /// Waits up to `timeout` for events after this subscriber's position.
    pub fn next(&mut self, timeout: Duration) -> Next {
        let mut guard = self.log.lock();
        guard.waiting += 1;
        let ready = |shared: &mut Shared| shared.published < self.next && !shared.closed;
        let (mut shared, _) = self
            .log
            .shared
            .1
            .wait_timeout_while(guard, timeout, ready)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        shared.waiting -= 1;
        if self.next <= shared.published {
            let events: Vec<TurnEvent> = shared.after(self.next - 1).cloned().collect();
            self.next = shared.published + 1;
            shared.positions.insert(self.key, self.next);
            shared.trim();
            Next::Events(events)
        } else if shared.closed {
            Next::Closed
        } else {
            Next::Idle
        }
    }

    /// How many events this subscriber has not read yet.
    pub fn behind(&self) -> u64 {
        (self.log.len() + 1).saturating_sub(self.next)
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        let mut shared = self.log.lock();
        shared.positions.remove(&self.key);
        shared.trim();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> TurnEventKind {
        TurnEventKind::Progress { line: text.into() }
    }

    #[test]
    fn subscribers_read_at_their_own_pace_without_loss() {
        let log = EventLog::new();
        let mut early = log.subscribe(0);
        for n in 0..1000 {
            log.publish(line(&n.to_string()));
        }
        let mut late = log.subscribe(998);
        assert_eq!(early.behind(), 1000);
        let Next::Events(events) = early.next(Duration::ZERO) else {
            panic!()
        };
        assert_eq!(events.len(), 1000);
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (1..=1000).collect::<Vec<_>>()
        );
        let Next::Events(events) = late.next(Duration::ZERO) else {
            panic!()
        };
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            [999, 1000]
        );
        assert_eq!(late.next(Duration::from_millis(5)), Next::Idle);
        log.close();
        assert_eq!(late.next(Duration::from_secs(5)), Next::Closed);
    }

    #[test]
    fn a_waiting_subscriber_wakes_on_publish() {
        let log = EventLog::new();
        let mut subscriber = log.subscribe(0);
        let publisher = log.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            publisher.publish(line("hello"));
        });
        let Next::Events(events) = subscriber.next(Duration::from_secs(10)) else {
            panic!()
        };
        assert_eq!(events[0].kind, line("hello"));
        thread.join().unwrap();
    }

    #[test]
    fn a_listener_gets_the_backlog_then_each_publication_until_the_end() {
        let log = EventLog::new();
        log.publish(line("zero"));
        log.publish(line("one"));
        let heard = Arc::new(Mutex::new(Vec::<Vec<u64>>::new()));
        let into = heard.clone();
        log.listen(
            1,
            Box::new(move |events| {
                into.lock()
                    .unwrap()
                    .push(events.iter().map(|event| event.seq).collect())
            }),
        );
        assert_eq!(log.publish_all([line("two"), line("three")]), 4);
        assert_eq!(log.publish_all([]), 4);
        log.publish(TurnEventKind::Ended {
            status: Status::Completed,
        });
        log.close();
        log.publish(line("after the end"));
        assert_eq!(*heard.lock().unwrap(), [vec![2], vec![3, 4], vec![5]]);
        // Listening once it has ended gives what there was, and nothing holds on.
        let late = Arc::new(Mutex::new(0));
        let count = late.clone();
        log.listen(
            0,
            Box::new(move |events| *count.lock().unwrap() += events.len()),
        );
        assert_eq!(*late.lock().unwrap(), 6);
        assert_eq!(Arc::strong_count(&late), 1);
    }

    #[test]
    fn what_every_reader_has_had_is_let_go_but_for_the_newest() {
        let log = EventLog::new();
        let heard = Arc::new(Mutex::new(0u64));
        let into = heard.clone();
        log.listen(
            0,
            Box::new(move |events| *into.lock().unwrap() += events.len() as u64),
        );
        let mut slow = log.subscribe(0);
        for n in 0..5 * KEPT {
            log.publish(line(&n.to_string()));
        }
        // The slow subscriber has read nothing: everything is kept for it.
        assert_eq!(log.lock().events.len(), 5 * KEPT);
        let Next::Events(events) = slow.next(Duration::ZERO) else {
            panic!()
        };
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (1..=5 * KEPT as u64).collect::<Vec<_>>()
        );
        assert_eq!(log.lock().events.len(), KEPT);
        drop(slow);
        for n in 0..5 * KEPT {
            log.publish(line(&n.to_string()));
        }
        assert_eq!(log.lock().events.len(), KEPT);
        assert_eq!(*heard.lock().unwrap(), 10 * KEPT as u64);
        // A late subscriber starts at the oldest kept event.
        let mut late = log.subscribe(0);
        let Next::Events(events) = late.next(Duration::ZERO) else {
            panic!()
        };
        assert_eq!(events.first().unwrap().seq, 9 * KEPT as u64 + 1);
        assert_eq!(events.last().unwrap().seq, 10 * KEPT as u64);
    }

    #[test]
    fn everything_waits_for_the_first_reader() {
        let log = EventLog::new();
        for n in 0..3 * KEPT {
            log.publish(line(&n.to_string()));
        }
        let mut first = log.subscribe(0);
        let Next::Events(events) = first.next(Duration::ZERO) else {
            panic!()
        };
        assert_eq!(events.len(), 3 * KEPT);
        assert_eq!(events[0].seq, 1);
    }
}
