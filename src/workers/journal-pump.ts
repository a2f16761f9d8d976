/**
 * The journal is the outbox of events: this worker publishes every committed journal record as
 * `modelevents.data_changed` on the bus, after a cursor kept in the database, so a crash between a
 * commit and its publication loses nothing (an event may be published twice, never lost). A step
 * publishes the records it read as one message: awaiting Redis once an event, the pump fell behind
 * writes (bench/journal-events.ts: of 20,000 creates at 8,600/s, 641 events were out when the last
 * was answered, the last 4 s later). Woken by every commit: the process holding its lease keeps it
 * (./held-lease.ts), and the other processes pass their commits' records on to it (src/journal/relay.ts).
 */
import { journalCursor, journalTextAfter } from '~storage/journal'
import { dataChangedText } from '../events/event'
import { passOnCommits, receiveCommits } from '../journal/relay'
import { JournalFollower } from './journal-follower'
import type { Worker } from './runner'

/** The pump's cursor: where the webhook enqueueing's starts when it has none. */
export const PUMP_CURSOR = 'events'
const BATCH = 500

/**
 * How a worker that follows the journal runs: woken by every commit, on one process, its lease
 * kept; another process passes its commits' records on to it (src/journal/relay.ts).
 */
export const followsJournal = {
  every: 500,
  wakeOn: ['journal'],
  lease: 'cluster',
  holdLease: true,
  batch: BATCH,
  passOn: ({ deps }) => passOnCommits(deps),
} as const satisfies Partial<Worker>

/** The pump (./journal-follower.ts: its cursor, and what this process journaled taken from memory). */
export function createJournalPump(now?: () => number): Worker {
  const follower = new JournalFollower(PUMP_CURSOR, undefined, now)
  return {
    name: 'journal-pump',
    ...followsJournal,
    async step({ deps }, signal) {
      const { rows: changes, handled } = await follower.next(deps, BATCH, (after) =>
        journalTextAfter(deps.db, after, BATCH),
      )
      // a pass that lost the cluster lease stops: another process pumps from the cursor on
      if (changes.length === 0 || signal.aborted) return 0
      await deps.bus.publishTexts(changes.map(dataChangedText), { here: true })
      await follower.cursor.moved(deps.db, changes.at(-1)!.seq)
      handled()
      return changes.length
    },
    // the records the other processes pass on, kept for both followers of the journal
    feed: ({ deps }) => receiveCommits(deps),
    drain: ({ deps }) => follower.cursor.flush(deps.db),
    // the last holder's messages may still be on their way here: ours go behind them (src/events/own-messages.ts)
    leaseTaken: ({ deps }) => {
      follower.taken()
      deps.bus.pumpTaken()
    },
    wokenElsewhere: () => follower.elsewhere(),
  }
}

/** Starts the cursor at the journal's end on a new database, so history is not replayed as news. */
export const startJournalCursor = (db: Parameters<typeof journalCursor>[0]) => journalCursor(db, PUMP_CURSOR)
