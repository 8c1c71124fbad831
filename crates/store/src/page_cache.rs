//! Pages of messages as clients last read them, kept until the session's
//! messages change: a conversation is read far more often than it is
//! written (every viewer, every reload), and only the server writes it.

use crate::{AccountId, TaskId};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::{Direction, SessionId};

/// A page as the listing answers it: its JSON, how many messages, the next cursor.
pub(crate) type CachedPage = (String, usize, Option<String>);

/// What identifies a page of one session.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct PageKey {
    /// The account asking.
    pub account_id: AccountId,
    /// The task named in the path.
    pub task_id: TaskId,
    /// Which way it runs.
    pub direction: Direction,
    /// Where it starts.
    pub cursor: Option<String>,
    /// How long it is.
    pub limit: u32,
}

#[derive(Default)]
struct SessionPages {
    /// Bumped by every change to the session's messages.
    generation: u64,
    pages: HashMap<PageKey, CachedPage>,
}

/// The cache, by session, and the bytes of JSON it holds.
pub(crate) struct PageCache {
    sessions: Mutex<(HashMap<SessionId, SessionPages>, usize)>,
    /// The most bytes of pages kept; past it the cache starts over.
    max_bytes: usize,
}

impl Default for PageCache {
    fn default() -> Self {
        Self::holding(64 << 20)
    }
}

impl PageCache {
    /// A cache of at most `max_bytes` of pages; none keeps nothing.
    pub(crate) fn holding(max_bytes: usize) -> Self {
        Self {
            sessions: Default::default(),
            max_bytes,
        }
    }

    /// Whether it keeps any page.
    pub(crate) fn is_on(&self) -> bool {
        self.max_bytes > 0
    }

    fn lock(&self) -> MutexGuard<'_, (HashMap<SessionId, SessionPages>, usize)> {
        cinch_base::sync::lock(&self.sessions)
    }

    /// The cached page, or the generation to hand back to [`PageCache::put`]
    /// with the page read from the database.
    pub(crate) fn get(&self, session_id: &SessionId, key: &PageKey) -> Result<CachedPage, u64> {
        let cache = self.lock();
        match cache.0.get(session_id) {
            Some(entry) => entry.pages.get(key).cloned().ok_or(entry.generation),
            None => Err(0),
        }
    }

    /// Keeps a page read at `generation`, unless the messages changed since.
    pub(crate) fn put(
        &self,
        session_id: &SessionId,
        generation: u64,
        key: PageKey,
        page: CachedPage,
    ) {
        if page.0.len() > self.max_bytes {
            return;
        }
        let mut cache = self.lock();
        let (sessions, bytes) = &mut *cache;
        if *bytes + page.0.len() > self.max_bytes {
            // Generations stay: a read in flight must not store a stale page.
            for entry in sessions.values_mut() {
                entry.pages.clear();
            }
            *bytes = 0;
        }
        let entry = sessions.entry(session_id.clone()).or_default();
        if entry.generation != generation {
            return;
        }
        *bytes += page.0.len();
        if let Some(old) = entry.pages.insert(key, page) {
            *bytes -= old.0.len();
        }
    }

    /// Forgets the session's pages: its messages changed.
    pub(crate) fn invalidate(&self, session_id: &SessionId) {
        let mut cache = self.lock();
        let (sessions, bytes) = &mut *cache;
        let entry = sessions.entry(session_id.clone()).or_default();
        entry.generation += 1;
        *bytes -= entry.pages.values().map(|page| page.0.len()).sum::<usize>();
        entry.pages.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ses() -> SessionId {
        "ses".to_owned().into()
    }

    fn key() -> PageKey {
        PageKey {
            account_id: "acc".to_owned().into(),
            task_id: "task".to_owned().into(),
            direction: Direction::Asc,
            cursor: None,
            limit: 50,
        }
    }

    #[test]
    fn a_change_between_read_and_put_keeps_the_stale_page_out() {
        let cache = PageCache::default();
        let generation = cache.get(&ses(), &key()).unwrap_err();
        cache.invalidate(&ses());
        cache.put(&ses(), generation, key(), ("[]".into(), 0, None));
        let generation = cache.get(&ses(), &key()).unwrap_err();
        cache.put(&ses(), generation, key(), ("[1]".into(), 1, None));
        assert_eq!(cache.get(&ses(), &key()).unwrap().0, "[1]");
        cache.invalidate(&ses());
        assert!(cache.get(&ses(), &key()).is_err());
    }

    #[test]
    fn a_cache_of_no_bytes_keeps_nothing() {
        let cache = PageCache::holding(0);
        assert!(!cache.is_on());
        let generation = cache.get(&ses(), &key()).unwrap_err();
        cache.put(&ses(), generation, key(), ("[]".into(), 0, None));
        assert!(cache.get(&ses(), &key()).is_err());
        let small = PageCache::holding(3);
        small.put(&ses(), 0, key(), ("[1]".into(), 1, None));
        assert_eq!(small.get(&ses(), &key()).unwrap().0, "[1]");
        let longer = PageKey { limit: 2, ..key() };
        small.put(&ses(), 0, longer.clone(), ("[1,2]".into(), 2, None));
        assert!(
            small.get(&ses(), &longer).is_err(),
            "a page larger than the cache is not kept"
        );
        assert_eq!(small.get(&ses(), &key()).unwrap().0, "[1]");
    }
}
