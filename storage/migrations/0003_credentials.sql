-- Pending credential requests (password reset, invitation, self-registration). The random id is
-- the secret in the mailed link; a request is valid until `expires` (ms since the epoch).
CREATE TABLE iam_requests (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  domain TEXT NOT NULL,
  doc TEXT NOT NULL,
  created TEXT NOT NULL,
  expires INTEGER NOT NULL
);
CREATE INDEX iam_requests_expires ON iam_requests (expires);

-- Outgoing mail: recorded here in the transaction that causes it, delivered afterwards.
-- status: pending, sending, sent, failed (gave up), logged (no mail provider: written to the log).
CREATE TABLE outbox (
  id TEXT PRIMARY KEY,
  domain TEXT NOT NULL,
  created TEXT NOT NULL,
  recipient TEXT NOT NULL,
  subject TEXT NOT NULL,
  text TEXT NOT NULL,
  html TEXT NOT NULL,
  status TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt INTEGER NOT NULL,
  error TEXT,
  provider_id TEXT
);
CREATE INDEX outbox_due ON outbox (status, next_attempt);

-- Accounts are found by e-mail address for password recovery.
CREATE INDEX users_email ON users (json_extract(doc, '$.opts.email'));
