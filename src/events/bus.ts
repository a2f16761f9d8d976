/**
 * The event bus: what one process publishes reaches listeners in every process of the cluster
 * through KV pub/sub (with the embedded store, this process only). Listeners run in the process
 * that receives; one that throws is logged and does not stop the others. A message is one event
 * or an array of them. The journal pump's messages (`publishTexts` with `here`) reach this
 * process's listeners at once and are passed over when the KV brings them back (`echoes`): its
 * holder's own sockets waited a Redis round trip for them (0.33 ms at the median, 3.4 ms at the
 * 99th percentile, two processes at 1,000 creates a second).
 */
import type { Kv } from '~storage/kv/kv'
import type { Logger } from '../log'
import type { PlatformEvent } from './event'

const CHANNEL = 'events'
/** Bytes of a message of several events at most (a single larger event goes alone). */
export const MESSAGE_MAX = 1024 * 1024
/** Messages awaited back at most: past it (the KV lost some) they are forgotten, and come twice. */
const ECHOES_MAX = 10_000

export class EventBus {
  private readonly listeners = new Set<(e: PlatformEvent) => void>()
  private unsubscribe?: () => Promise<void>
  /** Messages delivered here already, awaited back from the KV: how many of each text. */
  private readonly echoes = new Map<string, number>()

  constructor(
    private readonly kv: Kv,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = await this.kv.subscribe(CHANNEL, (message) => {
      if (!this.echoed(message)) this.deliverMessage(message)
    })
    // what was in flight when the subscription broke never comes back
    this.kv.onSubscriberReset(() => this.echoes.clear())
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
   * `publishAll` of events already written as JSON text. `here`: this process's listeners have them
   * at once, in order, rather than when the KV brings them back (the journal pump: the only publisher
   * of the events with a `seq`, so no other's can come between them here and elsewhere).
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

  private async send(message: string, here: boolean): Promise<void> {
    if (!here) return this.kv.publish(CHANNEL, message)
    if (this.echoes.size >= ECHOES_MAX) this.echoes.clear()
    this.echoes.set(message, (this.echoes.get(message) ?? 0) + 1)
    this.deliverMessage(message)
    try {
      await this.kv.publish(CHANNEL, message)
    } catch (err) {
      this.echoed(message) // not published: it will not come back
      throw err
    }
  }

  /** Whether the message is one delivered here already (and no longer awaited). */
  private echoed(message: string): boolean {
    const awaited = this.echoes.get(message)
    if (awaited === undefined) return false
    if (awaited > 1) this.echoes.set(message, awaited - 1)
    else this.echoes.delete(message)
    return true
  }

  private deliverMessage(message: string): void {
    const events = JSON.parse(message) as PlatformEvent | PlatformEvent[]
    if (!Array.isArray(events)) return this.deliver(events)
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
