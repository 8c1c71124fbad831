//! Reading rows into structs and columns into types, on either backend:
//! what sqlx's derives do, written out so that the build has no sqlx
//! proc-macro crate, which compiles a second sqlx (both database drivers
//! and SQLite's C source) for the build machine. The same structs and types
//! read from the store's own SQLite connections too ([`SqliteRow`]).

use cinch_base::timestamp::Timestamp;
use sqlx::error::BoxDynError;

/// Reads itself from a row of the store's own SQLite connections
/// (rusqlite's, see `readers`), as `sqlx::FromRow` does from sqlx's.
pub(super) trait SqliteRow: Sized {
    fn from_sqlite_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self>;
}

/// Reads itself from a column of the store's own SQLite connections, as
/// `sqlx::Decode` does from sqlx's.
pub(super) trait SqliteColumn: Sized {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError>;
}

/// The column `name` of `row`, read as a `T`.
pub(super) fn sqlite_column<T: SqliteColumn>(
    row: &rusqlite::Row<'_>,
    name: &str,
) -> rusqlite::Result<T> {
    let index = row.as_ref().column_index(name)?;
    let value = row.get_ref(index)?;
    T::from_sqlite(value)
        .map_err(|error| rusqlite::Error::FromSqlConversionFailure(index, value.data_type(), error))
}

impl SqliteColumn for String {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(value.as_str()?.to_owned())
    }
}

impl SqliteColumn for i64 {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(value.as_i64()?)
    }
}

impl SqliteColumn for bool {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(value.as_i64()? != 0)
    }
}

impl SqliteColumn for f64 {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        match value {
            rusqlite::types::ValueRef::Integer(integer) => Ok(integer as f64),
            value => Ok(value.as_f64()?),
        }
    }
}

impl SqliteColumn for Timestamp {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        Ok(value.as_str()?.parse()?)
    }
}

impl<T: SqliteColumn> SqliteColumn for Option<T> {
    fn from_sqlite(value: rusqlite::types::ValueRef<'_>) -> Result<Self, BoxDynError> {
        match value {
            rusqlite::types::ValueRef::Null => Ok(None),
            value => T::from_sqlite(value).map(Some),
        }
    }
}

/// Defines a struct and reads it from a row, each field from the column of
/// its name (`sqlx::FromRow`); a field's type decodes its own column.
macro_rules! row_struct {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field_vis:vis $field:ident: $type:ty
            ),* $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$field_meta])*
                $field_vis $field: $type,
            )*
        }

        impl<'r, R: sqlx::Row> sqlx::FromRow<'r, R> for $name
        where
            &'r str: sqlx::ColumnIndex<R>,
            $($type: sqlx::Decode<'r, R::Database> + sqlx::Type<R::Database>,)*
        {
            fn from_row(row: &'r R) -> std::result::Result<Self, sqlx::Error> {
                Ok(Self {
                    $($field: row.try_get(stringify!($field))?,)*
                })
            }
        }

        impl $crate::rows::SqliteRow for $name {
            fn from_sqlite_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<Self> {
                Ok(Self {
                    $($field: $crate::rows::sqlite_column(row, stringify!($field))?,)*
                })
            }
        }
    };
}
pub(super) use row_struct;

/// Reads a type from a text column on either backend: `$decode` (a
/// `fn(&str) -> Result<Self, BoxDynError>`) makes it of the column's text.
macro_rules! text_type {
    ($type:ty, $decode:expr) => {
        impl<DB: sqlx::Database> sqlx::Type<DB> for $type
        where
            str: sqlx::Type<DB>,
        {
            fn type_info() -> DB::TypeInfo {
                <str as sqlx::Type<DB>>::type_info()
            }

            fn compatible(ty: &DB::TypeInfo) -> bool {
                <str as sqlx::Type<DB>>::compatible(ty)
            }
        }

        impl<'r, DB: sqlx::Database> sqlx::Decode<'r, DB> for $type
        where
            &'r str: sqlx::Decode<'r, DB>,
        {
            fn decode(
                value: DB::ValueRef<'r>,
            ) -> std::result::Result<Self, sqlx::error::BoxDynError> {
                let decode: fn(&str) -> std::result::Result<$type, sqlx::error::BoxDynError> =
                    $decode;
                decode(<&str as sqlx::Decode<DB>>::decode(value)?)
            }
        }

        impl $crate::rows::SqliteColumn for $type {
            fn from_sqlite(
                value: rusqlite::types::ValueRef<'_>,
            ) -> std::result::Result<Self, sqlx::error::BoxDynError> {
                let decode: fn(&str) -> std::result::Result<$type, sqlx::error::BoxDynError> =
                    $decode;
                decode(value.as_str()?)
            }
        }
    };
}
pub(super) use text_type;

/// Stores an enum as the text of its variant's name, on either backend (a
/// derived `sqlx::Type` would be a named enum type on PostgreSQL). The type
/// gives its names with `as_str` and lists its variants in `ALL`.
macro_rules! text_column {
    ($type:ty) => {
        $crate::rows::text_type!($type, |text| {
            <$type>::ALL
                .iter()
                .find(|variant| variant.as_str() == text)
                .copied()
                .ok_or_else(|| format!("{text:?} is not a {}", stringify!($type)).into())
        });

        impl<'q, DB: sqlx::Database> sqlx::Encode<'q, DB> for $type
        where
            &'q str: sqlx::Encode<'q, DB>,
        {
            fn encode_by_ref(
                &self,
                buf: &mut DB::ArgumentBuffer<'q>,
            ) -> std::result::Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<'q, DB>>::encode_by_ref(&self.as_str(), buf)
            }
        }

        impl rusqlite::ToSql for $type {
            fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                Ok(rusqlite::types::ToSqlOutput::Borrowed(
                    rusqlite::types::ValueRef::Text(self.as_str().as_bytes()),
                ))
            }
        }
    };
}
pub(super) use text_column;
