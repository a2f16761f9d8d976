-- Directory caches maintained change by change: membership as indexed edges (storage/directory-edges.ts).
-- A group's direct_users and deep_users, and a subordination's sub, are no longer stored in the cache
-- documents but assembled from dir_members when read. Existing caches are converted as they are.
CREATE TABLE dir_members (
  domain TEXT NOT NULL,
  grp TEXT NOT NULL,
  usr TEXT NOT NULL,
  direct INTEGER NOT NULL,
  PRIMARY KEY (domain, grp, usr)
) WITHOUT ROWID;
CREATE INDEX dir_members_usr ON dir_members (domain, usr, grp, direct);
CREATE TABLE dir_role_holders (
  domain TEXT NOT NULL,
  role TEXT NOT NULL,
  usr TEXT NOT NULL,
  PRIMARY KEY (domain, role, usr)
) WITHOUT ROWID;

INSERT OR IGNORE INTO dir_members (domain, grp, usr, direct)
  SELECT g.domain, g.id, u.value, 1 FROM groups_caches g, json_each(g.doc, '$.direct_users') u;
INSERT OR IGNORE INTO dir_members (domain, grp, usr, direct)
  SELECT g.domain, g.id, u.value, 0 FROM groups_caches g, json_each(g.doc, '$.deep_users') u;
INSERT OR IGNORE INTO dir_role_holders (domain, role, usr)
  SELECT c.domain, r.value, c.id FROM users_caches c, json_each(c.doc, '$.direct_roles') r;
UPDATE groups_caches SET doc = json_remove(doc, '$.direct_users', '$.deep_users');
UPDATE subordinations_caches SET doc = json_object('top', id);
