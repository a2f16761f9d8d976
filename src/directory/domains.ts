/**
 * Domains (/rest/v1/domain/domains), served in the master domain: the working domains below it.
 * A working domain's name ends with the master domain's name (`acme.master`) and cannot change. A
 * blocked domain (`opts.isblocked`) refuses sign-ins and requests (except from master
 * administrators). Deleting a domain deletes everything it holds.
 */
import * as v from 'valibot'
import { purgeDomain, userIdsTx } from '~storage/directory'
import type { Doc } from '~storage/doc'
import { COMMON_FIELDS, defineEntity, ext, opts, text, withDefaults } from '../entities/entity'
import { badRequest } from '../http/errors'
import { domainsTable } from '../identity/directory'

const LABELS = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/

export const domains = defineEntity({
  name: 'domain',
  table: domainsTable,
  domainKind: 'master',
  fields: [...COMMON_FIELDS, 'name', 'solution', 'opts.isblocked'],
  listFields: ['id', 'name', 'solution', 'opts.title', 'opts.isblocked', 'ext.lwt', 'ext.ct'],
  lookupFields: ['id', 'name'],
  create: {
    name: v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(253)),
    solution: v.optional(text(64)),
    opts: opts({ isblocked: v.optional(v.boolean()) }),
    ext,
  },
  finish: (doc: Doc) =>
    withDefaults(
      { ...doc, opts: withDefaults((doc.opts as Doc | undefined) ?? {}, { isblocked: false }) },
      { solution: 'platform' },
    ),
  hooks: {
    async prepare(req, input) {
      if (input.name !== undefined) {
        const parent = req.signedIn.domainName
        const name = input.name as string
        if (!LABELS.test(name))
          throw badRequest('name: a domain name is DNS-like: lowercase letters, digits, - and dots', 'name')
        if (!name.endsWith(`.${parent}`))
          throw badRequest(`name: a domain below ${parent} is named <label>.${parent}`, 'name')
      }
      return { input }
    },
    *inTransaction(_req, _w, change) {
      if (change.before && change.after && change.before.name !== change.after.name)
        throw badRequest('name: a domain cannot be renamed', 'name')
      if (!change.after) {
        const id = change.before!.id as string
        change.extra = { users: yield* userIdsTx(id) }
        yield* purgeDomain(id)
      }
    },
    async afterCommit(req, change) {
      const id = (change.after ?? change.before)!.id as string
      await req.deps.access.invalidate(id)
      // the sessions of a deleted domain's accounts end with it
      for (const user of (change.extra?.users as string[] | undefined) ?? [])
        await req.deps.sessions.destroyUser(id, user)
    },
  },
})
