/**
 * Pushing events to subscribed sockets: the matcher's terms, then read permission at delivery time
 * for data changes, then the `["event", ...]` frame. Events from the journal carry its `seq`, and
 * each subscription remembers the last one it passed, so a resume (`since`) replays the journal
 * first and then continues live with neither a gap nor a duplicate.
 */
import { domainJournalAfter, type JournalChange, journalBounds } from '~storage/journal'
import type { Ctx } from '../context'
import { ApiError } from '../errors'
import { dataChanged, type PlatformEvent } from '../events/event'
import { matches, shape } from '../events/match'
import { collectionPathOf, mayRead } from './collections'
import type { Subscription } from './subscriptions'

/** More missed changes than this and the client is told to reload its collection instead. */
export const MAX_REPLAY = 10_000

/** Where a subscription's frames go. */
export interface PushSink {
  send(frame: string): void
}

const isDataChange = (e: PlatformEvent) => e.class === 'modelevents' && e.event === 'data_changed'

/** The event frame for one subscription; the serialized data is shared by subscriptions without a mask. */
function eventFrame(sub: Subscription, event: PlatformEvent, shared: Map<PlatformEvent, string>): string {
  let data: string | undefined
  if (!sub.terms.mask?.length) {
    data = shared.get(event)
    if (data === undefined) shared.set(event, (data = JSON.stringify(event.data)))
  } else data = JSON.stringify(shape(sub.terms, event))
  const head = JSON.stringify({ subscription: sub.id, class: event.class, event: event.event, seq: event.seq ?? null })
  return `["event",${head.slice(0, -1)},"data":${data}}]`
}

/**
 * Offers one event to one subscription: sent when its terms match and, for a data change, the
 * subscriber may read the record now. `ctx` is the subscriber acting now (its live roles).
 */
export async function offer(
  ctx: Ctx,
  sink: PushSink,
  sub: Subscription,
  event: PlatformEvent,
  shared: Map<PlatformEvent, string>,
): Promise<boolean> {
  if (event.seq !== undefined && sub.held) {
    sub.held.push(event)
    return false
  }
  return pass(ctx, sink, sub, event, shared)
}

async function pass(
  ctx: Ctx,
  sink: PushSink,
  sub: Subscription,
  event: PlatformEvent,
  shared: Map<PlatformEvent, string>,
): Promise<boolean> {
  if (event.seq !== undefined) {
    if (event.seq <= sub.lastSeq) return false // replayed already, or published twice
    sub.lastSeq = event.seq
  }
  if (!matches(sub.terms, event)) return false
  if (isDataChange(event)) {
    const path = sub.target?.classpath ?? collectionPathOf(event.data.class as string)
    if (!(await mayRead(ctx, path, event.data.id as string))) return false
  }
  sink.send(eventFrame(sub, event, shared))
  return true
}

/**
 * What the subscriber missed after `since`: its domain's journal records. Too many, or a `since`
 * the journal does not know, is a 410 `relist`: reload the collection, then subscribe again.
 * Call it with `sub.held` set, so live events arriving meanwhile wait for the replay.
 */
export async function missedChanges(ctx: Ctx, since: number): Promise<JournalChange[]> {
  const { db } = ctx.deps
  const { first, last } = await journalBounds(db)
  if (since > last) throw relist(`since ${since} is ahead of the journal (its last change is ${last})`)
  if (first > since + 1 && first > 1) throw relist(`changes after ${since} are no longer kept (oldest: ${first})`)
  const missed = await domainJournalAfter(db, ctx.domain, since, MAX_REPLAY + 1)
  if (missed.length > MAX_REPLAY) throw relist(`more than ${MAX_REPLAY} changes were missed`)
  return missed
}

/** Sends the missed changes in order, then the live events that waited, then goes live. */
export async function replay(ctx: Ctx, sink: PushSink, sub: Subscription, since: number, missed: JournalChange[]) {
  const shared = new Map<PlatformEvent, string>()
  sub.lastSeq = since
  for (const change of missed) await pass(ctx, sink, sub, dataChanged(change), shared)
  // live events keep queueing behind the replay until the queue is empty: their order is kept
  const held = sub.held ?? []
  for (let event = held.shift(); event; event = held.shift()) await pass(ctx, sink, sub, event, shared)
  sub.held = null
}

const relist = (why: string) =>
  new ApiError(410, `relist: ${why}; reload the collection and subscribe again`, { relist: true })
