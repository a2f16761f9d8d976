/**
 * The one write path. A unit of work is one write transaction in the making: its steps (generator
 * functions, see storage/db.ts) compose with `yield*`, so one transaction can create, change and
 * delete entities of several kinds; what must happen after the commit (cache invalidation, ending
 * sessions, waking a worker) is queued on the unit and runs once per commit, after it.
 *
 *   const user = await commit(ctx, function* (u) {
 *     const created = yield* insertStep(u, prepared)   // row + journal + the entity's hook
 *     u.afterCommit(`access:${u.w.domain}`, () => ctx.deps.access.invalidate(u.w.domain))
 *     return created
 *   })
 *
 * Validation and async preparation (password hashing) happen before `commit`: a step cannot await.
 */
import type { Db, TxStep } from '~storage/db'
import { domainExists } from '~storage/domain-rows'
import type { JournalSink, WriteContext } from '~storage/journal'
import { type Ctx, inDomain, writeContext } from '../context'
import type { LongWorkSpec } from '../long-work'
import { domainGone } from '../errors'

export interface Unit {
  readonly ctx: Ctx
  /** Who writes, where and when; one time for every record of the transaction. */
  readonly w: WriteContext
  /** Queues an effect for after the commit; effects under the same key run once. */
  afterCommit(key: string, effect: () => unknown): void
  /** The same transaction acting in another domain. */
  inDomain(domain: string): Unit
  /** How far a long transaction (`commitLong`) has got; nothing in a short one. */
  progress(done: number, total: number): void
}

type Report = (done: number, total: number) => void
const silent: Report = () => {}

function makeUnit(
  ctx: Ctx,
  now: number,
  effects: Map<string, () => unknown>,
  journaled: JournalSink,
  progress: Report,
): Unit {
  return {
    ctx,
    w: { ...writeContext(ctx, now), journaled },
    afterCommit(key, effect) {
      if (!effects.has(key)) effects.set(key, effect)
    },
    inDomain: (domain) => makeUnit(inDomain(ctx, domain), now, effects, journaled, progress),
    progress,
  }
}

/**
 * Runs the body as one write transaction, hands what it journaled to the journal's followers
 * (src/journal/recent.ts), wakes them, then runs its after-commit effects. An effect that fails
 * does not undo the commit; the first failure is rethrown once every effect has run, so the caller
 * learns of it.
 */
export function commit<T>(ctx: Ctx, body: (u: Unit) => TxStep<T>): Promise<T> {
  return run(ctx, body, false, silent)
}

/**
 * `commit` for work too large for one turn of the event loop (src/long-work.ts): one transaction
 * driven in time slices; requests of the domains it changes wait for its end, after-commit effects
 * included (the caches they refresh are fresh when the gate opens); its steps report `u.progress`.
 */
export function commitLong<T>(ctx: Ctx, work: Omit<LongWorkSpec, 'domain'>, body: (u: Unit) => TxStep<T>): Promise<T> {
  return ctx.deps.longWork.run({ ...work, domain: ctx.domain, requestId: ctx.requestId }, (report) =>
    run(ctx, body, true, report),
  )
}

/** Per database: the write transaction a domain was last found in, and the domains found in it. */
const found = new WeakMap<Db, { transaction: number; domains: Set<string> }>()

/**
 * A request admitted before another process deleted its domain must not write into it afterwards
 * (within one process, the deletion's long work waits for admitted requests). Asked once per write
 * transaction and domain: a group commit's bodies share the answer (asked by each, it cost a create
 * about a sixth more CPU).
 */
function* domainStillThere(ctx: Ctx): TxStep<void> {
  const { db } = ctx.deps
  const transaction = db.writeTransaction?.()
  let seen = found.get(db)
  if (transaction !== undefined && seen?.transaction === transaction && seen.domains.has(ctx.domain)) return
  if (!(yield* domainExists(ctx.domain))) throw domainGone(ctx)
  if (transaction === undefined) return
  if (seen?.transaction !== transaction) {
    seen = { transaction, domains: new Set() }
    found.set(db, seen)
  }
  seen.domains.add(ctx.domain)
}

async function run<T>(ctx: Ctx, body: (u: Unit) => TxStep<T>, long: boolean, progress: Report): Promise<T> {
  const effects = new Map<string, () => unknown>()
  const journaled: JournalSink = { records: [], untrusted: false }
  const unit = makeUnit(ctx, ctx.deps.clock.now(), effects, journaled, progress)
  const { db } = ctx.deps
  // a body run again (its group's first run rolled back) queues its effects and journals again
  const attempt = function* () {
    effects.clear()
    journaled.records = []
    journaled.untrusted = false
    if (ctx.actor.type !== 'system') yield* domainStillThere(ctx)
    return yield* body(unit)
  }
  const result = await (long ? db.writeLong(attempt) : db.write(attempt))
  if (journaled.untrusted) ctx.deps.recentJournal.clear()
  else if (journaled.records.length) ctx.deps.recentJournal.committed(journaled.records)
  ctx.deps.signals.raise('journal')
  let failure: unknown
  for (const effect of effects.values()) {
    try {
      await effect()
    } catch (err) {
      failure ??= err
    }
  }
  if (failure !== undefined) throw failure
  return result
}
