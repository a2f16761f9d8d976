/**
 * Carries out product-layer orders from the durable queue: any process may take an order, but the
 * orders of one domain run one at a time and in order (the job's serial is the domain).
 */
import { claimJobs } from '~storage/queue'
import { carryOutOrder, LAYER_ORDER } from '../layers/orders'
import type { Worker } from './runner'

/** Long enough for a large layer; a crashed holder's order runs again once it ends (or at once on restart, embedded). */
const LEASE_MS = 10 * 60_000

export const layerOrders: Worker = {
  name: 'layer-orders',
  every: 2000,
  wakeOn: [`queue:${LAYER_ORDER}`],
  exclusive: 'process',
  async step(deps) {
    const now = deps.clock.now()
    const [job] = await claimJobs(deps.db, LAYER_ORDER, now, now + LEASE_MS, 1)
    if (!job) return 0
    await carryOutOrder(deps, job)
    return 1
  },
}
