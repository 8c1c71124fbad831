//! A SQLite store's newest run events, appended to a file of this process's
//! own before they are indexed into `run_events`.
//!
//! Each run's events go to a page of their own in `run_events`' index, so a
//! batch of events of many runs wrote one page of the database's log per
//! run: 7.5 KB written and 3.8 `write` calls for a 250-byte event at 200
//! sessions, while the batch held the database's write lock that requests
//! wait on. Here a batch is one record appended to a file with one `write`,
//! which a process killed at once leaves to the kernel as SQLite's log at
//! `synchronous=NORMAL` would. About once a second the log is sealed and its
//! events are indexed in one transaction, sorted by run, so that a run's
//! page is written once for a second of its events, not once for each.
//!
//! A log is held locked (`flock`) by its process until its events are
//! indexed: a store opened later indexes the logs of processes that are
//! gone ([`EventLog::left_over`]), never those of a living one.

use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cinch_base::timestamp::Timestamp;

use super::AccountId;
use super::events::{Duplicates, NewEvent, insert_on};
use super::writer::Writer;
use super::{Result, StoreError};

/// What each record starts with: its payload's length and CRC-32, each a
/// little-endian `u32`.
const HEADER: usize = 8;

/// The logs of a SQLite store's run events: the one being appended to and
/// the folder beside the database that holds them all.
#[derive(Clone)]
pub struct EventLog {
    folder: PathBuf,
    writer: Arc<Writer>,
    logs: Arc<Mutex<Logs>>,
    /// Distinguishes this process's logs made in the same nanosecond.
    made: Arc<AtomicU64>,
}

/// The log being appended to, and those a failed append closed early.
#[derive(Default)]
struct Logs {
    open: Option<LogFile>,
    closed: Vec<LogFile>,
}

/// A log's file, locked, and how many bytes of whole records it holds.
struct LogFile {
    path: PathBuf,
    file: File,
    length: u64,
}

/// A log no longer appended to, held locked until its events are indexed.
pub struct SealedEvents(LogFile);

/// One event read back from a log.
struct LoggedEvent {
    account_id: AccountId,
    run_id: String,
    seq: i64,
    name: String,
    data: String,
    created_at: String,
}

impl EventLog {
    /// The logs in `folder`, indexed through `writer`.
    pub(super) fn in_folder(folder: PathBuf, writer: Arc<Writer>) -> Self {
        Self {
            folder,
            writer,
            logs: Arc::default(),
            made: Arc::default(),
        }
    }

    /// The folder beside the database file at `database` that holds its logs.
    pub(super) fn folder_of(database: &Path) -> PathBuf {
        let mut name = database.as_os_str().to_owned();
        name.push("-events");
        PathBuf::from(name)
    }

    /// Appends `events` to the open log, in one `write` (a new log when none
    /// is open). Once it returns they outlive the process; they are in
    /// `run_events` once sealed and indexed.
    pub fn append(&self, events: &[NewEvent<'_>]) -> Result<()> {
        if events.is_empty() {
            return Ok(());
        }
        let record = encode(events, &Timestamp::now().to_string());
        let mut logs = cinch_base::sync::lock(&self.logs);
        let log = match &mut logs.open {
            Some(log) => log,
            None => logs
                .open
                .insert(self.create().map_err(StoreError::EventLog)?),
        };
        let Err(error) = log.file.write_all(&record) else {
            log.length += record.len() as u64;
            return Ok(());
        };
        // Part of the record may be written (a full disk): cut it off, or
        // else close the log there, so that the records after it are read.
        if log.file.set_len(log.length).is_err() {
            let closed = logs.open.take().expect("appended to above");
            logs.closed.push(closed);
        }
        Err(StoreError::EventLog(error))
    }

    /// Seals the open log, when anything was appended since the last seal,
    /// and any closed early: the next append opens a new one.
    pub fn seal(&self) -> Vec<SealedEvents> {
        let mut logs = cinch_base::sync::lock(&self.logs);
        let open = logs.open.take().filter(|log| {
            // One whose only append failed holds nothing.
            log.length > 0 || std::fs::remove_file(&log.path).is_err()
        });
        let mut sealed: Vec<SealedEvents> = logs.closed.drain(..).map(SealedEvents).collect();
        sealed.extend(open.map(SealedEvents));
        sealed
    }

    /// Stores a sealed log's events in `run_events` (those stored already
    /// are left as they are: a log indexed just before its process died is
    /// indexed again), in one transaction, then deletes the log. A log whose
    /// last record is cut short (its `write` never returned, so none of its
    /// events was shown) is indexed up to that record. On an error the log
    /// is kept: index it again later.
    pub fn index(&self, sealed: &SealedEvents) -> Result<usize> {
        let log = &sealed.0;
        let mut bytes = Vec::new();
        let mut file = &log.file;
        file.seek(SeekFrom::Start(0))
            .and_then(|_| file.read_to_end(&mut bytes))
            .map_err(StoreError::EventLog)?;
        let (mut events, cut_at) = decode(&bytes);
        if let Some(offset) = cut_at {
            tracing::warn!(
                log = %log.path.display(),
                offset,
                "a run events log ends in a record cut short, never shown: indexing what precedes it"
            );
        }
        events.sort_unstable_by(|a, b| {
            (&a.account_id, &a.run_id, a.seq).cmp(&(&b.account_id, &b.run_id, b.seq))
        });
        let rows: Vec<(NewEvent<'_>, &str)> = events
            .iter()
            .map(|event| (event.as_new(), event.created_at.as_str()))
            .collect();
        let rows = rows.iter().map(|(event, created_at)| (event, *created_at));
        self.writer
            .write(|transaction| insert_on(transaction, Duplicates::Ignored, rows))?;
        if let Err(error) = std::fs::remove_file(&log.path) {
            tracing::warn!(log = %log.path.display(), "deleting an indexed run events log: {error}");
        }
        Ok(events.len())
    }

    /// The logs of processes that are gone, not indexed yet (a process
    /// killed, or stopped before its last log was indexed).
    pub(super) fn left_over(&self) -> Result<Vec<SealedEvents>> {
        let entries = match std::fs::read_dir(&self.folder) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(error) => return Err(StoreError::EventLog(error)),
        };
        let mut paths = Vec::new();
        for entry in entries {
            let path = entry.map_err(StoreError::EventLog)?.path();
            match path.extension().and_then(|extension| extension.to_str()) {
                Some("log") => paths.push(path),
                // One being made when its process died, before it held anything.
                Some("new") if unlocked(&path).map_err(StoreError::EventLog)?.is_some() => {
                    std::fs::remove_file(&path).map_err(StoreError::EventLog)?;
                }
                _ => {}
            }
        }
        paths.sort();
        let mut left = Vec::new();
        for path in paths {
            // Else a living process's log: it indexes it itself.
            if let Some(file) = unlocked(&path).map_err(StoreError::EventLog)? {
                let length = file.metadata().map_err(StoreError::EventLog)?.len();
                left.push(SealedEvents(LogFile { path, file, length }));
            }
        }
        Ok(left)
    }

    /// Checkpoints the database's log when it is due (see [`Writer`]).
    pub fn checkpoint_if_due(&self) {
        if let Err(error) = self.writer.checkpoint_if_due() {
            tracing::warn!("checkpointing the database's log: {error}");
        }
    }

    /// A new log, locked, named by when it was made so that logs sort in
    /// their order.
    fn create(&self) -> std::io::Result<LogFile> {
        std::fs::create_dir_all(&self.folder)?;
        let nanos = time::OffsetDateTime::now_utc().unix_timestamp_nanos();
        let made = self.made.fetch_add(1, Ordering::Relaxed);
        let name = format!("{nanos:020}-{}-{made}.log", std::process::id());
        // Made under another name and locked before it is named a log, so
        // that no other process takes it for one left over.
        let making = self.folder.join(format!("{name}.new"));
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create_new(true)
            .mode(0o600)
            .open(&making)?;
        file.lock()?;
        let path = self.folder.join(name);
        std::fs::rename(&making, &path)?;
        Ok(LogFile {
            path,
            file,
            length: 0,
        })
    }
}

/// The file at `path`, locked, unless another holds its lock.
fn unlocked(path: &Path) -> std::io::Result<Option<File>> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(error)) => Err(error),
    }
}

/// One record: its header, then the batch's creation time and its events,
/// each text a `u32` length and its bytes, each number an `i64`.
fn encode(events: &[NewEvent<'_>], created_at: &str) -> Vec<u8> {
    let mut payload = Vec::with_capacity(64 + events.len() * 256);
    put_text(&mut payload, created_at);
    for event in events {
        put_text(&mut payload, event.account_id.as_str());
        put_text(&mut payload, event.run_id);
        payload.extend_from_slice(&event.seq.to_le_bytes());
        put_text(&mut payload, event.name);
        put_text(&mut payload, event.data);
    }
    let mut record = Vec::with_capacity(HEADER + payload.len());
    record.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    record.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
    record.extend_from_slice(&payload);
    record
}

fn put_text(payload: &mut Vec<u8>, text: &str) {
    payload.extend_from_slice(&(text.len() as u32).to_le_bytes());
    payload.extend_from_slice(text.as_bytes());
}

/// The events of a log's whole records, and the offset of a last record cut
/// short or damaged, if any.
fn decode(bytes: &[u8]) -> (Vec<LoggedEvent>, Option<usize>) {
    let mut events = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        let Some(payload) = whole_record(&bytes[offset..]) else {
            return (events, Some(offset));
        };
        let Some(batch) = read_batch(payload) else {
            return (events, Some(offset));
        };
        events.extend(batch);
        offset += HEADER + payload.len();
    }
    (events, None)
}

/// The payload of the record `bytes` begins with, when it is whole and its
/// checksum matches.
fn whole_record(bytes: &[u8]) -> Option<&[u8]> {
    let length = u32::from_le_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let checksum = u32::from_le_bytes(bytes.get(4..HEADER)?.try_into().ok()?);
    let payload = bytes.get(HEADER..HEADER.checked_add(length)?)?;
    (crc32fast::hash(payload) == checksum).then_some(payload)
}

impl LoggedEvent {
    fn as_new(&self) -> NewEvent<'_> {
        NewEvent {
            account_id: &self.account_id,
            run_id: &self.run_id,
            seq: self.seq,
            name: &self.name,
            data: &self.data,
        }
    }
}

fn read_batch(mut payload: &[u8]) -> Option<Vec<LoggedEvent>> {
    let created_at = take_text(&mut payload)?;
    let mut events = Vec::new();
    while !payload.is_empty() {
        let account_id = AccountId::from(take_text(&mut payload)?);
        let run_id = take_text(&mut payload)?;
        let (seq, rest) = payload.split_first_chunk::<8>()?;
        payload = rest;
        events.push(LoggedEvent {
            account_id,
            run_id,
            seq: i64::from_le_bytes(*seq),
            name: take_text(&mut payload)?,
            data: take_text(&mut payload)?,
            created_at: created_at.clone(),
        });
    }
    Some(events)
}

fn take_text(payload: &mut &[u8]) -> Option<String> {
    let (length, rest) = payload.split_first_chunk::<4>()?;
    let length = u32::from_le_bytes(*length) as usize;
    let text = rest.get(..length)?;
    *payload = &rest[length..];
    String::from_utf8(text.to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AccountId, DATABASE_FILE, Store};

    fn event<'a>(account_id: &'a AccountId, run_id: &'a str, seq: i64) -> NewEvent<'a> {
        NewEvent {
            account_id,
            run_id,
            seq,
            name: "tool.progress",
            data: r#"{"lines":["a line"]}"#,
        }
    }

    fn logs_in(folder: &Path) -> Vec<PathBuf> {
        std::fs::read_dir(folder)
            .map(|entries| entries.map(|entry| entry.unwrap().path()).collect())
            .unwrap_or_default()
    }

    async fn seqs(store: &Store, account_id: &AccountId, run_id: &str) -> Vec<i64> {
        let events = store.events(account_id, run_id).await.unwrap();
        events.iter().map(|event| event.seq).collect()
    }

    /// A store in a folder of its own, the database's path and an account.
    async fn opened() -> (tempfile::TempDir, PathBuf, Store, AccountId) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(DATABASE_FILE);
        let store = Store::open(&path).await.unwrap();
        let (account, _) = store.create_account("log").await.unwrap();
        (dir, path, store, account.id)
    }

    #[tokio::test]
    async fn appended_events_are_in_run_events_once_their_log_is_indexed() {
        let (_dir, path, store, account) = opened().await;
        let log = store.event_log().unwrap();
        log.append(&[event(&account, "b", 1), event(&account, "a", 1)])
            .unwrap();
        log.append(&[event(&account, "a", 2)]).unwrap();
        assert_eq!(seqs(&store, &account, "a").await, Vec::<i64>::new());
        let sealed = log.seal();
        assert_eq!(sealed.len(), 1);
        assert!(log.seal().is_empty(), "nothing appended since");
        assert_eq!(log.index(&sealed[0]).unwrap(), 3);
        assert_eq!(seqs(&store, &account, "a").await, [1, 2]);
        assert_eq!(seqs(&store, &account, "b").await, [1]);
        let stored = store.events(&account, "b").await.unwrap();
        assert_eq!(stored[0].data, r#"{"lines":["a line"]}"#);
        assert_eq!(logs_in(&EventLog::folder_of(&path)), Vec::<PathBuf>::new());
    }

    #[tokio::test]
    async fn a_log_cut_short_is_indexed_up_to_its_last_whole_record() {
        let (_dir, path, store, account) = opened().await;
        let log = store.event_log().unwrap();
        log.append(&[event(&account, "a", 1)]).unwrap();
        log.append(&[event(&account, "a", 2)]).unwrap();
        // The start of a third record, as a process killed in its `write`
        // leaves it.
        let third = encode(&[event(&account, "a", 3)], "2026-12-06T00:00:00Z");
        let [file] = &logs_in(&EventLog::folder_of(&path))[..] else {
            panic!("one log");
        };
        let mut cut = OpenOptions::new().append(true).open(file).unwrap();
        cut.write_all(&third[..third.len() - 5]).unwrap();
        let sealed = log.seal();
        assert_eq!(log.index(&sealed[0]).unwrap(), 2);
        assert_eq!(seqs(&store, &account, "a").await, [1, 2]);
    }

    #[tokio::test]
    async fn a_store_opened_later_indexes_the_logs_of_processes_gone_not_of_living_ones() {
        let (_dir, path, living, account) = opened().await;
        let log = living.event_log().unwrap();
        log.append(&[event(&account, "a", 1)]).unwrap();
        // Its log is locked while the store that appends to it is open.
        let other = Store::open(&path).await.unwrap();
        assert_eq!(seqs(&other, &account, "a").await, Vec::<i64>::new());
        assert_eq!(logs_in(&EventLog::folder_of(&path)).len(), 1);
        // Gone, as a process killed: its lock goes with it.
        drop(living);
        let later = Store::open(&path).await.unwrap();
        assert_eq!(seqs(&later, &account, "a").await, [1]);
        assert_eq!(logs_in(&EventLog::folder_of(&path)), Vec::<PathBuf>::new());
        // Indexed twice (killed after indexing, before deleting the log):
        // the events once.
        let log = later.event_log().unwrap();
        log.append(&[event(&account, "a", 1), event(&account, "a", 2)])
            .unwrap();
        log.index(&log.seal()[0]).unwrap();
        assert_eq!(seqs(&later, &account, "a").await, [1, 2]);
    }
}
