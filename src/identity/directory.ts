/** Tables of the directory (domains, users) and the facts about them that sessions need. */
import type { Doc } from '~storage/doc'
import type { StoredDomain } from '~storage/directory'
import type { TableSpec } from '~storage/repository'

export const domainsTable: TableSpec = { table: 'domains', objtype: 'domain', columns: { name: 'name' } }
export const usersTable: TableSpec = {
  table: 'users',
  objtype: 'user',
  columns: { login: 'login' },
  hidden: { pwd_hash: 'pwd' },
}

/** The actor recorded for changes the service makes by itself (first start, expiry). */
export const SYSTEM_ACTOR = { id: '00000000-0000-0000-0000-000000000000', name: 'system' }

export const isMasterDomain = (d: StoredDomain) => d.parentId === ''
export const isBlocked = (d: StoredDomain) => (d.doc.opts as Doc | undefined)?.isblocked === true
