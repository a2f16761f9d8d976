/**
 * Carries out product-layer orders from the durable queue: any process may take an order, but the
 * orders of one domain run one at a time and in order (the job's serial is the domain).
 */
import { Stopping } from '~storage/db'
import { extendLeases, releaseJob } from '~storage/queue'
import { carryOutOrder, LAYER_ORDER } from '../layers/product-layer-orders'
import { claim } from '../queue-kinds'
import type { Worker } from './runner'

/**
 * A claim lasts this long and is renewed while the order is carried out, so only a holder that died
 * loses it; its order then runs again when the lease ends (at once on a restart, embedded).
 */
const LEASE_MS = 60_000

export const layerOrders: Worker = {
  name: 'layer-orders',
  every: 2000,
  wakeOn: [`queue:${LAYER_ORDER.kind}`],
  lease: 'none',
  async step({ deps }) {
    const now = deps.clock.now()
    const [job] = await claim(deps, LAYER_ORDER, now, now + LEASE_MS, 1)
    if (!job) return 0
    const renew = () => extendLeases(deps.db, [job], deps.clock.now() + LEASE_MS)
    const renewal = setInterval(() => void renew().catch(() => {}), LEASE_MS / 3)
    try {
      await carryOutOrder(deps, job)
    } catch (err) {
      // cut short by a stop, not failed: the attempt does not count, and the order runs at the next start
      if (err instanceof Stopping) await releaseJob(deps.db, job, deps.clock.now()).catch(() => {})
      throw err
    } finally {
      clearInterval(renewal)
    }
    return 1
  },
}
