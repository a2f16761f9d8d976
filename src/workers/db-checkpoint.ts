/**
 * Every second, the embedded database's write-ahead log is moved into its file by the checkpointer
 * process (storage/db-checkpointer.ts), so the log stays small without a commit ever doing it on the
 * request thread (storage/db-embedded.ts starts it again when steady writes would make it grow);
 * at a stop each connection empties it into the file as it closes, so the file alone is whole. A
 * libSQL server does its own.
 */
import type { CheckpointState } from '~storage/db'
import type { Logger } from '../log'
import type { Worker } from './runner'

/** Refused restarts in a row (passes of a second) between two warnings while they go on. */
export const REFUSALS_WARNED_EVERY = 30

export const dbCheckpoint: Worker = {
  name: 'db-checkpoint',
  every: 1000,
  lease: 'cluster', // one process of a service whose app processes share the file (APP_PROCESSES > 1) is enough
  async step({ deps }) {
    warnOfRefusals(deps.log, await deps.db.checkpoint())
    return 0
  },
}

/**
 * A log that cannot start again grows with every write (another process that never pauses, or a
 * reader that keeps its snapshot): said while it lasts, since nothing else would show it.
 */
export function warnOfRefusals(log: Logger, state: CheckpointState | null): void {
  if (!state || state.refusedRestarts === 0 || state.refusedRestarts % REFUSALS_WARNED_EVERY !== 0) return
  log.warn('the write-ahead log could not start again: another process kept writing or reading through every try', {
    log_pages: state.logPages,
    passes: state.refusedRestarts,
  })
}

/**
 * Every second, in every process: is this process's connection pinned to an old snapshot? It would
 * serve stale reads, refuse writes and hold back the checkpoints (storage/db-pinned-read.ts). Reads
 * and writes look too; this finds it in a process that serves neither.
 */
export const dbPinnedRead: Worker = {
  name: 'db-pinned-read',
  every: 1000,
  lease: 'none',
  always: true, // the process's own health, BACKGROUND=off too
  async step({ deps }) {
    deps.db.endPinnedRead?.()
    return 0
  },
}
