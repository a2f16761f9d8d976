/**
 * At every start: working domains created before a built-in class existed get it now, through the
 * same step (and journal) as a new domain. Idempotent: a domain that has the class is left alone, and
 * a process of the cluster that loses the race to another finds the class there.
 */
import { DuplicateError } from '~storage/repository'
import { systemCtx } from '../context'
import type { Deps } from '../deps'
import { isMasterDomain, listDomains } from '../directory/domains'
import { commit } from '../entities/unit'
import { BUILTIN_CLASSES } from './builtin'
import { addBuiltinClasses } from './builtin-install'
import { classes } from './classes'

/** Returns how many domains got a class. */
export async function completeBuiltinClasses(deps: Deps): Promise<number> {
  const repo = deps.repo(classes.table)
  // one query per built-in class, not one per domain
  const having = await Promise.all(BUILTIN_CLASSES.map((c) => repo.domainsWhere('classname', c.classname)))
  const complete = (domain: string) => having.every((ids) => ids.includes(domain))
  let completed = 0
  for (const d of await listDomains(deps)) {
    if (isMasterDomain(d) || complete(d.id)) continue
    try {
      const added = await commit(systemCtx(deps, d.id, 'builtin-classes'), addBuiltinClasses)
      deps.log.info('built-in classes added to a domain created before them', { domain: d.name, classes: added })
      completed++
    } catch (err) {
      if (!(err instanceof DuplicateError)) throw err // else another process added it first
    }
  }
  return completed
}
