/**
 * Pushing events to subscribed sockets: the matcher's terms, then read permission at delivery time
 * for data changes, then the `["event", ...]` frame. Events from the journal carry its `seq`, and
 * each subscription remembers the last one it passed, so a resume (`since`) replays the journal
 * first and then continues live with neither a gap nor a duplicate.
 */
import { domainJournalAfter, type JournalChange, journalBounds } from '~storage/journal'
import { journalHorizon } from '~storage/journal-retention'
import type { Ctx } from '../context'
import { ApiError } from '../errors'
import { dataChanged, type PlatformEvent } from '../events/event'
import { matches, shape } from '../events/match'
import { changedCollection, mayRead } from './collections'
import type { Subscription } from './subscriptions'
import { str } from '~storage/doc'

/** More missed changes than this and the client is told to reload its collection instead. */
export const MAX_REPLAY = 10_000

/** Decisions taken for one event: by collection path, then by who asks (roles or actor). */
type Decisions = Map<string, Map<string, boolean>>

/** Where a subscription's frames go. */
export interface PushSink {
  send(frame: string): void
}

/**
 * One event on its way to many subscriptions: what every one of them shares is computed once (the
 * serialized data, the frame's tail, read decisions per roles and path).
 */
export class Outgoing {
  private data?: string
  private readonly tail: string
  private readonly frames = new Map<string, string>()
  /** Read decisions by path, then roles; guards' by path, then actor: no key string is built per socket. */
  readonly reads: Decisions = new Map()
  readonly guards: Decisions = new Map()

  constructor(readonly event: PlatformEvent) {
    this.tail = `,"class":${JSON.stringify(event.class)},"event":${JSON.stringify(event.event)},"seq":${event.seq ?? null},"data":`
  }

  /** The frame for a subscription; identical subscriptions (same id, no mask) share one string. */
  frame(sub: Subscription): string {
    if (sub.terms.mask?.length) return this.build(sub.id, JSON.stringify(shape(sub.terms, this.event)))
    let frame = this.frames.get(sub.id)
    if (frame === undefined) {
      this.data ??= JSON.stringify(this.event.data)
      frame = this.build(sub.id, this.data)
      this.frames.set(sub.id, frame)
    }
    return frame
  }

  private build(id: string, data: string): string {
    return `["event",{"subscription":${JSON.stringify(id)}${this.tail}${data}}]`
  }
}

const isDataChange = (e: PlatformEvent) => e.class === 'modelevents' && e.event === 'data_changed'

/**
 * Classes whose events only the domain's administrators receive: call events and scripts' custom
 * events, about which the original's access rules say nothing (a user's subscription to them would
 * show every call of the domain).
 */
export const ADMIN_EVENT_CLASSES: ReadonlySet<string> = new Set(['callevents', 'ccsevents', 'customevents'])

/**
 * Whether one subscription is to receive the event: its terms match and, for a data change, the
 * subscriber may read the record now (`ctx`: the subscriber acting now, its live roles). While the
 * subscription replays the journal, journal events wait in `held` and the answer is no. Answers at
 * once unless a permission had to be loaded. The caller sends `out.frame(sub)`; `matched` says it
 * has matched the terms already.
 */
export function admits(ctx: Ctx, sub: Subscription, out: Outgoing, matched = false): boolean | Promise<boolean> {
  if (out.event.seq !== undefined && sub.held) {
    sub.held.push(out.event)
    return false
  }
  return passes(ctx, sub, out, matched)
}

/** `matched`: the terms were matched already (once for all the subscriptions alike). */
function passes(ctx: Ctx, sub: Subscription, out: Outgoing, matched = false): boolean | Promise<boolean> {
  const { event } = out
  if (event.seq !== undefined) {
    if (event.seq <= sub.lastSeq) return false // replayed already, or published twice
    sub.lastSeq = event.seq
  }
  if (!matched && !matches(sub.terms, event)) return false
  if (ADMIN_EVENT_CLASSES.has(event.class)) return ctx.roles.includes('admin') // the roles live now
  if (!isDataChange(event)) return true
  // a classpath names one collection: a model class's change is not an entity's of the same data class
  if (sub.target && event.objtype !== undefined && event.objtype !== sub.target.objtype) return false
  const path = sub.target?.classpath ?? changedCollection(event)
  const readable = remembered(out.reads, path ?? '', rolesKey(ctx.roles), () =>
    mayRead(ctx, path, str(event.data, 'id')),
  )
  const guard = sub.target?.guard
  if (!guard) return readable
  const guarded = () => remembered(out.guards, path ?? '', ctx.actor.id, () => guard(ctx))
  if (readable instanceof Promise) return readable.then((yes) => yes && guarded())
  return readable && guarded()
}

/** Role lists are shared (cached per user and domain): each is joined once, not once per socket and event. */
const ROLE_KEYS = new WeakMap<readonly string[], string>()
function rolesKey(roles: readonly string[]): string {
  const known = ROLE_KEYS.get(roles)
  if (known !== undefined) return known
  const key = roles.join(',')
  ROLE_KEYS.set(roles, key)
  return key
}

/** A decision taken once per event for every subscriber it holds for. */
function remembered(
  decisions: Decisions,
  path: string,
  who: string,
  decide: () => boolean | Promise<boolean>,
): boolean | Promise<boolean> {
  let byWho = decisions.get(path)
  const known = byWho?.get(who)
  if (known !== undefined) return known
  if (!byWho) {
    byWho = new Map()
    decisions.set(path, byWho)
  }
  const mine = byWho
  const decided = decide()
  if (decided instanceof Promise)
    return decided.then((yes) => {
      mine.set(who, yes)
      return yes
    })
  mine.set(who, decided)
  return decided
}

/**
 * What the subscriber missed after `since`: its domain's journal records. Too many, or a `since`
 * the journal does not know, is a 410 `relist`: reload the collection, then subscribe again.
 * Call it with `sub.held` set, so live events arriving meanwhile wait for the replay.
 */
export async function missedChanges(ctx: Ctx, since: number, objtype?: string): Promise<JournalChange[]> {
  const { db } = ctx.deps
  // long work in the domain has journaled rows not committed yet: the replay waits for its end
  await ctx.deps.longWork.gate(ctx.domain)
  const { last } = await journalBounds(db)
  if (since > last) throw relist(`since ${since} is ahead of the journal (its last change is ${last})`)
  const horizon = await journalHorizon(db, ctx.domain)
  if (horizon && since < horizon.seq)
    throw relist(`changes up to ${horizon.seq} (${horizon.dtutc}) were removed by journal retention`)
  const missed = await domainJournalAfter(db, ctx.domain, since, MAX_REPLAY + 1, objtype)
  if (missed.length > MAX_REPLAY) throw relist(`more than ${MAX_REPLAY} changes were missed`)
  return missed
}

/**
 * Sends the missed changes in order, then the live events that waited, then goes live. `current`
 * says whether the subscription is still the socket's (a renewal or an unsubscribe ends the replay).
 */
export async function replay(
  ctx: Ctx,
  sink: PushSink,
  sub: Subscription,
  since: number,
  missed: JournalChange[],
  current: () => boolean,
) {
  sub.lastSeq = since
  const deliver = async (out: Outgoing) => {
    if (current() && (await passes(ctx, sub, out))) sink.send(out.frame(sub))
  }
  try {
    for (const change of missed) await deliver(new Outgoing(dataChanged(change)))
    // live events keep queueing behind the replay until the queue is empty: their order is kept
    const held = sub.held ?? []
    for (let event = held.shift(); event; event = held.shift()) await deliver(new Outgoing(event))
  } finally {
    sub.held = null
  }
}

const relist = (why: string) =>
  new ApiError(410, `relist: ${why}; reload the collection and subscribe again`, { relist: true })
