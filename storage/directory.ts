/** Lookups across the directory that are not scoped by one domain: domains by name or id, accounts by login. */
import type { Db, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'
import { dropRecordTable, recordTablesOf } from './model-tables'
import { jsonField } from './query'

export interface StoredDomain {
  /** Parent domain id; '' for the master domain. */
  parentId: string
  id: string
  name: string
  doc: Doc
}

const domainOf = (row: unknown[] | undefined): StoredDomain | null =>
  row
    ? {
        parentId: row[0] as string,
        id: row[1] as string,
        name: row[2] as string,
        doc: JSON.parse(row[3] as string) as Doc,
      }
    : null

export async function findDomainByName(db: Db, name: string): Promise<StoredDomain | null> {
  return domainOf(await db.get('SELECT domain, id, name, doc FROM domains WHERE name = ?', [name]))
}

export async function findDomainById(db: Db, id: string): Promise<StoredDomain | null> {
  return domainOf(await db.get('SELECT domain, id, name, doc FROM domains WHERE id = ?', [id]))
}

export async function findMasterDomain(db: Db): Promise<StoredDomain | null> {
  return domainOf(await db.get("SELECT domain, id, name, doc FROM domains WHERE domain = '' LIMIT 1"))
}

/** Every domain, master first then by name. */
export async function listDomains(db: Db): Promise<StoredDomain[]> {
  const rows = await db.all("SELECT domain, id, name, doc FROM domains ORDER BY domain != '', name")
  return rows.map((r) => domainOf(r)!)
}

export interface StoredAccount {
  doc: Doc
  pwdHash: string | null
}

export async function findUserByLogin(db: Db, domainId: string, login: string): Promise<StoredAccount | null> {
  const row = await db.get('SELECT doc, pwd_hash FROM users WHERE domain = ? AND login = ?', [domainId, login])
  return row ? { doc: JSON.parse(row[0] as string) as Doc, pwdHash: row[1] as string | null } : null
}

// ---- steps inside write transactions ----

/** Every stored doc of a directory table in one domain. */
export function* allDocs(
  table: 'users' | 'groups' | 'roles' | 'sipusers' | 'svcscripts',
  domain: string,
): TxStep<Doc[]> {
  const rows = yield* tx.all(`SELECT doc FROM ${table} WHERE domain = ? ORDER BY id`, [domain])
  return rows.map((r) => JSON.parse(r[0] as string) as Doc)
}

const CACHE_TABLES = {
  users: 'users_caches',
  groups: 'groups_caches',
  subordinations: 'subordinations_caches',
} as const

/** Replaces a domain's derived caches; `key` names the field each doc is keyed by. */
export function* replaceCaches(domain: string, caches: Record<keyof typeof CACHE_TABLES, Doc[]>): TxStep<void> {
  for (const [kind, table] of Object.entries(CACHE_TABLES) as [keyof typeof CACHE_TABLES, string][]) {
    yield* tx.run(`DELETE FROM ${table} WHERE domain = ?`, [domain])
    for (const doc of caches[kind]) {
      const id = String(doc.id ?? doc.top)
      yield* tx.run(`INSERT INTO ${table} (domain, id, doc) VALUES (?, ?, ?)`, [domain, id, JSON.stringify(doc)])
    }
  }
}

/** Removes every row of a domain from every table that has a `domain` column, except the domains table. */
export function* purgeDomain(domain: string): TxStep<void> {
  const tables = yield* tx.all(
    `SELECT m.name FROM sqlite_master m JOIN pragma_table_info(m.name) p
     WHERE m.type = 'table' AND p.name = 'domain' AND m.name != 'domains'`,
  )
  for (const [name] of tables) yield* tx.run(`DELETE FROM "${String(name)}" WHERE domain = ?`, [domain])
  for (const table of yield* recordTablesOf(domain)) yield* dropRecordTable(table)
}

/** Ids of the users of a domain (for ending their sessions), inside a transaction. */
export function* userIdsTx(domain: string): TxStep<string[]> {
  return (yield* tx.all('SELECT id FROM users WHERE domain = ?', [domain])).map((r) => r[0] as string)
}

/** One cached doc (users_caches, groups_caches, subordinations_caches) outside a transaction. */
export async function cacheDoc(
  db: Db,
  table: (typeof CACHE_TABLES)[keyof typeof CACHE_TABLES],
  domain: string,
  id: string,
): Promise<Doc | null> {
  const row = await db.get(`SELECT doc FROM ${table} WHERE domain = ? AND id = ?`, [domain, id])
  return row ? (JSON.parse(row[0] as string) as Doc) : null
}

/** SIP accounts attached to a user. */
export async function sipAccountsOf(db: Db, domain: string, userId: string): Promise<Doc[]> {
  const rows = await db.all('SELECT doc FROM sipusers WHERE domain = ? AND iduser = ? ORDER BY id', [domain, userId])
  return rows.map((r) => JSON.parse(r[0] as string) as Doc)
}

/** Groups of a domain by id. */
export async function groupsByIds(db: Db, domain: string, ids: string[]): Promise<Doc[]> {
  if (ids.length === 0) return []
  const rows = await db.all(
    `SELECT doc FROM groups WHERE domain = ? AND id IN (${ids.map(() => '?').join(',')}) ORDER BY id`,
    [domain, ...ids],
  )
  return rows.map((r) => JSON.parse(r[0] as string) as Doc)
}

/** Which of the given ids exist in a domain's table. */
export function* existingIds(
  table: 'users' | 'groups' | 'roles',
  domain: string,
  ids: readonly string[],
): TxStep<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = yield* tx.all(`SELECT id FROM ${table} WHERE domain = ? AND id IN (${ids.map(() => '?').join(',')})`, [
    domain,
    ...ids,
  ])
  return new Set(rows.map((r) => r[0] as string))
}

/** Which of the given role names exist as custom roles in a domain. */
export function* existingRoleNames(domain: string, names: readonly string[]): TxStep<Set<string>> {
  if (names.length === 0) return new Set()
  const rows = yield* tx.all(
    `SELECT name FROM roles WHERE domain = ? AND name IN (${names.map(() => '?').join(',')})`,
    [domain, ...names],
  )
  return new Set(rows.map((r) => r[0] as string))
}

/** Ids of the docs of a table whose array field contains the value (users in a group, groups under a parent). */
export function* idsContaining(
  table: 'users' | 'groups',
  field: 'groups' | 'parents' | 'roles',
  domain: string,
  value: string,
): TxStep<string[]> {
  const rows = yield* tx.all(
    `SELECT id FROM ${table} WHERE domain = ? AND EXISTS (SELECT 1 FROM json_each(doc, '$.${field}') WHERE value = ?) ORDER BY id`,
    [domain, value],
  )
  return rows.map((r) => r[0] as string)
}

/** Ids of the SIP accounts attached to a user, inside a transaction. */
export function* sipuserIdsOf(domain: string, userId: string): TxStep<string[]> {
  const rows = yield* tx.all('SELECT id FROM sipusers WHERE domain = ? AND iduser = ? ORDER BY id', [domain, userId])
  return rows.map((r) => r[0] as string)
}

/** Ids of the users directly in a group, outside a transaction. */
export async function usersInGroup(db: Db, domain: string, groupId: string): Promise<string[]> {
  const rows = await db.all(
    `SELECT id FROM users WHERE domain = ? AND EXISTS (SELECT 1 FROM json_each(doc, '$.groups') WHERE value = ?) ORDER BY id`,
    [domain, groupId],
  )
  return rows.map((r) => r[0] as string)
}

/** Names of a domain's custom roles, sorted. */
export async function roleNames(db: Db, domain: string): Promise<string[]> {
  return (await db.all('SELECT name FROM roles WHERE domain = ? ORDER BY name', [domain])).map((r) => r[0] as string)
}

/** Accounts with this e-mail address (lower case), in one domain or in all; at most `limit`. */
export async function findUsersByEmail(
  db: Db,
  email: string,
  domain: string | null,
  limit = 10,
): Promise<{ domain: string; doc: Doc }[]> {
  const byEmail = `${jsonField('doc', 'opts.email')} = ?`
  const rows =
    domain === null
      ? await db.all(`SELECT domain, doc FROM users WHERE ${byEmail} ORDER BY domain, id LIMIT ?`, [email, limit])
      : await db.all(`SELECT domain, doc FROM users WHERE domain = ? AND ${byEmail} ORDER BY id LIMIT ?`, [
          domain,
          email,
          limit,
        ])
  return rows.map((r) => ({ domain: r[0] as string, doc: JSON.parse(r[1] as string) as Doc }))
}
