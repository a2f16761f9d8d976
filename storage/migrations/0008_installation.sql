-- This installation: one row, made at the first start. Its id is what a licence is bound to; the
-- licence posted last is kept as issued (the token) and as verified (its payload), with the
-- fingerprint of the key that verified it, so the active licence is computed without verifying again.
CREATE TABLE installation (
  one INTEGER PRIMARY KEY CHECK (one = 1),
  id TEXT NOT NULL,
  created TEXT NOT NULL,
  licence_token TEXT,
  licence_payload TEXT,
  licence_key TEXT,
  licence_installed TEXT
);
