//! A session's messages: the conversation, in order of delivery. Every
//! write here forgets the session's cached pages.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;
use sqlx::Row as _;

use super::rows::SqliteRow as _;

use super::page_cache::{CachedPage, PageKey};
use super::{
    AccountId, Backend, Dialect, Direction, MessageId, Page, PerBackend, Readers, Result, Session,
    SessionId, Store, TaskId, not_read_back, on_pool,
};
use cinch_base::timestamp::Timestamp;
use cinch_engine::checkpoint::{DiffStat, Restored};
use cinch_engine::engine::result::{TurnResult, TurnUsage};
use cinch_engine::reading::reader::UnknownEvents;

/// A message as stored.
#[derive(Debug, Clone)]
pub struct Message {
    /// Its id.
    pub id: MessageId,
    /// Its session.
    pub session_id: SessionId,
    /// Its session's task.
    pub task_id: TaskId,
    /// Its place in the conversation; null while it is queued.
    pub sequence: Option<i64>,
    /// What it is.
    pub kind: MessageKind,
    /// Its text.
    pub content: String,
    /// An assistant message's turn: its call, status and, once ended, result.
    /// Kept as stored text: listing messages copies it out without parsing it.
    pub turn: Option<Box<RawValue>>,
    /// When it was created (RFC 3339).
    pub created_at: Timestamp,
    /// For a message a fork inherited: the fork point, the JSON object
    /// `{"session_id", "turn_id"}`; none for the session's own messages.
    pub forked_from: Option<Box<RawValue>>,
}

/// An assistant message's turn: its call, where it stands and, once ended,
/// its result. Stored as JSON in the message (keys in name order, as a JSON
/// map writes them, so stored turns and new ones read alike).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TurnView {
    /// The code-task call the turn is, in the session's run.
    pub call_id: String,
    /// The run: the session's id.
    pub run_id: String,
    /// The turn's id.
    pub turn_id: String,
    /// Where it stands.
    pub status: TurnState,
    /// The harness it runs on.
    pub harness: String,
    /// What people call that harness.
    pub harness_display_name: String,
    /// The messages it was given, as one text.
    pub brief: String,
    /// The repository's name, as the code-task API's `repo` takes it.
    pub repository: String,
    /// The work tree it runs in.
    pub workspace: String,
    /// The harness's own session id, once known.
    pub session_id: Option<String>,
    /// When it started (RFC 3339).
    #[cfg_attr(feature = "openapi", schema(value_type = String))]
    pub started_at: Timestamp,
    /// Once it ended: its result.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Object>))]
    pub result: Option<TurnOutcome>,
}

/// How a session's turn ended, as its assistant message carries it: the
/// code-task result without the fields the turn view already holds. A turn
/// a lost node was running has only its `detail`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TurnOutcome {
    /// The CLI's exit code, when it exited by itself.
    pub exit_code: Option<i32>,
    /// From start to end.
    pub duration_ms: Option<u64>,
    /// What the turn changed.
    #[serde(flatten)]
    pub changes: DiffStat,
    /// What explains the status, when something does.
    pub detail: Option<String>,
    /// The one line of `detail` that says what went wrong (not a banner
    /// the CLI printed before it), for a failure's headline.
    pub headline: Option<String>,
    /// The harness's final message (redacted).
    pub final_message: Option<String>,
    /// The commit before the turn.
    pub start_checkpoint: Option<String>,
    /// The commit after the turn.
    pub end_checkpoint: Option<String>,
    /// The raw harness log.
    pub log_path: Option<String>,
    /// The whole result as text, in the spec's format.
    pub result_text: Option<String>,
    /// The model the turn ran on.
    pub model: Option<String>,
    /// Tokens and cost; none when the harness reported no usage.
    pub usage: Option<TurnUsage>,
    /// The CLI's version, when its version command told it.
    pub cli_version: Option<String>,
    /// The CLI versions its driver was tested with.
    #[serde(default)]
    pub cli_tested: Option<String>,
    /// Whether the CLI's version lies in that range.
    #[serde(default)]
    pub cli_drift: Option<cinch_engine::tools::CliDrift>,
    /// Lines of a type the driver does not know, by type.
    pub unknown_events: UnknownEvents,
    /// Lines of the output that were not JSON.
    pub not_json_lines: u64,
    /// The driver component the turn ran on.
    pub driver: Option<cinch_engine::turn_dir::DriverUsed>,
    /// The harness session the turn ended in: what a fork at this turn
    /// resumes.
    pub session_id: Option<String>,
}

impl From<&TurnResult> for TurnOutcome {
    fn from(result: &TurnResult) -> Self {
        Self {
            exit_code: result.exit_code,
            duration_ms: Some(result.duration_ms),
            changes: result.changes.clone(),
            detail: result.detail.clone(),
            headline: result
                .detail
                .as_deref()
                .and_then(cinch_engine::headline::pick),
            final_message: result.final_message.clone(),
            start_checkpoint: result.start_checkpoint.clone(),
            end_checkpoint: result.end_checkpoint.clone(),
            log_path: Some(result.log_path.clone()),
            result_text: Some(result.result_text.clone()),
            model: result.model.clone(),
            usage: result.usage,
            cli_version: result.cli_version.clone(),
            cli_tested: result.cli_tested.clone(),
            cli_drift: result.cli_drift,
            unknown_events: result.unknown_events.clone(),
            not_json_lines: result.not_json_lines,
            driver: result.driver.clone(),
            session_id: result.session_id.clone(),
        }
    }
}

/// A revert message's record: the work tree restored to a turn's start,
/// shown like a turn (with `kind: "revert"`) so that it can be reverted in
/// turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename = "revert")]
pub struct RevertView {
    /// The revert's own id, as a turn's.
    pub turn_id: String,
    /// The turn whose start the work tree went back to.
    pub reverted_turn_id: String,
    /// Always completed: a revert is recorded once done.
    pub status: TurnState,
    /// When it started (RFC 3339).
    pub started_at: Timestamp,
    /// What the restore did.
    pub result: Restored,
}

/// Where a turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum TurnState {
    /// Under way.
    Running,
    /// Its harness finished.
    Completed,
    /// Its harness failed.
    Failed,
    /// Stopped: it wrote nothing for too long, or ran out of time.
    TimedOut,
    /// Cancelled on request.
    Cancelled,
    /// It ended without a result cinch could read.
    Interrupted,
}

impl TurnView {
    /// The view as stored in its message.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("a turn view is plain data")
    }
}

/// What a message is, stored as its kebab-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum MessageKind {
    /// A person's message; a turn's brief.
    User,
    /// A turn: its call, status and, once ended, result.
    Assistant,
    /// The work tree restored to a turn's start.
    Revert,
    /// Internal: a message queued or dropped.
    QueueOperation,
    /// Internal: an attachment the next turn gets.
    Attachment,
    /// Internal: the title made for the session.
    AiTitle,
    /// A decision on the agent's permission request: who, what, when.
    Approval,
}

impl MessageKind {
    pub(super) const ALL: [Self; 7] = [
        Self::User,
        Self::Assistant,
        Self::Revert,
        Self::QueueOperation,
        Self::Attachment,
        Self::AiTitle,
        Self::Approval,
    ];

    /// Its name as stored.
    pub(super) fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Assistant => "assistant",
            Self::Revert => "revert",
            Self::QueueOperation => "queue-operation",
            Self::Attachment => "attachment",
            Self::AiTitle => "ai-title",
            Self::Approval => "approval",
        }
    }
}

super::text_column!(MessageKind);

super::rows::row_struct! {
    /// A message's columns as stored.
    pub(super) struct Row {
        id: String,
        session_id: String,
        task_id: String,
        sequence: Option<i64>,
        kind: MessageKind,
        content: String,
        turn_json: Option<String>,
        created_at: Timestamp,
        forked_from_json: Option<String>,
    }
}

/// A message's columns, in [`Row`]'s order: its `type` is the row's `kind`.
macro_rules! columns {
    () => {
        "id, session_id, task_id, sequence, type AS kind, content, turn_json, created_at, \
         forked_from_json"
    };
}

const COLUMNS: &str = columns!();

/// Adds a message (`$1`) to a session (`$4`, of account `$2` and task
/// `$3`): numbered next in it when `$5`, otherwise queued; of type `$6`,
/// text `$7`, turn `$8`, made at `$9`. On SQLite one statement is atomic
/// by itself: it takes the write lock before it reads the last number.
const ADD: &str = concat!(
    "INSERT INTO messages (id, account_id, task_id, session_id, sequence, type, content, \
     turn_json, created_at) VALUES ($1, $2, $3, $4, CASE WHEN $5 THEN (SELECT \
     COALESCE(MAX(sequence), 0) + 1 FROM messages WHERE session_id = $4) END, $6, $7, $8, $9) \
     RETURNING ",
    columns!()
);

/// Numbers a queued message (`$1`) next in its session.
const DELIVER: &str = concat!(
    "UPDATE messages SET sequence = (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages m \
     WHERE m.session_id = messages.session_id) WHERE id = $1 AND sequence IS NULL RETURNING ",
    columns!()
);

/// Rewrites a message's (`$1`) text (`$2`) and turn (`$3`), reading it back.
pub(super) const REWRITE: &str = concat!(
    "UPDATE messages SET content = $2, turn_json = $3 WHERE id = $1 RETURNING ",
    columns!()
);

/// The session's (`$1`) queued messages (the user's, not yet delivered) in
/// the order they came.
const QUEUED: PerBackend<&str> = PerBackend::same(concat!(
    "SELECT ",
    columns!(),
    " FROM messages WHERE session_id = $1 AND sequence IS NULL AND type = 'user' ORDER BY id"
));

pub(super) fn from_row(row: Row) -> Result<Message> {
    Ok(Message {
        id: row.id.into(),
        session_id: row.session_id.into(),
        task_id: row.task_id.into(),
        sequence: row.sequence,
        kind: row.kind,
        content: row.content,
        turn: row.turn_json.map(RawValue::from_string).transpose()?,
        created_at: row.created_at,
        forked_from: row
            .forked_from_json
            .map(RawValue::from_string)
            .transpose()?,
    })
}

/// Where a message stands in its conversation: delivered ones by
/// `sequence`, then the queued ones (sequence null) in the order they came.
const PLACE: &str = "(sequence IS NULL), COALESCE(sequence, 0), id";

/// The condition on a message's place past the cursor (`$4`, a message id
/// of the session `$3`; none when empty), and the order, for a page running
/// `direction`.
fn bounds(direction: Direction) -> (String, String) {
    let (compare, order) = match direction {
        Direction::Asc => (">", "ASC"),
        Direction::Desc => ("<", "DESC"),
    };
    (
        format!(
            "($4 = '' OR ({PLACE}) {compare} (SELECT {PLACE} FROM messages \
             WHERE id = $4 AND session_id = $3))"
        ),
        format!("(sequence IS NULL) {order}, COALESCE(sequence, 0) {order}, id {order}"),
    )
}

impl Message {
    /// An assistant message's turn; none for other messages.
    pub fn turn_view(&self) -> Option<TurnView> {
        serde_json::from_str(self.turn.as_ref()?.get()).ok()
    }

    /// A revert message's record; none for other messages.
    pub fn revert_view(&self) -> Option<RevertView> {
        serde_json::from_str(self.turn.as_ref()?.get()).ok()
    }

    /// The checkpoints (start, end) of the turn or revert this message
    /// records, when it took them.
    pub fn checkpoints(&self) -> (Option<String>, Option<String>) {
        match self.kind {
            MessageKind::Assistant => self
                .turn_view()
                .and_then(|view| view.result)
                .map(|result| (result.start_checkpoint, result.end_checkpoint))
                .unwrap_or_default(),
            MessageKind::Revert => self
                .revert_view()
                .map(|view| {
                    (
                        Some(view.result.start_checkpoint),
                        Some(view.result.end_checkpoint),
                    )
                })
                .unwrap_or_default(),
            _ => (None, None),
        }
    }
}

/// Locks the session of `$1` (a session's id, or one of its messages'
/// ids) in a writing transaction, so that its messages are numbered one at a
/// time: on PostgreSQL another node's writer waits for the row. None on
/// SQLite, whose write lock (taken as a writing statement begins, before it
/// reads) already serializes every writer: the statement would lock nothing.
fn number_in_turn(dialect: &Dialect) -> Option<String> {
    (!dialect.for_update.is_empty()).then(|| {
        format!(
            "SELECT id FROM sessions WHERE id = $1 OR id = (SELECT session_id FROM messages \
             WHERE id = $1){}",
            dialect.for_update
        )
    })
}

impl Store {
    /// Adds a message to `session`; `delivered` gives it the next sequence
    /// number at once, otherwise it is queued (sequence null).
    pub async fn add_message(
        &self,
        session: &Session,
        kind: MessageKind,
        content: &str,
        turn: Option<&Value>,
        delivered: bool,
    ) -> Result<Message> {
        let id = MessageId::generate()?;
        let dialect = self.dialect();
        // A queued message takes no number: nothing to wait for.
        let lock = number_in_turn(dialect).filter(|_| delivered);
        let turn = turn.map(Value::to_string);
        let created_at = Timestamp::now();
        if let Some(writer) = &self.writer {
            let params = vec![
                id.as_str().to_owned().into(),
                session.account_id.as_str().to_owned().into(),
                session.task_id.as_str().to_owned().into(),
                session.id.as_str().to_owned().into(),
                delivered.into(),
                kind.as_str().to_owned().into(),
                content.to_owned().into(),
                turn.into(),
                created_at.to_string().into(),
            ];
            let row = writer.returning(ADD, params, Row::from_sqlite_row).await?;
            self.pages.invalidate(&session.id);
            return from_row(row.ok_or_else(|| not_read_back(id.as_str()))?);
        }
        let row: Row = on_pool!(self, |pool| {
            let insert = sqlx::query_as(ADD)
                .bind(&id)
                .bind(&session.account_id)
                .bind(&session.task_id)
                .bind(&session.id)
                .bind(delivered)
                .bind(kind)
                .bind(content)
                .bind(&turn)
                .bind(created_at);
            match &lock {
                // One statement is atomic by itself (SQLite's takes the
                // write lock before it reads the last number): a
                // transaction around it would cost two more trips to the
                // connection.
                None => insert.fetch_one(pool).await,
                Some(lock) => {
                    let mut tx = pool.begin_with(dialect.begin_write).await?;
                    sqlx::query(lock)
                        .bind(&session.id)
                        .execute(&mut *tx)
                        .await?;
                    let row = insert.fetch_one(&mut *tx).await?;
                    tx.commit().await.map(|()| row)
                }
            }
        })?;
        self.pages.invalidate(&session.id);
        from_row(row)
    }

    /// Copies `messages` (another session's, in order) into `session` as
    /// delivered messages marked with `forked_from`, the fork point: what a
    /// fork inherits of its source's conversation. One transaction: a fork
    /// never shows half its history.
    pub async fn inherit_messages(
        &self,
        session: &Session,
        messages: &[Message],
        forked_from: &Value,
    ) -> Result<()> {
        let dialect = self.dialect();
        let forked_from = forked_from.to_string();
        let ids = messages
            .iter()
            .map(|_| MessageId::generate())
            .collect::<Result<Vec<_>>>()?;
        on_pool!(self, |pool| {
            let mut tx = pool.begin_with(dialect.begin_write).await?;
            if let Some(lock) = number_in_turn(dialect) {
                sqlx::query(&lock)
                    .bind(&session.id)
                    .execute(&mut *tx)
                    .await?;
            }
            for (id, message) in ids.iter().zip(messages) {
                sqlx::query(
                    "INSERT INTO messages (id, account_id, task_id, session_id, sequence, type, \
                     content, turn_json, created_at, forked_from_json) VALUES ($1, $2, $3, $4, \
                     (SELECT COALESCE(MAX(sequence), 0) + 1 FROM messages WHERE session_id = $4), \
                     $5, $6, $7, $8, $9)",
                )
                .bind(id)
                .bind(&session.account_id)
                .bind(&session.task_id)
                .bind(&session.id)
                .bind(message.kind)
                .bind(&message.content)
                .bind(message.turn.as_ref().map(|turn| turn.get()))
                .bind(message.created_at)
                .bind(&forked_from)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await
        })?;
        self.pages.invalidate(&session.id);
        Ok(())
    }

    /// The message `id`.
    pub async fn message(&self, id: &MessageId) -> Result<Option<Message>> {
        let row: Option<Row> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM messages WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(pool)
        .await)?;
        row.map(from_row).transpose()
    }

    /// The account's message of session `session_id` whose turn (or revert)
    /// has the id `turn_id`.
    pub async fn turn_message(
        &self,
        account_id: &AccountId,
        session_id: &SessionId,
        turn_id: &str,
    ) -> Result<Option<Message>> {
        let row: Option<Row> = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM messages WHERE account_id = $1 AND session_id = $2 \
             AND turn_id = $3"
        ))
        .bind(account_id)
        .bind(session_id)
        .bind(turn_id)
        .fetch_optional(pool)
        .await)?;
        row.map(from_row).transpose()
    }

    /// Gives a queued message the session's next sequence number; the
    /// message as it stands (numbered before already, or none).
    pub async fn deliver_message(&self, id: &MessageId) -> Result<Option<Message>> {
        let dialect = self.dialect();
        let lock = number_in_turn(dialect);
        let numbered: Option<Row> = match &self.writer {
            Some(writer) => {
                writer
                    .returning(
                        DELIVER,
                        vec![id.as_str().to_owned().into()],
                        Row::from_sqlite_row,
                    )
                    .await?
            }
            None => on_pool!(self, |pool| {
                let number = sqlx::query_as(DELIVER).bind(id);
                match &lock {
                    // Atomic by itself, as in `add_message`.
                    None => number.fetch_optional(pool).await,
                    Some(lock) => {
                        let mut tx = pool.begin_with(dialect.begin_write).await?;
                        sqlx::query(lock).bind(id).execute(&mut *tx).await?;
                        let numbered = number.fetch_optional(&mut *tx).await?;
                        tx.commit().await.map(|()| numbered)
                    }
                }
            })?,
        };
        let message = match numbered {
            Some(row) => Some(from_row(row)?),
            None => self.message(id).await?,
        };
        if let Some(message) = &message {
            self.pages.invalidate(&message.session_id);
        }
        Ok(message)
    }

    /// Rewrites an assistant message's text and turn.
    pub async fn update_message(
        &self,
        id: &MessageId,
        content: &str,
        turn: &Value,
    ) -> Result<Message> {
        let row: Option<Row> = on_pool!(self, |pool| sqlx::query_as(REWRITE)
            .bind(id)
            .bind(content)
            .bind(turn.to_string())
            .fetch_optional(pool)
            .await)?;
        let message = from_row(row.expect("the message exists"))?;
        self.pages.invalidate(&message.session_id);
        Ok(message)
    }

    /// The session's queued user messages, oldest first.
    pub async fn queued_messages(&self, session_id: &SessionId) -> Result<Vec<Message>> {
        // Read as each turn starts and ends.
        let rows: Vec<Row> = self
            .read_rows(&QUEUED, &[session_id.as_str().into()])
            .await?;
        rows.into_iter().map(from_row).collect()
    }

    /// A page of the messages of the task's session in `direction`, past `cursor`.
    pub async fn messages(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        direction: Direction,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<Page<Message>> {
        let ids = PageIds {
            account_id,
            task_id,
            session_id,
            cursor: cursor.unwrap_or(""),
        };
        let rows = self.page_rows(&ids, direction, limit).await?;
        let rows = rows.into_iter().map(from_row).collect::<Result<Vec<_>>>()?;
        Ok(Page::from_rows(rows, limit, |message| message.id.as_str()))
    }

    /// The rows of a page and the one past it, when there is one.
    async fn page_rows(
        &self,
        ids: &PageIds<'_>,
        direction: Direction,
        limit: u32,
    ) -> Result<Vec<Row>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(page_query(
            direction
        ))
        .bind(ids.account_id)
        .bind(ids.task_id)
        .bind(ids.session_id)
        .bind(ids.cursor)
        .bind(i64::from(limit) + 1)
        .fetch_all(pool)
        .await)?)
    }

    /// The same page as [`Store::messages`], as the JSON array a client
    /// gets, from the page cache (on SQLite) until the session's messages
    /// change, else read afresh (on SQLite by a reader on this thread) and
    /// written here from the rows' columns: the listing is the API's busiest
    /// read, and parsing every stored turn costs more than the query itself.
    pub async fn messages_json(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        session_id: &SessionId,
        direction: Direction,
        cursor: Option<&str>,
        limit: u32,
    ) -> Result<CachedPage> {
        let key = PageKey {
            account_id: account_id.to_owned(),
            task_id: task_id.to_owned(),
            direction,
            cursor: cursor.map(str::to_owned),
            limit,
        };
        // Only a SQLite store is written by this process alone; on
        // PostgreSQL other nodes change the messages too, so every page is
        // read afresh.
        let cached = self.backend() == Backend::Sqlite && self.pages.is_on();
        let generation = match cached.then(|| self.pages.get(session_id, &key)) {
            Some(Ok(page)) => return Ok(page),
            Some(Err(generation)) => generation,
            None => 0,
        };
        let ids = PageIds {
            account_id,
            task_id,
            session_id,
            cursor: cursor.unwrap_or(""),
        };
        let mut page = PageWriter::new(limit);
        match &self.readers {
            Readers::Sqlite(readers) => readers.read(|connection| {
                let mut statement = connection.prepare_cached(page_query(direction))?;
                let mut rows = statement.query(rusqlite::named_params! {
                    "$1": ids.account_id, "$2": ids.task_id, "$3": ids.session_id,
                    "$4": ids.cursor, "$5": i64::from(limit) + 1,
                })?;
                while let Some(row) = rows.next()? {
                    let place = PagePlace {
                        id: row.get_ref(0)?.as_str()?,
                        session_id: row.get_ref(1)?.as_str()?,
                        task_id: row.get_ref(2)?.as_str()?,
                        sequence: row.get_ref(3)?.as_i64_or_null()?,
                        kind: row.get_ref(4)?.as_str()?,
                        content: row.get_ref(5)?.as_str()?,
                        turn: row.get_ref(6)?.as_str_or_null()?,
                        created_at: row.get_ref(7)?.as_str()?,
                        forked_from: row.get_ref(8)?.as_str_or_null()?,
                    };
                    if !page.push(&place) {
                        break;
                    }
                }
                Ok(())
            })?,
            Readers::Postgres(readers) => {
                let rows = readers
                    .fetch_all(|| {
                        sqlx::query(page_query(direction))
                            .bind(ids.account_id)
                            .bind(ids.task_id)
                            .bind(ids.session_id)
                            .bind(ids.cursor)
                            .bind(i64::from(limit) + 1)
                    })
                    .await?;
                for row in &rows {
                    let place = PagePlace {
                        id: row.try_get_unchecked(0)?,
                        session_id: row.try_get_unchecked(1)?,
                        task_id: row.try_get_unchecked(2)?,
                        sequence: row.try_get_unchecked(3)?,
                        kind: row.try_get_unchecked(4)?,
                        content: row.try_get_unchecked(5)?,
                        turn: row.try_get_unchecked(6)?,
                        created_at: row.try_get_unchecked(7)?,
                        forked_from: row.try_get_unchecked(8)?,
                    };
                    if !page.push(&place) {
                        break;
                    }
                }
            }
        }
        let page = page.finish();
        if cached {
            self.pages.put(session_id, generation, key, page.clone());
        }
        Ok(page)
    }
}

/// The statement reading a page of a session's messages in `direction`
/// (`$1` to `$3`: account, task, session; `$4` the cursor, `$5` how many):
/// read in the order of the `messages_place` index, so nothing is sorted.
/// Written once per direction: the listing is the API's busiest read.
fn page_query(direction: Direction) -> &'static str {
    static QUERIES: LazyLock<[String; 2]> = LazyLock::new(|| {
        [Direction::Asc, Direction::Desc].map(|direction| {
            let (compare, order) = bounds(direction);
            format!(
                "SELECT {COLUMNS} FROM messages WHERE account_id = $1 AND task_id = $2 \
                 AND session_id = $3 AND {compare} ORDER BY {order} LIMIT $5"
            )
        })
    });
    match direction {
        Direction::Asc => &QUERIES[0],
        Direction::Desc => &QUERIES[1],
    }
}

/// Whose page is asked for, and past which message (empty for the first).
struct PageIds<'a> {
    account_id: &'a AccountId,
    task_id: &'a TaskId,
    session_id: &'a SessionId,
    cursor: &'a str,
}

/// A message's columns as read, borrowed from the row.
struct PagePlace<'a> {
    id: &'a str,
    session_id: &'a str,
    task_id: &'a str,
    sequence: Option<i64>,
    kind: &'a str,
    content: &'a str,
    turn: Option<&'a str>,
    created_at: &'a str,
    forked_from: Option<&'a str>,
}

/// A page's JSON array, written message by message from the columns: no
/// value is built per message, and a stored turn is copied as it is (the
/// store writes it only from serialized [`TurnView`]s and revert records,
/// so it is JSON already). The same shape as the API's message view.
struct PageWriter {
    json: String,
    limit: usize,
    count: usize,
    last: Option<String>,
    more: bool,
}

impl PageWriter {
    fn new(limit: u32) -> Self {
        Self {
            // Room for a page of short messages at once: growing a page
            // copies it over again each time.
            json: String::with_capacity((limit as usize * 512).min(64 << 10)),
            limit: limit as usize,
            count: 0,
            last: None,
            more: false,
        }
    }

    /// Adds a message to the page; false when the page was full already
    /// (the message is the first of the next page).
    fn push(&mut self, message: &PagePlace<'_>) -> bool {
        if self.count == self.limit {
            self.more = true;
            return false;
        }
        let json = &mut self.json;
        json.push(if self.count == 0 { '[' } else { ',' });
        push_strings(
            json,
            &[
                ("{\"id\":", message.id),
                (",\"session_id\":", message.session_id),
                (",\"task_id\":", message.task_id),
            ],
        );
        json.push_str(",\"sequence\":");
        match message.sequence {
            Some(sequence) => json.push_str(&sequence.to_string()),
            None => json.push_str("null"),
        }
        push_strings(
            json,
            &[
                (",\"type\":", message.kind),
                (",\"content\":", message.content),
            ],
        );
        json.push_str(",\"turn\":");
        json.push_str(message.turn.unwrap_or("null"));
        push_strings(json, &[(",\"created_at\":", message.created_at)]);
        json.push_str(",\"forked_from\":");
        json.push_str(message.forked_from.unwrap_or("null"));
        json.push('}');
        self.count += 1;
        if self.count == self.limit {
            self.last = Some(message.id.to_owned());
        }
        true
    }

    /// The page: its JSON array, how many messages it holds, and the last
    /// one's id when another page follows.
    fn finish(mut self) -> CachedPage {
        if self.count == 0 {
            self.json.push('[');
        }
        self.json.push(']');
        (self.json, self.count, self.last.filter(|_| self.more))
    }
}

/// Appends each key (with its punctuation) and its value as a JSON string.
fn push_strings(json: &mut String, fields: &[(&str, &str)]) {
    for (key, value) in fields {
        json.push_str(key);
        push_json_string(json, value);
    }
}

/// Appends `value` as a JSON string, escaped as serde_json escapes it.
/// Written here so that the page stays a `String` as it grows: bytes from
/// serde_json would be checked for UTF-8 over again once the page is whole.
fn push_json_string(json: &mut String, value: &str) {
    json.push('"');
    let bytes = value.as_bytes();
    let mut from = 0;
    loop {
        // A byte needing an escape is ASCII, so both ends are char boundaries.
        let plain_to = from + plain_prefix(&bytes[from..]);
        json.push_str(&value[from..plain_to]);
        let Some(&byte) = bytes.get(plain_to) else {
            break;
        };
        match byte {
            b'"' => json.push_str("\\\""),
            b'\\' => json.push_str("\\\\"),
            b'\n' => json.push_str("\\n"),
            b'\r' => json.push_str("\\r"),
            b'\t' => json.push_str("\\t"),
            0x08 => json.push_str("\\b"),
            0x0c => json.push_str("\\f"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                json.push_str("\\u00");
                json.push(char::from(HEX[usize::from(byte >> 4)]));
                json.push(char::from(HEX[usize::from(byte & 0xf)]));
            }
        }
        from = plain_to + 1;
    }
    json.push('"');
}

/// How many bytes `bytes` starts with that a JSON string holds as they are
/// (none is a control character, a quote or a backslash). Looks at eight
/// bytes at a time: most of a page is such bytes, and a byte at a time was
/// the page's dearest step after the database.
fn plain_prefix(bytes: &[u8]) -> usize {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH_BITS: u64 = ONES << 7;
    // Whether any byte of `word` is zero (exact for the word as a whole).
    let any_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGH_BITS != 0;
    let mut plain = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_ne_bytes(chunk.try_into().expect("chunks of eight"));
        // Whether any byte is below 0x20 (exact for bytes of any value).
        let control = word.wrapping_sub(ONES * 0x20) & !word & HIGH_BITS != 0;
        if control
            || any_zero(word ^ (ONES * u64::from(b'"')))
            || any_zero(word ^ (ONES * u64::from(b'\\')))
        {
            break;
        }
        plain += 8;
    }
    plain
        + bytes[plain..]
            .iter()
            .position(|&byte| byte < 0x20 || byte == b'"' || byte == b'\\')
            .unwrap_or(bytes.len() - plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_is_escaped_as_serde_json_escapes_it() {
        let every_ascii: String = (0..0x80u8).map(char::from).collect();
        for value in [
            "",
            "plain",
            every_ascii.as_str(),
            "é, 漢字 and 🦀 \"quoted\" \\ back\u{7f}",
        ] {
            let mut json = String::new();
            push_json_string(&mut json, value);
            assert_eq!(json, serde_json::to_string(value).unwrap());
        }
    }

    #[test]
    fn a_byte_to_escape_is_found_wherever_it_falls_in_a_word() {
        // Each ASCII character at each place of the first words, among
        // plain ASCII and among multi-byte characters.
        for filler in ["abcdefghijklmnopqrstuvwxyz", "é漢字🦀é漢字🦀é"] {
            for special in (0..0x80u8).map(char::from) {
                for at in 0..=filler.chars().count() {
                    let mut value: String = filler.chars().take(at).collect();
                    value.push(special);
                    value.extend(filler.chars().skip(at));
                    let mut json = String::new();
                    push_json_string(&mut json, &value);
                    assert_eq!(json, serde_json::to_string(&value).unwrap(), "{value:?}");
                }
            }
        }
    }

    #[tokio::test]
    async fn a_page_is_read_again_once_the_server_has_closed_its_connection() {
        let (store, _dir) = crate::test_store().await;
        let session = crate::test_session(&store).await;
        for text in ["one", "two", "three"] {
            store
                .add_message(&session, MessageKind::User, text, None, true)
                .await
                .unwrap();
        }
        let page = || {
            store.messages_json(
                &session.account_id,
                &session.task_id,
                &session.id,
                Direction::Asc,
                None,
                50,
            )
        };
        let before = page().await.unwrap();
        assert_eq!(before.1, 3, "{}", before.0);
        assert!(before.0.contains("\"content\":\"three\""), "{}", before.0);
        if let crate::Pool::Postgres(pool) = &store.pool {
            // Every other connection to the database goes: the one the page
            // was read on, now idle, among them.
            let closed: Vec<(bool,)> = sqlx::query_as(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
                 WHERE datname = current_database() AND pid <> pg_backend_pid()",
            )
            .fetch_all(pool)
            .await
            .unwrap();
            assert!(!closed.is_empty());
        }
        assert_eq!(page().await.unwrap(), before);
    }

    #[test]
    fn a_turn_view_is_stored_as_the_turn_object_the_api_shows() {
        let view = TurnView {
            call_id: "call_1".into(),
            run_id: "ses_1".into(),
            turn_id: "turn_1".into(),
            status: TurnState::TimedOut,
            harness: "claude".into(),
            harness_display_name: "Claude Code".into(),
            brief: "Fix it".into(),
            repository: "scratch".into(),
            workspace: "/w".into(),
            session_id: None,
            started_at: "2026-01-01T00:00:00.000Z".parse().unwrap(),
            result: None,
        };
        let stored = view.to_value().to_string();
        assert_eq!(
            stored,
            r#"{"brief":"Fix it","call_id":"call_1","harness":"claude","harness_display_name":"Claude Code","repository":"scratch","result":null,"run_id":"ses_1","session_id":null,"started_at":"2026-01-01T00:00:00.000Z","status":"timed_out","turn_id":"turn_1","workspace":"/w"}"#
        );
        let message = Message {
            id: "msg_1".to_owned().into(),
            session_id: "ses_1".to_owned().into(),
            task_id: "task_1".to_owned().into(),
            sequence: Some(1),
            kind: MessageKind::Assistant,
            content: String::new(),
            turn: Some(RawValue::from_string(stored).unwrap()),
            created_at: "2026-01-01T00:00:00.000Z".parse().unwrap(),
            forked_from: None,
        };
        assert_eq!(message.turn_view(), Some(view));
        let revert = Message {
            turn: Some(RawValue::from_string(r#"{"kind":"revert"}"#.into()).unwrap()),
            ..message
        };
        assert_eq!(revert.turn_view(), None, "a revert's record is not a turn");
    }
}
