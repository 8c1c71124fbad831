-- PostgreSQL's twin of ../0040_webhooks.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- Webhooks: where an account's events are POSTed. The signing secret lives
-- in the vault, never here. Each event to each webhook is one delivery,
-- retried with backoff until it is answered 2xx or a day has gone by.
CREATE TABLE webhooks (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id),
    url TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX webhooks_by_account ON webhooks(account_id, id);

CREATE TABLE webhook_deliveries (
    id TEXT PRIMARY KEY,
    webhook_id TEXT NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    event TEXT NOT NULL,
    payload TEXT NOT NULL,
    state TEXT NOT NULL,
    attempts BIGINT NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    last_status BIGINT,
    last_error TEXT,
    created_at TEXT NOT NULL,
    delivered_at TEXT
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries(state, next_attempt_at);
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries(webhook_id, id);
