/**
 * The durable queue (storage/migrations/0005_queue.sql): work that must survive a restart. Jobs are
 * enqueued in the transaction that causes them, claimed with a lease by whichever process is free
 * (or enqueued claimed by the process that will run them: `enqueueClaimedJob`), and finished,
 * retried or failed with their outcome recorded. Delivery is at least once: a job
 * whose holder died runs again when its lease ends.
 */
import type { Db, TxStep } from './db'
import { tx } from './db'
import type { Doc } from './doc'

export type JobStatus = 'pending' | 'running' | 'done' | 'failed'

export interface NewJob {
  id?: string
  kind: string
  domain: string
  /** Jobs of one kind with the same serial run one at a time, in order. */
  serial?: string
  payload: Doc
  /** Due time, ms since the epoch. */
  runAt: number
}

export interface Job {
  id: string
  kind: string
  domain: string
  payload: Doc
  status: JobStatus
  attempts: number
  created: string
  finished: string | null
  error: string | null
  result: Doc | null
}

export const COLUMNS = 'id, kind, domain, payload, status, attempts, created, finished, error, result'
export const toJob = (r: unknown[]): Job => ({
  id: r[0] as string,
  kind: r[1] as string,
  domain: r[2] as string,
  payload: JSON.parse(r[3] as string) as Doc,
  status: r[4] as JobStatus,
  attempts: r[5] as number,
  created: r[6] as string,
  finished: r[7] as string | null,
  error: r[8] as string | null,
  result: r[9] === null ? null : (JSON.parse(r[9] as string) as Doc),
})

/**
 * Adds a job; with `done`, a job that needs no work is recorded as done with that result. With
 * `once`, a job whose id exists already is not added again (the id is then a dedupe key).
 */
export function* enqueueJob(job: NewJob, created: string, done?: Doc, once = false): TxStep<string> {
  const id = job.id ?? crypto.randomUUID()
  const status = done ? 'done' : 'pending'
  yield* insertJob({ ...job, id }, created, { status, attempts: 0, runAt: job.runAt, done }, once)
  return id
}

/**
 * Adds a job claimed at once by the process enqueueing it (its first attempt, its lease ending at
 * `leaseUntil`), as if it had been enqueued and claimed: a hand-off that spares a claim's write.
 * False when a job of its id exists already (it is not added, and belongs to whoever added it).
 */
export function* enqueueClaimedJob(job: NewJob & { id: string }, created: string, leaseUntil: number): TxStep<boolean> {
  return yield* insertJob(job, created, { status: 'running', attempts: 1, runAt: leaseUntil }, true)
}

function* insertJob(
  job: NewJob & { id: string },
  created: string,
  as: { status: JobStatus; attempts: number; runAt: number; done?: Doc },
  once: boolean,
): TxStep<boolean> {
  const added = yield* tx.run(
    `INSERT ${once ? 'OR IGNORE ' : ''}INTO queue (id, kind, domain, serial, payload, status, attempts, run_at, created, finished, result)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      job.id,
      job.kind,
      job.domain,
      job.serial ?? null,
      JSON.stringify(job.payload),
      as.status,
      as.attempts,
      as.runAt,
      created,
      as.done ? created : null,
      as.done ? JSON.stringify(as.done) : null,
    ],
  )
  return added.changes > 0
}

const DUE = `SELECT 1 FROM queue WHERE kind = ? AND status IN ('pending', 'running') AND run_at <= ? LIMIT 1`

/**
 * Claims up to `limit` jobs of a kind due at `now`, in one statement, so each job goes to one
 * process. A job waits while an earlier job of its serial is not finished. One statement that
 * writes, read with `all`: the embedded driver commits it as a write (a shared file's lock), a
 * server runs it on its own.
 */
export async function claimJobs(db: Db, kind: string, now: number, leaseUntil: number, limit: number): Promise<Job[]> {
  // asked first with a read: the claim is a write even when it claims nothing, and every write
  // empties the read cache (the pollers of an idle queue made a point read miss 6 % of the time)
  if (!(await db.get(DUE, [kind, now]))) return []
  const rows = await db.all(
    `UPDATE queue SET status = 'running', attempts = attempts + 1, run_at = ?
     WHERE seq IN (
       SELECT q.seq FROM queue q
       WHERE q.kind = ? AND q.status IN ('pending', 'running') AND q.run_at <= ?
         AND (q.serial IS NULL OR NOT EXISTS (
           SELECT 1 FROM queue e WHERE e.kind = q.kind AND e.serial = q.serial AND e.seq < q.seq
             AND e.status IN ('pending', 'running')))
       ORDER BY q.run_at, q.seq LIMIT ?)
     RETURNING ${COLUMNS}`,
    [leaseUntil, kind, now, limit],
  )
  return rows.map(toJob)
}

/**
 * One claim of a job: the job and the attempt that claimed it. A claim whose lease ended may have
 * been taken over (the attempt counts up), so only the current claim can renew or finish the job.
 */
export type Claim = Pick<Job, 'id' | 'attempts'>

/** The holder of a claim lost it: its lease ended and another process claimed the job. */
export class LostClaim extends Error {
  constructor(readonly jobId: string) {
    super(`the claim on job ${jobId} was lost: its lease ended and the job was claimed again`)
  }
}

const CURRENT_CLAIM = `id = ? AND status = 'running' AND attempts = ?`

/** Keeps the claims of a live holder: their leases end at `until` instead. Answers how many it still held. */
export async function extendLeases(db: Db, claims: readonly Claim[], until: number): Promise<number> {
  let held = 0
  for (const c of claims)
    held += (await db.run(`UPDATE queue SET run_at = ? WHERE ${CURRENT_CLAIM}`, [until, c.id, c.attempts])).changes
  return held
}

/** The job is done; a LostClaim (rolling its transaction back) when this claim no longer holds it. */
export function* completeJob(claim: Claim, finished: string, result: Doc | null = null): TxStep<void> {
  const done = yield* tx.run(
    `UPDATE queue SET status = 'done', finished = ?, error = NULL, result = ? WHERE ${CURRENT_CLAIM}`,
    [finished, result === null ? null : JSON.stringify(result), claim.id, claim.attempts],
  )
  if (done.changes === 0) throw new LostClaim(claim.id)
}

/**
 * A failed attempt: due again at `retryAt`, or given up for good when it is null; `result` (when
 * given) records what the attempt saw. A LostClaim as above.
 */
export function* failJob(
  claim: Claim,
  finished: string,
  error: string,
  retryAt: number | null,
  result: Doc | null = null,
): TxStep<void> {
  const done = yield* tx.run(
    `UPDATE queue SET status = ?, error = ?, run_at = ?, finished = ?, result = COALESCE(?, result) WHERE ${CURRENT_CLAIM}`,
    [
      retryAt === null ? 'failed' : 'pending',
      error,
      retryAt ?? 0,
      retryAt === null ? finished : null,
      result === null ? null : JSON.stringify(result),
      claim.id,
      claim.attempts,
    ],
  )
  if (done.changes === 0) throw new LostClaim(claim.id)
}

/** Gives a claimed job back untried (its attempt not counted), due again at `runAt`. False when the claim was lost. */
export async function releaseJob(db: Db, claim: Claim, runAt: number): Promise<boolean> {
  const sql = `UPDATE queue SET status = 'pending', attempts = attempts - 1, run_at = ? WHERE ${CURRENT_CLAIM}`
  return (await db.run(sql, [runAt, claim.id, claim.attempts])).changes > 0
}

/** A failed job of a kind and domain is due again at `runAt` with its attempts counted from zero; false when no such failed job. */
export async function retryFailedJob(
  db: Db,
  kind: string,
  domain: string,
  id: string,
  runAt: number,
): Promise<boolean> {
  const sql = `UPDATE queue SET status = 'pending', attempts = 0, run_at = ?, finished = NULL
    WHERE id = ? AND kind = ? AND domain = ? AND status = 'failed'`
  return (await db.run(sql, [runAt, id, kind, domain])).changes > 0
}

/**
 * Every claim becomes pending again: for a process that owns its database file alone (embedded
 * driver), whatever is `running` at start belonged to a process that died.
 */
export async function releaseAllClaims(db: Db): Promise<number> {
  return (await db.run(`UPDATE queue SET status = 'pending', run_at = 0 WHERE status = 'running'`)).changes
}

/** Removes finished jobs older than `before` (ISO time); returns how many. */
export async function pruneJobs(db: Db, before: string): Promise<number> {
  return (await db.run(`DELETE FROM queue WHERE status IN ('done', 'failed') AND finished < ?`, [before])).changes
}

/** Removes a domain's jobs (the domain is being deleted). */
export function* purgeQueue(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM queue WHERE domain = ?', [domain])
}

/** Jobs of a kind, newest first, narrowed by domain and by members of their payload (for operators and tests). */
export async function jobsOf(
  db: Db,
  kind: string,
  where: { domain?: string; payload?: Doc } = {},
  limit = -1,
  offset = 0,
): Promise<Job[]> {
  const conds = ['kind = ?']
  const args: string[] = [kind]
  if (where.domain !== undefined) {
    conds.push('domain = ?')
    args.push(where.domain)
  }
  for (const [k, v] of Object.entries(where.payload ?? {})) {
    conds.push('json_extract(payload, ?) = ?')
    args.push(`$.${k}`, String(v))
  }
  const rows = await db.all(
    `SELECT ${COLUMNS} FROM queue WHERE ${conds.join(' AND ')} ORDER BY seq DESC LIMIT ? OFFSET ?`,
    [...args, limit, offset],
  )
  return rows.map(toJob)
}

/** One job by id, if it is of that kind and domain. */
export async function jobById(db: Db, kind: string, domain: string, id: string): Promise<Job | null> {
  const [row] = await db.all(`SELECT ${COLUMNS} FROM queue WHERE id = ? AND kind = ? AND domain = ?`, [
    id,
    kind,
    domain,
  ])
  return row ? toJob(row) : null
}

/** Per kind: jobs waiting or running, and when the oldest of them was created (metrics). */
export async function queueDepths(db: Db): Promise<{ kind: string; waiting: number; oldest: string | null }[]> {
  const rows = await db.all(
    "SELECT kind, count(*), min(created) FROM queue WHERE status IN ('pending', 'running') GROUP BY kind",
  )
  return rows.map(([kind, n, oldest]) => ({
    kind: kind as string,
    waiting: n as number,
    oldest: oldest as string | null,
  }))
}
