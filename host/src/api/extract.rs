//! What handlers take from a request: the caller, a JSON object checked field
//! by field, and query parameters; every failure answers as a problem.

use std::collections::BTreeMap;

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::AppState;
use super::problem::{FieldError, Problem};
use crate::store::Principal;

/// The caller, from `Authorization: Bearer <token>`.
pub struct Caller(pub Principal);

impl Caller {
    /// The caller's account when it is `account`; another account is 404,
    /// as if it did not exist.
    pub fn account(&self, account: &str) -> Result<(), Problem> {
        if self.0.account_id == account {
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

/// Who `Authorization: Bearer <token>` in `headers` names.
pub async fn principal(state: &AppState, headers: &HeaderMap) -> Result<Principal, Problem> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .ok_or_else(|| Problem::unauthorized("send Authorization: Bearer <token>"))?;
    let token = header
        .to_str()
        .ok()
        .and_then(|value| value.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| Problem::unauthorized("send Authorization: Bearer <token>"))?;
    match state.store.authenticate(token).await? {
        Some(principal) => Ok(principal),
        None => Err(Problem::unauthorized("that token is not valid")),
    }
}

/// A request body that is a JSON object.
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = Problem;

    async fn from_request(request: Request, state: &S) -> Result<Self, Problem> {
        let axum::Json(value) = axum::Json::<Value>::from_request(request, state)
            .await
            .map_err(body_problem)?;
        match value {
            Value::Object(map) => Ok(Self(map)),
            _ => Err(Problem::invalid_field(
                "body",
                "the body must be a JSON object",
            )),
        }
    }
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
pub struct Query<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Problem> {
        axum::extract::Query::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Query(value)| Self(value))
            .map_err(|rejection| Problem::invalid_field("query", rejection.body_text()))
    }
}

/// Cursor pagination: `limit` (1 to 200, default 50) and `cursor` (from
/// `meta.next_cursor`).
#[derive(Debug, Clone, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageParams {
    /// At most this many items (1 to 200, default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
    /// Where the page starts: a previous page's `meta.next_cursor`.
    #[param(pattern = "^[a-z]+_[0-9a-f]{27}$")]
    pub cursor: Option<String>,
}

impl PageParams {
    /// The limit, checked.
    pub fn limit(&self) -> Result<u32, Problem> {
        match self.limit {
            None => Ok(50),
            Some(limit @ 1..=200) => Ok(limit),
            Some(_) => Err(Problem::invalid_field("limit", "limit is 1 to 200")),
        }
    }

    /// The cursor, checked: an id of the listing's items (`prefix`), as a
    /// previous page's `meta.next_cursor` gave it.
    pub fn cursor(&self, prefix: &str) -> Result<Option<&str>, Problem> {
        match self.cursor.as_deref() {
            Some(cursor) if !crate::store::is_id(prefix, cursor) => Err(Problem::invalid_field(
                "cursor",
                "a cursor is a previous page's meta.next_cursor, as it was given",
            )),
            cursor => Ok(cursor),
        }
    }
}

/// Takes a JSON object's fields one by one, collecting every complaint, so a
/// client learns all that is wrong at once; fields nobody took are unknown.
pub struct Fields {
    map: Map<String, Value>,
    errors: Vec<FieldError>,
}

impl Fields {
    /// The fields of `object`.
    pub fn new(JsonObject(map): JsonObject) -> Self {
        Self {
            map,
            errors: Vec::new(),
        }
    }

    /// Records a complaint about `field`.
    pub fn complain(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    /// Whether the object has `field` (null counts as absent).
    pub fn has(&self, field: &str) -> bool {
        self.map.get(field).is_some_and(|value| !value.is_null())
    }

    fn take(&mut self, field: &str) -> Option<Value> {
        self.map.remove(field).filter(|value| !value.is_null())
    }

    /// An optional string, trimmed; empty counts as absent.
    pub fn string(&mut self, field: &str) -> Option<String> {
        match self.take(field)? {
            Value::String(text) if text.trim().is_empty() => None,
            Value::String(text) => Some(text.trim().to_owned()),
            _ => {
                self.complain(field, "must be a string");
                None
            }
        }
    }

    /// An optional string kept as sent (inline content: whitespace matters).
    pub fn raw_string(&mut self, field: &str) -> Option<String> {
        match self.take(field)? {
            Value::String(text) => Some(text),
            _ => {
                self.complain(field, "must be a string");
                None
            }
        }
    }

    /// A string that may be absent (`None`), null (`Some(None)`: clear
    /// it) or set.
    pub fn nullable_string(&mut self, field: &str) -> Option<Option<String>> {
        match self.map.get(field)? {
            Value::Null => {
                self.map.remove(field);
                Some(None)
            }
            _ => self.string(field).map(Some),
        }
    }

    /// An optional boolean.
    pub fn boolean(&mut self, field: &str) -> Option<bool> {
        match self.take(field)? {
            Value::Bool(value) => Some(value),
            _ => {
                self.complain(field, "must be true or false");
                None
            }
        }
    }

    /// A string that must be there; `what` says what it is.
    pub fn required_string(&mut self, field: &str, what: &str) -> Option<String> {
        let present = self.has(field);
        let value = self.string(field);
        if value.is_none() && (!present || self.errors.iter().all(|error| error.field != field)) {
            self.complain(field, format!("required: {what}"));
        }
        value
    }

    /// An optional whole number within `range`.
    pub fn integer(&mut self, field: &str, range: std::ops::RangeInclusive<i64>) -> Option<i64> {
        let value = self.take(field)?;
        match value.as_i64() {
            Some(number) if range.contains(&number) => Some(number),
            _ => {
                self.complain(
                    field,
                    format!(
                        "must be a whole number from {} to {}",
                        range.start(),
                        range.end()
                    ),
                );
                None
            }
        }
    }

    /// An optional array of strings.
    pub fn strings(&mut self, field: &str) -> Option<Vec<String>> {
        let value = self.take(field)?;
        let items = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|item| item.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
        });
        if items.is_none() {
            self.complain(field, "must be an array of strings");
        }
        items
    }

    /// An optional object of variables: each name a valid environment
    /// variable name, each value a string (or, with `nulls`, null).
    pub fn variables(
        &mut self,
        field: &str,
        nulls: bool,
    ) -> Option<BTreeMap<String, Option<String>>> {
        let Value::Object(map) = self.take(field)? else {
            self.complain(field, "must be an object of NAME: value");
            return None;
        };
        let mut variables = BTreeMap::new();
        for (name, value) in map {
            let path = format!("{field}.{name}");
            if !is_variable_name(&name) {
                self.complain(
                    &path,
                    "a name is letters, digits and _, not starting with a digit",
                );
                continue;
            }
            match value {
                Value::String(text) => {
                    variables.insert(name, Some(text));
                }
                Value::Null if nulls => {
                    variables.insert(name, None);
                }
                _ if nulls => self.complain(&path, "must be a string, or null to remove it"),
                _ => self.complain(&path, "must be a string"),
            }
        }
        Some(variables)
    }

    /// An optional array of objects, each handed to `each` with its own fields.
    pub fn objects<T>(
        &mut self,
        field: &str,
        mut each: impl FnMut(&mut Fields) -> Option<T>,
    ) -> Option<Vec<T>> {
        let Value::Array(items) = self.take(field)? else {
            self.complain(field, "must be an array of objects");
            return None;
        };
        let mut out = Vec::new();
        for (index, item) in items.into_iter().enumerate() {
            let Value::Object(map) = item else {
                self.complain(&format!("{field}[{index}]"), "must be an object");
                continue;
            };
            let mut inner = Fields::new(JsonObject(map));
            let value = each(&mut inner);
            let inner_errors = inner.finish_errors();
            let ok = inner_errors.is_empty();
            self.errors.extend(inner_errors.into_iter().map(|error| {
                FieldError::new(format!("{field}[{index}].{}", error.field), error.message)
            }));
            if let (true, Some(value)) = (ok, value) {
                out.push(value);
            }
        }
        Some(out)
    }

    fn finish_errors(mut self) -> Vec<FieldError> {
        for name in self.map.keys() {
            self.errors.push(FieldError::new(name, "unknown field"));
        }
        self.errors
    }

    /// Every complaint, unknown fields included, as one 422; or nothing.
    pub fn finish(self) -> Result<(), Problem> {
        let errors = self.finish_errors();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Problem::invalid(errors))
        }
    }
}

/// Letters, digits and `_`, not starting with a digit.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|first| first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(value: Value) -> Fields {
        let Value::Object(map) = value else { panic!() };
        Fields::new(JsonObject(map))
    }

    #[test]
    fn collects_every_complaint_with_its_field() {
        let mut body = fields(serde_json::json!({
            "name": 3,
            "n": 99,
            "env": {"1X": "a", "OK": "b", "BAD": 2},
            "notes": [{"name": "a", "text": "b"}, {"text": 1}],
            "extra": true
        }));
        assert_eq!(body.required_string("name", "a name"), None);
        assert_eq!(body.integer("n", 1..=60), None);
        let env = body.variables("env", false).unwrap();
        assert_eq!(env.keys().collect::<Vec<_>>(), ["OK"]);
        let notes = body
            .objects("notes", |note| {
                Some((
                    note.required_string("name", "a name")?,
                    note.string("text")?,
                ))
            })
            .unwrap();
        assert_eq!(notes, [("a".to_owned(), "b".to_owned())]);
        assert_eq!(body.required_string("brief", "the task"), None);
        let problem = body.finish().unwrap_err();
        let fields: Vec<&str> = problem.errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "name",
                "n",
                "env.1X",
                "env.BAD",
                "notes[1].name",
                "notes[1].text",
                "brief",
                "extra"
            ]
        );
        assert_eq!(problem.status, 422);
    }
}
