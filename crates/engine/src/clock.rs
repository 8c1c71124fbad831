//! Wall-clock time as turn files and egress records keep it (a moment the
//! store, the API and driver pins keep is a `cinch_base::timestamp::Timestamp`).

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}
