-- PostgreSQL's twin of ../0080_session_leases.sql: the same schema, with BIGINT for SQLite's
-- INTEGER.

-- Which node runs each session: a lease renewed by the owner's heartbeat
-- until `expires_at` (stored time text, so text order is time order; an
-- empty text is a lease given back). `generation` grows each time another
-- node takes the session, and an owner writes only while it still holds the
-- generation it took (fencing).
CREATE TABLE session_leases (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    node_id TEXT NOT NULL,
    generation BIGINT NOT NULL,
    expires_at TEXT NOT NULL
);

CREATE INDEX session_leases_node ON session_leases (node_id);
CREATE INDEX session_leases_expiry ON session_leases (expires_at);

-- A session another node took over: the node it came from, until its next
-- turn starts (a new harness session, briefed with the conversation), and
-- what its work tree was rebuilt from (`checkpoint` or `branch`).
ALTER TABLE sessions ADD COLUMN moved_from_node TEXT;
ALTER TABLE sessions ADD COLUMN rebuilt_from TEXT;
