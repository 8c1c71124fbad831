//! An account's usage: the tokens and cost of its turns over a time range,
//! in total and grouped by harness, model or day.

use axum::extract::{Path, State};
use serde::{Deserialize, Serialize};

use super::extract::{Caller, Query};
use super::problem::{FieldError, Problem};
use super::{AppState, Envelope};
use cinch_base::timestamp::Timestamp;
use cinch_store::{self as store, AccountId, UsageGroup, UsageTotals};

/// Which turns and how to group them.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct UsageParams {
    /// Turns started at or after this time: RFC 3339 (`2026-12-01T00:00:00Z`)
    /// or a UTC day (`2026-12-01`). Open when absent.
    #[param(
        pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$"
    )]
    pub from: Option<String>,
    /// Turns started before this time, in the same forms. Open when absent.
    #[param(
        pattern = r"^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])(T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9]))?$"
    )]
    pub to: Option<String>,
    /// `harness`, `model` or `day`: the groups to list besides the total.
    #[param(inline)]
    pub group_by: Option<UsageGroup>,
}

/// One group of an account's usage.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub(super) struct UsageRow {
    /// The harness, the model or the day; null for turns that did not say.
    pub key: Option<String>,
    /// The group's totals.
    #[serde(flatten)]
    pub totals: UsageTotals,
}

impl From<store::UsageRow> for UsageRow {
    fn from(row: store::UsageRow) -> Self {
        Self {
            key: row.key,
            totals: row.totals,
        }
    }
}

/// An account's usage over a range.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct UsageReport {
    /// The range's start as applied (stored form), when given.
    #[schema(value_type = Option<String>)]
    pub from: Option<Timestamp>,
    /// The range's end as applied, when given.
    #[schema(value_type = Option<String>)]
    pub to: Option<Timestamp>,
    /// How `groups` is grouped, when asked.
    pub group_by: Option<UsageGroup>,
    /// Every turn in the range together.
    pub totals: UsageTotals,
    /// One row per harness, model or day, in key order; empty without `group_by`.
    pub groups: Vec<UsageRow>,
}

/// The account's usage: tokens and cost of its turns (sessions' and code
/// tasks'), the cost as the harnesses reported it or as cinch estimates it.
#[utoipa::path(
    get,
    path = "/v1/accounts/{account}/usage",
    params(("account" = String, Path, description = "The account"), UsageParams),
    responses(
        (status = 200, body = Envelope<UsageReport>),
        (status = 401, body = Problem, content_type = "application/problem+json"),
        (status = 404, body = Problem, content_type = "application/problem+json"),
        (status = 422, body = Problem, content_type = "application/problem+json"),
    ),
    tag = "usage"
)]
pub(super) async fn get_usage(
    State(app): State<AppState>,
    caller: Caller,
    Path(account): Path<AccountId>,
    Query(params): Query<UsageParams>,
) -> Result<axum::Json<Envelope<UsageReport>>, Problem> {
    caller.account(&account)?;
    let mut errors = Vec::new();
    let from = bound(&mut errors, "from", params.from.as_deref());
    let to = bound(&mut errors, "to", params.to.as_deref());
    let group_by = params.group_by;
    if let (Some(from), Some(to)) = (from, to)
        && from >= to
    {
        errors.push(FieldError::new("to", "to must be later than from"));
    }
    if !errors.is_empty() {
        return Err(Problem::invalid(errors));
    }
    let (totals, groups) = app.usage.report(&account, from, to, group_by).await?;
    Ok(Envelope::of(UsageReport {
        from,
        to,
        group_by,
        totals,
        groups: groups.into_iter().map(UsageRow::from).collect(),
    }))
}

/// A range bound in the stored form, or a complaint about `field`.
fn bound(errors: &mut Vec<FieldError>, field: &str, text: Option<&str>) -> Option<Timestamp> {
    let text = text?;
    // A day is its first moment, in UTC.
    let whole = if text.len() == "YYYY-MM-DD".len() {
        format!("{text}T00:00:00Z")
    } else {
        text.to_owned()
    };
    match whole.parse() {
        Ok(at) => Some(at),
        Err(_) => {
            errors.push(FieldError::new(
                field,
                format!("{field} is an RFC 3339 time or a day (YYYY-MM-DD), not {text:?}"),
            ));
            None
        }
    }
}
