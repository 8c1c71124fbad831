-- PostgreSQL's twin of ../0090_turn_slots.sql: the same schema.

-- The turn slots each account holds across all nodes, for the per-account cap
-- on turns at once: one row per session or code task running a turn, kept by
-- its node's heartbeat until `expires_at` (stored time text), so the slots of a
-- node that died run out with it.
CREATE TABLE turn_slots (
    holder TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    node_id TEXT NOT NULL,
    expires_at TEXT NOT NULL
);

CREATE INDEX turn_slots_account ON turn_slots (account_id);
CREATE INDEX turn_slots_node ON turn_slots (node_id);
