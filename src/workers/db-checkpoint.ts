/**
 * Every minute, the embedded database's write-ahead log is moved into its file (and at every stop),
 * so the log stays small and the file alone holds what was written up to then. A libSQL server does
 * its own.
 */
import type { Worker } from './runner'

export const dbCheckpoint: Worker = {
  name: 'db-checkpoint',
  every: 60_000,
  lease: 'cluster', // one process of a service whose app processes share the file (WORKERS > 1) is enough
  async step(deps) {
    await deps.db.checkpoint()
    return 0
  },
}
