//! Locks that outlive a panic.
//!
//! The data behind cinch's mutexes (caches, registries, buffers) stays usable
//! when a thread panicked while holding one, so a poisoned lock is taken as is
//! rather than spreading the panic to every later caller.

use std::sync::{Mutex, MutexGuard};

/// Locks `mutex`, poisoned or not.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
