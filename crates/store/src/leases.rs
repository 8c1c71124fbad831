//! Session leases: which node runs a session, until when, and the
//! generation that fences a node that lost it.
//!
//! A node takes a lease before it moves a session on and renews it by its
//! heartbeat. Another node may take it only once it expired (or was given
//! back), and then with the next generation: every write of the old owner is
//! conditioned on the generation it held, so it fails from then on.

use crate::SessionId;
use std::time::Duration;

use cinch_base::timestamp::Timestamp;

use super::{AccountId, PerBackend, Result, Store, on_pool};

super::rows::row_struct! {
    /// A lease as stored.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct Lease {
        /// The session it is for.
        pub session_id: SessionId,
        /// The node that holds (or last held) it.
        pub node_id: String,
        /// Grows each time the session changes hands.
        pub generation: i64,
        /// When it runs out unless renewed.
        pub expires_at: Expiry,
    }
}

impl Lease {
    /// Whether it ran out (or was given back) by `at`.
    pub fn expired_by(&self, at: Timestamp) -> bool {
        self.expires_at <= Expiry::At(at)
    }
}

/// When a lease runs out: at a moment, or already, once given back (stored
/// as empty text, which statements compare as earlier than any moment; the
/// derived order agrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Expiry {
    /// Its node gave it back.
    GivenBack,
    /// It runs out then unless renewed.
    At(Timestamp),
}

super::rows::text_type!(Expiry, |text| match text {
    "" => Ok(Expiry::GivenBack),
    at => Ok(Expiry::At(at.parse()?)),
});

/// Whom a node took a session's lease from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TakenFrom {
    /// Nobody: the session had no lease yet.
    Nobody,
    /// The node itself (a renewal, or a restart on the same home).
    Itself,
    /// Another node, whose lease had run out or was given back.
    Node(String),
}

/// What came of an attempt to take a session's lease.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The node holds it now, at this generation.
    Held {
        /// The generation its writes are conditioned on.
        generation: i64,
        /// Whom it came from.
        from: TakenFrom,
    },
    /// Another node holds it, unexpired.
    OwnedBy(String),
}

super::rows::row_struct! {
    /// A session to look at: its id and its account's.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct SessionRef {
        /// The session.
        pub session_id: SessionId,
        /// Its account.
        pub account_id: AccountId,
    }
}

super::rows::row_struct! {
    /// A waiting session a node took from another to run it.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct ClaimedWait {
        /// The session.
        pub session_id: SessionId,
        /// Its account.
        pub account_id: AccountId,
        /// The node that held it.
        pub from_node: String,
        /// The lease's generation now, the claiming node's.
        pub generation: i64,
    }
}

/// How many leases one statement of [`Store::renew_leases`] renews: two
/// parameters each, well within SQLite's 32,766 and PostgreSQL's 65,535.
const LEASES_RENEWED_AT_ONCE: usize = 500;

/// The moment `ttl` from now.
fn expiry(ttl: Duration) -> Timestamp {
    Timestamp::now() + ttl
}

/// Gives a session (`$1`) that has no lease yet its first, to node `$2`
/// until `$3`.
const FIRST_LEASE: &str = "INSERT INTO session_leases (session_id, node_id, generation, \
     expires_at) VALUES ($1, $2, 1, $3) ON CONFLICT (session_id) DO NOTHING";

/// The session's (`$1`) lease.
const LEASE: PerBackend<&str> = PerBackend::same(
    "SELECT session_id, node_id, generation, expires_at FROM session_leases WHERE session_id = $1",
);

impl Store {
    /// The session's lease, if it ever had one.
    pub async fn lease(&self, session_id: &SessionId) -> Result<Option<Lease>> {
        self.read_row(&LEASE, &[session_id.as_str().into()]).await
    }

    /// Takes the session's lease for `node` until `ttl` from now: when it
    /// has none, when `node` holds it already, or when it ran out. Each step
    /// is a compare-and-set on the stored row, so of two nodes trying at
    /// once exactly one wins.
    pub async fn claim_lease(
        &self,
        session_id: &SessionId,
        node: &str,
        ttl: Duration,
    ) -> Result<Claim> {
        loop {
            let until = expiry(ttl);
            // Most claims are of a new session's lease: one statement.
            let inserted = match &self.writer {
                Some(writer) => {
                    let params = vec![
                        session_id.as_str().to_owned().into(),
                        node.to_owned().into(),
                        until.to_string().into(),
                    ];
                    writer.execute(FIRST_LEASE, params).await? as u64
                }
                None => on_pool!(self, |pool| sqlx::query(FIRST_LEASE)
                    .bind(session_id)
                    .bind(node)
                    .bind(until)
                    .execute(pool)
                    .await
                    .map(|done| done.rows_affected()))?,
            };
            if inserted == 1 {
                return Ok(Claim::Held {
                    generation: 1,
                    from: TakenFrom::Nobody,
                });
            }
            let Some(lease) = self.lease(session_id).await? else {
                continue;
            };
            let (generation, from) = if lease.node_id == node {
                (lease.generation, TakenFrom::Itself)
            } else if lease.expired_by(Timestamp::now()) {
                (lease.generation + 1, TakenFrom::Node(lease.node_id.clone()))
            } else {
                return Ok(Claim::OwnedBy(lease.node_id));
            };
            let changed = on_pool!(self, |pool| sqlx::query(
                "UPDATE session_leases SET node_id = $2, generation = $3, expires_at = $4 \
                 WHERE session_id = $1 AND node_id = $5 AND generation = $6"
            )
            .bind(session_id)
            .bind(node)
            .bind(generation)
            .bind(until)
            .bind(&lease.node_id)
            .bind(lease.generation)
            .execute(pool)
            .await
            .map(|done| done.rows_affected()))?;
            if changed == 1 {
                return Ok(Claim::Held { generation, from });
            }
        }
    }

    /// Renews `node`'s lease at `generation` until `ttl` from now; `false`
    /// when the node no longer holds it (another node took it).
    pub async fn renew_lease(
        &self,
        session_id: &SessionId,
        node: &str,
        generation: i64,
        ttl: Duration,
    ) -> Result<bool> {
        let lost = self
            .renew_leases(node, &[(session_id.clone(), generation)], ttl)
            .await?;
        Ok(lost.is_empty())
    }

    /// Renews each of `held` (a session, and the generation at which `node`
    /// holds its lease) until `ttl` from now, a few hundred in one
    /// statement; the sessions among them whose lease `node` no longer holds
    /// at that generation. A node's heartbeat renewed each lease with a
    /// statement of its own: with 1,000 sessions open, 100 writes a second
    /// in bursts, for as long as they stayed open.
    pub async fn renew_leases(
        &self,
        node: &str,
        held: &[(SessionId, i64)],
        ttl: Duration,
    ) -> Result<Vec<SessionId>> {
        let until = expiry(ttl);
        let mut lost = Vec::new();
        for chunk in held.chunks(LEASES_RENEWED_AT_ONCE) {
            let pairs: Vec<String> = (0..chunk.len())
                .map(|at| format!("(${}, ${})", 3 + 2 * at, 4 + 2 * at))
                .collect();
            let sql = format!(
                "UPDATE session_leases SET expires_at = $1 WHERE node_id = $2 \
                 AND (session_id, generation) IN (VALUES {}) RETURNING session_id",
                pairs.join(", ")
            );
            let renewed: Vec<(SessionId,)> = on_pool!(self, |pool| {
                let mut query = sqlx::query_as(&sql).bind(until).bind(node);
                for (session_id, generation) in chunk {
                    query = query.bind(session_id).bind(*generation);
                }
                query.fetch_all(pool).await
            })?;
            let renewed: std::collections::HashSet<&SessionId> =
                renewed.iter().map(|(session_id,)| session_id).collect();
            lost.extend(
                chunk
                    .iter()
                    .filter(|(session_id, _)| !renewed.contains(session_id))
                    .map(|(session_id, _)| session_id.clone()),
            );
        }
        Ok(lost)
    }

    /// Whether `node` still holds the session's lease at `generation`.
    pub async fn holds_lease(
        &self,
        session_id: &SessionId,
        node: &str,
        generation: i64,
    ) -> Result<bool> {
        Ok(self
            .lease(session_id)
            .await?
            .is_some_and(|lease| lease.node_id == node && lease.generation == generation))
    }

    /// Gives `node`'s lease at `generation` back, so that another node may
    /// take the session at once; the row keeps the node's id, which tells
    /// the next owner where the work tree was.
    pub async fn release_lease(
        &self,
        session_id: &SessionId,
        node: &str,
        generation: i64,
    ) -> Result<()> {
        on_pool!(self, |pool| sqlx::query(
            "UPDATE session_leases SET expires_at = '' \
             WHERE session_id = $1 AND node_id = $2 AND generation = $3"
        )
        .bind(session_id)
        .bind(node)
        .bind(generation)
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(())
    }

    /// The open sessions whose lease another node let run out or gave back:
    /// theirs to take over.
    pub async fn orphaned_sessions(&self, node: &str) -> Result<Vec<SessionRef>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT s.id AS session_id, s.account_id FROM session_leases l \
             JOIN sessions s ON s.id = l.session_id \
             WHERE l.node_id <> $1 AND l.expires_at <= $2 AND s.status <> 'closed' \
             ORDER BY s.id"
        )
        .bind(node)
        .bind(Timestamp::now())
        .fetch_all(pool)
        .await)?)
    }

    /// Moves to `node` up to `limit` sessions that wait for a turn slot on
    /// other nodes (their node retried at least once), the longest waits first, each
    /// lease at its next generation: `node` has slots free. A wait behind
    /// its account's cap (`account_cap` slots held on all nodes) stays where
    /// it is: no node could run it. Rows another node is claiming at the
    /// same moment are skipped (`FOR UPDATE SKIP LOCKED`), so a wait moves to
    /// one node only. What it took, and from whom.
    pub async fn claim_waiting(
        &self,
        node: &str,
        limit: usize,
        ttl: Duration,
        account_cap: Option<usize>,
    ) -> Result<Vec<ClaimedWait>> {
        let dialect = self.dialect();
        let at = Timestamp::now();
        let until = expiry(ttl);
        let cap = account_cap.map_or(i64::MAX, |cap| cap as i64);
        on_pool!(self, |pool| {
            let mut transaction = pool.begin_with(dialect.begin_write).await?;
            let waits: Vec<ClaimedWait> = sqlx::query_as(&format!(
                "SELECT s.id AS session_id, s.account_id, l.node_id AS from_node, l.generation \
                 FROM session_leases l JOIN sessions s ON s.id = l.session_id \
                 WHERE l.node_id <> $1 AND s.status = 'waiting' AND s.retries >= 2 \
                 AND (SELECT COUNT(*) FROM turn_slots t WHERE t.account_id = s.account_id \
                      AND t.expires_at > $2) < $3 \
                 ORDER BY s.waiting_since, s.id LIMIT $4{}",
                dialect.skip_locked
            ))
            .bind(node)
            .bind(at)
            .bind(cap)
            .bind(limit as i64)
            .fetch_all(&mut *transaction)
            .await?;
            let mut claimed = Vec::with_capacity(waits.len());
            for mut wait in waits {
                let moved = sqlx::query(
                    "UPDATE session_leases SET node_id = $2, generation = $3, expires_at = $4 \
                     WHERE session_id = $1 AND generation = $5",
                )
                .bind(&wait.session_id)
                .bind(node)
                .bind(wait.generation + 1)
                .bind(until)
                .bind(wait.generation)
                .execute(&mut *transaction)
                .await?;
                if moved.rows_affected() == 1 {
                    wait.generation += 1;
                    claimed.push(wait);
                }
            }
            transaction.commit().await?;
            Ok(claimed)
        })
    }

    /// The sessions `node` holds that are idle with a message queued, or
    /// closed with one queued since they closed: a message another node took
    /// for them, to be run here. A closed session keeps the messages it had
    /// queued when it closed (its first prompt, when its setup failed) until
    /// a new one wakes it, and holds its lease a moment after closing: those
    /// must not reopen it.
    pub async fn held_sessions_with_queue(&self, node: &str) -> Result<Vec<SessionRef>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(
            "SELECT s.id AS session_id, s.account_id FROM session_leases l \
             JOIN sessions s ON s.id = l.session_id \
             WHERE l.node_id = $1 AND l.expires_at > $2 AND s.status IN ('idle', 'closed') \
             AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id \
                         AND m.sequence IS NULL AND m.type = 'user' \
                         AND (s.status = 'idle' OR m.created_at > s.updated_at)) \
             ORDER BY s.id"
        )
        .bind(node)
        .bind(Timestamp::now())
        .fetch_all(pool)
        .await)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MessageKind, SessionStatus, test_session, test_store};

    /// A new session: its id and its account's.
    async fn a_session(store: &Store) -> SessionRef {
        let session = test_session(store).await;
        SessionRef {
            session_id: session.id.clone(),
            account_id: session.account_id.clone(),
        }
    }

    /// A closed session's queue from before it closed does not reopen it
    /// (the sweep for messages taken elsewhere once rebooted a session whose
    /// setup had failed, in the moment it still held its lease): only a
    /// message queued since the close does.
    #[tokio::test]
    async fn a_closed_sessions_old_queue_is_not_a_message_to_run() {
        let (store, _dir) = test_store().await;
        let mut session = test_session(&store).await;
        let long = Duration::from_secs(60);
        store.claim_lease(&session.id, "a", long).await.unwrap();
        let listed = |store: &Store| {
            let store = store.clone();
            async move {
                store
                    .held_sessions_with_queue("a")
                    .await
                    .unwrap()
                    .into_iter()
                    .map(|listed| listed.session_id)
                    .collect::<Vec<_>>()
            }
        };
        assert!(listed(&store).await.is_empty(), "nothing queued yet");
        session.status = SessionStatus::Idle;
        store.save_session(&mut session).await.unwrap();
        store
            .add_message(&session, MessageKind::User, "Set up", None, false)
            .await
            .unwrap();
        assert_eq!(listed(&store).await, [session.id.clone()], "idle, queued");

        tokio::time::sleep(Duration::from_millis(5)).await;
        session.status = SessionStatus::Closed;
        store.save_session(&mut session).await.unwrap();
        assert!(listed(&store).await.is_empty(), "closed with its old queue");

        tokio::time::sleep(Duration::from_millis(5)).await;
        store
            .add_message(&session, MessageKind::User, "Try again", None, false)
            .await
            .unwrap();
        assert_eq!(listed(&store).await, [session.id.clone()], "a new message");
    }

    /// A heartbeat renews, in one statement, the leases its node still
    /// holds, and names the ones another node took meanwhile.
    #[tokio::test]
    async fn a_heartbeat_renews_the_leases_held_and_names_the_lost() {
        let (store, _dir) = test_store().await;
        let kept = a_session(&store).await.session_id;
        let taken = a_session(&store).await.session_id;
        let long = Duration::from_secs(60);
        for session in [&kept, &taken] {
            store.claim_lease(session, "a", long).await.unwrap();
            // Run out: only a renewal keeps it.
            assert!(
                store
                    .renew_lease(session, "a", 1, Duration::ZERO)
                    .await
                    .unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(5));
        store.claim_lease(&taken, "b", long).await.unwrap();
        let lost = store
            .renew_leases("a", &[(kept.clone(), 1), (taken.clone(), 1)], long)
            .await
            .unwrap();
        assert_eq!(lost, std::slice::from_ref(&taken));
        let renewed = store.lease(&kept).await.unwrap().unwrap();
        assert_eq!(renewed.node_id, "a");
        assert!(!renewed.expired_by(Timestamp::now()), "{renewed:?}");
        let other = store.lease(&taken).await.unwrap().unwrap();
        assert_eq!((other.node_id.as_str(), other.generation), ("b", 2));
        assert!(store.orphaned_sessions("b").await.unwrap().is_empty());
        assert!(store.renew_leases("a", &[], long).await.unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_lease_changes_hands_only_once_it_ran_out_and_fences_its_old_owner() {
        let (store, _dir) = test_store().await;
        let made = a_session(&store).await;
        let session = made.session_id.clone();
        {
            let long = Duration::from_secs(60);
            let first = store.claim_lease(&session, "a", long).await.unwrap();
            assert_eq!(
                first,
                Claim::Held {
                    generation: 1,
                    from: TakenFrom::Nobody
                }
            );
            assert_eq!(
                store.claim_lease(&session, "b", long).await.unwrap(),
                Claim::OwnedBy("a".into())
            );
            assert_eq!(
                store.claim_lease(&session, "a", long).await.unwrap(),
                Claim::Held {
                    generation: 1,
                    from: TakenFrom::Itself
                }
            );
            // Run out (a zero ttl): b takes it with the next generation.
            assert!(
                store
                    .renew_lease(&session, "a", 1, Duration::ZERO)
                    .await
                    .unwrap()
            );
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(
                store.claim_lease(&session, "b", long).await.unwrap(),
                Claim::Held {
                    generation: 2,
                    from: TakenFrom::Node("a".into())
                }
            );
            assert!(!store.renew_lease(&session, "a", 1, long).await.unwrap());
            assert!(!store.holds_lease(&session, "a", 1).await.unwrap());
            assert!(store.holds_lease(&session, "b", 2).await.unwrap());
            // Given back: a may take it again at once, from b.
            store.release_lease(&session, "b", 2).await.unwrap();
            let lease = store.lease(&session).await.unwrap().unwrap();
            assert_eq!(
                (lease.node_id.as_str(), lease.expires_at),
                ("b", Expiry::GivenBack)
            );
            assert_eq!(
                store.orphaned_sessions("a").await.unwrap(),
                vec![made.clone()]
            );
            assert!(store.orphaned_sessions("b").await.unwrap().is_empty());
            assert_eq!(
                store.claim_lease(&session, "a", long).await.unwrap(),
                Claim::Held {
                    generation: 3,
                    from: TakenFrom::Node("b".into())
                }
            );
        }
    }
}
