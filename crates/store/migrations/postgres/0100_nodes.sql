-- PostgreSQL's twin of ../0100_nodes.sql: the same schema.

-- Where each node answers, for what only that node holds (a code task's
-- harness log stays in the home of the node that ran it): the others fetch
-- it from there. `seen_at` is when the node last started.
CREATE TABLE nodes (
    node_id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    seen_at TEXT NOT NULL
);

-- The node a code-task call ran on.
ALTER TABLE code_task_calls ADD COLUMN node_id TEXT;
