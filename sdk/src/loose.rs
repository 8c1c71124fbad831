//! Typed, loosely read fields: deserialize a line straight into a driver's
//! own structs, reading only the fields it names.
//!
//! Building a whole [`Value`] for a line allocates a vector for every object
//! and array and copies every string with an escape sequence, though a driver
//! reads a handful of fields. A struct deriving `Deserialize` whose fields
//! are the types here reads only those: every other member is skipped as it
//! is scanned, without being built. The fields are as forgiving as the
//! [`crate::json`] accessors: a value of another type than expected reads as
//! absent instead of failing the line.
//!
//! ```ignore
//! #[derive(serde::Deserialize)]
//! struct Line<'a> {
//!     #[serde(rename = "type", borrow, default)]
//!     kind: loose::Str<'a>,
//!     #[serde(default)]
//!     usage: loose::Obj<Usage>,
//! }
//! ```
//!
//! [`parse_line`] reads a line into such a struct.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::{Event, SkipReason, Value};

/// What one line of output reads as.
pub enum Line<T> {
    /// A blank line: nothing to report.
    Blank,
    /// A JSON object, read into the driver's struct.
    Object(T),
    /// Not JSON at all.
    NotJson,
    /// JSON, but not an object the struct can hold (an array, a number, or
    /// an object that repeats a key): its `type` when it names one.
    Unreadable(Option<String>),
}

/// Reads `line` into `T`, borrowing its strings from the line.
pub fn parse_line<'a, T: Deserialize<'a>>(line: &'a str) -> Line<T> {
    let line = line.trim();
    if line.is_empty() {
        return Line::Blank;
    }
    match serde_json::from_str::<Obj<T>>(line) {
        Ok(Obj(Some(object))) => Line::Object(object),
        Ok(Obj(None)) => Line::Unreadable(None),
        // Rare: only JSON that is not what the struct reads (a repeated
        // key) gets here, and it costs a second parse to tell it apart
        // from a line that is not JSON.
        Err(_) => match Value::parse(line) {
            Ok(value) => Line::Unreadable(crate::json::kind(&value).map(str::to_owned)),
            Err(_) => Line::NotJson,
        },
    }
}

impl<T> Line<T> {
    /// The object, after reporting any other kind of line into `out` as a
    /// driver that reads JSON lines reports it.
    pub fn object(self, out: &mut Vec<Event>) -> Option<T> {
        match self {
            Line::Object(object) => return Some(object),
            Line::Blank => {}
            Line::NotJson => out.push(Event::Skipped {
                reason: SkipReason::NotJson,
                kind: None,
            }),
            Line::Unreadable(kind) => out.push(Event::Skipped {
                reason: SkipReason::Unknown,
                kind,
            }),
        }
        None
    }
}

/// A line of a type the driver does not know, named by its `type`.
pub fn unknown(kind: Option<&str>) -> Event {
    Event::Skipped {
        reason: SkipReason::Unknown,
        kind: kind.map(str::to_owned),
    }
}

/// A string, borrowed from the line unless it had escape sequences; absent
/// when missing or not a string.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Str<'a>(pub Option<Cow<'a, str>>);

impl<'a> Str<'a> {
    /// The text, when the field is a string.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The text when it is not blank.
    pub fn nonblank(&self) -> Option<&str> {
        self.get().filter(|text| !text.trim().is_empty())
    }

    /// The text as an owned, non-empty string (as [`crate::json::string_at`]).
    pub fn non_empty(&self) -> Option<String> {
        self.get()
            .filter(|text| !text.is_empty())
            .map(str::to_owned)
    }
}

/// A non-negative integer; absent when missing or anything else.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct U64(pub Option<u64>);

/// An integer within `i64`; absent when missing or anything else.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct I64(pub Option<i64>);

/// Any number, as a float; absent when missing or anything else.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct F64(pub Option<f64>);

/// A boolean; false when missing or not a boolean (as [`crate::json::bool_at`]).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Bool(pub bool);

/// Whether the field is there and not `null`, whatever it holds (which is
/// skipped, not built).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Present(pub bool);

/// Whether the key is there at all, even as `null` (its value is skipped).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Given(pub bool);

impl<'de> Deserialize<'de> for Given {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        IgnoredAny::deserialize(deserializer)?;
        Ok(Self(true))
    }
}

/// A member read whole, as [`Value::get`] gives it: `null` included, absent
/// only when the key is missing. For the parts whose shape varies.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Member<'a>(pub Option<Value<'a>>);

impl<'a> Member<'a> {
    /// The value, when the key is there.
    pub fn get(&self) -> Option<&Value<'a>> {
        self.0.as_ref()
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Member<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|value| Self(Some(value)))
    }
}

/// The keys an [`Only`] keeps.
pub trait Keys {
    /// Whether `key` is read; every other member is skipped.
    fn keeps(key: &str) -> bool;
}

/// A member read as [`Member`] reads it, except that an object keeps only the
/// members named by `K` (their values whole): for an object whose shape
/// varies but whose bulk (a command's output) is never read.
pub struct Only<'a, K>(pub Option<Value<'a>>, PhantomData<K>);

impl<K> Default for Only<'_, K> {
    fn default() -> Self {
        Self(None, PhantomData)
    }
}

impl<'a, K> Only<'a, K> {
    /// The value, when the key is there.
    pub fn get(&self) -> Option<&Value<'a>> {
        self.0.as_ref()
    }
}

impl<'de: 'a, 'a, K: Keys> Deserialize<'de> for Only<'a, K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(crate::value::Filtered(K::keeps))
            .map(|value| Self(Some(value), PhantomData))
    }
}

/// An object read into `T`; absent when missing or not an object.
#[derive(Debug, Clone, PartialEq)]
pub struct Obj<T>(pub Option<T>);

impl<T> Default for Obj<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> Obj<T> {
    /// The object, when there is one.
    pub fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }
}

/// An array's items read into `T`; empty when missing or not an array.
#[derive(Debug, Clone, PartialEq)]
pub struct List<T>(pub Vec<T>);

impl<T> Default for List<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

/// The scalar a visitor of [`Scalar`] keeps; everything else reads as its
/// default, skipped without being built.
trait Keep<'de>: Default {
    fn from_str(_text: Cow<'de, str>) -> Self {
        Self::default()
    }
    fn from_u64(_value: u64) -> Self {
        Self::default()
    }
    fn from_i64(_value: i64) -> Self {
        Self::default()
    }
    fn from_f64(_value: f64) -> Self {
        Self::default()
    }
    fn from_bool(_value: bool) -> Self {
        Self::default()
    }
    /// What any value other than `null` reads as, before the typed hooks.
    fn present() -> Self {
        Self::default()
    }
}

impl<'de: 'a, 'a> Keep<'de> for Str<'a> {
    fn from_str(text: Cow<'de, str>) -> Self {
        Self(Some(text))
    }
}

impl Keep<'_> for U64 {
    fn from_u64(value: u64) -> Self {
        Self(Some(value))
    }
    fn from_i64(value: i64) -> Self {
        Self(u64::try_from(value).ok())
    }
}

impl Keep<'_> for I64 {
    fn from_u64(value: u64) -> Self {
        Self(i64::try_from(value).ok())
    }
    fn from_i64(value: i64) -> Self {
        Self(Some(value))
    }
}

impl Keep<'_> for F64 {
    fn from_u64(value: u64) -> Self {
        Self(Some(value as f64))
    }
    fn from_i64(value: i64) -> Self {
        Self(Some(value as f64))
    }
    fn from_f64(value: f64) -> Self {
        // As `Value` reads it: a float that is not finite is no number.
        Self(value.is_finite().then_some(value))
    }
}

impl Keep<'_> for Bool {
    fn from_bool(value: bool) -> Self {
        Self(value)
    }
}

impl Keep<'_> for Present {
    fn present() -> Self {
        Self(true)
    }
    fn from_str(_text: Cow<'_, str>) -> Self {
        Self(true)
    }
    fn from_u64(_value: u64) -> Self {
        Self(true)
    }
    fn from_i64(_value: i64) -> Self {
        Self(true)
    }
    fn from_f64(value: f64) -> Self {
        // A float that is not finite reads as `null` in `Value`.
        Self(value.is_finite())
    }
    fn from_bool(_value: bool) -> Self {
        Self(true)
    }
}

struct Scalar<K>(PhantomData<K>);

impl<'de, K: Keep<'de>> Visitor<'de> for Scalar<K> {
    type Value = K;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<K, E> {
        Ok(K::from_bool(value))
    }

    fn visit_u64<E>(self, value: u64) -> Result<K, E> {
        Ok(K::from_u64(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<K, E> {
        Ok(K::from_i64(value))
    }

    fn visit_f64<E>(self, value: f64) -> Result<K, E> {
        Ok(K::from_f64(value))
    }

    fn visit_borrowed_str<E>(self, text: &'de str) -> Result<K, E> {
        Ok(K::from_str(Cow::Borrowed(text)))
    }

    fn visit_str<E>(self, text: &str) -> Result<K, E> {
        Ok(K::from_str(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E>(self, text: String) -> Result<K, E> {
        Ok(K::from_str(Cow::Owned(text)))
    }

    fn visit_unit<E>(self) -> Result<K, E> {
        Ok(K::default())
    }

    fn visit_none<E>(self) -> Result<K, E> {
        Ok(K::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<K, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<K, A::Error> {
        IgnoredAny::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(K::present())
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<K, A::Error> {
        IgnoredAny::deserialize(MapAccessDeserializer::new(map))?;
        Ok(K::present())
    }
}

macro_rules! scalar_fields {
    ($($field:ty),*) => {$(
        impl<'de> Deserialize<'de> for $field {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_any(Scalar(PhantomData))
            }
        }
    )*};
}

scalar_fields!(U64, I64, F64, Bool, Present);

impl<'de: 'a, 'a> Deserialize<'de> for Str<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(Scalar(PhantomData))
    }
}

/// Reads an object into `T` and anything else as nothing (skipped).
struct Shaped<T, const ARRAY: bool>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for Shaped<T, false> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map)).map(Some)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<T>, A::Error> {
        IgnoredAny::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<T>, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_str<E>(self, _: &str) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_unit<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
    fn visit_none<E>(self) -> Result<Option<T>, E> {
        Ok(None)
    }
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Shaped<T, true> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(items)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Vec<T>, A::Error> {
        IgnoredAny::deserialize(MapAccessDeserializer::new(map))?;
        Ok(Vec::new())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Vec<T>, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_u64<E>(self, _: u64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_i64<E>(self, _: i64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_f64<E>(self, _: f64) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_str<E>(self, _: &str) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_unit<E>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
    fn visit_none<E>(self) -> Result<Vec<T>, E> {
        Ok(Vec::new())
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Shaped::<T, false>(PhantomData))
            .map(Obj)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_any(Shaped::<T, true>(PhantomData))
            .map(List)
    }
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;

    use super::*;

    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Str<'a>,
        #[serde(default)]
        count: U64,
        #[serde(default)]
        flag: Bool,
        #[serde(default)]
        error: Present,
        #[serde(default)]
        stamp: Given,
        #[serde(default, borrow)]
        whole: Member<'a>,
        #[serde(default, borrow)]
        some: Only<'a, AandC>,
        #[serde(default, borrow)]
        inner: Obj<Inner<'a>>,
        #[serde(default, borrow)]
        items: List<Inner<'a>>,
    }

    struct AandC;

    impl Keys for AandC {
        fn keeps(key: &str) -> bool {
            ["a", "c"].contains(&key)
        }
    }

    #[derive(Deserialize)]
    struct Inner<'a> {
        #[serde(borrow, default)]
        text: Str<'a>,
    }

    fn read(text: &str) -> Line<'_> {
        match parse_line(text) {
            super::Line::Object(line) => line,
            _ => panic!("{text} read as no object"),
        }
    }

    #[test]
    fn reads_named_fields_and_borrows_plain_strings() {
        let line = read(
            r#"{"type":"a","count":3,"flag":true,"error":{"x":[1]},"inner":{"text":"t\n"},"items":[{"text":"u"},{}],"skip":{"deep":["v"]}}"#,
        );
        assert!(matches!(line.kind.0, Some(Cow::Borrowed("a"))));
        assert_eq!(line.count.0, Some(3));
        assert!(line.flag.0);
        assert!(line.error.0);
        assert_eq!(line.inner.get().unwrap().text.get(), Some("t\n"));
        let texts: Vec<Option<&str>> = line.items.0.iter().map(|i| i.text.get()).collect();
        assert_eq!(texts, [Some("u"), None]);
    }

    #[test]
    fn a_field_of_another_type_reads_as_absent() {
        let line = read(
            r#"{"type":7,"count":"3","flag":"yes","error":null,"stamp":null,"inner":["x"],"items":{"text":"u"}}"#,
        );
        assert!(line.stamp.0);
        assert!(!read("{}").stamp.0);
        assert!(read("{}").whole.get().is_none());
        assert_eq!(read(r#"{"whole":null}"#).whole.get(), Some(&Value::Null));
        let some = read(r#"{"some":{"a":1,"b":{"c":2},"c":[3]}}"#);
        let some = some.some.get().unwrap().as_object().unwrap();
        assert_eq!(some.keys().collect::<Vec<_>>(), ["a", "c"]);
        assert_eq!(
            read(r#"{"some":"x"}"#).some.get().unwrap().as_str(),
            Some("x")
        );
        assert_eq!(line.kind.get(), None);
        assert_eq!(line.count.0, None);
        assert!(!line.flag.0);
        assert!(!line.error.0);
        assert!(line.inner.get().is_none());
        assert!(line.items.0.is_empty());
        let negative = read(r#"{"count":-1}"#);
        assert_eq!(negative.count.0, None);
    }

    #[test]
    fn lines_that_are_not_objects_are_told_apart() {
        assert!(matches!(parse_line::<Line>("  "), super::Line::Blank));
        assert!(matches!(
            parse_line::<Line>("not json"),
            super::Line::NotJson
        ));
        assert!(matches!(
            parse_line::<Line>(r#"{"type":"a""#),
            super::Line::NotJson
        ));
        assert!(matches!(
            parse_line::<Line>("[1]"),
            super::Line::Unreadable(None)
        ));
        assert!(matches!(
            parse_line::<Line>(r#"{"type":"a","type":"b"}"#),
            super::Line::Unreadable(Some(kind)) if kind == "b"
        ));
        // What `Value` rejects is rejected in a skipped member too.
        for text in [
            "{\"skip\":\"a\u{1}b\"}",
            r#"{"skip":"\x"}"#,
            r#"{"skip":[1,]}"#,
        ] {
            assert!(Value::parse(text).is_err(), "{text}");
            assert!(
                matches!(parse_line::<Line>(text), super::Line::NotJson),
                "{text}"
            );
        }
    }
}
