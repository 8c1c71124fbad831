-- Environments' and webhooks' secrets, in the database so that every node
-- reads them: each value sealed (XChaCha20-Poly1305, a random nonce, its
-- owner and name as associated data) under the key every node is given,
-- never in clear. `owner_id` is an environment's or a webhook's id; a
-- secret goes in the transaction that deletes its owner.
CREATE TABLE secrets (
    owner_id TEXT NOT NULL,
    name TEXT NOT NULL,
    sealed TEXT NOT NULL,
    PRIMARY KEY (owner_id, name)
);

-- A known text sealed under the key: a node given another key refuses to
-- start instead of failing at the first secret it reads. One row.
CREATE TABLE secrets_key (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    key_check TEXT NOT NULL
);
