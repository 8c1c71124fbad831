-- PostgreSQL's twin of ../0050_message_turn_id.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- A turn's message is found by its turn id with an index, not by reading
-- turn JSON row by row: re-attaching after a restart and reverting ask for it.
ALTER TABLE messages ADD COLUMN turn_id TEXT
    GENERATED ALWAYS AS (turn_json::jsonb ->> 'turn_id') STORED;

CREATE INDEX messages_turn ON messages (session_id, turn_id) WHERE turn_id IS NOT NULL;
