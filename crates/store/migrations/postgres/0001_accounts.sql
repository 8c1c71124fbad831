-- PostgreSQL's twin of ../0001_accounts.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- Accounts, who acts in them, their tokens and environments, and code-task calls.
-- Plain SQL with TEXT ids and TEXT timestamps (RFC 3339, UTC) so that the same
-- schema and queries run on Postgres.

CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE TABLE members (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (account_id, name)
);

CREATE TABLE agents (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    connected BOOLEAN NOT NULL,
    enabled BOOLEAN NOT NULL,
    harness TEXT,
    model TEXT,
    effort TEXT,
    environment_id TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (account_id, name)
);

-- Only a SHA-256 of each token is kept; a token names either a member or an agent.
CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    member_id TEXT REFERENCES members(id),
    agent_id TEXT REFERENCES agents(id),
    created_at TEXT NOT NULL,
    CHECK ((member_id IS NULL) <> (agent_id IS NULL))
);

CREATE TABLE environments (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    name TEXT NOT NULL,
    repository TEXT NOT NULL,
    setup_json TEXT NOT NULL,
    env_json TEXT NOT NULL,
    secrets_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (account_id, name)
);

-- A code task's call is an engine turn; the run groups calls, the account owns both.
CREATE TABLE code_task_calls (
    call_id TEXT PRIMARY KEY,
    run_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    environment_id TEXT NOT NULL,
    created_at TEXT NOT NULL
);

CREATE INDEX code_task_calls_run ON code_task_calls (account_id, run_id);
