/**
 * The brute-force filter (SPEC "Authentication" 4): once a client address (an IPv6 one's /64) has 5 failed sign-ins
 * within 3 minutes, session creation from it is refused without looking at the credentials, until
 * the oldest of those failures leaves the window. Requests naming a session that does not exist
 * count as failures too. Kept in the KV store, so it holds across the processes of a cluster.
 *
 * A sign-in in flight counts against the limit (an entry in a pending log, written before the
 * password is checked): one that would be the limit's sixth with the failures and the sign-ins
 * ahead of it waits until those are decided (WAIT_MS at most, then 429), so parallel guesses cannot
 * slip past the limit, and parallel right sign-ins from one address (devices reconnecting behind
 * one NAT) are not refused for the others being in flight. A failure moves its entry to the failures.
 */
import { KvUnavailable } from '~storage/kv/kv'
import { storeUnavailable, tooManyRequests } from '../errors'
import { hostKey } from '../net/cidr'
import type { Deps } from '../deps'

export const FAILURE_WINDOW_MS = 3 * 60_000
export const MAX_FAILURES = 5
/**
 * A sign-in stays in flight as long as a failure counts: one kept running (a request body sent
 * slowly) must not drop out of the count while it is still to be decided.
 */
const PENDING_MS = FAILURE_WINDOW_MS
/** How long a sign-in waits for those ahead of it to be decided; how often it looks again. */
const WAIT_MS = 5_000
const RECHECK_MS = 25
/** More in flight ahead of it than this, and a sign-in is refused at once rather than polling. */
const MAX_AHEAD = 20

/** An IPv6 client counts by its /64 (one host usually holds a whole one), an IPv4 one by its address. */
const key = (address: string) => `auth-failures:${hostKey(address)}`
const pendingKey = (failures: string) => `${failures}:pending`
const newEntry = (now: number) => `${now}:${crypto.randomUUID()}`

export interface SignInAttempt {
  /** The credentials were wrong: a failure, per address (and account). */
  failed(): Promise<void>
  /** Not a failure: the credentials were right, or the request never got to them. */
  cancel(): Promise<void>
}

type Verdict = { go: true } | { go: false; key: string; freeAt: number | null }

/** Who signs in: an HTTP request is one, and so is a websocket's upgrade (no route types needed). */
export interface Caller {
  deps: Pick<Deps, 'kv' | 'clock' | 'log'>
  clientAddress: string
}

/**
 * Whether the sign-in may go on, or what holds it back. `ahead` holds, per key, the sign-ins that
 * were in flight when it entered the key's pending log: those still there go before it.
 */
async function verdict(req: Caller, keys: string[], ahead: Set<string>[], now: number): Promise<Verdict> {
  const { kv } = req.deps
  for (const [i, k] of keys.entries()) {
    // in flight, then failed: a sign-in that fails meanwhile (failure added, then pending removed) counts once at least
    const inFlight = (await kv.zrange(pendingKey(k)).catch(failClosed)).filter((other) => ahead[i]!.has(other))
    const failures = await kv.window(k, now, FAILURE_WINDOW_MS).catch(failClosed)
    if (failures.length >= MAX_FAILURES)
      return { go: false, key: k, freeAt: failures[failures.length - MAX_FAILURES]! + FAILURE_WINDOW_MS }
    if (failures.length + inFlight.length >= MAX_FAILURES) return { go: false, key: k, freeAt: null }
  }
  return { go: true }
}

/**
 * Starts a sign-in; refuses with 429 and Retry-After when the address is banned, or the account
 * (`account`: domain and user id, for a password proven by a signed-in user) has had too many.
 */
export async function beginSignIn(req: Caller, account?: string): Promise<SignInAttempt> {
  const { kv, clock } = req.deps
  const keys = [key(req.clientAddress), ...(account ? [`auth-failures:account:${account}`] : [])]
  const waitUntil = performance.now() + WAIT_MS // real time: the service clock may be a test's
  const entry = newEntry(clock.now())
  const entered: string[] = []
  const ahead: Set<string>[] = []
  const leave = async () => {
    for (const k of entered) await kv.zrem(pendingKey(k), entry)
  }
  try {
    // the store orders the sign-ins of every key at once: it answers those ahead as it adds this one
    const queues = keys.map(pendingKey)
    entered.push(...keys)
    for (const before of await kv.joinWindows(queues, clock.now(), PENDING_MS, entry).catch(failClosed))
      ahead.push(new Set(before))
    const crowd = Math.max(...ahead.map((a) => a.size))
    if (crowd > MAX_AHEAD) throw tooManyRequests('too many sign-ins in flight; try again later', 1)
    for (;;) {
      const now = clock.now()
      const held = await verdict(req, keys, ahead, now)
      if (held.go)
        return {
          cancel: leave,
          async failed() {
            // counted as failed before it leaves the pending log: one waiting behind it sees it in one or the other
            try {
              for (const k of keys) await kv.window(k, clock.now(), FAILURE_WINDOW_MS, entry)
            } finally {
              await leave().catch(() => {}) // a store that failed here keeps the entry only for the window
            }
          },
        }
      const who = held.key === keys[0] ? 'this address' : 'this account'
      if (held.freeAt !== null) {
        // the ban lasts until the oldest counted failure leaves the window
        req.deps.log.warn('sign-in refused: too many failures', {
          address: req.clientAddress,
          ...(held.key === keys[0] ? {} : { account }),
          until: new Date(held.freeAt).toISOString(),
        })
        const seconds = Math.max(1, Math.ceil((held.freeAt - now) / 1000))
        throw tooManyRequests(`too many failed sign-ins from ${who}; try again later`, seconds)
      }
      if (performance.now() >= waitUntil)
        throw tooManyRequests(`too many sign-ins in flight from ${who}; try again later`, 1)
      await Bun.sleep(RECHECK_MS)
    }
  } catch (err) {
    await leave().catch(() => {})
    throw err
  }
}

/** Without its store the filter cannot count guesses, so no sign-in is checked at all (fails closed). */
function failClosed(err: unknown): never {
  if (err instanceof KvUnavailable)
    throw storeUnavailable('sign-in is refused while the brute-force filter cannot reach its store (Redis)')
  throw err
}

/** A request (or a websocket upgrade) that named a session that does not exist. */
export async function recordFailure(req: Caller): Promise<void> {
  const now = req.deps.clock.now()
  await req.deps.kv.window(key(req.clientAddress), now, FAILURE_WINDOW_MS, newEntry(now)).catch(failClosed)
}
