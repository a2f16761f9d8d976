/**
 * Keeps this process in the cluster's node registry (src/master/nodes.ts), and its running script
 * handlers in theirs: a beat a second, on every process.
 */
import { HEARTBEAT_MS } from '../master/nodes'
import type { Worker } from './runner'

export const nodeHeartbeat: Worker = {
  name: 'node-heartbeat',
  every: HEARTBEAT_MS,
  lease: 'none',
  always: true,
  async step({ deps, scripts }) {
    await deps.nodes.heartbeat()
    await scripts.refresh() // a handler's record lives while its node beats
    return 0
  },
}
