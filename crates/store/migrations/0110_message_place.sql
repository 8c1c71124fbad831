-- A page of messages in the order of their place (delivered ones by
-- sequence, then the queued ones), read straight from this index: without
-- it every page was sorted in a temporary B-tree holding whole rows.
CREATE INDEX messages_place ON messages (session_id, (sequence IS NULL), COALESCE(sequence, 0), id);
