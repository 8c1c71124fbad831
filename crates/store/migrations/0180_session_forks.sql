-- A session forked from another's turn: where it came from, the end
-- checkpoint its work tree starts from, and how its harness session began
-- ('native': the harness forked the source's own session; 'brief': a new
-- one, given the conversation in its first brief). NULL for other sessions.
ALTER TABLE sessions ADD COLUMN forked_from_session TEXT;
ALTER TABLE sessions ADD COLUMN forked_from_turn TEXT;
ALTER TABLE sessions ADD COLUMN fork_checkpoint TEXT;
ALTER TABLE sessions ADD COLUMN fork_mode TEXT;

-- A message a fork inherited from its source's conversation: the JSON
-- object {"session_id", "turn_id"} of the fork point; NULL for its own.
ALTER TABLE messages ADD COLUMN forked_from_json TEXT;
