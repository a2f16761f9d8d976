/**
 * Checkpoints in a process of their own. A checkpoint copies the write-ahead log into the database
 * file and syncs it (milliseconds); run by SQLite inside a commit on the request thread, it made one
 * write in a hundred wait (directory changes: p99 4-9 ms, 0.5-2 ms without). Once a checkpointer
 * runs, the service's connection no longer checkpoints by itself. A process rather than a thread:
 * libsql's addon panicked when its connection lived on a Worker thread that was then ended.
 */
import Database from 'libsql'

/**
 * PASSIVE copies what no reader needs and never waits. RESTART also starts the log again from its
 * beginning: it takes the write lock, copies what is left, and waits up to RESTART_WAIT_MS for
 * readers still in the log (a long read aside), else leaves it for another pass.
 */
type Mode = 'PASSIVE' | 'RESTART'

/**
 * What a checkpoint found: the frames (pages) in the log since it last started (as the checkpoint
 * began: commits made while it ran are not counted), and whether a writer or a reader kept a
 * restart from its end.
 */
export interface CheckpointResult {
  frames: number
  busy: boolean
}

export interface Checkpointer {
  run(mode: Mode): Promise<CheckpointResult>
  /** The process ended (killed, or it failed): a new one is started in its place. */
  ended(): boolean
  stop(): Promise<void>
}

/**
 * A log longer than this (frames of a page; SQLite's own checkpoint threshold) after a passive
 * checkpoint is made to start again. SQLite reuses a log only when a write begins after a
 * checkpoint that left nothing behind: under steady writes that never happens (each checkpoint
 * ends after commits made while it ran), and the log grew by about a page a create: 400 MB in 20 s
 * of creates.
 */
export const RESTART_FRAMES = 1000
const RESTART_WAIT_MS = 20
/** How long the checkpointer's connection waits for a lock otherwise. */
const WAIT_MS = 5000
/** How long the service holds its writes for a restart at most (it takes 10-20 ms: two syncs). */
export const RESTART_HOLD_MS = 250

/** The environment variable that makes a service process the checkpointer of a file. */
export const CHECKPOINT_FILE_ENV = 'PLATFORM_CHECKPOINT_FILE'

/** Starts `command` (the service's own) as the checkpointer of `file`. */
export function startCheckpointer(file: string, command: string[]): Checkpointer {
  const waiting = new Map<number, { resolve(result: CheckpointResult): void; reject(err: Error): void }>()
  let next = 0
  let exited = false
  const child = Bun.spawn(command, {
    env: { ...process.env, [CHECKPOINT_FILE_ENV]: file },
    stdin: 'pipe', // never written: its end tells the checkpointer that this process is gone
    stdout: 'inherit',
    stderr: 'inherit',
    ipc(message: { id: number; error?: string } & CheckpointResult) {
      const w = waiting.get(message.id)
      waiting.delete(message.id)
      if (message.error) w?.reject(new Error(`checkpoint: ${message.error}`))
      else w?.resolve({ frames: message.frames, busy: message.busy })
    },
    onExit() {
      exited = true
      for (const w of waiting.values()) w.reject(new Error('the checkpointer ended'))
      waiting.clear()
    },
  })
  return {
    ended: () => exited,
    run: (mode) =>
      new Promise<CheckpointResult>((resolve, reject) => {
        if (exited) return reject(new Error('the checkpointer ended'))
        const id = ++next
        waiting.set(id, { resolve, reject })
        try {
          child.send({ id, mode })
        } catch {
          waiting.delete(id)
          reject(new Error('the checkpointer ended'))
        }
      }),
    async stop() {
      child.kill()
      await child.exited
    },
  }
}

/** The checkpointer's side: a connection of its own and a checkpoint per message; returns what closes it. */
export function runCheckpointer(file: string): () => Promise<void> {
  const conn = new Database(file, { timeout: WAIT_MS })
  // Ctrl-C reaches the whole process group: the service stops this one in its own stop sequence
  // (or this one sees its standard input end), so it does not end under the service meanwhile
  process.on('SIGINT', () => {})
  const checkpoint = {
    PASSIVE: conn.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw(true),
    RESTART: conn.prepare('PRAGMA wal_checkpoint(RESTART)').raw(true),
  }
  process.on('message', (message: { id: number; mode: Mode }) => {
    const mode = message.mode === 'RESTART' ? 'RESTART' : 'PASSIVE'
    try {
      if (mode === 'RESTART') conn.exec(`PRAGMA busy_timeout = ${RESTART_WAIT_MS}`)
      const [busy, frames] = checkpoint[mode].get([]) as [number, number, number]
      process.send?.({ id: message.id, frames, busy: busy === 1 })
    } catch (err) {
      process.send?.({ id: message.id, error: (err as Error).message })
    } finally {
      if (mode === 'RESTART') conn.exec(`PRAGMA busy_timeout = ${WAIT_MS}`)
    }
  })
  return async () => {
    // the last connection to close leaves the file whole (the service's may be gone), which SQLite
    // does not do itself while a prepared statement is alive
    conn.exec('PRAGMA busy_timeout = 0')
    conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    conn.close()
  }
}

/**
 * The checkpoints of a shared connection, done by a checkpointer process from the first one on: the
 * bulk copied while writes go on, then, for a long log, a restart with the writes held (`holdWrites`).
 * A log restarted and not written since keeps its length (its next write starts it): left alone.
 */
export class SharedCheckpoints {
  private checkpointer?: Checkpointer
  /** The length of the log when the checkpointer last made it start again (-1: none since). */
  private restartedAt = -1
  private refusedRestarts = 0

  constructor(
    private readonly file: string,
    private readonly command: string[],
    /** Told when a checkpointer starts: the connection leaves its checkpoints to it from then on. */
    private readonly onStart: () => void,
  ) {}

  async pass(holdWrites: <T>(work: () => Promise<T>, atMostMs: number) => Promise<T>) {
    // one that ended (killed with the rest of a process group, say) is replaced, or none would run again
    if (!this.checkpointer || this.checkpointer.ended()) {
      this.checkpointer = startCheckpointer(this.file, this.command)
      this.onStart()
    }
    const checkpointer = this.checkpointer
    const { frames } = await checkpointer.run('PASSIVE')
    let refused = false
    if (frames > RESTART_FRAMES && frames !== this.restartedAt) {
      const restart = await holdWrites(() => checkpointer.run('RESTART'), RESTART_HOLD_MS)
      this.restartedAt = restart.busy ? -1 : restart.frames
      refused = restart.busy
    }
    this.refusedRestarts = refused ? this.refusedRestarts + 1 : 0
    return { logPages: frames, refusedRestarts: this.refusedRestarts }
  }

  stop(): Promise<void> {
    return this.checkpointer?.stop() ?? Promise.resolve()
  }
}
