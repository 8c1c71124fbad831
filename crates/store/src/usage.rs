//! Usage rolled up: the tokens and cost of the turns of a session, a task
//! or an account, and an account's usage over time grouped by harness,
//! model or day. Every turn's usage is kept with its call
//! ([`Store::record_call_result`]).

use cinch_base::timestamp::Timestamp;
use serde::{Deserialize, Serialize};

use super::{AccountId, PerBackend, Result, Store, on_pool};

/// The tokens and cost of some turns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UsageTotals {
    /// Turns that have ended.
    pub turns: i64,
    /// Prompt tokens, cached ones included.
    pub input_tokens: i64,
    /// Tokens the models wrote.
    pub output_tokens: i64,
    /// Prompt tokens read from the providers' caches.
    pub cached_input_tokens: i64,
    /// What the turns with a known cost cost, in US dollars.
    pub cost_usd: f64,
    /// The part of `cost_usd` the harnesses reported.
    pub reported_cost_usd: f64,
    /// The part of `cost_usd` cinch estimated from its price table.
    pub estimated_cost_usd: f64,
    /// Ended turns with no known cost (no usage reported, or a model cinch
    /// does not price): `cost_usd` leaves them out.
    pub turns_without_cost: i64,
}

// Read from the JSON object's text that `totals_json!` makes.
super::rows::text_type!(UsageTotals, |json| Ok(serde_json::from_str(json)?));

/// The totals of the calls `c` of a query, as one JSON object's text in
/// the `sqlite` or `postgres` dialect.
macro_rules! totals_json {
    (sqlite) => {
        concat!("json_object(", totals_json!(fields), ")")
    };
    (postgres) => {
        concat!("CAST(json_build_object(", totals_json!(fields), ") AS TEXT)")
    };
    (fields) => {
        "'turns', COUNT(c.result), \
         'input_tokens', COALESCE(SUM(c.input_tokens), 0), \
         'output_tokens', COALESCE(SUM(c.output_tokens), 0), \
         'cached_input_tokens', COALESCE(SUM(c.cached_input_tokens), 0), \
         'cost_usd', COALESCE(SUM(c.cost_usd), 0.0) + 0.0, \
         'reported_cost_usd', COALESCE(SUM(CASE WHEN c.cost_source = 'reported' THEN c.cost_usd END), 0.0) + 0.0, \
         'estimated_cost_usd', COALESCE(SUM(CASE WHEN c.cost_source = 'estimated' THEN c.cost_usd END), 0.0) + 0.0, \
         'turns_without_cost', COUNT(CASE WHEN c.result IS NOT NULL AND c.cost_usd IS NULL THEN 1 END)"
    };
}

/// The totals of the calls `c` that `$filter` (an SQL condition) selects, as
/// one JSON column in `$dialect`: a session's, task's or account's row
/// carries its usage.
macro_rules! usage_of {
    ($dialect:ident, $filter:literal) => {
        concat!(
            "(SELECT ",
            totals_json!($dialect),
            " FROM code_task_calls c WHERE ",
            $filter,
            ")"
        )
    };
}
pub(super) use {totals_json, usage_of};

const TOTALS: PerBackend<&str> = PerBackend {
    sqlite: totals_json!(sqlite),
    postgres: totals_json!(postgres),
};

/// What an account's usage is grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum UsageGroup {
    /// The harness (driver) that ran the turns.
    Harness,
    /// The model they ran on.
    Model,
    /// The UTC day they started on (`YYYY-MM-DD`).
    Day,
}

impl UsageGroup {
    /// The SQL expression of a call's group.
    fn key(self) -> &'static str {
        match self {
            Self::Harness => "c.harness",
            Self::Model => "c.model",
            Self::Day => "substr(c.created_at, 1, 10)",
        }
    }
}

/// One group of an account's usage.
#[derive(Debug, Clone)]
pub struct UsageRow {
    /// The harness, the model or the day; null for turns that did not say.
    pub key: Option<String>,
    /// The group's totals.
    pub totals: UsageTotals,
}

impl Store {
    /// The account's usage of the turns started in `[from, to)` (stored
    /// timestamps; either bound open when none), all together and grouped.
    pub async fn usage_report(
        &self,
        account_id: &AccountId,
        from: Option<Timestamp>,
        to: Option<Timestamp>,
        group_by: Option<UsageGroup>,
    ) -> Result<(UsageTotals, Vec<UsageRow>)> {
        // An open bound is empty text, which the statement tells apart.
        let (from, to) = (text_or_empty(from), text_or_empty(to));
        let filter = "c.account_id = $1 AND ($2 = '' OR c.created_at >= $2) \
                      AND ($3 = '' OR c.created_at < $3)";
        let totals = TOTALS.get(self.backend());
        let (total,): (UsageTotals,) = on_pool!(self, |pool| sqlx::query_as(&format!(
            "SELECT {totals} FROM code_task_calls c WHERE {filter}"
        ))
        .bind(account_id)
        .bind(&from)
        .bind(&to)
        .fetch_one(pool)
        .await)?;
        let Some(group) = group_by else {
            return Ok((total, Vec::new()));
        };
        let key = group.key();
        let rows: Vec<(Option<String>, UsageTotals)> =
            on_pool!(self, |pool| sqlx::query_as(&format!(
                "SELECT {key}, {totals} FROM code_task_calls c WHERE {filter} \
             GROUP BY {key} ORDER BY {key}"
            ))
            .bind(account_id)
            .bind(&from)
            .bind(&to)
            .fetch_all(pool)
            .await)?;
        let rows = rows
            .into_iter()
            .map(|(key, totals)| UsageRow { key, totals })
            .collect();
        Ok((total, rows))
    }
}

/// A moment's text, or empty text for none.
fn text_or_empty(at: Option<Timestamp>) -> String {
    at.map(|at| at.to_string()).unwrap_or_default()
}
