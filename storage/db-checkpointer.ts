/**
 * Checkpoints in a process of their own. A checkpoint copies the write-ahead log into the database
 * file and syncs it (milliseconds); run by SQLite inside a commit on the request thread, it made one
 * write in a hundred wait (directory changes: p99 4-9 ms, 0.5-2 ms without). Once a checkpointer
 * runs, the service's connection no longer checkpoints by itself. A process rather than a thread:
 * libsql's addon panicked when its connection lived on a Worker thread that was then ended.
 */
import Database from 'libsql'

type Mode = 'PASSIVE' | 'TRUNCATE'

export interface Checkpointer {
  /** One checkpoint: PASSIVE never waits for readers or writers. */
  run(mode: Mode): Promise<void>
  stop(): Promise<void>
}

/** The environment variable that makes a service process the checkpointer of a file. */
export const CHECKPOINT_FILE_ENV = 'PLATFORM_CHECKPOINT_FILE'

/** Starts `command` (the service's own) as the checkpointer of `file`. */
export function startCheckpointer(file: string, command: string[]): Checkpointer {
  const waiting = new Map<number, { resolve(): void; reject(err: Error): void }>()
  let next = 0
  const child = Bun.spawn(command, {
    env: { ...process.env, [CHECKPOINT_FILE_ENV]: file },
    stdin: 'pipe', // never written: its end tells the checkpointer that this process is gone
    stdout: 'inherit',
    stderr: 'inherit',
    ipc(message: { id: number; error?: string }) {
      const w = waiting.get(message.id)
      waiting.delete(message.id)
      if (message.error) w?.reject(new Error(`checkpoint: ${message.error}`))
      else w?.resolve()
    },
    onExit() {
      for (const w of waiting.values()) w.reject(new Error('the checkpointer ended'))
      waiting.clear()
    },
  })
  return {
    run: (mode) =>
      new Promise<void>((resolve, reject) => {
        if (child.exitCode !== null) return reject(new Error('the checkpointer ended'))
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
  const conn = new Database(file, { timeout: 5000 })
  // Ctrl-C reaches the whole process group: the service stops this one in its own stop sequence
  // (or this one sees its standard input end), so it does not end under the service meanwhile
  process.on('SIGINT', () => {})
  process.on('message', (message: { id: number; mode: Mode }) => {
    try {
      conn.exec(`PRAGMA wal_checkpoint(${message.mode === 'TRUNCATE' ? 'TRUNCATE' : 'PASSIVE'})`)
      process.send?.({ id: message.id })
    } catch (err) {
      process.send?.({ id: message.id, error: (err as Error).message })
    }
  })
  return async () => void conn.close()
}
