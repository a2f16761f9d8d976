/**
 * Journal retention (JOURNAL_KEEP_DAYS, JOURNAL_KEEP_PER_DOMAIN), every ten minutes on one process
 * of the cluster. A step removes one small batch (storage/journal-retention.ts), so the runner
 * repeats it while there is more, and no write waits long for the lock meanwhile.
 */
import { domainIds, sweepBeyondCount, sweepOlderThan } from '~storage/journal-retention'
import { DAY_MS, isoTime } from '../clock'
import type { Worker } from './runner'

export const RETENTION_BATCH = 500

export const journalRetention: Worker = {
  name: 'journal-retention',
  cron: '0 */10 * * * *',
  lease: 'cluster',
  async step({ deps }, signal) {
    const { journalKeepDays: days, journalKeepPerDomain: perDomain } = deps.config
    let removed = 0
    if (days > 0) removed += await sweepOlderThan(deps.db, isoTime(deps.clock.now() - days * DAY_MS), RETENTION_BATCH)
    if (perDomain > 0)
      for (const domain of await domainIds(deps.db)) {
        if (signal.aborted) break
        removed += await sweepBeyondCount(deps.db, domain, perDomain, RETENTION_BATCH)
      }
    if (removed > 0) deps.log.debug('journal retention', { removed })
    return removed
  },
}
