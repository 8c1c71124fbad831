//! A turn's live events, numbered, for any number of subscribers and
//! listeners.
//!
//! Events are kept for the turn's life and each subscriber reads them at its
//! own pace from its own position: a slow subscriber never holds up the turn
//! and never loses its place; it only falls behind, and can see by how much.
//! A listener is handed each event as it is published, on the publishing
//! thread: nothing has to be woken for it, which is what a server moving
//! many turns' lines on wants.

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

#[derive(Default)]
struct Shared {
    events: Vec<TurnEvent>,
    closed: bool,
    listeners: Vec<Listener>,
    /// Subscribers waiting for events: without any, a publication wakes
    /// no one (a wake is a system call even when nobody waits).
    waiting: usize,
}

/// The publishing side; clones share the same events.
#[derive(Clone, Default)]
pub struct EventLog {
    shared: Arc<(Mutex<Shared>, Condvar)>,
}

impl EventLog {
    /// An empty log.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        cinch_base::sync::lock(&self.shared.0)
    }

    /// Appends an event, hands it to the listeners and wakes the
    /// subscribers; returns its number.
    pub fn publish(&self, kind: TurnEventKind) -> u64 {
        self.publish_all([kind])
    }

    /// Appends events, hands them to the listeners together and wakes the
    /// subscribers once; returns the number of the last (of the last
    /// before them when there are none).
    pub fn publish_all(&self, kinds: impl IntoIterator<Item = TurnEventKind>) -> u64 {
        let mut shared = self.lock();
        let first = shared.events.len();
        let at_ms = crate::turn_dir::now_ms();
        for kind in kinds {
            let seq = shared.events.len() as u64 + 1;
            shared.events.push(TurnEvent { seq, at_ms, kind });
        }
        let Shared {
            events,
            listeners,
            waiting,
            ..
        } = &mut *shared;
        let last = events.len() as u64;
        let published = events.len() > first;
        if published {
            for listener in listeners.iter_mut() {
                listener(&events[first..]);
            }
        }
        let wake = published && *waiting > 0;
        drop(shared);
        if wake {
            self.shared.1.notify_all();
        }
        last
    }

    /// No more events will come; the listeners are let go.
    pub fn close(&self) {
        let mut shared = self.lock();
        shared.closed = true;
        shared.listeners.clear();
        drop(shared);
        self.shared.1.notify_all();
    }

    /// Hands `listener` the events after number `after` (0: from the start)
    /// at once, then each publication as it comes. On a closed log it only
    /// gets what there is.
    pub fn listen(&self, after: u64, mut listener: Listener) {
        let mut shared = self.lock();
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(shared.events.len());
        if start < shared.events.len() {
            listener(&shared.events[start..]);
        }
        if !shared.closed {
            shared.listeners.push(listener);
        }
    }

    /// A subscriber that starts after event number `after` (0: from the start).
    pub fn subscribe(&self, after: u64) -> Subscription {
        Subscription {
            log: self.clone(),
            next: after + 1,
        }
    }

    /// How many events there are so far.
    pub fn len(&self) -> u64 {
        self.lock().events.len() as u64
    }

    /// Whether there are none yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One subscriber's position in a turn's events.
pub struct Subscription {
    log: EventLog,
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
        let ready =
            |shared: &mut Shared| (shared.events.len() as u64) < self.next && !shared.closed;
        let (mut shared, _) = self
            .log
            .shared
            .1
            .wait_timeout_while(guard, timeout, ready)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        shared.waiting -= 1;
        let start = (self.next - 1) as usize;
        if start < shared.events.len() {
            let events = shared.events[start..].to_vec();
            self.next = shared.events.len() as u64 + 1;
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
}
