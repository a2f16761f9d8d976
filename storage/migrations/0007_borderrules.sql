-- Border rules of the master domain: few rows, read whole by the checker; LOOKUP is by id only.
CREATE TABLE borderrules (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
