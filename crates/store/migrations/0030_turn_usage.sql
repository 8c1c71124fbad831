-- Every turn's usage, beside its result: tokens as the harness reported them
-- (the turn's own share), the cost and where it comes from (`reported` by
-- the harness or `estimated` by cinch), the harness and model, for rollups
-- per session, task and account. Null where the harness reported nothing.
ALTER TABLE code_task_calls ADD COLUMN harness TEXT;
ALTER TABLE code_task_calls ADD COLUMN model TEXT;
ALTER TABLE code_task_calls ADD COLUMN input_tokens INTEGER;
ALTER TABLE code_task_calls ADD COLUMN output_tokens INTEGER;
ALTER TABLE code_task_calls ADD COLUMN cached_input_tokens INTEGER;
ALTER TABLE code_task_calls ADD COLUMN cost_usd REAL;
ALTER TABLE code_task_calls ADD COLUMN cost_source TEXT;

UPDATE code_task_calls SET harness = json_extract(result, '$.harness') WHERE result IS NOT NULL;

CREATE INDEX code_task_calls_account_time ON code_task_calls (account_id, created_at);
