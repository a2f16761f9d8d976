/**
 * The kinds of job on the durable queue (storage/queue.ts), and putting work on it from inside a
 * unit of work. A kind is declared once, beside the code that does its work: its name and the
 * schema of its payload (`queueKind`). Enqueueing takes the payload's type; claiming checks each
 * job against the schema, so a worker gets typed jobs, and a job whose payload does not fit (a row
 * written by another version, or by hand) is failed for good, naming the field, instead of failing
 * its worker on every claim. The job commits with the change that causes it, and the worker of its
 * kind is woken after the commit; a job that needs no work (`done`: its result) is only recorded.
 */
import * as v from 'valibot'
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { claimJobs, enqueueJob, failJob, type Job, jobById, jobsOf, LostClaim, type NewJob } from '~storage/queue'
import { claimFairly, type Shares } from '~storage/queue-fair'
import { isoTime } from './clock'
import type { Deps } from './deps'
import type { Unit } from './entities/unit'

/** A kind of job: its name in the queue and what its payload is. */
export interface QueueKind<T extends Doc> {
  readonly kind: string
  readonly payload: v.GenericSchema<unknown, T>
}

export const queueKind = <S extends v.GenericSchema<unknown, Doc>>(
  kind: string,
  payload: S,
): QueueKind<v.InferOutput<S>> => ({ kind, payload })

/** A job of a kind whose payload passed its schema. */
export type JobOf<T> = Omit<Job, 'payload'> & { payload: T }

type Enqueued<T> = { payload: T; serial?: string; runAt?: number; id?: string; done?: Doc }

export function* enqueue<T extends Doc>(u: Unit, kind: QueueKind<T>, job: Enqueued<T>): TxStep<string> {
  const { clock, signals } = u.ctx.deps
  const { done, ...rest } = job
  const id = yield* enqueueJob(
    { ...rest, kind: kind.kind, domain: u.w.domain, runAt: job.runAt ?? clock.now() },
    u.w.now,
    done,
  )
  if (!done) u.afterCommit(`queue:${kind.kind}`, () => signals.raise(`queue:${kind.kind}`))
  return id
}

/** A job of the kind, for `enqueueJob` outside a unit of work (webhook deliveries, enqueued in batches). */
export const newJob = <T extends Doc>(
  kind: QueueKind<T>,
  job: Omit<NewJob, 'kind' | 'payload'> & { payload: T },
): NewJob => ({ ...job, kind: kind.kind })

type Claiming = Pick<Deps, 'db' | 'clock' | 'log' | 'signals'>

/** Claims up to `limit` due jobs of the kind (`claimJobs`); those whose payload does not fit are failed. */
export async function claim<T extends Doc>(
  deps: Claiming,
  kind: QueueKind<T>,
  now: number,
  leaseUntil: number,
  limit: number,
): Promise<JobOf<T>[]> {
  return checked(deps, kind, await claimJobs(deps.db, kind.kind, now, leaseUntil, limit))
}

/** Claims a share per domain (`claimFairly`); jobs whose payload does not fit are failed. */
export async function claimShares<T extends Doc>(
  deps: Claiming,
  kind: QueueKind<T>,
  now: number,
  leaseUntil: number,
  limit: number,
  shares: Shares,
): Promise<{ jobs: JobOf<T>[]; after: string }> {
  const claimed = await claimFairly(deps.db, kind.kind, now, leaseUntil, limit, shares)
  return { jobs: await checked(deps, kind, claimed.jobs), after: claimed.after }
}

/** The payload as its kind's schema reads it, or why it does not fit, naming the field (`channel: Invalid type: …`). */
function payloadOf<T extends Doc>(kind: QueueKind<T>, payload: Doc): { payload?: T; error?: string } {
  const parsed = v.safeParse(kind.payload, payload)
  if (parsed.success) return { payload: parsed.output }
  const [issue] = parsed.issues
  return {
    error: `the payload does not fit queue kind ${kind.kind}: ${v.getDotPath(issue) ?? '(payload)'}: ${issue.message}`,
  }
}

async function checked<T extends Doc>(deps: Claiming, kind: QueueKind<T>, jobs: Job[]): Promise<JobOf<T>[]> {
  const fit: JobOf<T>[] = []
  for (const job of jobs) {
    const { payload, error } = payloadOf(kind, job.payload)
    if (payload) {
      fit.push({ ...job, payload })
      continue
    }
    // retrying cannot help: failed for good, and the worker goes on with the jobs that fit
    deps.log.error('queue job failed: its payload does not fit its kind', { kind: kind.kind, job: job.id, error })
    try {
      await deps.db.write(() => failJob(job, isoTime(deps.clock.now()), error!, null))
    } catch (err) {
      if (!(err instanceof LostClaim)) throw err
    }
    // a claim that took only such jobs would end the pass: the jobs behind them are not left for the schedule
    deps.signals.raise(`queue:${kind.kind}`)
  }
  return fit
}

/** A read job of the kind, or null when its payload does not fit (listed by nobody: it failed on its claim). */
const fitting = <T extends Doc>(kind: QueueKind<T>, job: Job): JobOf<T> | null => {
  const { payload } = payloadOf(kind, job.payload)
  return payload ? { ...job, payload } : null
}

/** `jobsOf` for one kind, typed: for operators' and users' listings. */
export async function jobsOfKind<T extends Doc>(
  db: Deps['db'],
  kind: QueueKind<T>,
  where: Parameters<typeof jobsOf>[2] = {},
  limit = -1,
  offset = 0,
): Promise<JobOf<T>[]> {
  return (await jobsOf(db, kind.kind, where, limit, offset)).flatMap((job) => fitting(kind, job) ?? [])
}

/** `jobById` for one kind, typed. */
export async function jobOfKind<T extends Doc>(
  db: Deps['db'],
  kind: QueueKind<T>,
  domain: string,
  id: string,
): Promise<JobOf<T> | null> {
  const job = await jobById(db, kind.kind, domain, id)
  return job && fitting(kind, job)
}
