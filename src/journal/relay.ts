/**
 * This process's journal records passed on to the process holding the journal's followers (the
 * event pump, the webhook enqueueing; src/workers/held-lease.ts): a commit here wakes them there
 * with its records, which they take from memory (./recent.ts). With only a wake-up, the holder read
 * them back from the table, a read snapshot and a query for every commit of another process (at
 * 1,000 creates a second on two app processes, 9 % of the holder's time), and each follower's
 * wake-up was a message of its own. When some of its records were let go, a process says so
 * instead, and the holder keeps nothing until it has read the table. A holder of an earlier version,
 * which only hears wake-ups, finds these processes' commits at its schedule's passes (500 ms) until
 * it is upgraded; a BACKGROUND=off process runs no followers and passes nothing on (as before, its
 * commits wait for the holder's periodic read).
 */
import type { JournalChangeText } from '~storage/journal'
import type { Deps } from '../deps'

/** The KV channel of the records passed on: the sender's origin, a space, and a JSON array of them or LOST. */
const CHANNEL = 'journal-records'
const LOST = 'lost'

/** Passes on what this process committed since it last did (nothing when it committed nothing). */
export function passOnCommits(deps: Pick<Deps, 'kv' | 'recentJournal'>): void {
  const { recentJournal } = deps
  const records = recentJournal.takeUnrelayed()
  if (records?.length === 0) return
  const message = `${recentJournal.origin} ${records ? JSON.stringify(records) : LOST}`
  void deps.kv.publish(CHANNEL, message).catch(() => {}) // lost: the holder's periodic read finds them
}

/**
 * Keeps the records other processes pass on, and raises `journal` when they told something new:
 * the workers that follow the journal run as for a commit of this process (on a process that does
 * not hold them, they pass on only what it committed itself).
 */
export function receiveCommits(deps: Pick<Deps, 'kv' | 'recentJournal' | 'signals' | 'log'>): () => void {
  const { recentJournal } = deps
  const subscribed = deps.kv.subscribe(CHANNEL, (message) => {
    const space = message.indexOf(' ')
    if (message.slice(0, space) === recentJournal.origin) return
    const body = message.slice(space + 1)
    const records = body === LOST ? null : (JSON.parse(body) as JournalChangeText[])
    if (recentJournal.received(records)) deps.signals.raise('journal')
  })
  subscribed.catch((err) =>
    deps.log.warn("other processes' commits will wait for the followers' periodic read", { error: String(err) }),
  )
  return () => void subscribed.then((off) => off()).catch(() => {})
}
