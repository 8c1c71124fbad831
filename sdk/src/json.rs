//! Safe access to the loosely shaped JSON that harness CLIs print.

use crate::Value;

/// The value at `path` (object keys, in order), if every step exists.
pub fn at<'v, 'a>(value: &'v Value<'a>, path: &[&str]) -> Option<&'v Value<'a>> {
    path.iter().try_fold(value, |node, key| node.get(key))
}

/// The string at `path`, if it exists and is a string.
pub fn str_at<'v>(value: &'v Value, path: &[&str]) -> Option<&'v str> {
    at(value, path)?.as_str()
}

/// The unsigned integer at `path`, if it exists and is one.
pub fn u64_at(value: &Value, path: &[&str]) -> Option<u64> {
    at(value, path)?.as_u64()
}

/// The number at `path` as a float, if it exists and is a number.
pub fn f64_at(value: &Value, path: &[&str]) -> Option<f64> {
    at(value, path)?.as_f64()
}

/// The boolean at `path`; false when missing or not a boolean.
pub fn bool_at(value: &Value, path: &[&str]) -> bool {
    at(value, path).and_then(Value::as_bool).unwrap_or(false)
}

/// The string at `path` as an owned, non-empty string.
pub fn string_at(value: &Value, path: &[&str]) -> Option<String> {
    str_at(value, path)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// The event's `type` field, the key every harness format dispatches on.
pub fn kind<'v>(value: &'v Value) -> Option<&'v str> {
    str_at(value, &["type"])
}

/// Argument keys that describe a tool call, most telling first.
pub const DETAIL_KEYS: &[&str] = &[
    "command",
    "cmd",
    "file_path",
    "filePath",
    "absolute_path",
    "path",
    "dir_path",
    "notebook_path",
    "pattern",
    "globPattern",
    "url",
    "description",
    "query",
    "prompt",
];

/// What a tool call is about: the first of its command, path, pattern, URL,
/// description or query. A command given as an argument vector is joined
/// with spaces.
pub fn tool_detail(arguments: &Value) -> Option<String> {
    DETAIL_KEYS
        .iter()
        .find_map(|key| match arguments.get(key)? {
            Value::String(text) if !text.trim().is_empty() => Some(text.as_ref().to_owned()),
            Value::Array(words) if !words.is_empty() => {
                let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                (!words.is_empty()).then(|| words.join(" "))
            }
            _ => None,
        })
}

/// Parses `text` as JSON when it is a JSON object in a string (as some CLIs
/// pass tool arguments); otherwise `None`.
pub fn parse_embedded(text: &str) -> Option<Value<'_>> {
    Value::parse(text).ok().filter(Value::is_object)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value<'_> {
        Value::parse(text).unwrap()
    }

    #[test]
    fn walks_nested_paths_and_tolerates_missing_steps() {
        let value = json(r#"{"a": {"b": {"c": "x", "n": 3}}}"#);
        assert_eq!(str_at(&value, &["a", "b", "c"]), Some("x"));
        assert_eq!(u64_at(&value, &["a", "b", "n"]), Some(3));
        assert_eq!(str_at(&value, &["a", "z", "c"]), None);
        assert_eq!(str_at(&value, &["a", "b", "n"]), None);
        assert!(!bool_at(&value, &["a"]));
    }

    #[test]
    fn tool_detail_prefers_command_and_joins_argv() {
        let input = json(r#"{"description": "Write it", "command": "echo hi"}"#);
        assert_eq!(tool_detail(&input).as_deref(), Some("echo hi"));
        let argv = json(r#"{"command": ["bash", "-lc", "ls -1"]}"#);
        assert_eq!(tool_detail(&argv).as_deref(), Some("bash -lc ls -1"));
        assert_eq!(
            tool_detail(&json(r#"{"pattern": "fn main"}"#)).as_deref(),
            Some("fn main")
        );
        assert_eq!(tool_detail(&json(r#"{"command": "  "}"#)), None);
        assert_eq!(tool_detail(&json(r#"{"other": 1}"#)), None);
    }
}
