-- Per domain, the newest journal record the retention sweep removed: a search or a websocket resume
-- reaching back before it is told that older changes are gone.
CREATE TABLE journal_horizons (
  domain TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  dtutc TEXT NOT NULL
);
