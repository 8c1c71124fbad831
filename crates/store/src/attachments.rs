//! A task's attachments: context for its agent, as MCP resources.

use cinch_base::timestamp::Timestamp;
use serde::Serialize;

use super::{AccountId, AttachmentId, PerBackend, Result, Store, TaskId, on_pool};

super::rows::row_struct! {
    /// An attachment as stored.
    #[derive(Debug, Clone)]
    pub struct Attachment {
        /// Its id.
        pub id: AttachmentId,
        /// Its task.
        pub task_id: TaskId,
        /// Its name.
        pub name: String,
        /// Where its content came from (a reference; never fetched).
        pub uri: Option<String>,
        /// Its content's media type.
        pub mime_type: Option<String>,
        /// Inline text content.
        pub text: Option<String>,
        /// Base64 content.
        pub blob: Option<String>,
        /// `ready` when its content is available, `failed` when not.
        pub status: AttachmentStatus,
        /// Why it failed.
        pub error: Option<String>,
        /// When it was created (RFC 3339).
        pub created_at: Timestamp,
    }
}

/// Whether an attachment's content is available, stored as its snake_case
/// name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AttachmentStatus {
    /// Its content is available.
    Ready,
    /// It has no content; its error says why.
    Failed,
}

impl AttachmentStatus {
    pub(super) const ALL: [Self; 2] = [Self::Ready, Self::Failed];

    /// Its name as stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ready => "ready",
            Self::Failed => "failed",
        }
    }
}

super::text_column!(AttachmentStatus);

/// What a new attachment is made of.
#[derive(Debug, Clone)]
pub struct NewAttachment {
    /// Its name.
    pub name: String,
    /// Its source.
    pub uri: Option<String>,
    /// Its media type.
    pub mime_type: Option<String>,
    /// Inline text.
    pub text: Option<String>,
    /// Base64 content.
    pub blob: Option<String>,
    /// Why its content could not be had, when it could not.
    pub error: Option<String>,
}

macro_rules! columns {
    () => {
        "id, task_id, name, uri, mime_type, text, blob, status, error, created_at"
    };
}

const COLUMNS: &str = columns!();

/// The account's (`$1`) attachments of task `$2`, oldest first.
const TASK_ATTACHMENTS: PerBackend<&str> = PerBackend::same(concat!(
    "SELECT ",
    columns!(),
    " FROM attachments WHERE account_id = $1 AND task_id = $2 ORDER BY id"
));

impl Store {
    /// Stores an attachment of the task: `ready`, or `failed` with its error.
    pub async fn create_attachment(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        new: NewAttachment,
    ) -> Result<Attachment> {
        let id = AttachmentId::generate()?;
        let status = if new.error.is_some() {
            AttachmentStatus::Failed
        } else {
            AttachmentStatus::Ready
        };
        on_pool!(self, |pool| sqlx::query(
            "INSERT INTO attachments (id, account_id, task_id, name, uri, mime_type, text, blob, \
             status, error, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        )
        .bind(&id)
        .bind(account_id)
        .bind(task_id)
        .bind(&new.name)
        .bind(&new.uri)
        .bind(&new.mime_type)
        .bind(&new.text)
        .bind(&new.blob)
        .bind(status)
        .bind(&new.error)
        .bind(Timestamp::now())
        .execute(pool)
        .await
        .map(|done| done.rows_affected()))?;
        Ok(self
            .attachment(account_id, task_id, &id)
            .await?
            .expect("the attachment was just stored"))
    }

    /// The task's attachment `id`.
    pub async fn attachment(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
        id: &AttachmentId,
    ) -> Result<Option<Attachment>> {
        Ok(on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {COLUMNS} FROM attachments WHERE account_id = $1 AND task_id = $2 AND id = $3"
        ))
        .bind(account_id)
        .bind(task_id)
        .bind(id)
        .fetch_optional(pool)
        .await)?)
    }

    /// Every attachment of the task, oldest first.
    pub async fn attachments(
        &self,
        account_id: &AccountId,
        task_id: &TaskId,
    ) -> Result<Vec<Attachment>> {
        // Read as each turn of the task starts.
        self.read_rows(
            &TASK_ATTACHMENTS,
            &[account_id.as_str().into(), task_id.as_str().into()],
        )
        .await
    }
}
