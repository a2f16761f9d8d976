/**
 * Closes this process's websockets whose session expired without anyone ending it (an idle
 * lifetime runs out silently in the KV store), and drops their expired subscriptions. Ended
 * sessions close their sockets at once (src/ws/hub.ts); this catches the silent ones.
 */
import type { Worker } from './runner'

export const wsSessions: Worker = {
  name: 'ws-sessions',
  every: 30_000,
  lease: 'none',
  always: true,
  async step({ sockets }) {
    await sockets.sweep()
    return 0
  },
}
