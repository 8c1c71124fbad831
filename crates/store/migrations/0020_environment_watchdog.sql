-- An environment may set its own watchdog: the minutes its harness may write
-- nothing before the turn is stopped; NULL keeps the server's.
ALTER TABLE environments ADD COLUMN watchdog_minutes INTEGER;
