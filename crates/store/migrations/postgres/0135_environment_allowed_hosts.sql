-- PostgreSQL's twin of ../0135_environment_allowed_hosts.sql: the same schema.

-- An environment may limit its turns' and setup commands' network to an
-- HTTP proxy admitting listed hosts (a JSON array of host names, `*.domain`
-- wildcards and addresses); NULL leaves the network open.
ALTER TABLE environments ADD COLUMN allowed_hosts_json TEXT;
