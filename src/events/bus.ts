/**
 * The event bus: what one process publishes reaches listeners in every process of the cluster
 * through KV pub/sub (with the embedded store, this process only). Listeners run in the process
 * that receives; one that throws is logged and does not stop the others. A message is one event
 * or an array of them. The journal pump's messages (`publishTexts` with `here`) reach this
 * process's listeners at once, once the order allows (./own-messages.ts), and are passed over when
 * the KV brings them back: the holder's own sockets waited a Redis round trip for them.
 */
import type { Kv } from '~storage/kv/kv'
import type { Logger } from '../log'
import type { PlatformEvent } from './event'
import { OwnMessages } from './own-messages'

const CHANNEL = 'events'
/** Bytes of a message of several events at most (a single larger event goes alone). */
export const MESSAGE_MAX = 1024 * 1024

export class EventBus {
  private readonly listeners = new Set<(e: PlatformEvent) => void>()
  private unsubscribe?: () => Promise<void>
  /** The pump's messages this process published, awaited back. */
  private readonly own = new OwnMessages()

  constructor(
    private readonly kv: Kv,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.kv.subscribe(CHANNEL, (message) => {
      let events: PlatformEvent[] | undefined
      const parse = () => (events ??= eventsOf(message))
      if (this.own.received(message, () => parse()[0]?.seq !== undefined)) this.deliverAll(parse())
    })
    this.kv.onSubscriberReset(() => this.own.reset())
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

  /**
   * Publishes events in order, in as few messages as MESSAGE_MAX allows (a step of the journal
   * pump): one KV round trip and one parse per receiver for many events instead of one each.
   */
  publishAll(events: PlatformEvent[]): Promise<void> {
    return this.publishTexts(events.map((event) => JSON.stringify(event)))
  }

  /**
   * `publishAll` of events already written as JSON text. `here` (the journal pump's): this process's
   * listeners have them at once rather than when the KV brings them back, where the order allows.
   */
  async publishTexts(texts: string[], { here = false } = {}): Promise<void> {
    let batch: string[] = []
    let bytes = 1 // the array's brackets and commas
    for (const text of texts) {
      const size = Buffer.byteLength(text) + 1
      if (batch.length && bytes + size > MESSAGE_MAX) {
        await this.send(`[${batch.join(',')}]`, here)
        batch = []
        bytes = 1
      }
      batch.push(text)
      bytes += size
    }
    if (batch.length) await this.send(`[${batch.join(',')}]`, here)
  }

  /** This process has just taken the journal pump over: its next messages go behind what the last holder's may still be. */
  pumpTaken(): void {
    this.own.behind()
  }

  private async send(message: string, here: boolean): Promise<void> {
    const now = here && this.own.deliverNow(message)
    if (now) this.deliverAll(eventsOf(message))
    try {
      await this.kv.publish(CHANNEL, message)
    } catch (err) {
      if (here) this.own.failed(message, now)
      throw err
    }
  }

  private deliverAll(events: PlatformEvent[]): void {
    for (const event of events) this.deliver(event)
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

const eventsOf = (message: string): PlatformEvent[] => {
  const events = JSON.parse(message) as PlatformEvent | PlatformEvent[]
  return Array.isArray(events) ? events : [events]
}
