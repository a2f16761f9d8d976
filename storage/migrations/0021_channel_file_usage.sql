-- What each domain's channel files hold, kept as they are written and deleted (storage/file-usage.ts):
-- the quota is checked against one row, never a sum over the files. A domain without a row has it
-- made from its directory on first use (files stored before this migration).
CREATE TABLE channel_file_usage (
  domain TEXT PRIMARY KEY,
  bytes INTEGER NOT NULL,
  files INTEGER NOT NULL
);
