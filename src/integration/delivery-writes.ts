/**
 * The outcomes of a process's webhook deliveries, written in batches: an outcome waits up to
 * GATHER_MS for others (or until GATHER_MAX have come), and while one batch's transaction is being
 * committed, the outcomes that come meanwhile gather and go in the next one. Deliveries to one host
 * answer one after another (a few in flight): written as each came, a commit recorded one outcome
 * and commits were a fifth of the process's CPU at 4,000 deliveries a second (bench/webhooks.ts).
 * The wait delays the job's record (its delivery log line) and the end of its hold in the process's
 * slots (./delivery-slots.ts); the receiver has the delivery. An outcome not written (the process
 * died first) leaves its job claimed until its lease ends, and it is then delivered again with the
 * same webhook-id: at least once, never lost.
 */
import type { TxStep } from '~storage/db'
import { LostClaim } from '~storage/queue'
import type { Deps } from '../deps'

/** Outcomes one transaction writes at most, so one commit does not hold the loop for long. */
const BATCH_MAX = 256
/** How long an outcome waits for others to share its transaction, at most... */
const GATHER_MS = 2
/** ...unless this many have come. */
const GATHER_MAX = 32

interface Pending {
  step: () => TxStep<void>
  done(written: boolean): void
  failed(err: unknown): void
}

export class DeliveryWrites {
  private pending: Pending[] = []
  private writing = false
  private gathering: ReturnType<typeof setTimeout> | undefined

  /** `gatherMs`: how long an outcome waits for others (tests give a longer one, so a slow turn does not end it). */
  constructor(private readonly gatherMs = GATHER_MS) {}

  /**
   * Writes the step (a completeJob or failJob of one claim) in the next batch: true once committed,
   * false when the claim was lost (another process took the job over; nothing written).
   */
  write(deps: Deps, step: () => TxStep<void>): Promise<boolean> {
    return new Promise<boolean>((done, failed) => {
      this.pending.push({ step, done, failed })
      if (this.writing) return // the batch after the one being written takes it
      if (this.pending.length >= GATHER_MAX) void this.flush(deps)
      else this.gathering ??= setTimeout(() => void this.flush(deps), this.gatherMs)
    })
  }

  private async flush(deps: Deps): Promise<void> {
    clearTimeout(this.gathering)
    this.gathering = undefined
    this.writing = true
    try {
      while (this.pending.length) {
        const batch = this.pending.splice(0, BATCH_MAX)
        try {
          const written = await deps.db.write(function* () {
            const each: boolean[] = []
            for (const p of batch) each.push(yield* tolerant(p.step))
            return each
          })
          for (const [i, p] of batch.entries()) p.done(written[i]!)
        } catch (err) {
          for (const p of batch) p.failed(err)
        }
      }
    } finally {
      this.writing = false
    }
  }
}

/** The step's write, false instead of a LostClaim (its statement changed nothing: the others go on). */
function* tolerant(step: () => TxStep<void>): TxStep<boolean> {
  try {
    yield* step()
    return true
  } catch (err) {
    if (err instanceof LostClaim) return false
    throw err
  }
}
