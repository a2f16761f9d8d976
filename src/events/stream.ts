/**
 * The event stream: every committed journal record becomes `modelevents.data_changed` (operation
 * 0 delete, 1 create, 2 modify; old and new instance; who made the change), and other sources
 * (scripts, telephony) emit their own events. The journal is the outbox: a pump reads it after a
 * cursor kept in the database, so a crash between commit and publication loses nothing. One pump
 * runs at a time in a cluster (a KV lock); events fan out to every process through KV pub/sub.
 */
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import { journalAfter, journalCursor, moveJournalCursor, type JournalChange } from '~storage/journal'
import type { Kv } from '~storage/kv/kv'
import type { Logger } from '../log'

export interface PlatformEvent {
  /** Event class and name: `modelevents` / `data_changed`. */
  class: string
  event: string
  /** Domain id. */
  domain: string
  time: string
  /** What the event is bound to, for subscriptions: `{type: 'class', value: 'users'}`, `{type: 'sipuser', value: '101'}`. */
  objects: { type: string; value: string }[]
  data: Doc
  /** Journal sequence number, for events from the journal. */
  seq?: number
}

const CHANNEL = 'events'
const CURSOR = 'events'
const BATCH = 500
const POLL_MS = 500
const OPERATION = { delete: 0, create: 1, update: 2 } as const

/** The data class of a journal record: a model record's classname, else the entity type. */
export const dataClassOf = (objtype: string) => (objtype.startsWith('model/') ? objtype.slice(6) : objtype)

export function dataChanged(c: JournalChange): PlatformEvent {
  const dataClass = dataClassOf(c.objtype)
  return {
    class: 'modelevents',
    event: 'data_changed',
    domain: c.domain,
    time: c.dtutc,
    seq: c.seq,
    objects: [{ type: 'class', value: dataClass }],
    data: {
      class: dataClass,
      operation: OPERATION[c.cmdtype],
      id: c.objid,
      // before the change (after it, for a create); after it (before it, for a delete)
      old: c.cmdtype === 'update' ? c.prev : c.obj,
      new: c.obj,
      initiator_type: c.initiator,
      initiator_id: c.modifierid,
    },
  }
}

export class EventStream {
  private readonly listeners = new Set<(e: PlatformEvent) => void>()
  private timer?: ReturnType<typeof setInterval>
  private pumping: Promise<void> | null = null
  private again = false

  constructor(
    private readonly db: Db,
    private readonly kv: Kv,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.kv.subscribe(CHANNEL, (message) => {
      const event = JSON.parse(message) as PlatformEvent
      for (const listener of this.listeners) {
        try {
          listener(event)
        } catch (err) {
          this.log.error('event listener failed', { error: String(err) })
        }
      }
    })
    await journalCursor(this.db, CURSOR)
    this.timer = setInterval(() => this.kick(), POLL_MS)
    this.timer.unref()
  }

  async stop(): Promise<void> {
    clearInterval(this.timer)
    await this.pumping
  }

  /** Receives every event of every domain, in this process. */
  on(listener: (e: PlatformEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Publishes an event that does not come from the journal. */
  async emit(event: PlatformEvent): Promise<void> {
    await this.kv.publish(CHANNEL, JSON.stringify(event))
  }

  /** After a commit: publish what the journal gained, soon. */
  kick(): void {
    if (this.pumping) {
      this.again = true
      return
    }
    this.pumping = this.pump()
      .catch((err) => this.log.error('journal pump failed', { error: String(err) }))
      .finally(() => {
        this.pumping = null
        if (this.again) {
          this.again = false
          this.kick()
        }
      })
  }

  /** Publishes everything committed so far (tests and shutdown). */
  async drain(): Promise<void> {
    while (this.pumping) await this.pumping
    await this.pump()
  }

  private async pump(): Promise<void> {
    const lock = await this.kv.lock('journal-pump', 10_000)
    if (!lock) return // another process is pumping; the next kick or poll catches up
    try {
      for (;;) {
        const cursor = await journalCursor(this.db, CURSOR)
        const changes = await journalAfter(this.db, cursor, BATCH)
        if (changes.length === 0) return
        for (const c of changes) await this.emit(dataChanged(c))
        await moveJournalCursor(this.db, CURSOR, changes[changes.length - 1]!.seq)
      }
    } finally {
      await lock.release()
    }
  }
}
