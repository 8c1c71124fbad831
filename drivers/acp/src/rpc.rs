//! JSON-RPC 2.0 as ACP uses it: the lines the client writes, the kinds of
//! line an agent writes, and the agents' error answers in words.

use cinch_driver_sdk::serde_json::{self, Value as Json, json};
use cinch_driver_sdk::{Value, json as path};

/// The ACP protocol version the driver speaks.
pub const PROTOCOL_VERSION: u64 = 1;

/// The ids of the driver's own requests, in the order it sends them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `initialize`.
    Initialize = 1,
    /// `session/new` or `session/load`.
    Session = 2,
    /// `session/prompt`.
    Prompt = 3,
}

impl Request {
    fn from_id(id: u64) -> Option<Self> {
        [Self::Initialize, Self::Session, Self::Prompt]
            .into_iter()
            .find(|request| *request as u64 == id)
    }
}

/// A request of the driver, as a line.
pub fn request(request: Request, method: &str, params: Json) -> String {
    line(json!({"jsonrpc": "2.0", "id": request as u64, "method": method, "params": params}))
}

/// A notification of the driver, as a line.
pub fn notification(method: &str, params: Json) -> String {
    line(json!({"jsonrpc": "2.0", "method": method, "params": params}))
}

/// The answer to the agent's request `id` (echoed exactly: agents use 0 and
/// strings as well as positive numbers).
pub fn answer(id: &Value, result: Json) -> String {
    line(json!({"jsonrpc": "2.0", "id": echo(id), "result": result}))
}

/// The error answer to the agent's request `id`.
pub fn refuse(id: &Value, code: i64, message: &str) -> String {
    line(json!({"jsonrpc": "2.0", "id": echo(id), "error": {"code": code, "message": message}}))
}

/// JSON-RPC's code for a method the receiver does not have.
pub const METHOD_NOT_FOUND: i64 = -32601;

fn line(value: Json) -> String {
    serde_json::to_string(&value).expect("a JSON value always serialises")
}

/// The answer to a request whose id was kept as [`echo`] gave it.
pub fn answer_echoed(id: Json, result: Json) -> String {
    line(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// An id as it was received.
pub fn echo(id: &Value) -> Json {
    match id {
        Value::String(text) => Json::String(text.as_ref().to_owned()),
        Value::Number(number) => match (number.as_u64(), number.as_i64()) {
            (Some(natural), _) => Json::from(natural),
            (None, Some(negative)) => Json::from(negative),
            (None, None) => Json::from(number.as_f64()),
        },
        _ => Json::Null,
    }
}

/// What a line of the agent is.
pub enum Incoming<'v, 'a> {
    /// A request the driver must answer.
    Request {
        /// Its id, to echo.
        id: &'v Value<'a>,
        /// Its method.
        method: &'v str,
        /// Its parameters, when it has any.
        params: Option<&'v Value<'a>>,
    },
    /// A notification.
    Notification {
        /// Its method.
        method: &'v str,
        /// Its parameters, when it has any.
        params: Option<&'v Value<'a>>,
    },
    /// The answer to one of the driver's requests (`None`: an id the driver
    /// never used).
    Response {
        /// Which request it answers.
        request: Option<Request>,
        /// The result, or the error.
        answer: Result<&'v Value<'a>, &'v Value<'a>>,
    },
    /// JSON that is none of these.
    Other,
}

/// Classifies one JSON line of the agent.
pub fn classify<'v, 'a>(value: &'v Value<'a>) -> Incoming<'v, 'a> {
    let params = value.get("params");
    match (path::str_at(value, &["method"]), value.get("id")) {
        (Some(method), Some(id)) if !id.is_null() => Incoming::Request { id, method, params },
        (Some(method), _) => Incoming::Notification { method, params },
        (None, id) => {
            let request = id.and_then(Value::as_u64).and_then(Request::from_id);
            match (value.get("result"), value.get("error")) {
                (_, Some(error)) if !error.is_null() => Incoming::Response {
                    request,
                    answer: Err(error),
                },
                (Some(result), _) => Incoming::Response {
                    request,
                    answer: Ok(result),
                },
                _ => Incoming::Other,
            }
        }
    }
}

/// What an agent's JSON-RPC error code means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ErrorCode {
    /// Gemini answers with the model API's HTTP status.
    HttpStatus(u16),
    /// A JSON-RPC code (-32603 "Internal error" from the other agents).
    Rpc,
}

impl ErrorCode {
    fn of(error: &Value) -> Self {
        match path::u64_at(error, &["code"]).and_then(|code| u16::try_from(code).ok()) {
            Some(status @ 100..=599) => Self::HttpStatus(status),
            _ => Self::Rpc,
        }
    }
}

/// The words that say what an error answer means.
pub fn describe_error(error: &Value) -> String {
    let message = path::str_at(error, &["message"]).unwrap_or_default().trim();
    match ErrorCode::of(error) {
        // The message is the API's own error, often JSON of it.
        ErrorCode::HttpStatus(status) => {
            let inner = path::parse_embedded(message);
            let text = inner
                .as_ref()
                .and_then(|inner| path::str_at(inner, &["error", "message"]))
                .unwrap_or(message);
            format!("HTTP {status}: {text}")
        }
        ErrorCode::Rpc => {
            // Droid's `data` is the API's error itself, beside a generic
            // "Agent error".
            let details = path::str_at(error, &["data", "details"])
                .or_else(|| path::str_at(error, &["data", "message"]))
                .or_else(|| path::str_at(error, &["data"]))
                .map(str::trim)
                .filter(|details| !details.is_empty());
            let said = message
                .strip_prefix("Internal error:")
                .map(str::trim)
                .filter(|said| !said.is_empty());
            match (said, details) {
                (Some(said), Some(details)) if !said.contains(details) => {
                    format!("{said}: {details}")
                }
                (Some(said), _) => said.to_owned(),
                (None, Some(details)) => details.to_owned(),
                (None, None) if !message.is_empty() => message.to_owned(),
                (None, None) => "the agent answered with an error".to_owned(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn describe(error: &str) -> String {
        describe_error(&Value::parse(error).unwrap())
    }

    #[test]
    fn errors_in_the_words_of_each_agent() {
        assert_eq!(
            describe(
                r#"{"code":401,"message":"{\"error\":{\"code\":401,\"message\":\"API key not valid.\",\"status\":\"UNAUTHENTICATED\"}}"}"#
            ),
            "HTTP 401: API key not valid."
        );
        assert_eq!(
            describe(r#"{"code":500,"message":"exception TypeError: fetch failed"}"#),
            "HTTP 500: exception TypeError: fetch failed"
        );
        assert_eq!(
            describe(
                r#"{"code":-32603,"message":"Internal error","data":{"details":"401 mockllm error 401"}}"#
            ),
            "401 mockllm error 401"
        );
        assert_eq!(
            describe(
                r#"{"code":-32603,"message":"Internal error","data":{"message":"unexpected status 401"}}"#
            ),
            "unexpected status 401"
        );
        assert_eq!(
            describe(r#"{"code":-32603,"message":"Internal error: invalid x-api-key"}"#),
            "invalid x-api-key"
        );
        assert_eq!(
            describe(
                r#"{"code":-32603,"message":"Internal error: Agent error","data":"401 Incorrect API key provided"}"#
            ),
            "Agent error: 401 Incorrect API key provided"
        );
        assert_eq!(
            describe(
                r#"{"code":-32603,"message":"Internal error: Bad key","data":{"message":"Bad key"}}"#
            ),
            "Bad key"
        );
        assert_eq!(
            describe(r#"{"code":-32000}"#),
            "the agent answered with an error"
        );
    }

    #[test]
    fn ids_are_echoed_as_received() {
        for id in ["0", r#""53351117-c598""#, "-4", "7"] {
            let value = Value::parse(id).unwrap();
            let line = answer(&value, json!({}));
            let parsed: Json = serde_json::from_str(&line).unwrap();
            assert_eq!(parsed["id"], serde_json::from_str::<Json>(id).unwrap());
        }
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        let request = Value::parse(r#"{"id":0,"method":"session/request_permission"}"#).unwrap();
        assert!(matches!(
            classify(&request),
            Incoming::Request {
                method: "session/request_permission",
                ..
            }
        ));
        let note = Value::parse(r#"{"method":"session/update","params":{}}"#).unwrap();
        assert!(matches!(classify(&note), Incoming::Notification { .. }));
        let answer = Value::parse(r#"{"id":3,"result":{"stopReason":"end_turn"}}"#).unwrap();
        assert!(matches!(
            classify(&answer),
            Incoming::Response {
                request: Some(Request::Prompt),
                answer: Ok(_)
            }
        ));
        let error = Value::parse(r#"{"id":"x","error":{"code":1}}"#).unwrap();
        assert!(matches!(
            classify(&error),
            Incoming::Response {
                request: None,
                answer: Err(_)
            }
        ));
        assert!(matches!(
            classify(&Value::parse("{}").unwrap()),
            Incoming::Other
        ));
    }
}
