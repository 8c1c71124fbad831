//! The server's seen-list of event types its drivers did not know, per
//! harness and CLI version (written with a turn's result, in
//! [`Store::record_call_result`]), and the CLI versions turns ran on.

use cinch_base::timestamp::Timestamp;

use super::{Result, Store, on_pool};

super::rows::row_struct! {
    /// An event type a driver did not know, as seen with one CLI version.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SeenUnknown {
        /// The driver (harness) that did not know it.
        pub harness: String,
        /// The CLI's version; empty when the CLI did not say it.
        pub cli_version: String,
        /// The event's type name.
        pub event_type: String,
        /// When a turn's end first recorded it (RFC 3339).
        pub first_seen: Timestamp,
        /// How many such events all turns have seen.
        pub count: i64,
    }
}

super::rows::row_struct! {
    /// A CLI version turns of a harness ran on.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SeenCliVersion {
        /// The harness.
        pub harness: String,
        /// The CLI's version; empty when the CLI did not say it.
        pub cli_version: String,
        /// When a turn's end first recorded it (RFC 3339).
        pub first_seen: Timestamp,
        /// When a turn's end last recorded it (RFC 3339).
        pub last_seen: Timestamp,
        /// How many turns ran on it.
        pub turns: i64,
    }
}

impl Store {
    /// Every CLI version turns ran on, by harness and first sighting.
    pub async fn cli_versions(&self) -> Result<Vec<SeenCliVersion>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT harness, cli_version, first_seen, last_seen, turns FROM cli_versions \
             ORDER BY harness, first_seen, cli_version",
        )
        .fetch_all(pool)
        .await)?)
    }

    /// Every unknown event type seen, ordered by harness, CLI version and
    /// first sighting.
    pub async fn unknown_events(&self) -> Result<Vec<SeenUnknown>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT harness, cli_version, event_type, first_seen, count FROM unknown_events \
             ORDER BY harness, cli_version, first_seen, event_type",
        )
        .fetch_all(pool)
        .await)?)
    }
}
