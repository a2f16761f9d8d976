/**
 * Records of classes with `expires_mode: create` end when `expires_ts_property` plus
 * `expires_ttl_property` seconds have passed. Reads hide them from that moment (exactly, by the
 * service clock); this worker then deletes them, journaled as deletions by the system.
 */
import { systemCtx } from '../context'
import { commit } from '../entities/unit'
import { classes } from '../model/classes'
import { fromOldDefinitions } from '../model/current-model'
import type { Worker } from './runner'

export const modelExpiry: Worker = {
  name: 'model-expiry',
  every: 5000,
  lease: 'cluster',
  async step({ deps }, signal) {
    const now = deps.clock.now()
    let removed = 0
    for (const domain of await deps.repo(classes.table).domainsWhere('opts.expires_mode', 'create')) {
      if (signal.aborted) break
      const ctx = systemCtx(deps, domain, 'expiry')
      for (const model of (await deps.model.classes(domain)).values()) {
        if (!model.expiry || !model.table) continue
        const repo = deps.repo(model.table)
        try {
          removed += await commit(ctx, (u) => repo.removeAll(u.w, now))
        } catch (err) {
          // another process changed the domain's classes (a class deleted): the next pass reads them anew
          if (!(await fromOldDefinitions(ctx, model, err))) throw err
          deps.model.forget(domain)
          break
        }
      }
    }
    return removed
  },
}
