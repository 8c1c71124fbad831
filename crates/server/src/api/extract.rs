//! What handlers take from a request: the caller, a JSON body checked against
//! its type's published schema and read into it, and query parameters; every
//! failure answers as a problem naming the field or parameter at fault.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::AppState;
use super::problem::Problem;
use super::validate::Schema;
use cinch_store::{AccountId, Principal};

/// The caller, from `Authorization: Bearer <token>`.
pub(crate) struct Caller(pub Principal);

impl Caller {
    /// The caller's account when it is `account`; another account is 404,
    /// as if it did not exist.
    pub(crate) fn account(&self, account: &AccountId) -> Result<(), Problem> {
        if self.0.account_id == *account {
            Ok(())
        } else {
            Err(Problem::not_found("no such account"))
        }
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Problem> {
        principal(state, &parts.headers).await.map(Self)
    }
}

/// The token of `Authorization: Bearer <token>` in `headers`, if any.
pub(super) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|token| !token.is_empty())
}

/// Who `Authorization: Bearer <token>` in `headers` names.
pub(super) async fn principal(state: &AppState, headers: &HeaderMap) -> Result<Principal, Problem> {
    let token = bearer(headers)
        .ok_or_else(|| Problem::unauthorized("send Authorization: Bearer <token>"))?;
    match state.accounts.authenticate(token).await? {
        Some(principal) => Ok(principal),
        None => Err(Problem::unauthorized("that token is not valid")),
    }
}

/// A request body: JSON checked against the schema the document publishes
/// for `T` (every complaint at once, each naming its field), then read into `T`.
pub(crate) struct Json<T>(pub T);

impl<T: DeserializeOwned + utoipa::ToSchema + 'static, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Problem> {
        let JsonValue(value) = JsonValue::from_request(request, state).await?;
        parse(value).map(Self)
    }
}

/// A request body that is JSON, not yet read into a type.
pub(super) struct JsonValue(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonValue {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Problem> {
        axum::Json::<Value>::from_request(request, state)
            .await
            .map(|axum::Json(value)| Self(value))
            .map_err(body_problem)
    }
}

/// `value` checked against `T`'s schema and read into it.
pub(super) fn parse<T: DeserializeOwned + utoipa::ToSchema + 'static>(
    value: Value,
) -> Result<T, Problem> {
    let errors = Schema::of::<T>().check(&value);
    if !errors.is_empty() {
        return Err(Problem::invalid(errors));
    }
    serde_path_to_error::deserialize(value).map_err(|error| {
        let field = match error.path().to_string().as_str() {
            "." => "body".to_owned(),
            path => path.to_owned(),
        };
        Problem::invalid_field(&field, error.into_inner().to_string())
    })
}

/// A string as given, trimmed; blank counts as absent.
pub(super) fn trimmed(text: Option<String>) -> Option<String> {
    text.map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty())
}

/// Reads a field that may be absent (`None`), null (`Some(None)`) or set.
pub(super) fn nullable<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

fn body_problem(rejection: JsonRejection) -> Problem {
    let status = rejection.status();
    let code = match status {
        StatusCode::PAYLOAD_TOO_LARGE => "body_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ => "malformed_body",
    };
    let detail = match status {
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "send Content-Type: application/json".to_owned(),
        _ => rejection.body_text(),
    };
    Problem::new(status, code, detail)
}

/// Query parameters, parsed; a bad one is 422 naming it.
pub(crate) struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Problem> {
        let query = parts.uri.query().unwrap_or_default();
        let pairs = serde_urlencoded::Deserializer::new(form_urlencoded::parse(query.as_bytes()));
        serde_path_to_error::deserialize(pairs)
            .map(Self)
            .map_err(|error| {
                let field = match error.path().to_string().as_str() {
                    "." => "query".to_owned(),
                    path => path.to_owned(),
                };
                Problem::invalid_field(&field, error.into_inner().to_string())
            })
    }
}

/// Cursor pagination: `limit` (1 to 200, default 50) and `cursor` (from
/// `meta.next_cursor`).
#[derive(Debug, Clone, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct PageParams {
    /// At most this many items (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// Where the page starts: a previous page's `meta.next_cursor`.
    #[param(pattern = "^[a-z]+_[0-9a-f]{27}$")]
    pub cursor: Option<String>,
}

impl PageParams {
    /// The limit, checked.
    pub(crate) fn limit(&self) -> Result<u32, Problem> {
        match self.limit {
            None => Ok(50),
            Some(limit @ 1..=200) => Ok(limit),
            Some(_) => Err(Problem::invalid_field("limit", "limit is 1 to 200")),
        }
    }

    /// The cursor, checked: an id, as a previous page's `meta.next_cursor` gave it.
    pub(crate) fn cursor(&self) -> Result<Option<&str>, Problem> {
        match self.cursor.as_deref() {
            Some(cursor) if !cinch_store::is_id(cursor) => Err(Problem::invalid_field(
                "cursor",
                "a cursor is a previous page's meta.next_cursor, as it was given",
            )),
            cursor => Ok(cursor),
        }
    }
}
