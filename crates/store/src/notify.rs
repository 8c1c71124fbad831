//! What nodes sharing a PostgreSQL database tell each other the moment it
//! happens: NOTIFY when a transaction commits, and one LISTEN connection per
//! node. A notice is a hint to read the database again, never the data:
//! one lost while the connection was down is made up for by reading again
//! whatever it could have been about ([`Notice::Reconnected`]).

use serde::{Deserialize, Serialize};
use sqlx::postgres::PgListener;

use super::events::{RUN_EVENTS_CHANNEL, RunKey};
use super::{AccountId, ApprovalId, Pool, Result, SessionId, Store};

/// The channel on which a node tells the others that a message came for a
/// session: the payload is a [`SessionWake`] as JSON.
const WAKE_CHANNEL: &str = "cinch_session_wake";

/// Node `from` took a request for a session that the node holding the
/// session's lease carries out: a message came, or a turn is to stop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionWake {
    /// The session's account.
    pub account_id: AccountId,
    /// The session.
    pub session_id: SessionId,
    /// The node it was posted on, so that it can leave its own notices be.
    pub from: String,
    /// A turn of the session to stop (an abort), rather than a message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_turn: Option<String>,
    /// An approval decided on another node, for the node running its turn
    /// to answer the agent with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalId>,
}

/// What a node was told.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The run has new events.
    RunEvents(RunKey),
    /// A message came for the session.
    Wake(SessionWake),
    /// The connection was lost and made again: notices may have been missed.
    Reconnected,
}

/// A node's LISTEN connection.
pub struct Listener {
    connection: PgListener,
}

impl Store {
    /// A connection listening for the other nodes' notices, or `None` on
    /// SQLite, where one node has the database to itself.
    pub async fn listen(&self) -> Result<Option<Listener>> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(None);
        };
        let mut connection = PgListener::connect_with(pool).await?;
        connection
            .listen_all([RUN_EVENTS_CHANNEL, WAKE_CHANNEL])
            .await?;
        Ok(Some(Listener { connection }))
    }

    /// Tells every node listening that a message came for a session; nothing
    /// on SQLite.
    pub async fn notify_wake(&self, wake: &SessionWake) -> Result<()> {
        let Pool::Postgres(pool) = &self.pool else {
            return Ok(());
        };
        sqlx::query("SELECT pg_notify($1, $2)")
            .bind(WAKE_CHANNEL)
            .bind(serde_json::to_string(wake)?)
            .execute(pool)
            .await?;
        Ok(())
    }
}

impl Listener {
    /// The next notice; a payload that is not one is logged and skipped.
    /// After an error the caller waits a little before asking again.
    pub async fn next(&mut self) -> Result<Notice> {
        loop {
            let Some(notification) = self.connection.try_recv().await? else {
                return Ok(Notice::Reconnected);
            };
            let payload = notification.payload();
            let notice = match notification.channel() {
                RUN_EVENTS_CHANNEL => serde_json::from_str(payload).map(Notice::RunEvents),
                WAKE_CHANNEL => serde_json::from_str(payload).map(Notice::Wake),
                _ => continue,
            };
            match notice {
                Ok(notice) => return Ok(notice),
                Err(error) => tracing::warn!(
                    channel = notification.channel(),
                    "a notice that is not one of cinch's: {error}"
                ),
            }
        }
    }
}
