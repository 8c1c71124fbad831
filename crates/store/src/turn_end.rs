//! A turn's end as its session keeps it: the turn's message (its text and
//! turn), the task's preview and the session, written in one transaction.
//!
//! Written one by one, each of the three took the write lock, committed and
//! emptied the page cache of every other connection of the file's, and on
//! SQLite went through sqlx's connection thread and back. On SQLite the one
//! transaction runs on the store's own connection (see [`super::writer`]).

use cinch_base::timestamp::Timestamp;
use serde_json::Value;

use super::messages::{REWRITE, Row, from_row};
use super::readers::numbered;
use super::rows::SqliteRow as _;
use super::sessions::{save_on, save_query};
use super::{Message, MessageId, Result, Session, Store, on_pool};

/// Records what the agent last said (`$2`) on a task (`$1`) at `$3`.
const SET_PREVIEW: &str =
    "UPDATE tasks SET last_message_preview = $2, updated_at = $3 WHERE id = $1";

/// What a turn's end changes besides its session.
#[derive(Debug, Clone)]
pub struct TurnEnd {
    /// The assistant message the turn answers in.
    pub message_id: MessageId,
    /// Its text: the final message, or what went wrong.
    pub content: String,
    /// Its turn (a `TurnView`), ended.
    pub turn: Value,
    /// What the agent last said, shown with the task, when it said something.
    pub preview: Option<String>,
}

/// What [`Store::keep_turn_end`] wrote.
#[derive(Debug)]
pub enum KeptTurnEnd {
    /// All of it, and the message as it now reads (`None` when it was
    /// deleted meanwhile).
    Kept(Option<Message>),
    /// Nothing: the session is gone, or another node holds its lease.
    SessionNotWritten,
}

impl Store {
    /// Writes back `session` as [`Store::save_session_fenced`] does (while
    /// `holder`, a node and a generation, holds its lease, when given) with
    /// the turn's `end`, all or nothing.
    pub async fn keep_turn_end(
        &self,
        session: &mut Session,
        holder: Option<(&str, i64)>,
        end: TurnEnd,
    ) -> Result<KeptTurnEnd> {
        session.updated_at = Timestamp::now();
        let kept = if let Some(writer) = &self.writer {
            let session = session.clone();
            let holder = holder.map(|(node, generation)| (node.to_owned(), generation));
            writer
                .write_off_task(move |transaction| {
                    if !save_on(transaction, &session, holder.as_ref())? {
                        return Ok(None);
                    }
                    let turn = end.turn.to_string();
                    let message = transaction
                        .prepare_cached(REWRITE)?
                        .query_map(
                            &*numbered(&[&end.message_id, &end.content, &turn]),
                            Row::from_sqlite_row,
                        )?
                        .next()
                        .transpose()?;
                    if let Some(preview) = &end.preview {
                        transaction
                            .prepare_cached(SET_PREVIEW)?
                            .execute(&*numbered(&[
                                &session.task_id,
                                preview,
                                &session.updated_at.to_string(),
                            ]))?;
                    }
                    Ok(Some(message))
                })
                .await?
        } else {
            let (node, generation) = holder.unzip();
            let turn = end.turn.to_string();
            let begin = self.dialect().begin_write;
            on_pool!(self, |pool| {
                let mut transaction = pool.begin_with(begin).await?;
                let saved = save_query!(session, node, generation)
                    .execute(&mut *transaction)
                    .await?
                    .rows_affected();
                if saved != 1 {
                    return Ok(KeptTurnEnd::SessionNotWritten);
                }
                let message: Option<Row> = sqlx::query_as(REWRITE)
                    .bind(&end.message_id)
                    .bind(&end.content)
                    .bind(&turn)
                    .fetch_optional(&mut *transaction)
                    .await?;
                if let Some(preview) = &end.preview {
                    sqlx::query(SET_PREVIEW)
                        .bind(&session.task_id)
                        .bind(preview)
                        .bind(session.updated_at)
                        .execute(&mut *transaction)
                        .await?;
                }
                transaction.commit().await?;
                Some(message)
            })
        };
        let Some(message) = kept else {
            return Ok(KeptTurnEnd::SessionNotWritten);
        };
        self.pages.invalidate(&session.id);
        Ok(KeptTurnEnd::Kept(message.map(from_row).transpose()?))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::{MessageKind, SessionStatus};

    /// A session running a turn on node `a`, with the turn's message.
    async fn running_turn() -> (Store, tempfile::TempDir, Session, Message) {
        let (store, dir) = crate::test_store().await;
        let mut session = crate::test_session(&store).await;
        store
            .claim_lease(&session.id, "a", Duration::from_secs(60))
            .await
            .unwrap();
        session.status = SessionStatus::Running;
        session.current_turn = Some("turn-1".into());
        store.save_session(&mut session).await.unwrap();
        let message = store
            .add_message(
                &session,
                MessageKind::Assistant,
                "",
                Some(&json!({"status": "running"})),
                true,
            )
            .await
            .unwrap();
        (store, dir, session, message)
    }

    /// Ends the turn of `message` as `node` (at the lease's generation 1)
    /// writes it: the session idle, the message and the preview "done".
    async fn end_as(
        store: &Store,
        session: &mut Session,
        message: &Message,
        node: &str,
    ) -> KeptTurnEnd {
        session.status = SessionStatus::Idle;
        session.current_turn = None;
        let end = TurnEnd {
            message_id: message.id.clone(),
            content: "done".into(),
            turn: json!({"status": "completed"}),
            preview: Some("done".into()),
        };
        store
            .keep_turn_end(session, Some((node, 1)), end)
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn a_turns_end_is_kept_with_its_session() {
        let (store, _dir, mut session, message) = running_turn().await;
        let kept = end_as(&store, &mut session, &message, "a").await;
        let KeptTurnEnd::Kept(Some(updated)) = kept else {
            panic!("the turn's end was not kept: {kept:?}");
        };
        assert_eq!(updated.content, "done");
        assert_eq!(updated.turn.unwrap().get(), r#"{"status":"completed"}"#);
        let stored = store
            .session(&session.account_id, &session.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (stored.status, stored.current_turn),
            (SessionStatus::Idle, None)
        );
        let task = store
            .task(&session.account_id, &session.task_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(task.last_message_preview.as_deref(), Some("done"));
    }

    /// A node that lost the session's lease writes none of the turn's end:
    /// the node that took it over tells the turn's story.
    #[tokio::test]
    async fn a_node_without_the_lease_writes_nothing_of_the_turns_end() {
        let (store, _dir, mut session, message) = running_turn().await;
        let kept = end_as(&store, &mut session, &message, "b").await;
        assert!(matches!(kept, KeptTurnEnd::SessionNotWritten), "{kept:?}");
        let unchanged = store.message(&message.id).await.unwrap().unwrap();
        assert_eq!(unchanged.content, "");
        assert_eq!(unchanged.turn.unwrap().get(), r#"{"status":"running"}"#);
        let stored = store
            .session(&session.account_id, &session.id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.status, SessionStatus::Running);
        assert_eq!(stored.current_turn.as_deref(), Some("turn-1"));
        let task = store
            .task(&session.account_id, &session.task_id)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(task.last_message_preview, None);
    }
}
