-- A turn's message is found by its turn id with an index, not by reading
-- turn JSON row by row: re-attaching after a restart and reverting ask for it.
ALTER TABLE messages ADD COLUMN turn_id TEXT
    GENERATED ALWAYS AS (json_extract(turn_json, '$.turn_id')) VIRTUAL;

CREATE INDEX messages_turn ON messages (session_id, turn_id) WHERE turn_id IS NOT NULL;
