/**
 * A `subscribe` frame on a socket: a new subscription, a renewal (the same id; with other terms they
 * replace the old), or an end (`expires: 0`), answered `["subscribe", {id, expires}]`; with `since`,
 * the missed changes are replayed before it goes live. The hub runs one subscribe frame of a socket
 * at a time. A subscription lives with its socket: its lifetime is kept on the service clock here.
 */
import type { Doc } from '~storage/doc'
import type { JournalChange } from '~storage/journal'
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import { ApiError } from '../errors'
import { type Fanout, type Socket, topicOf } from './fanout'
import { missedChanges, replay } from './push'
import { MAX_SUBSCRIPTIONS_PER_SOCKET, readSubscribe, type Subscription } from './subscriptions'

export async function subscribeFrame(
  deps: Deps,
  fanout: Fanout,
  socket: Socket,
  ctx: Ctx,
  payload: Doc,
): Promise<void> {
  const now = deps.clock.now()
  const found = typeof payload.id === 'string' ? socket.subs.get(payload.id) : undefined
  // a lapsed subscription is gone, whether or not the sweep has removed it yet
  const existing = found && found.expiresAt > now ? found : undefined
  if (found && !existing) fanout.drop(socket, found)
  const request = await readSubscribe(ctx, payload, existing !== undefined)
  if (request.expires === 0) {
    if (existing) fanout.drop(socket, existing)
    return socket.send(JSON.stringify(['subscribe', { id: request.id, expires: 0 }]))
  }
  if (!existing && !request.terms) throw new ApiError(400, 'a new subscription needs events', { field: 'events' })
  if (!existing && socket.subs.size >= MAX_SUBSCRIPTIONS_PER_SOCKET)
    throw new ApiError(400, `a socket holds at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions`, { field: 'id' })
  const terms = request.terms ?? { terms: existing!.terms, target: existing!.target }
  if (existing) fanout.drop(socket, existing)
  const sub: Subscription = {
    id: request.id,
    terms: terms.terms,
    target: terms.target,
    topic: topicOf(ctx.domain, request.id, terms.terms),
    expiresAt: now + request.expires * 1000,
    lastSeq: existing?.lastSeq ?? 0,
    // a resume holds live events from now on, so none falls between the journal read and going live
    held: request.since !== undefined ? [] : null,
  }
  fanout.join(socket, sub)
  const current = () => socket.open && socket.subs.get(sub.id) === sub
  let missed: JournalChange[] = []
  try {
    if (request.since !== undefined) missed = await missedChanges(ctx, request.since, sub.target?.objtype)
  } catch (err) {
    fanout.drop(socket, sub)
    throw err
  }
  socket.send(JSON.stringify(['subscribe', { id: sub.id, expires: request.expires }]))
  if (request.since === undefined) return
  try {
    await replay(ctx, socket, sub, request.since, missed, current)
  } catch (err) {
    // a replay that failed half way would leave the client with a gap: the subscription ends
    fanout.drop(socket, sub)
    throw err
  }
}
