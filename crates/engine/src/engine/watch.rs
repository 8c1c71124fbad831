//! One file-system watcher for every turn the engine follows.
//!
//! A single inotify instance, read by a single thread, holds a watch on each
//! followed turn's folder and its run's folder. When a turn's raw log grows,
//! that thread reads the new lines through the turn's follower at once
//! (under load, at most every [`COALESCING`], so that one wake takes many
//! lines), so a line reaches subscribers without waking the turn's own
//! thread; once it has spent a moment so, it queues the other grown logs for
//! a small pool of readers, so that one busy turn does not hold up the
//! others' lines. When the supervisor records the CLI's exit or lets go of
//! its lock, it wakes the turn's thread, which sees the turn through.
//!
//! The number of followed turns is bounded by inotify *watches* (hundreds of
//! thousands per user), not by inotify *instances* (128 per user by default).
//! Only a turn whose folders cannot be watched at all falls back to looking
//! every [`POLL_WAKE`]; the others look on their own every [`BACKSTOP_WAKE`]
//! only in case the kernel dropped an event.

use std::collections::{HashMap, VecDeque};
use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use cinch_base::sync::lock;

use super::follow::Follower;

/// How often a turn whose folders cannot be watched looks at its log.
pub(super) const POLL_WAKE: Duration = Duration::from_millis(250);

/// How often a watched turn looks at its supervisor on its own, in case an
/// event was lost; lines never wait for it. A lost event is all but
/// unheard of (an overflow wakes every turn), while each look costs every
/// silent turn a wake: at 5 s, 200 silent turns kept the host above 1% of a
/// core.
pub(super) const BACKSTOP_WAKE: Duration = Duration::from_secs(30);

/// The most threads reading logs: as many as there are CPUs, within 2 and 4.
const MAX_READERS: usize = 4;

/// How long the watcher's thread reads grown logs itself after a read of
/// events before it hands the rest to the readers.
const INLINE_READING: Duration = Duration::from_micros(200);

/// While the watcher is busy, the least time between two reads of events:
/// each wake then takes many turns' lines at once instead of one. At 200
/// turns × 50 lines a second, waking for every line cost a quarter of the
/// watcher's CPU in going to sleep and waking up.
const COALESCING: Duration = Duration::from_millis(1);

/// Turns with grown logs a second above which the watcher is busy: below
/// it, no line waits for [`COALESCING`] (waking for each costs a few
/// µs, under 2% of a core at this rate).
const BUSY_TURNS_PER_SECOND: f64 = 5_000.0;

/// How long the rate that decides whether the watcher is busy is measured
/// over.
const PACE_WINDOW: Duration = Duration::from_millis(20);

/// The turn-folder files whose change the turn's thread must see at once:
/// the supervisor's exit record (renamed into place), its lock (closed when
/// it exits or dies), and a cancel request from another process (`cinch
/// stop`), which a conversation answers by asking its agent to cancel.
const WAKING_FILES: [&str; 3] = ["exit.json", "supervisor.lock", "cancel"];

/// What each watch reports: a file written, created, renamed in or closed
/// after writing. Reads, opens and plain closes are not reported, so the
/// watcher's own reading of a log wakes nothing.
const MASK: u32 = libc::IN_MODIFY | libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_CLOSE_WRITE;

/// A wake-up for a turn's thread; raising it twice before the thread looks
/// counts once.
#[derive(Default)]
pub(super) struct Signal {
    raised: Mutex<bool>,
    woken: Condvar,
}

impl Signal {
    /// Wakes the waiter (or the next one to wait).
    pub(super) fn raise(&self) {
        *lock(&self.raised) = true;
        self.woken.notify_all();
    }

    /// Waits up to `timeout` for a raise, and lowers it.
    fn wait(&self, timeout: Duration) {
        let raised = lock(&self.raised);
        let (mut raised, _) = self
            .woken
            .wait_timeout_while(raised, timeout, |raised| !*raised)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        *raised = false;
    }
}

/// The engine's watcher; clones share the one inotify instance and thread,
/// which stop once the last clone (the engine's, or a turn's) is gone.
#[derive(Clone)]
pub(super) struct Watcher {
    inner: Arc<Inner>,
}

struct Inner {
    core: Arc<Core>,
    /// Written once to stop the thread.
    stop: OwnedFd,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.core.stopping.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to an eventfd we own.
        unsafe { libc::write(self.stop.as_raw_fd(), (&raw const one).cast(), 8) };
    }
}

/// What the watcher's thread shares with the turns.
struct Core {
    inotify: OwnedFd,
    /// The turns registered on each watch (a run's folder holds the logs of
    /// all its turns; a turn attached twice is registered twice).
    watches: Mutex<HashMap<i32, Vec<Arc<Entry>>>>,
    /// Turns whose logs have grown, for the readers.
    queue: Mutex<Queue>,
    /// Raised for the readers when a turn is queued or the watcher stops.
    queued: Condvar,
    /// Set when the watcher is dropped, for a busy thread that reads
    /// events without polling the stop descriptor.
    stopping: AtomicBool,
}

/// How a wait for events ended.
enum Waited {
    Ready,
    /// Nothing to read after all (a signal, or no event): wait again.
    Interrupted,
    Stopped,
}

#[derive(Default)]
struct Queue {
    turns: VecDeque<Arc<Entry>>,
    stopped: bool,
}

/// One followed turn, as the watcher sees it.
struct Entry {
    /// The raw log's file name in its folder.
    log_name: OsString,
    /// Taken back by the turn's thread when the turn ends.
    follower: Mutex<Option<Follower>>,
    /// Why reading the log failed on the watcher's thread, for the turn's.
    failure: Mutex<Option<anyhow::Error>>,
    signal: Arc<Signal>,
    /// In the readers' queue: a growth seen while it waits there is read
    /// with it.
    queued: AtomicBool,
}

impl Entry {
    /// Takes the turn off the queue and reads its log; a growth from now on
    /// queues it again.
    fn read_now(&self) {
        self.queued.store(false, Ordering::Release);
        self.pump();
    }

    /// Reads what the log has gained; a failure is kept for the turn's
    /// thread, which is woken to report it.
    fn pump(&self) {
        let mut follower = lock(&self.follower);
        let Some(follower) = follower.as_mut() else {
            return;
        };
        if let Err(error) = follower.pump() {
            *lock(&self.failure) = Some(error);
            self.signal.raise();
        }
    }
}

impl Watcher {
    /// A new inotify instance and its thread.
    pub(super) fn start() -> std::io::Result<Self> {
        // SAFETY: plain syscalls; each returned descriptor is checked and owned at once.
        let inotify = unsafe { libc::inotify_init1(libc::IN_CLOEXEC | libc::IN_NONBLOCK) };
        if inotify < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: a descriptor just returned to us, owned by nothing else.
        let inotify = unsafe { OwnedFd::from_raw_fd(inotify) };
        // SAFETY: as above.
        let stop = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC) };
        if stop < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: as above.
        let stop = unsafe { OwnedFd::from_raw_fd(stop) };
        let core = Arc::new(Core {
            inotify,
            watches: Mutex::default(),
            queue: Mutex::default(),
            queued: Condvar::new(),
            stopping: AtomicBool::new(false),
        });
        let readers = std::thread::available_parallelism()
            .map_or(2, usize::from)
            .clamp(2, MAX_READERS);
        for n in 0..readers {
            let reader_core = core.clone();
            std::thread::Builder::new()
                .name(format!("turn-reader-{n}"))
                .spawn(move || reader_core.read_logs())?;
        }
        let thread_stop = stop.try_clone()?;
        let thread_core = core.clone();
        std::thread::Builder::new()
            .name("turn-watcher".to_owned())
            .spawn(move || {
                thread_core.run(&thread_stop);
                thread_core.stop_readers();
            })?;
        Ok(Self {
            inner: Arc::new(Inner { core, stop }),
        })
    }
}

impl Core {
    /// Reads events until the watcher is stopped.
    fn run(&self, stop: &OwnedFd) {
        // Aligned for `inotify_event`; room for hundreds of events a read.
        let mut buffer = vec![0u64; 8192];
        let mut due: Vec<(Arc<Entry>, Due)> = Vec::new();
        let mut to_read: Vec<Arc<Entry>> = Vec::new();
        let mut pace = Pace::new();
        while !self.stopping.load(Ordering::Acquire) {
            // While busy, a millisecond's wait has nearly always brought
            // events, so they are read without asking poll first: one
            // sleep a read, instead of a sleep and often a poll that blocks.
            let mut read = if pace.wait_while_busy() {
                self.read_events(&mut buffer)
            } else {
                0
            };
            if read == 0 {
                match self.wait_for_events(stop) {
                    Waited::Ready => read = self.read_events(&mut buffer),
                    Waited::Interrupted => continue,
                    Waited::Stopped => return,
                }
            }
            pace.reading();
            // SAFETY: the kernel wrote `read` bytes into the buffer.
            let bytes = unsafe { std::slice::from_raw_parts(buffer.as_ptr().cast::<u8>(), read) };
            self.dispatch(bytes, &mut due);
            pace.count(due.len());
            for (entry, what) in due.drain(..) {
                if what.wake {
                    entry.signal.raise();
                }
                if what.pump && !entry.queued.swap(true, Ordering::AcqRel) {
                    to_read.push(entry);
                }
            }
            self.read_or_queue(&mut to_read);
        }
    }

    /// Reads the events waiting into `buffer`, without blocking; returns
    /// how many bytes it read (none when no event waits).
    fn read_events(&self, buffer: &mut [u64]) -> usize {
        // SAFETY: reading into a buffer we own, of the length given.
        let read = unsafe {
            libc::read(
                self.inotify.as_raw_fd(),
                buffer.as_mut_ptr().cast(),
                std::mem::size_of_val(buffer),
            )
        };
        usize::try_from(read).unwrap_or(0)
    }

    /// Blocks until events wait or the watcher is stopped.
    fn wait_for_events(&self, stop: &OwnedFd) -> Waited {
        let mut fds = [
            libc::pollfd {
                fd: self.inotify.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: stop.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: polling two descriptors we own.
        let ready = unsafe { libc::poll(fds.as_mut_ptr(), 2, -1) };
        if ready < 0 {
            let error = std::io::Error::last_os_error();
            if error.kind() == std::io::ErrorKind::Interrupted {
                return Waited::Interrupted;
            }
            tracing::error!("the turn watcher stopped: {error}");
            self.wake_all();
            return Waited::Stopped;
        }
        if fds[1].revents != 0 {
            return Waited::Stopped;
        }
        if fds[0].revents == 0 {
            return Waited::Interrupted;
        }
        Waited::Ready
    }

    /// Reads the logs of `to_read` on this thread while that takes less
    /// than [`INLINE_READING`], and queues the rest for the readers: waking
    /// a reader for a line or two cost more than reading them, but a burst
    /// of output must not hold up the other turns' lines.
    fn read_or_queue(&self, to_read: &mut Vec<Arc<Entry>>) {
        let began = Instant::now();
        let mut entries = to_read.drain(..);
        for entry in entries.by_ref() {
            entry.read_now();
            if began.elapsed() >= INLINE_READING {
                break;
            }
        }
        let mut queue = lock(&self.queue);
        let queued_before = queue.turns.len();
        queue.turns.extend(entries);
        let added = queue.turns.len() - queued_before;
        drop(queue);
        match added {
            0 => {}
            1 => self.queued.notify_one(),
            _ => self.queued.notify_all(),
        }
    }

    /// A reader's loop: reads each queued turn's log until the watcher stops.
    fn read_logs(&self) {
        loop {
            let mut queue = lock(&self.queue);
            let entry = loop {
                if queue.stopped {
                    return;
                }
                if let Some(entry) = queue.turns.pop_front() {
                    break entry;
                }
                queue = self
                    .queued
                    .wait(queue)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            };
            drop(queue);
            entry.read_now();
        }
    }

    fn stop_readers(&self) {
        lock(&self.queue).stopped = true;
        self.queued.notify_all();
    }

    /// Sorts a read's events into what each turn has to do.
    fn dispatch(&self, mut bytes: &[u8], due: &mut Vec<(Arc<Entry>, Due)>) {
        let header = std::mem::size_of::<libc::inotify_event>();
        let watches = lock(&self.watches);
        while bytes.len() >= header {
            // SAFETY: at least a header's bytes remain; read unaligned to be safe.
            let event: libc::inotify_event =
                unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast()) };
            let end = (header + event.len as usize).min(bytes.len());
            let name = &bytes[header..end];
            let name =
                OsStr::from_bytes(&name[..name.iter().position(|b| *b == 0).unwrap_or(name.len())]);
            bytes = &bytes[end..];
            if event.mask & libc::IN_Q_OVERFLOW != 0 {
                // Events were lost: every turn looks for itself.
                for entry in watches.values().flatten() {
                    note(
                        due,
                        entry,
                        Due {
                            pump: true,
                            wake: true,
                        },
                    );
                }
                continue;
            }
            let Some(entries) = watches.get(&event.wd) else {
                continue;
            };
            let gone = event.mask & libc::IN_IGNORED != 0;
            for entry in entries {
                let what = Due {
                    pump: name == entry.log_name,
                    wake: gone
                        || WAKING_FILES.iter().any(|file| name == *file)
                        || name
                            .as_bytes()
                            .starts_with(crate::turn_dir::ANSWER_PREFIX.as_bytes()),
                };
                if what.pump || what.wake {
                    note(due, entry, what);
                }
            }
        }
    }

    fn wake_all(&self) {
        for entry in lock(&self.watches).values().flatten() {
            entry.signal.raise();
        }
    }

    /// Adds a watch on `dir` for `entry`; returns the watch's number.
    fn add(&self, dir: &Path, entry: &Arc<Entry>) -> std::io::Result<i32> {
        let path = CString::new(dir.as_os_str().as_bytes())
            .map_err(|_| std::io::Error::other("a folder name with a NUL byte"))?;
        let mut watches = lock(&self.watches);
        // SAFETY: a NUL-terminated path and a descriptor we own. Adding a
        // folder watched already gives its existing number (same mask).
        let wd = unsafe { libc::inotify_add_watch(self.inotify.as_raw_fd(), path.as_ptr(), MASK) };
        if wd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        watches.entry(wd).or_default().push(entry.clone());
        Ok(wd)
    }

    /// Takes `entry` off the watch `wd`, and removes the watch when no turn
    /// is left on it.
    fn remove(&self, wd: i32, entry: &Arc<Entry>) {
        let mut watches = lock(&self.watches);
        let Some(entries) = watches.get_mut(&wd) else {
            return;
        };
        entries.retain(|other| !Arc::ptr_eq(other, entry));
        if entries.is_empty() {
            watches.remove(&wd);
            // SAFETY: a descriptor we own; a watch the kernel already dropped
            // (its folder deleted) gives EINVAL, which is fine.
            unsafe { libc::inotify_rm_watch(self.inotify.as_raw_fd(), wd) };
        }
    }
}

/// When the watcher reads its events: as they come while they come slowly,
/// at most every [`COALESCING`] while they come fast.
struct Pace {
    last_read: Option<Instant>,
    window_start: Instant,
    /// Turns due in reads since `window_start`.
    in_window: usize,
    busy: bool,
}

impl Pace {
    fn new() -> Self {
        Self {
            last_read: None,
            window_start: Instant::now(),
            in_window: 0,
            busy: false,
        }
    }

    /// While busy, sleeps until [`COALESCING`] has passed since the last
    /// read; tells whether it is busy.
    fn wait_while_busy(&self) -> bool {
        if !self.busy {
            return false;
        }
        if let Some(wait) = self
            .last_read
            .and_then(|last_read| COALESCING.checked_sub(last_read.elapsed()))
        {
            std::thread::sleep(wait);
        }
        true
    }

    /// Notes that events are read now.
    fn reading(&mut self) {
        self.last_read = Some(Instant::now());
    }

    /// Counts the turns a read made due; at the end of a window, decides
    /// whether the watcher is busy for the next.
    fn count(&mut self, turns: usize) {
        self.in_window = self.in_window.saturating_add(turns);
        let elapsed = self.window_start.elapsed();
        if elapsed >= PACE_WINDOW {
            self.busy = self.in_window as f64 >= BUSY_TURNS_PER_SECOND * elapsed.as_secs_f64();
            self.window_start = Instant::now();
            self.in_window = 0;
        }
    }
}

/// What a turn has to do after a read of events.
#[derive(Clone, Copy)]
struct Due {
    /// Read its log.
    pump: bool,
    /// Wake its thread.
    wake: bool,
}

fn note(due: &mut Vec<(Arc<Entry>, Due)>, entry: &Arc<Entry>, what: Due) {
    match due.iter_mut().find(|(other, _)| Arc::ptr_eq(other, entry)) {
        Some((_, seen)) => {
            seen.pump |= what.pump;
            seen.wake |= what.wake;
        }
        None => due.push((entry.clone(), what)),
    }
}

/// A turn's follower, read by the engine's watcher as its log grows.
pub(super) struct Followed {
    entry: Arc<Entry>,
    watcher: Option<Watcher>,
    /// The watches it is registered on; none: it looks every [`POLL_WAKE`].
    wds: Vec<i32>,
}

impl Followed {
    /// Registers `follower` on `watcher` (if any) for the turn's folder and
    /// its log's folder; `signal` wakes the turn's thread.
    pub(super) fn new(
        follower: Follower,
        log: &Path,
        turn_dir: &Path,
        watcher: Option<Watcher>,
        signal: Arc<Signal>,
    ) -> Self {
        let entry = Arc::new(Entry {
            log_name: log.file_name().unwrap_or_default().to_owned(),
            follower: Mutex::new(Some(follower)),
            failure: Mutex::default(),
            signal,
            queued: AtomicBool::new(false),
        });
        let mut followed = Self {
            entry,
            watcher,
            wds: Vec::new(),
        };
        let Some(watcher) = &followed.watcher else {
            return followed;
        };
        let core = &watcher.inner.core;
        let log_dir = log.parent().unwrap_or(Path::new("/"));
        for dir in [turn_dir, log_dir] {
            match core.add(dir, &followed.entry) {
                Ok(wd) => followed.wds.push(wd),
                Err(error) => {
                    tracing::warn!(
                        "cannot watch {}, so this turn is followed on a {} ms timer: {error}",
                        dir.display(),
                        POLL_WAKE.as_millis()
                    );
                    followed.unregister();
                    break;
                }
            }
        }
        followed
    }

    /// Whether the file system wakes this turn (else a timer does).
    pub(super) fn is_watched(&self) -> bool {
        !self.wds.is_empty()
    }

    /// Reads what the log has gained, here and now; reports a failure of the
    /// watcher's reading too.
    pub(super) fn pump(&self) -> anyhow::Result<()> {
        if let Some(failure) = lock(&self.entry.failure).take() {
            return Err(failure);
        }
        match lock(&self.entry.follower).as_mut() {
            Some(follower) => follower.pump().map(drop),
            None => Ok(()),
        }
    }

    /// Waits for a sign that the turn may have ended (or its own timer),
    /// or until `deadline` when the caller has one of its own.
    pub(super) fn wait(&self, deadline: Option<std::time::Instant>) {
        let timeout = if self.is_watched() {
            BACKSTOP_WAKE
        } else {
            POLL_WAKE
        };
        let timeout = deadline.map_or(timeout, |deadline| {
            timeout.min(deadline.saturating_duration_since(std::time::Instant::now()))
        });
        self.entry.signal.wait(timeout);
    }

    /// Stops watching and gives the follower back, to read the log through.
    pub(super) fn into_follower(mut self) -> Follower {
        self.unregister();
        lock(&self.entry.follower)
            .take()
            .expect("the follower is taken only here")
    }

    fn unregister(&mut self) {
        if let Some(watcher) = &self.watcher {
            for wd in self.wds.drain(..) {
                watcher.inner.core.remove(wd, &self.entry);
            }
        }
    }
}

impl Drop for Followed {
    fn drop(&mut self) {
        self.unregister();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wait_for_one_another_only_while_turns_grow_fast() {
        let mut pace = Pace::new();
        assert!(!pace.wait_while_busy());
        pace.reading();
        std::thread::sleep(PACE_WINDOW);
        // One turn in a window: slow.
        pace.count(1);
        assert!(!pace.busy);

        std::thread::sleep(PACE_WINDOW);
        // A million in a window of 20 ms (or, on a stalled machine, a few
        // seconds): fast.
        pace.count(1_000_000);
        assert!(pace.wait_while_busy());
        pace.reading();
        let read = Instant::now();
        assert!(pace.wait_while_busy());
        assert!(read.elapsed() >= COALESCING);

        // Quiet again: the next window decides.
        std::thread::sleep(PACE_WINDOW);
        pace.count(0);
        assert!(!pace.busy);
    }
}
