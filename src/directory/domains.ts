/**
 * The domains' rules, and the queries that find domains. A working domain's name ends with the
 * master domain's name (`acme.master`) and cannot change. A blocked domain (`opts.isblocked`)
 * refuses sign-ins and requests (except from master administrators). Deleting a domain deletes
 * everything it holds. The entity's shape is in ./declarations.ts; the registry joins it with these
 * hooks (src/entities/registry.ts), since the tables a deletion purges are the registry's.
 */
import type { TxStep } from '~storage/db'
import { type Doc, str } from '~storage/doc'
import { removeDomainFiles } from '~storage/files'
import type { TableSpec } from '~storage/repository'
import type { Store } from '../ports'
import type { DocOf, EntityHooks } from '../entities/entity'
import { badRequest } from '../errors'
import { enforceLimit } from '../master/licence'
import { addBuiltinClasses } from '../model/builtin-install'
import { declaredDomains, declaredUsers } from './declarations'
import { forgetDomainKeys, purgeDomain } from './purge'

const LABELS = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

/** The domains' hooks; `registered`: every table of the standard shape, which a deletion purges. */
export function domainHooks(registered: () => readonly TableSpec[]): EntityHooks<DocOf<typeof declaredDomains>> {
  return {
    async prepare(ctx, input) {
      if (input.name !== undefined) {
        const parent = (await ctx.deps.access.domainInfo(ctx.domain))?.name ?? ''
        const name = str(input, 'name')
        if (!LABELS.test(name))
          throw badRequest('name: a domain name is DNS-like: lowercase letters, digits, - and dots', 'name')
        if (!name.endsWith(`.${parent}`))
          throw badRequest(`name: a domain below ${parent} is named <label>.${parent}`, 'name')
      }
      return { input }
    },
    *inTransaction(u, change): TxStep<void> {
      const { before, after } = change
      if (before && after && before.name !== after.name) throw badRequest('name: a domain cannot be renamed', 'name')
      const id = (after ?? before)!.id
      const { access, sessions } = u.ctx.deps
      // working domains are the rows below the master domain's (whose own row's parent is '')
      if (!before && after)
        yield* enforceLimit(u, 'domains', yield* u.ctx.deps.repo(declaredDomains.table).countAll(''))
      u.afterCommit(`access:${id}`, () => access.invalidate(id))
      if (after) {
        // a working domain is born with the built-in classes (the master domain's row has no parent)
        if (!before && u.w.domain !== '') yield* addBuiltinClasses(u.inDomain(id))
        return
      }
      // the sessions of a deleted domain's accounts end with it
      const accounts = (yield* u.ctx.deps.repo(declaredUsers.table).all(id)).map((d) => d.id)
      // the domain's own row is the change being made (its parent's domain column holds it)
      yield* purgeDomain(
        u,
        id,
        registered().filter((spec) => spec !== declaredDomains.table),
      )
      u.afterCommit(`sessions-of-domain:${id}`, async () => {
        for (const user of accounts) await sessions.destroyUser(id, user)
      })
      // its channel files go after the commit: a rolled-back deletion must not lose them
      const { dataDir } = u.ctx.deps.config
      u.afterCommit(`files-of-domain:${id}`, () => removeDomainFiles(dataDir, id))
      u.afterCommit(`keys-of-domain:${id}`, () => forgetDomainKeys(u.ctx.deps, id))
    },
  }
}

export interface StoredDomain {
  /** Parent domain id; '' for the master domain. */
  parentId: string
  id: string
  name: string
  doc: Doc
}

export const isMasterDomain = (d: StoredDomain) => d.parentId === ''
/** When the domain was created (ext.ct): a domain created again with the same id is another one. */
export const domainCreated = (d: StoredDomain) => String((d.doc.ext as { ct?: unknown } | undefined)?.ct ?? '')
export const isBlocked = (d: StoredDomain) => (d.doc.opts as Doc | undefined)?.isblocked === true

const stored = (row: { domain: string; doc: Doc }): StoredDomain => ({
  parentId: row.domain,
  id: str(row.doc, 'id'),
  name: str(row.doc, 'name'),
  doc: row.doc,
})

async function findOne(deps: Store, field: 'name' | 'id', value: string): Promise<StoredDomain | null> {
  const [row] = await deps.repo(declaredDomains.table).findBy(null, field, value, 1)
  return row ? stored(row) : null
}

export const findDomainByName = (deps: Store, name: string) => findOne(deps, 'name', name)
export const findDomainById = (deps: Store, id: string) => findOne(deps, 'id', id)

export async function findMasterDomain(deps: Store): Promise<StoredDomain | null> {
  const [master] = await deps.db.read(() => deps.repo(declaredDomains.table).all(''))
  return master ? stored({ domain: '', doc: master }) : null
}

/** Every domain, master first, then the working domains by name. */
export async function listDomains(deps: Store): Promise<StoredDomain[]> {
  const master = await findMasterDomain(deps)
  if (!master) return []
  const below = await deps.db.read(() => deps.repo(declaredDomains.table).all(master.id))
  const working = below.map((doc) => stored({ domain: master.id, doc })).sort((a, b) => (a.name < b.name ? -1 : 1))
  return [master, ...working]
}
