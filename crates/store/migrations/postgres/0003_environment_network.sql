-- PostgreSQL's twin of ../0003_environment_network.sql: the same schema, with BIGINT for SQLite's
-- INTEGER, DOUBLE PRECISION for REAL, BYTEA for BLOB and jsonb for json_extract.

-- An environment may restrict its harness's outbound TCP to listed ports
-- (a JSON array of port numbers); NULL leaves the network open.
ALTER TABLE environments ADD COLUMN tcp_ports_json TEXT;
