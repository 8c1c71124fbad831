//! Reads of a PostgreSQL store that answer in one round trip: a few
//! connections of the store's own, outside sqlx's pool.
//!
//! sqlx's pool pings a connection before lending it and again when it comes
//! back (a round trip each, which wakes the server's backend each time): for
//! a read that is one query, three round trips where one does. A reader
//! lends a connection as it is. A connection lent to a read that did not
//! finish (its request went away mid-answer) or that failed is closed, never
//! lent again; a read that failed on a connection left idle (the server
//! closed it meanwhile, or restarted) goes again on a new one.

use std::sync::Mutex;

use sqlx::ConnectOptions as _;
use sqlx::Postgres;
use sqlx::postgres::{PgArguments, PgConnectOptions, PgConnection, PgRow};
use sqlx::query::Query;
use tokio::sync::Semaphore;

/// The most reads at once, and so the most connections; a read beyond waits.
const CONNECTIONS: usize = 8;

/// Connections to one PostgreSQL database for the busiest reads.
pub(super) struct PgReaders {
    options: PgConnectOptions,
    idle: Mutex<Vec<PgConnection>>,
    permits: Semaphore,
}

impl PgReaders {
    /// Readers of the database `options` name, connected as first needed.
    pub(super) fn of(options: PgConnectOptions) -> Self {
        Self {
            // The reads sent here are index range scans whose plan is the
            // same for any values: planning each anew (as PostgreSQL does
            // when a custom plan looks no dearer) costs more than the scan.
            options: options.options([("plan_cache_mode", "force_generic_plan")]),
            idle: Mutex::new(Vec::new()),
            permits: Semaphore::new(CONNECTIONS),
        }
    }

    /// The rows of the query `query` builds, run on an idle connection, or
    /// a new one when none is idle. The query may run twice: it must only
    /// read.
    pub(super) async fn fetch_all<'q>(
        &self,
        query: impl Fn() -> Query<'q, Postgres, PgArguments>,
    ) -> sqlx::Result<Vec<PgRow>> {
        let _permit = self
            .permits
            .acquire()
            .await
            .expect("the readers' semaphore is never closed");
        let idle = cinch_base::sync::lock(&self.idle).pop();
        if let Some(mut connection) = idle {
            match query().fetch_all(&mut connection).await {
                Ok(rows) => {
                    self.keep(connection);
                    return Ok(rows);
                }
                // The server may have closed it while it was idle (which it
                // says with a FATAL error, or not at all): a read can go again.
                Err(error) => tracing::debug!(
                    "a read on an idle PostgreSQL connection failed, reading again on a new one: {error}"
                ),
            }
        }
        let mut connection = tokio::time::timeout(super::CONNECTION_WAIT, self.options.connect())
            .await
            .map_err(|_| sqlx::Error::PoolTimedOut)??;
        let rows = query().fetch_all(&mut connection).await?;
        self.keep(connection);
        Ok(rows)
    }

    fn keep(&self, connection: PgConnection) {
        cinch_base::sync::lock(&self.idle).push(connection);
    }
}
