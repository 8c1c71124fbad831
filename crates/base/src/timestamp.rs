//! A moment as cinch keeps and shows it: in UTC, to the millisecond, and
//! written one way only, RFC 3339 with three decimals and `Z`
//! (`2026-01-01T00:00:00.000Z`), so that the text of two moments orders as
//! the moments do: in the database, where statements compare and order the
//! text, as in JSON. Reading takes any RFC 3339 time and keeps its instant.

use std::fmt;
use std::ops::{Add, Sub};
use std::str::FromStr;
use std::time::Duration;

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// A moment, to the millisecond.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(OffsetDateTime);

impl Timestamp {
    /// Now.
    pub fn now() -> Self {
        Self::from_instant(OffsetDateTime::now_utc())
    }

    /// `at` in UTC, without what it holds below the millisecond (which its
    /// text does not keep, so that a moment and its text read back are
    /// equal).
    fn from_instant(at: OffsetDateTime) -> Self {
        let at = at.to_offset(UtcOffset::UTC);
        Self(at.replace_millisecond(at.millisecond()).unwrap_or(at))
    }

    /// How long from `earlier` to this moment; zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        Duration::try_from(self.0 - earlier.0).unwrap_or(Duration::ZERO)
    }
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;

    fn add(self, duration: Duration) -> Timestamp {
        Self::from_instant(self.0 + duration)
    }
}

impl Sub<Duration> for Timestamp {
    type Output = Timestamp;

    fn sub(self, duration: Duration) -> Timestamp {
        Self::from_instant(self.0 - duration)
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.0;
        write!(
            formatter,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second(),
            at.millisecond()
        )
    }
}

impl fmt::Debug for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Timestamp({self})")
    }
}

/// Text that is not an RFC 3339 time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotATimestamp(String);

impl fmt::Display for NotATimestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            formatter,
            "{:?} is not an RFC 3339 time such as 2026-01-01T00:00:00.000Z",
            self.0
        )
    }
}

impl std::error::Error for NotATimestamp {}

impl FromStr for Timestamp {
    type Err = NotATimestamp;

    fn from_str(text: &str) -> Result<Self, NotATimestamp> {
        OffsetDateTime::parse(text, &Rfc3339)
            .map(Self::from_instant)
            .map_err(|_| NotATimestamp(text.to_owned()))
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;

        impl serde::de::Visitor<'_> for Text {
            type Value = Timestamp;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("an RFC 3339 time")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Timestamp, E> {
                text.parse().map_err(E::custom)
            }
        }

        deserializer.deserialize_str(Text)
    }
}

/// A moment is its text in the database, on either backend: the columns are
/// TEXT, which statements compare and order.
#[cfg(feature = "sqlx")]
mod column {
    use sqlx::error::BoxDynError;
    use sqlx::{Database, Decode, Encode, Type};

    use super::Timestamp;

    impl<DB: Database> Type<DB> for Timestamp
    where
        str: Type<DB>,
    {
        fn type_info() -> DB::TypeInfo {
            <str as Type<DB>>::type_info()
        }

        fn compatible(ty: &DB::TypeInfo) -> bool {
            <str as Type<DB>>::compatible(ty)
        }
    }

    impl<'r, DB: Database> Decode<'r, DB> for Timestamp
    where
        &'r str: Decode<'r, DB>,
    {
        fn decode(value: DB::ValueRef<'r>) -> Result<Self, BoxDynError> {
            Ok(<&str as Decode<DB>>::decode(value)?.parse()?)
        }
    }

    impl<'q, DB: Database> Encode<'q, DB> for Timestamp
    where
        String: Encode<'q, DB>,
    {
        fn encode_by_ref(
            &self,
            buf: &mut DB::ArgumentBuffer<'q>,
        ) -> Result<sqlx::encode::IsNull, BoxDynError> {
            self.to_string().encode(buf)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_utc_to_the_millisecond() {
        let at: Timestamp = "2026-03-04T05:06:07.089Z".parse().unwrap();
        assert_eq!(at.to_string(), "2026-03-04T05:06:07.089Z");
        let json = serde_json::to_string(&at).unwrap();
        assert_eq!(json, "\"2026-03-04T05:06:07.089Z\"");
        assert_eq!(serde_json::from_str::<Timestamp>(&json).unwrap(), at);
    }

    #[test]
    fn now_reads_back_as_itself() {
        let now = Timestamp::now();
        let text = now.to_string();
        assert_eq!(text.len(), "2026-01-01T00:00:00.000Z".len());
        assert_eq!(text.parse::<Timestamp>().unwrap(), now);
    }

    #[test]
    fn reads_any_rfc3339_time_as_its_instant() {
        for (text, written) in [
            ("2026-03-04T05:06:07Z", "2026-03-04T05:06:07.000Z"),
            ("2026-03-04T05:06:07.1Z", "2026-03-04T05:06:07.100Z"),
            ("2026-03-04T05:06:07.123456789Z", "2026-03-04T05:06:07.123Z"),
            ("2026-03-04T07:06:07.5+02:00", "2026-03-04T05:06:07.500Z"),
            ("2026-03-03T23:06:07-06:00", "2026-03-04T05:06:07.000Z"),
        ] {
            assert_eq!(text.parse::<Timestamp>().unwrap().to_string(), written);
        }
    }

    #[test]
    fn refuses_text_that_is_not_a_time_and_says_why() {
        for text in ["", "yesterday", "2026-03-04", "2026-03-04T05:06:07"] {
            let error = text.parse::<Timestamp>().unwrap_err().to_string();
            assert!(error.contains("is not an RFC 3339 time"), "{error}");
        }
        assert!(serde_json::from_str::<Timestamp>("\"soon\"").is_err());
        assert!(serde_json::from_str::<Timestamp>("17").is_err());
    }

    #[test]
    fn orders_as_time_does_and_as_its_text_does() {
        let times: Vec<Timestamp> = [
            "2026-03-04T05:06:07.999Z",
            "2026-03-04T07:06:07.5+02:00",
            "2026-03-04T05:06:08Z",
            "1999-12-31T23:59:59.999Z",
        ]
        .iter()
        .map(|text| text.parse().unwrap())
        .collect();
        let mut by_time = times.clone();
        by_time.sort();
        let mut by_text = times.clone();
        by_text.sort_by_key(|at| at.to_string());
        assert_eq!(by_time, by_text);
        assert_eq!(
            by_time.iter().map(Timestamp::to_string).collect::<Vec<_>>(),
            [
                "1999-12-31T23:59:59.999Z",
                "2026-03-04T05:06:07.500Z",
                "2026-03-04T05:06:07.999Z",
                "2026-03-04T05:06:08.000Z",
            ]
        );
    }

    #[test]
    fn adds_and_measures_durations() {
        let at: Timestamp = "2026-12-31T23:59:59.500Z".parse().unwrap();
        let later = at + Duration::from_millis(1_500);
        assert_eq!(later.to_string(), "2027-01-01T00:00:01.000Z");
        assert_eq!(later - Duration::from_millis(1_500), at);
        assert_eq!(
            later.saturating_duration_since(at),
            Duration::from_millis(1_500)
        );
        assert_eq!(at.saturating_duration_since(later), Duration::ZERO);
    }
}
