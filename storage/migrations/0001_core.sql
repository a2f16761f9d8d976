-- Journal of changes: written in the same transaction as every change; seq is the outbox cursor.
CREATE TABLE journal (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  domain TEXT NOT NULL,
  dtutc TEXT NOT NULL,
  cmdtype TEXT NOT NULL,
  objtype TEXT NOT NULL,
  objid TEXT NOT NULL,
  modifierid TEXT NOT NULL,
  modifiername TEXT NOT NULL,
  fields TEXT,
  obj TEXT NOT NULL,
  request_id TEXT
);
CREATE INDEX journal_domain_dtutc ON journal (domain, dtutc, seq);
CREATE INDEX journal_domain_object ON journal (domain, objtype, objid, seq);

-- Domains (tenants). `domain` is the parent domain's id; the master domain's is ''.
CREATE TABLE domains (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX domains_name ON domains (name);
CREATE UNIQUE INDEX domains_id ON domains (id);

-- Users of the directory; pwd_hash is kept out of the doc so no read can leak it.
CREATE TABLE users (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  login TEXT NOT NULL,
  pwd_hash TEXT,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX users_login ON users (domain, login);

CREATE TABLE projects (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  code TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX projects_code ON projects (domain, code);

-- `value` (any JSON, up to 10 MB) lives beside the doc so that lists never read it.
CREATE TABLE extobjs (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  type TEXT NOT NULL,
  doc TEXT NOT NULL,
  value TEXT,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE INDEX extobjs_type ON extobjs (domain, type, id);

-- Domain settings, keyed: the `id` column holds the setting key.
CREATE TABLE settings (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
