//! Wall-clock time as turn files, events, egress records, driver pins and
//! the store keep it.

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

/// Now as the store and the driver pins keep it: RFC 3339 in UTC with
/// milliseconds, so text order is time order.
pub fn now() -> String {
    format_time(time::OffsetDateTime::now_utc())
}

/// `at` as [`now`] writes it.
pub fn format_time(at: time::OffsetDateTime) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}
