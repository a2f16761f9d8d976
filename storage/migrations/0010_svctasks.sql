-- Service tasks: few per domain, read whole by the scheduler; LOOKUP is by id only.
CREATE TABLE svctasks (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
