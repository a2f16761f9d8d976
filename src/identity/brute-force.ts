/**
 * The brute-force filter (SPEC "Authentication" 4): once a client address (an IPv6 one's /64) has 5 failed sign-ins
 * within 3 minutes, session creation from it is refused without looking at the credentials, until
 * the oldest of those failures leaves the window. Requests naming a session that does not exist
 * count as failures too. Kept in the KV store, so it holds across the processes of a cluster.
 *
 * A sign-in counts as a failure from the moment it starts (its entry is written before the
 * password is checked) and is taken back when it succeeds, so parallel guesses cannot slip past
 * the limit while each other's checks are still running.
 */
import { KvUnavailable } from '~storage/kv/kv'
import { storeUnavailable, tooManyRequests } from '../errors'
import { hostKey } from '../http/cidr'
import type { Req } from '../http/req'

export const FAILURE_WINDOW_MS = 3 * 60_000
export const MAX_FAILURES = 5

/** An IPv6 client counts by its /64 (one host usually holds a whole one), an IPv4 one by its address. */
const key = (address: string) => `auth-failures:${hostKey(address)}`
const newEntry = (now: number) => `${now}:${crypto.randomUUID()}`

export interface SignInAttempt {
  /** Not a failure after all: the credentials were right, or the request never got to them. */
  cancel(): Promise<void>
}

/**
 * Starts a sign-in; refuses with 429 and Retry-After when the address is banned, or the account
 * (`account`: domain and user id, for a password proven by a signed-in user) has had too many.
 */
export async function beginSignIn(req: Req, account?: string): Promise<SignInAttempt> {
  const { kv, clock } = req.deps
  const now = clock.now()
  const entry = newEntry(now)
  const keys = [key(req.clientAddress), ...(account ? [`auth-failures:account:${account}`] : [])]
  const written: string[] = []
  const takeBack = async () => {
    for (const k of written) await kv.zrem(k, entry)
  }
  for (const k of keys) {
    const times = await kv.window(k, now, FAILURE_WINDOW_MS, entry).catch(failClosed)
    written.push(k)
    const earlier = times.slice(0, -1) // ours is the newest
    if (earlier.length >= MAX_FAILURES) {
      await takeBack()
      const freeAt = earlier[earlier.length - MAX_FAILURES]! + FAILURE_WINDOW_MS
      const who = k === keys[0] ? 'this address' : 'this account'
      // the ban lasts until the oldest counted failure leaves the window
      req.deps.log.warn('sign-in refused: too many failures', {
        address: req.clientAddress,
        ...(k === keys[0] ? {} : { account }),
        until: new Date(freeAt).toISOString(),
      })
      throw tooManyRequests(
        `too many failed sign-ins from ${who}; try again later`,
        Math.max(1, Math.ceil((freeAt - now) / 1000)),
      )
    }
  }
  return { cancel: takeBack }
}

/** Without its store the filter cannot count guesses, so no sign-in is checked at all (fails closed). */
function failClosed(err: unknown): never {
  if (err instanceof KvUnavailable)
    throw storeUnavailable('sign-in is refused while the brute-force filter cannot reach its store (Redis)')
  throw err
}

/** A request that named a session that does not exist. */
export async function recordFailure(req: Req): Promise<void> {
  const now = req.deps.clock.now()
  await req.deps.kv.window(key(req.clientAddress), now, FAILURE_WINDOW_MS, newEntry(now)).catch(failClosed)
}
