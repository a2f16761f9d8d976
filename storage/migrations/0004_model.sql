-- Classes of the dynamic data model. Each class with records has a table of its own,
-- "rec_<domain>_<class>" (hex of both ids), created and migrated with the class.
CREATE TABLE classes (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  classname TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX classes_classname ON classes (domain, classname);

-- Service scripts (code unique per domain); product layers install them.
CREATE TABLE svcscripts (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  code TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX svcscripts_code ON svcscripts (domain, code);

-- The journal keeps the object before an update too (events carry old and new), and who changed it.
ALTER TABLE journal ADD COLUMN prev TEXT;
ALTER TABLE journal ADD COLUMN initiator TEXT NOT NULL DEFAULT 'user';

-- Where each consumer of the journal has got to (the journal is the outbox of events).
CREATE TABLE journal_cursors (
  name TEXT PRIMARY KEY,
  seq INTEGER NOT NULL
);

-- Product-layer operations and their states, per domain.
CREATE TABLE product_layers (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
