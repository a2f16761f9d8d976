/**
 * Housekeeping, once a minute on one process of the cluster: expired credential requests go, and
 * finished queue jobs are kept for a week (what was sent, and why something failed) and then go, as
 * do the claims of service-task runs a day after their period ended (a one-time task's claim stays).
 */
import { pruneJobs } from '~storage/queue'
import { purgeExpiredRequests } from '~storage/requests'
import { pruneRuns } from '~storage/task-runs'
import { DAY_MS, isoTime } from '../clock'
import type { Worker } from './runner'

export const FINISHED_JOBS_KEPT_MS = 7 * DAY_MS

export const housekeeping: Worker = {
  name: 'housekeeping',
  cron: '0 * * * * *',
  lease: 'cluster',
  async step({ deps }) {
    const now = deps.clock.now()
    await purgeExpiredRequests(deps.db, now)
    await pruneJobs(deps.db, isoTime(now - FINISHED_JOBS_KEPT_MS))
    await pruneRuns(deps.db, isoTime(now - DAY_MS))
    return 0 // one batch is the whole job
  },
}
