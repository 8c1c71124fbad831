-- A token's name, given when it is made, so that a list of tokens says
-- which is which ("CI", "laptop"); none for older tokens.
ALTER TABLE tokens ADD COLUMN name TEXT;
