/** Runs of service tasks, claimed once per task, period and site (storage/migrations/0011_svctask_runs.sql). */
import type { Db, TxStep } from './db'
import { tx } from './db'
import { text } from './columns'

export interface RunClaim {
  domain: string
  task: string
  period: string
  site: string
  node: string
  regular: boolean
  claimed: string
  /** The end of the period (null: it never ends); the claim is kept until then. */
  ends: string | null
}

/** Claims a run; false when another process (or this one, before a restart) already has it. */
export async function claimRun(db: Db, c: RunClaim): Promise<boolean> {
  const res = await db.run(
    'INSERT OR IGNORE INTO svctask_runs (domain, task, period, site, node, regular, claimed, ends) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    [c.domain, c.task, c.period, c.site, c.node, c.regular ? 1 : 0, c.claimed, c.ends],
  )
  return res.changes === 1
}

export async function recordRunHandler(
  db: Db,
  c: Pick<RunClaim, 'domain' | 'task' | 'period' | 'site'>,
  handler: string,
) {
  await db.run('UPDATE svctask_runs SET handler = ? WHERE domain = ? AND task = ? AND period = ? AND site = ?', [
    handler,
    c.domain,
    c.task,
    c.period,
    c.site,
  ])
}

/** The handlers of a task's most recent runs on a site (the last few periods). */
export async function recentRunHandlers(db: Db, domain: string, task: string, site: string): Promise<string[]> {
  const rows = await db.all(
    'SELECT handler FROM svctask_runs WHERE domain = ? AND task = ? AND site = ? AND handler IS NOT NULL ORDER BY period DESC LIMIT 3',
    [domain, task, site],
  )
  return rows.map((r) => text(r[0]))
}

/** Gives back a claim whose run could not start (a transient failure): the next look tries again. */
export async function releaseRun(db: Db, c: Pick<RunClaim, 'domain' | 'task' | 'period' | 'site'>): Promise<void> {
  await db.run(
    'DELETE FROM svctask_runs WHERE domain = ? AND task = ? AND period = ? AND site = ? AND handler IS NULL',
    [c.domain, c.task, c.period, c.site],
  )
}

/** Forgets claims of periods that ended before `before` (a one-time task's claim never ends: it must not run again). */
export async function pruneRuns(db: Db, before: string): Promise<number> {
  return (await db.run('DELETE FROM svctask_runs WHERE ends IS NOT NULL AND ends < ?', [before])).changes
}

/** Removes a domain's runs (the domain is being deleted). */
export function* purgeRuns(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM svctask_runs WHERE domain = ?', [domain])
}
