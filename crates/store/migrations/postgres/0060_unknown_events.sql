-- PostgreSQL's twin of ../0060_unknown_events.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- Event types a driver did not know, per harness and CLI version: the early
-- warning that a CLI release changed its output. Kept server-wide (drivers
-- are the server's), with no account: only the type name, the version, when
-- it was first seen and how often, never which account's turn saw it.
-- `cli_version` is '' when the CLI did not say its version.
CREATE TABLE unknown_events (
    harness TEXT NOT NULL,
    cli_version TEXT NOT NULL,
    event_type TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    count BIGINT NOT NULL,
    PRIMARY KEY (harness, cli_version, event_type)
);
