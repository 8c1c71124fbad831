-- PostgreSQL's twin of ../0020_environment_watchdog.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- An environment may set its own watchdog: the minutes its harness may write
-- nothing before the turn is stopped; NULL keeps the server's.
ALTER TABLE environments ADD COLUMN watchdog_minutes BIGINT;
