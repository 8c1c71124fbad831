-- PostgreSQL's twin of ../0010_call_results.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- A call's result, kept once its turn has ended: it outlives the turn's files
-- under cinch's home, which go with its run's raw log (each agent's 20 most
-- recent runs keep theirs). JSON, as the engine writes it.
ALTER TABLE code_task_calls ADD COLUMN result TEXT;
