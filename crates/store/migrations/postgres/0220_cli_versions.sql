-- PostgreSQL's twin of ../0220_cli_versions.sql: the same schema, with BIGINT for SQLite's
-- INTEGER.

-- The CLI versions turns ran on, per harness: with the driver's tested range,
-- what `GET /v1/drivers` reports as drift. Server-wide like unknown_events:
-- no account, no turn, only the harness, the version, when it was first and
-- last seen and how many turns ran on it. `cli_version` is '' when the CLI
-- did not say its version.
CREATE TABLE cli_versions (
    harness TEXT NOT NULL,
    cli_version TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    turns BIGINT NOT NULL,
    PRIMARY KEY (harness, cli_version)
);
