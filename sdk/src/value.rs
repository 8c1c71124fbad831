//! A JSON value that borrows its strings from the line it was parsed from.
//!
//! `serde_json::Value` allocates every key, every string and a B-tree for
//! every object: for a line of a harness's output that is dozens of
//! allocations, most of them for fields no driver reads (a tool's whole
//! output, token counts per model). [`Value`] borrows every string that has no
//! escape sequence from the line and keeps an object's members in one vector,
//! so a line costs a few allocations. It reads like `serde_json::Value`: the
//! accessors have the same names and meanings, the last of duplicate keys
//! wins, and an object's members iterate in key order.

use std::borrow::Cow;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A JSON value parsed from, and borrowing from, one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string; borrowed from the line unless it had escape sequences.
    String(Cow<'a, str>),
    /// An array.
    Array(Vec<Value<'a>>),
    /// An object.
    Object(Object<'a>),
}

impl<'a> Value<'a> {
    /// Parses `text`, which must hold exactly one JSON value.
    pub fn parse(text: &'a str) -> serde_json::Result<Self> {
        serde_json::from_str(text)
    }

    /// The member `key` of an object; `None` for a missing key or a value
    /// that is not an object.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        self.as_object()?.get(key)
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text.as_ref()),
            _ => None,
        }
    }

    /// The items of an array.
    pub fn as_array(&self) -> Option<&[Value<'a>]> {
        match self {
            Value::Array(items) => Some(items.as_slice()),
            _ => None,
        }
    }

    /// The members of an object.
    pub fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }

    /// A boolean's value.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(value) => Some(*value),
            _ => None,
        }
    }

    /// A number that is a non-negative integer.
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(number) => number.as_u64(),
            _ => None,
        }
    }

    /// A number that is an integer within `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(number) => number.as_i64(),
            _ => None,
        }
    }

    /// Any number, as a float.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(number) => Some(number.as_f64()),
            _ => None,
        }
    }

    /// Whether the value is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Whether the value is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }
}

/// A JSON number, kept as the integer or float it was written as.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Number(Kind);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Zero or more.
    Natural(u64),
    /// Below zero.
    Negative(i64),
    Float(f64),
}

impl Number {
    /// The number if it is a non-negative integer.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            Kind::Natural(n) => Some(n),
            Kind::Negative(_) | Kind::Float(_) => None,
        }
    }

    /// The number if it is an integer within `i64`.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            Kind::Natural(n) => i64::try_from(n).ok(),
            Kind::Negative(n) => Some(n),
            Kind::Float(_) => None,
        }
    }

    /// The number as a float.
    pub fn as_f64(self) -> f64 {
        match self.0 {
            Kind::Natural(n) => n as f64,
            Kind::Negative(n) => n as f64,
            Kind::Float(f) => f,
        }
    }
}

/// An object's members, in the order the line gave them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Object<'a> {
    members: Vec<(Cow<'a, str>, Value<'a>)>,
}

impl<'a> Object<'a> {
    /// The value of `key`; of its last occurrence when the line repeats it.
    pub fn get(&self, key: &str) -> Option<&Value<'a>> {
        // Objects are small: a scan beats hashing, and from the end it finds
        // the occurrence that counts.
        self.members
            .iter()
            .rev()
            .find(|(name, _)| name == key)
            .map(|(_, value)| value)
    }

    /// The members in key order, each key once (with its last value), as
    /// `serde_json`'s map gives them.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value<'a>)> {
        let mut members: Vec<(&str, &Value<'a>)> = self
            .members
            .iter()
            .rev()
            .map(|(name, value)| (name.as_ref(), value))
            .collect();
        // A stable sort of the reversed list puts each key's last value first
        // among its namesakes; dedup keeps that one.
        members.sort_by(|a, b| a.0.cmp(b.0));
        members.dedup_by(|later, first| later.0 == first.0);
        members.into_iter()
    }

    /// The keys in key order, each once.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.iter().map(|(name, _)| name)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Value<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value<'de>, E> {
        Ok(Value::Bool(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value<'de>, E> {
        Ok(Value::Number(Number(Kind::Natural(value))))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value<'de>, E> {
        let kind = match u64::try_from(value) {
            Ok(natural) => Kind::Natural(natural),
            Err(_) => Kind::Negative(value),
        };
        Ok(Value::Number(Number(kind)))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value<'de>, E> {
        // As serde_json does: a float that is not finite is no JSON number.
        Ok(if value.is_finite() {
            Value::Number(Number(Kind::Float(value)))
        } else {
            Value::Null
        })
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E>(self, text: String) -> Result<Value<'de>, E> {
        Ok(Value::String(Cow::Owned(text)))
    }

    fn visit_unit<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value<'de>, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value<'de>, D::Error> {
        Value::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value<'de>, A::Error> {
        object_of(map, |_| true)
    }
}

/// The object `map` holds, with only the members whose key `keep` accepts:
/// the others are skipped as they are scanned, never built.
pub(crate) fn object_of<'de, A: MapAccess<'de>>(
    mut map: A,
    keep: impl Fn(&str) -> bool,
) -> Result<Value<'de>, A::Error> {
    let mut members = Vec::new();
    while let Some(Key(name)) = map.next_key()? {
        if keep(&name) {
            members.push((name, map.next_value()?));
        } else {
            map.next_value::<serde::de::IgnoredAny>()?;
        }
    }
    Ok(Value::Object(Object { members }))
}

/// Reads any JSON value as [`Value`] does, except that an object keeps only
/// the members whose key `keep` accepts (its nested values are whole).
pub(crate) struct Filtered<F>(pub(crate) F);

impl<'de, F: Fn(&str) -> bool> Visitor<'de> for Filtered<F> {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value<'de>, E> {
        ValueVisitor.visit_bool(value)
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value<'de>, E> {
        ValueVisitor.visit_u64(value)
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value<'de>, E> {
        ValueVisitor.visit_i64(value)
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value<'de>, E> {
        ValueVisitor.visit_f64(value)
    }

    fn visit_borrowed_str<E: serde::de::Error>(self, text: &'de str) -> Result<Value<'de>, E> {
        ValueVisitor.visit_borrowed_str(text)
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Value<'de>, E> {
        ValueVisitor.visit_str(text)
    }

    fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Value<'de>, E> {
        ValueVisitor.visit_string(text)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value<'de>, E> {
        ValueVisitor.visit_unit()
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Value<'de>, E> {
        ValueVisitor.visit_none()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Value<'de>, A::Error> {
        ValueVisitor.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value<'de>, A::Error> {
        object_of(map, self.0)
    }
}

/// An object's key, borrowed when it has no escape sequence.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                text: &'de str,
            ) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(text)))
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(text.to_owned())))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn borrows_plain_strings_and_owns_escaped_ones() {
        let value = Value::parse(r#"{"plain":"abc","escaped":"a\nb"}"#).unwrap();
        assert!(matches!(
            value.get("plain"),
            Some(Value::String(Cow::Borrowed("abc")))
        ));
        assert!(
            matches!(value.get("escaped"), Some(Value::String(Cow::Owned(text))) if text == "a\nb")
        );
    }

    #[test]
    fn numbers_read_as_serde_json_reads_them() {
        let value = Value::parse(r#"[3, -2, 1.5, 18446744073709551615, 2.0]"#).unwrap();
        let items = value.as_array().unwrap();
        let reference: serde_json::Value =
            serde_json::from_str(r#"[3, -2, 1.5, 18446744073709551615, 2.0]"#).unwrap();
        for (item, expected) in items.iter().zip(reference.as_array().unwrap()) {
            assert_eq!(item.as_u64(), expected.as_u64());
            assert_eq!(item.as_i64(), expected.as_i64());
            assert_eq!(item.as_f64(), expected.as_f64());
        }
    }

    #[test]
    fn the_last_duplicate_wins_and_members_iterate_in_key_order() {
        let value = Value::parse(r#"{"b":1,"a":2,"b":3,"c":{}}"#).unwrap();
        assert_eq!(value.get("b").and_then(Value::as_u64), Some(3));
        let object = value.as_object().unwrap();
        let members: Vec<(&str, Option<u64>)> = object
            .iter()
            .map(|(key, value)| (key, value.as_u64()))
            .collect();
        assert_eq!(members, [("a", Some(2)), ("b", Some(3)), ("c", None)]);
        assert_eq!(object.keys().collect::<Vec<_>>(), ["a", "b", "c"]);
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for text in ["", "{", r#"{"a":1}x"#, "[1,]", r#"{"a" 1}"#, "nul"] {
            assert!(Value::parse(text).is_err(), "{text}");
        }
        assert!(Value::parse("  [1, {\"a\": null}]  ").is_ok());
    }
}
