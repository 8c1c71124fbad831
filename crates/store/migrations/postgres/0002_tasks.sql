-- PostgreSQL's twin of ../0002_tasks.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- Tasks, their sessions, messages and attachments; the runs' live events;
-- idempotency keys. Same conventions as 0001: TEXT ids that sort by creation,
-- TEXT RFC 3339 timestamps, plain SQL.

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    title TEXT NOT NULL,
    environment_id TEXT,
    idle_timeout_seconds BIGINT NOT NULL,
    created_by TEXT NOT NULL REFERENCES agents(id),
    owner TEXT REFERENCES members(id),
    last_message_preview TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX tasks_account ON tasks (account_id, id);

-- A session is one harness session in its own workspace. `status` is booting,
-- running, waiting, idle or closed.
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    task_id TEXT NOT NULL REFERENCES tasks(id),
    agent_id TEXT NOT NULL REFERENCES agents(id),
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    environment_id TEXT,
    branch_name TEXT NOT NULL,
    base_branch TEXT,
    auto_commit BOOLEAN NOT NULL,
    harness TEXT NOT NULL,
    vendor TEXT NOT NULL,
    harness_model TEXT,
    harness_effort TEXT,
    harness_session_id TEXT,
    workspace TEXT,
    current_turn TEXT,
    waiting_since TEXT,
    retries BIGINT NOT NULL DEFAULT 0,
    close_reason TEXT,
    error_message TEXT,
    last_activity_at TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE INDEX sessions_task ON sessions (task_id, id);
CREATE INDEX sessions_status ON sessions (status);

-- `sequence` is null while a message is queued; `turn_json` holds an
-- assistant message's turn (its call, status and result).
CREATE TABLE messages (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    task_id TEXT NOT NULL REFERENCES tasks(id),
    session_id TEXT NOT NULL REFERENCES sessions(id),
    sequence BIGINT,
    type TEXT NOT NULL,
    content TEXT NOT NULL,
    turn_json TEXT,
    created_at TEXT NOT NULL,
    UNIQUE (session_id, sequence)
);

CREATE INDEX messages_session ON messages (session_id, id);

CREATE TABLE attachments (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    task_id TEXT NOT NULL REFERENCES tasks(id),
    name TEXT NOT NULL,
    uri TEXT,
    mime_type TEXT,
    text TEXT,
    blob TEXT,
    status TEXT NOT NULL,
    error TEXT,
    created_at TEXT NOT NULL
);

CREATE INDEX attachments_task ON attachments (task_id, id);

-- Every live event of a run (a session's run id is the session's id), so a
-- stream resumes with Last-Event-ID across restarts.
CREATE TABLE run_events (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    run_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    data TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (account_id, run_id, seq)
);

-- An Idempotency-Key's first request and, once it has answered, its answer.
CREATE TABLE idempotency_keys (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    status BIGINT,
    content_type TEXT,
    body BYTEA,
    created_at TEXT NOT NULL,
    PRIMARY KEY (account_id, key)
);
