//! Which failures mean that the database cannot answer now (stopped,
//! unreachable, shutting down, out of connections, or a SQLite file another
//! writer holds past the wait) rather than that a statement is wrong: they
//! become [`StoreError::Unavailable`], which the API answers 503 with
//! `Retry-After`, and they pass by themselves when the database is back.

use sqlx::error::DatabaseError;

use super::StoreError;

/// PostgreSQL's SQLSTATE class of a connection that failed (appendix A).
const CONNECTION_EXCEPTION_CLASS: &str = "08";

/// PostgreSQL's SQLSTATEs of a server that takes no work now: it is shutting
/// down (asked to, or after a crash), starting up, or has no connection to spare.
const SERVER_UNAVAILABLE: [&str; 4] = ["57P01", "57P02", "57P03", "53300"];

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        if cannot_answer(&error) {
            Self::Unavailable(Box::new(error))
        } else {
            Self::Database(error)
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        match error.sqlite_error_code() {
            Some(code) if sqlite_busy(code) => Self::Unavailable(Box::new(error)),
            _ => Self::Direct(error),
        }
    }
}

/// Whether `error` says the database cannot answer, not what it answered:
/// no connection could be made or lent in time, one broke, or the server
/// said it takes no work.
fn cannot_answer(error: &sqlx::Error) -> bool {
    match error {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed => true,
        sqlx::Error::Database(error) => refuses_work(error.as_ref()),
        _ => false,
    }
}

fn refuses_work(error: &dyn DatabaseError) -> bool {
    if let Some(error) = error.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
        let code = error.code();
        return code.starts_with(CONNECTION_EXCEPTION_CLASS) || SERVER_UNAVAILABLE.contains(&code);
    }
    // sqlx gives SQLite's extended result code in decimal.
    error
        .code()
        .and_then(|code| code.parse::<i32>().ok())
        .is_some_and(|code| sqlite_busy(rusqlite::ffi::Error::new(code).code))
}

/// SQLite's answer when another connection holds the lock past the wait.
fn sqlite_busy(code: rusqlite::ErrorCode) -> bool {
    matches!(
        code,
        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_connection_and_a_full_pool_cannot_answer_a_bad_statement_can() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(matches!(
            StoreError::from(sqlx::Error::Io(refused)),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            StoreError::from(sqlx::Error::PoolTimedOut),
            StoreError::Unavailable(_)
        ));
        assert!(matches!(
            StoreError::from(sqlx::Error::RowNotFound),
            StoreError::Database(_)
        ));
        let busy = rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_BUSY),
            None,
        );
        assert!(matches!(StoreError::from(busy), StoreError::Unavailable(_)));
    }
}
