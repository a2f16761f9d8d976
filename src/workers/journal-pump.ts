/**
 * The journal is the outbox of events: this worker publishes every committed journal record as
 * `modelevents.data_changed` on the bus, after a cursor kept in the database, so a crash between a
 * commit and its publication loses nothing (an event may be published twice, never lost). A step
 * publishes the records it read as one message: awaiting Redis once an event, the pump fell behind
 * writes (bench/journal-events.ts: of 20,000 creates at 8,600/s, 641 events were out when the last
 * was answered, the last 4 s later). Woken by every commit: the process holding its lease keeps it
 * (./held-lease.ts), and the other processes pass their commits' wake-ups on to it.
 */
import { journalCursor, journalTextAfter } from '~storage/journal'
import type { Deps } from '../deps'
import { dataChangedText } from '../events/event'
import { RecentReader } from '../journal/recent'
import { LazyCursor } from './lazy-cursor'
import type { Worker } from './runner'

/** The pump's cursor: where the webhook enqueueing's starts when it has none. */
export const PUMP_CURSOR = 'events'
const BATCH = 500

/** How a worker that follows the journal runs: woken by every commit, on one process, its lease kept. */
export const followsJournal = {
  every: 500,
  wakeOn: ['journal'],
  lease: 'cluster',
  holdLease: true,
  batch: BATCH,
} as const satisfies Partial<Worker>

/** The pump, with its cursor (./lazy-cursor.ts), taking what this process journaled from memory (src/journal/recent.ts). */
export function createJournalPump(now?: () => number): Worker {
  const cursor = new LazyCursor(PUMP_CURSOR)
  const recent = new RecentReader(now) // `now`: tests give their own clock
  return {
    name: 'journal-pump',
    ...followsJournal,
    async step({ deps }, signal) {
      const after = await cursor.read(deps.db)
      const mark = recent.mark()
      // while long work runs, the table (which waits for it: a purge may be under way)
      const kept = deps.longWork.idle() ? null : recent.after(deps.recentJournal, after, BATCH)
      const changes = kept ?? (await committed(deps, () => journalTextAfter(deps.db, after, BATCH)))
      if (changes.length === 0) {
        await cursor.storeIfDue(deps.db)
        if (!kept) recent.read(mark)
      }
      // a pass that lost the cluster lease stops: another process pumps from the cursor on
      if (changes.length === 0 || signal.aborted) return 0
      await deps.bus.publishTexts(changes.map(dataChangedText), { here: true })
      await cursor.moved(deps.db, changes.at(-1)!.seq)
      if (!kept) recent.read(mark)
      return changes.length
    },
    drain: ({ deps }) => cursor.flush(deps.db),
    // the last holder's messages may still be on their way here: ours go behind them (src/events/own-messages.ts)
    leaseTaken: ({ deps }) => {
      cursor.forget()
      recent.distrust()
      deps.bus.pumpTaken()
    },
    wokenElsewhere: () => recent.distrust(),
  }
}

/**
 * A read of the journal that never sees long work's uncommitted records: it runs in the same turn
 * as the check that no long work is under way (what every consumer of the journal reads through).
 */
export async function committed<T>(deps: Deps, read: () => Promise<T>): Promise<T> {
  const busy = deps.longWork.idle()
  if (busy) await busy
  return read()
}

/** Starts the cursor at the journal's end on a new database, so history is not replayed as news. */
export const startJournalCursor = (db: Parameters<typeof journalCursor>[0]) => journalCursor(db, PUMP_CURSOR)
