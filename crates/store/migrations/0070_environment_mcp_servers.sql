-- An environment may list MCP servers for its harnesses: a JSON array of
-- {name, type: stdio|http, ...}. A header that takes a secret holds only the
-- secret's name; the value stays in the vault.
ALTER TABLE environments ADD COLUMN mcp_servers_json TEXT NOT NULL DEFAULT '[]';
