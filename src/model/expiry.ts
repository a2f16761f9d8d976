/**
 * Records of classes with `expires_mode: create` end when `expires_ts_property` + `expires_ttl_property`
 * seconds have passed. Reads hide them from that moment (exactly, by the service clock); this sweeper
 * then deletes them, journaled as deletions by the system, one process of a cluster at a time.
 */
import { domainsWithExpiringClasses } from '~storage/model-tables'
import { isoTime } from '../clock'
import type { Deps } from '../deps'
import { SYSTEM_ACTOR } from '../identity/directory'

const SWEEP_MS = 5000

export class ExpirySweeper {
  private timer?: ReturnType<typeof setInterval>
  private running: Promise<number> | null = null

  constructor(private readonly deps: Deps) {}

  start(): void {
    this.timer = setInterval(
      () => void this.sweep().catch((err) => this.deps.log.error('expiry sweep failed', { error: String(err) })),
      SWEEP_MS,
    )
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.running
  }

  /** Deletes every record whose lifetime has ended; returns how many. */
  sweep(): Promise<number> {
    this.running ??= this.sweepOnce().finally(() => (this.running = null))
    return this.running
  }

  private async sweepOnce(): Promise<number> {
    const { deps } = this
    const lock = await deps.kv.lock('model-expiry', 60_000)
    if (!lock) return 0
    let removed = 0
    try {
      const now = deps.clock.now()
      for (const domain of await domainsWithExpiringClasses(deps.db)) {
        for (const model of (await deps.model.classes(domain)).values()) {
          if (!model.expiry || !model.table) continue
          const repo = deps.repo(model.table)
          const w = {
            domain,
            now: isoTime(now),
            actor: { ...SYSTEM_ACTOR, type: 'system' as const },
            requestId: 'expiry',
          }
          removed += await deps.db.write(() => repo.removeAll(w, now))
        }
      }
    } finally {
      await lock.release()
    }
    if (removed) deps.events.kick()
    return removed
  }
}
