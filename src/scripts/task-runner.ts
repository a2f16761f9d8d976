/**
 * The service-task scheduler's step: every process with role `svc` looks for the runs due now
 * (task-schedule.ts decides when), and for its own site claims each one in the database (once per
 * task, period and site across the cluster and across restarts) and starts the task's script here as
 * a handler (a mode that runs once per period, any or anylisted, claims it once for all sites, as
 * `*`). `overlap: 0` skips a run while the task's previous run on this site (or `*`) still runs. Tasks
 * of a blocked domain do not run.
 */
import { claimRun, recentRunHandlers, recordRunHandler, releaseRun } from '~storage/task-runs'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { ApiError } from '../errors'
import { settingValue } from '../settings/settings'
import { svctasks } from './svctasks'
import { dueRun, placement, type TaskSites, type TaskTiming, type WorkingHours } from './task-schedule'

type Task = TaskTiming & TaskSites & { id: string; svcscriptcode: string; overlap: number }

/** Starts the runs due now on this node; answers how many it started. */
export async function startDueRuns(deps: Deps): Promise<number> {
  const { config, db, log } = deps
  if (!config.nodeRoles.includes('svc')) return 0
  const now = deps.clock.now()
  const repo = deps.repo(svctasks.table)
  const domains = await repo.domainsWhere('isenabled', 1)
  if (!domains.length) return 0
  const svcSites = (await deps.nodes.list()).filter((n) => n.roles.includes('svc')).map((n) => n.site)
  let started = 0
  for (const domain of domains) {
    // nothing starts in a blocked domain, nor in one whose deletion is under way
    const info = await deps.access.domainInfo(domain)
    if (!info || info.blocked) continue
    const tasks = (await db.read(() => repo.all(domain))) as unknown as Task[]
    const hours = await settingValue<WorkingHours>(deps, domain, 'working_hours')
    for (const task of tasks) {
      const due = dueRun(task, hours, now)
      if (!due) continue
      const where = placement(task, svcSites)
      if (!where.sites.includes(config.site)) continue
      // a mode that runs once per period (any, anylisted) claims it for every site at once: `*`
      const site = where.once ? '*' : config.site
      const run = { domain, task: task.id, period: due.period, site }
      if (task.overlap === 0 && (await stillRunning(deps, domain, task.id, site))) continue
      const claim = {
        ...run,
        node: deps.nodes.name,
        regular: task.isregular === 1,
        claimed: isoTime(now),
        ends: due.ends === null ? null : isoTime(due.ends),
      }
      if (!(await claimRun(db, claim))) continue
      try {
        const { info } = await deps.scripts.startHere({
          domainId: domain,
          code: task.svcscriptcode,
          params: [task.id, due.period],
        })
        await recordRunHandler(db, run, info.id)
        started++
      } catch (err) {
        // a missing script spends the period (no retry every second); anything else is tried again
        if (!(err instanceof ApiError && err.status === 404)) await releaseRun(db, run)
        if (firstTelling(`${domain} ${task.id} ${due.period}`, String(err), now))
          log.warn('service task did not start', { domain, task: task.id, period: due.period, error: String(err) })
      }
    }
  }
  return started
}

/**
 * A run refused for a passing reason (the domain's handlers at their cap) is tried again every
 * second: its warning is written when the reason is new for that run, and at most once a minute.
 */
const TELL_AGAIN_MS = 60_000
const told = new Map<string, { error: string; at: number }>()
function firstTelling(run: string, error: string, now: number): boolean {
  const last = told.get(run)
  if (last && last.error === error && now - last.at < TELL_AGAIN_MS) return false
  if (told.size >= 10_000) told.clear()
  told.set(run, { error, at: now })
  return true
}

async function stillRunning(deps: Deps, domain: string, task: string, site: string): Promise<boolean> {
  for (const handler of await recentRunHandlers(deps.db, domain, task, site))
    if (await deps.scripts.isRunning(domain, handler)) return true
  return false
}
