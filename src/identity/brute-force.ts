/**
 * The brute-force filter (SPEC "Authentication" 4): once a client address has 5 failed sign-ins
 * within 3 minutes, session creation from it is refused without looking at the credentials, until
 * the oldest of those failures leaves the window. Requests naming a session that does not exist
 * count as failures too. Kept in the KV store, so it holds across the processes of a cluster.
 */
import { tooManyRequests } from '../http/errors'
import type { Req } from '../http/req'

export const FAILURE_WINDOW_MS = 3 * 60_000
export const MAX_FAILURES = 5

const key = (address: string) => `auth-failures:${address}`

/** Refuses with 429 and Retry-After when the caller's address is banned. */
export async function refuseIfBanned(req: Req): Promise<void> {
  const now = req.deps.clock.now()
  const failures = await req.deps.kv.window(key(req.clientAddress), now, FAILURE_WINDOW_MS, false)
  if (failures.length < MAX_FAILURES) return
  const freeAt = failures[failures.length - MAX_FAILURES]! + FAILURE_WINDOW_MS
  throw tooManyRequests('too many failed sign-ins from this address; try again later', Math.max(1, Math.ceil((freeAt - now) / 1000)))
}

export async function recordFailure(req: Req): Promise<void> {
  await req.deps.kv.window(key(req.clientAddress), req.deps.clock.now(), FAILURE_WINDOW_MS, true)
}
