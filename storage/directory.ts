/** Lookups across the directory that are not scoped by one domain: domains by name or id, accounts by login. */
import type { Db } from './db'
import type { Doc } from './doc'

export interface StoredDomain {
  /** Parent domain id; '' for the master domain. */
  parentId: string
  id: string
  name: string
  doc: Doc
}

const domainOf = (row: unknown[] | undefined): StoredDomain | null =>
  row ? { parentId: row[0] as string, id: row[1] as string, name: row[2] as string, doc: JSON.parse(row[3] as string) as Doc } : null

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
