/**
 * Putting work on the durable queue (storage/queue.ts) from inside a unit of work: the job commits
 * with the change that causes it, and the worker of its kind is woken after the commit. A job that
 * needs no work (`done`: its result) is only recorded.
 */
import type { TxStep } from '~storage/db'
import type { Doc } from '~storage/doc'
import { enqueueJob } from '~storage/queue'
import type { Unit } from './entities/unit'

export function* enqueue(
  u: Unit,
  job: { kind: string; payload: Doc; serial?: string; runAt?: number; id?: string; done?: Doc },
): TxStep<string> {
  const { clock, signals } = u.ctx.deps
  const { done, ...rest } = job
  const id = yield* enqueueJob({ ...rest, domain: u.w.domain, runAt: job.runAt ?? clock.now() }, u.w.now, done)
  if (!done) u.afterCommit(`queue:${job.kind}`, () => signals.raise(`queue:${job.kind}`))
  return id
}
