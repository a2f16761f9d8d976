-- Integration channels: found by code (LOOKUP, unique per domain), by token_local on every request
-- a channel authorizes (unique across the installation) and counted by type for the licence. The
-- webhook signing secret is a column of its own, so reads of the doc never carry it.
CREATE TABLE integration_points (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  code TEXT NOT NULL,
  type TEXT NOT NULL,
  token_local TEXT NOT NULL,
  secret TEXT,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX integration_points_code ON integration_points (domain, code);
CREATE UNIQUE INDEX integration_points_token ON integration_points (token_local);
CREATE INDEX integration_points_type ON integration_points (type);
