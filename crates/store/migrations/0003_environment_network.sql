-- An environment may restrict its harness's outbound TCP to listed ports
-- (a JSON array of port numbers); NULL leaves the network open.
ALTER TABLE environments ADD COLUMN tcp_ports_json TEXT;
