-- Groups of users: nested through `parents`, carrying roles.
CREATE TABLE groups (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  code TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX groups_code ON groups (domain, code);

-- Roles: named sets of routes (path patterns + methods), inheriting from a parent role.
CREATE TABLE roles (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX roles_name ON roles (domain, name);

-- SIP accounts, optionally attached to a user.
CREATE TABLE sipusers (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  login TEXT NOT NULL,
  phonenumber TEXT,
  iduser TEXT,
  doc TEXT NOT NULL,
  ct TEXT NOT NULL,
  lwt TEXT NOT NULL,
  version INTEGER NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE UNIQUE INDEX sipusers_login ON sipusers (domain, login);
CREATE INDEX sipusers_iduser ON sipusers (domain, iduser);

-- Caches derived from the directory, rewritten with every change to it (never edited by hand).
CREATE TABLE users_caches (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE TABLE groups_caches (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  PRIMARY KEY (domain, id)
);
CREATE TABLE subordinations_caches (
  domain TEXT NOT NULL,
  id TEXT NOT NULL,
  doc TEXT NOT NULL,
  PRIMARY KEY (domain, id)
);
