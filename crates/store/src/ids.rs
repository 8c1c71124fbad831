//! Typed ids: a session's id is a [`SessionId`], not any string, so that a
//! task's id cannot be passed where a session's is asked for. Each is text
//! in the database and in JSON; none converts to or from `&str` by itself
//! (`as_str` gives the text, `From<String>` takes an id read from outside).

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Result, new_id};

macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        super::rows::text_type!($name, |text| Ok($name(text.to_owned())));

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $name
        where
            String: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut DB::ArgumentBuffer<'q>,
            ) -> std::result::Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                self.0.encode_by_ref(buf)
            }
        }

        impl rusqlite::ToSql for $name {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                self.0.to_sql()
            }
        }

        impl $name {
            /// A new id, unique and in creation order.
            pub fn generate() -> Result<Self> {
                new_id($prefix).map(Self)
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str(&self.0)
            }
        }

        impl From<String> for $name {
            fn from(id: String) -> Self {
                Self(id)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }
    };
}

typed_id!(
    /// An account's id (`acc_…`).
    AccountId,
    "acc"
);
typed_id!(
    /// A task's id (`task_…`).
    TaskId,
    "task"
);
typed_id!(
    /// A session's id (`ses_…`); also the run id of its turns.
    SessionId,
    "ses"
);
typed_id!(
    /// A message's id (`msg_…`).
    MessageId,
    "msg"
);
typed_id!(
    /// An agent's id (`agt_…`).
    AgentId,
    "agt"
);
typed_id!(
    /// An environment's id (`env_…`).
    EnvironmentId,
    "env"
);
typed_id!(
    /// A webhook's id (`whk_…`).
    WebhookId,
    "whk"
);
typed_id!(
    /// An approval's id (`apr_…`).
    ApprovalId,
    "apr"
);
typed_id!(
    /// An attachment's id (`att_…`).
    AttachmentId,
    "att"
);
