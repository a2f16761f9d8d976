/**
 * Every second, the embedded database's write-ahead log is moved into its file by the checkpointer
 * process (storage/db-checkpointer.ts), so the log stays small without a commit ever doing it on the
 * request thread (storage/db-embedded.ts starts it again when steady writes would make it grow);
 * at a stop each connection empties it into the file as it closes, so the file alone is whole. A
 * libSQL server does its own.
 */
import type { Worker } from './runner'

export const dbCheckpoint: Worker = {
  name: 'db-checkpoint',
  every: 1000,
  lease: 'cluster', // one process of a service whose app processes share the file (WORKERS > 1) is enough
  async step(deps) {
    await deps.db.checkpoint()
    return 0
  },
}
