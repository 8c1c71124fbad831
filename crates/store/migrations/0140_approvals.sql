-- Approvals: an agent's permission requests waiting for (or given) a
-- decision. One row per request of a turn, so that a request read again
-- after a restart is the same approval. The input is stored masked of the
-- turn's secrets. A policy (a JSON object) may be set per environment and
-- per session.
CREATE TABLE approvals (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    session_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    turn_id TEXT NOT NULL,
    request_key TEXT NOT NULL,
    harness TEXT NOT NULL,
    tool TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    input TEXT,
    options_json TEXT NOT NULL,
    status TEXT NOT NULL,
    decision TEXT,
    decided_by TEXT,
    message TEXT,
    requested_at TEXT NOT NULL,
    deadline TEXT,
    decided_at TEXT,
    UNIQUE (turn_id, request_key)
);
CREATE INDEX approvals_by_account ON approvals(account_id, id);
CREATE INDEX approvals_pending ON approvals(status, task_id);

ALTER TABLE environments ADD COLUMN approvals_json TEXT;
ALTER TABLE sessions ADD COLUMN approvals_json TEXT;
