//! A session's messages: the conversation, in order of delivery.

use serde::Serialize;
use serde_json::Value;

use super::{Page, Result, Session, Store, new_id, now};

/// A message as stored.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Message {
    /// Its id.
    pub id: String,
    /// Its session.
    pub session_id: String,
    /// Its session's task.
    pub task_id: String,
    /// Its place in the conversation; null while it is queued.
    pub sequence: Option<i64>,
    /// `user`, `assistant`, or an internal type: `queue-operation`,
    /// `attachment`, `ai-title`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its text.
    pub content: String,
    /// An assistant message's turn: its call, status and, once ended, result.
    pub turn: Option<Value>,
    /// When it was created (RFC 3339).
    pub created_at: String,
}

type Row = (
    String,
    String,
    String,
    Option<i64>,
    String,
    String,
    Option<String>,
    String,
);

const COLUMNS: &str = "id, session_id, task_id, sequence, type, content, turn_json, created_at";

fn from_row(row: Row) -> Result<Message> {
    let (id, session_id, task_id, sequence, kind, content, turn, created_at) = row;
    Ok(Message {
        id,
        session_id,
        task_id,
        sequence,
        kind,
        content,
        turn: turn.as_deref().map(serde_json::from_str).transpose()?,
        created_at,
    })
}

/// Which way a page of messages runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

impl Store {
    /// Adds a message to `session`; `delivered` gives it the next sequence
    /// number at once, otherwise it is queued (sequence null).
    pub async fn add_message(
        &self,
        session: &Session,
        kind: &str,
        content: &str,
        turn: Option<&Value>,
        delivered: bool,
    ) -> Result<Message> {
        let id = new_id("msg")?;
        sqlx::query(
            "INSERT INTO messages (id, account_id, task_id, session_id, sequence, type, content, \
             turn_json, created_at) VALUES ($1, $2, $3, $4, \
             CASE WHEN $5 THEN (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages WHERE session_id = $4) END, \
             $6, $7, $8, $9)",
        )
        .bind(&id)
        .bind(&session.account_id)
        .bind(&session.task_id)
        .bind(&session.id)
        .bind(delivered)
        .bind(kind)
        .bind(content)
        .bind(turn.map(Value::to_string))
        .bind(now())
        .execute(&self.pool)
        .await?;
        Ok(self
            .message(&id)
            .await?
            .expect("the message was just stored"))
    }

    /// The message `id`.
    pub async fn message(&self, id: &str) -> Result<Option<Message>> {
        let row: Option<Row> =
            sqlx::query_as(&format!("SELECT {COLUMNS} FROM messages WHERE id = $1"))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
        row.map(from_row).transpose()
    }

    /// Gives a queued message the session's next sequence number.
    pub async fn deliver_message(&self, id: &str) -> Result<Option<Message>> {
        sqlx::query(
            "UPDATE messages SET sequence = (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages \
             m WHERE m.session_id = messages.session_id) WHERE id = $1 AND sequence IS NULL",
        )
        .bind(id)
        .execute(&self.pool)
        .await?;
        self.message(id).await
    }

    /// Rewrites an assistant message's text and turn.
    pub async fn update_message(&self, id: &str, content: &str, turn: &Value) -> Result<Message> {
        sqlx::query("UPDATE messages SET content = $2, turn_json = $3 WHERE id = $1")
            .bind(id)
            .bind(content)
            .bind(turn.to_string())
            .execute(&self.pool)
            .await?;
        Ok(self.message(id).await?.expect("the message exists"))
    }

    /// The session's queued user messages, oldest first.
    pub async fn queued_messages(&self, session_id: &str) -> Result<Vec<Message>> {
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM messages WHERE session_id = $1 AND sequence IS NULL \
             AND type = 'user' ORDER BY id"
        ))
        .bind(session_id)
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(from_row).collect()
    }

    /// A page of the session's messages in `direction`, past `cursor`.
    pub async fn messages(
        &self,
        account_id: &str,
        session_id: &str,
        direction: Direction,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Message>> {
        let (compare, order) = match direction {
            Direction::Asc => ("id > $3", "ASC"),
            Direction::Desc => ("($3 = '' OR id < $3)", "DESC"),
        };
        let rows: Vec<Row> = sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM messages WHERE account_id = $1 AND session_id = $2 \
             AND {compare} ORDER BY id {order} LIMIT $4"
        ))
        .bind(account_id)
        .bind(session_id)
        .bind(cursor.unwrap_or(""))
        .bind(i64::from(limit) + 1)
        .fetch_all(&self.pool)
        .await?;
        let rows = rows.into_iter().map(from_row).collect::<Result<Vec<_>>>()?;
        Ok(Page::from_rows(rows, limit, |message| &message.id))
    }
}
