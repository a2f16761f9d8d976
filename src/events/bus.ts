/**
 * The event bus: what one process publishes reaches listeners in every process of the cluster
 * through KV pub/sub (with the embedded store, this process only). Listeners run in the process
 * that receives; one that throws is logged and does not stop the others.
 */
import type { Kv } from '~storage/kv/kv'
import type { Logger } from '../log'
import type { PlatformEvent } from './event'

const CHANNEL = 'events'

export class EventBus {
  private readonly listeners = new Set<(e: PlatformEvent) => void>()
  private unsubscribe?: () => Promise<void>

  constructor(
    private readonly kv: Kv,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.kv.subscribe(CHANNEL, (message) => this.deliver(JSON.parse(message) as PlatformEvent))
  }

  async stop(): Promise<void> {
    await this.unsubscribe?.()
  }

  /** Receives every event of every domain, in this process; returns the function that stops it. */
  on(listener: (e: PlatformEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async publish(event: PlatformEvent): Promise<void> {
    await this.kv.publish(CHANNEL, JSON.stringify(event))
  }

  private deliver(event: PlatformEvent): void {
    for (const listener of this.listeners) {
      try {
        listener(event)
      } catch (err) {
        this.log.error('event listener failed', { event: `${event.class}.${event.event}`, error: String(err) })
      }
    }
  }
}
