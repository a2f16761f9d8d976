/**
 * The front's clocks on its connections, looked at a few times a second: a head not complete in
 * time is answered 408. No app closes a connection for us: one left idle, or whose body stalled,
 * ends after the idle timeout; one that takes nothing of what it is sent is cut after three times
 * that. A timer of the process's own sockets (unref'd), not background work.
 */
import type { Conn } from './connection'

export interface Timeouts {
  stop(): void
}

export function startTimeouts(o: {
  connections: ReadonlySet<Conn>
  /** Connections with a head begun and not complete. */
  waitingHeads: ReadonlySet<Conn>
  headTimeoutMs: number
  idleTimeoutMs: number
  fail(c: Conn, status: 408): void
}): Timeouts {
  const { headTimeoutMs, idleTimeoutMs } = o
  const timer = setInterval(
    () => {
      const now = Date.now()
      for (const c of o.waitingHeads)
        if (c.pending.length === 0 && now - c.stream.partialSince > headTimeoutMs) o.fail(c, 408)
      for (const c of o.connections) {
        if (c.toClient.length) {
          if (now - c.lastWrite > 3 * idleTimeoutMs) c.client.terminate()
          continue
        }
        if (c.mode !== 'http' || c.connecting || now - c.lastActive <= idleTimeoutMs) continue
        const idleBetweenRequests = !c.awaiting && !c.pending.length && !c.stream.waitingForHead
        const bodyStalled = c.stream.inBody || (c.pending.length > 0 && !c.awaiting)
        if (idleBetweenRequests || bodyStalled) c.client.end()
      }
    },
    Math.min(1000, headTimeoutMs / 2),
  )
  timer.unref()
  return { stop: () => clearInterval(timer) }
}
