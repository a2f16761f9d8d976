/**
 * The subscriptions of this process's sockets and the pushing of events to them. Sockets whose
 * subscriptions are alike (same domain, id and terms) share a topic (Bun.serve's, or the gateway
 * front's for the sockets it serves: a process's sockets are all of one kind); when every member of a
 * topic takes an event, one `publish` sends it to all of them, otherwise each taker gets its
 * own send. Members are exact (a closed socket leaves its topics once) and takers are re-checked
 * before a publish when the offer waited (nothing can change otherwise), so a publish never reaches a
 * member that did not take the event. An event is
 * offered topic by topic: its terms are matched once for all the topic's members.
 */
import type { AppSocket } from './endpoint'
import type { Ctx } from '../context'
import type { Logger } from '../log'
import type { PlatformEvent } from '../events/event'
import { matches } from '../events/match'
import { admits, Outgoing } from './push'
import type { Subscription } from './subscriptions'

/** A socket's subscriber as it is now, or null when it may no longer receive (its socket is being closed). */
export type ContextOf = (socket: Socket) => Ctx | null | Promise<Ctx | null>

/** One open socket of this process. */
export interface Socket {
  id: string
  ws: AppSocket
  /** The session behind the socket ('' for an integration channel's socket). */
  sessionId: string
  /** The channel token of an integration channel's socket. */
  channelToken?: string
  domain: string
  clientAddress: string
  subs: Map<string, Subscription>
  open: boolean
  windowStart: number
  frames: number
  /** Rest frames of the socket being run now: a close waits for their answers (closing holds it). */
  running: number
  /** A close asked for while rest frames ran: done once the last of them is answered. */
  closing?: { code: number; reason: string }
  /** Subscribe frames of a socket run one after another (a renewal must not race its replay). */
  subscribing: Promise<void>
  /** The context pushes were last offered with (rebuilt when the session or its roles change). */
  ctx?: Ctx
  send(frame: string): void
}

/** The topic of alike subscriptions: a digest of what makes their frames identical. */
export function topicOf(domain: string, id: string, terms: Subscription['terms']): string {
  return `sub:${new Bun.CryptoHasher('sha256').update(JSON.stringify([domain, id, terms])).digest('hex')}`
}

/** The sockets of one topic: their subscriptions are alike, so an event matches all of them or none. */
interface Topic {
  name: string
  domain: string
  terms: Subscription['terms']
  members: Map<Socket, Subscription>
}

export class Fanout {
  private readonly topics = new Map<string, Topic>()
  private readonly byDomain = new Map<string, Set<Topic>>()

  constructor(private readonly log: Logger) {}

  join(socket: Socket, sub: Subscription): void {
    if (!socket.open) return
    socket.subs.set(sub.id, sub)
    socket.ws.subscribe(sub.topic)
    let topic = this.topics.get(sub.topic)
    if (!topic) {
      topic = { name: sub.topic, domain: sub.terms.domain, terms: sub.terms, members: new Map() }
      this.topics.set(sub.topic, topic)
      const set = this.byDomain.get(topic.domain)
      if (set) set.add(topic)
      else this.byDomain.set(topic.domain, new Set([topic]))
    }
    topic.members.set(socket, sub)
  }

  /** Ends a subscription on its socket (unsubscribed, expired, replaced, refused); a no-op if already gone. */
  drop(socket: Socket, sub: Subscription): void {
    if (socket.subs.get(sub.id) !== sub) return
    socket.subs.delete(sub.id)
    if (!socket.open) return
    socket.ws.unsubscribe(sub.topic)
    this.leave(socket, sub)
  }

  /** A socket closed: it left its topics, and its subscriptions end with it. */
  closed(socket: Socket): void {
    if (!socket.open) return
    for (const sub of socket.subs.values()) this.leave(socket, sub)
    socket.subs.clear()
    socket.open = false
  }

  /**
   * Offers the event to the subscriptions of its domain, topic by topic: a topic whose terms do not
   * match is passed over whole, without a look at its members. `contexts` makes, for each topic
   * offered, what gives its sockets' subscribers as they are now (lookups it may share among the
   * topic's members, not across topics: an offer may wait, and a session end or a role change between
   * two topics is then seen by the second).
   */
  async push(event: PlatformEvent, contexts: () => ContextOf, now: number) {
    const out = new Outgoing(event)
    for (const topic of [...(this.byDomain.get(event.domain) ?? [])]) {
      // held events wait for a replay that would refuse them too: the match decides alone
      if (!matches(topic.terms, event)) continue
      await this.offer(topic, out, contexts(), now)
    }
  }

  private async offer(topic: Topic, out: Outgoing, contextOf: ContextOf, now: number): Promise<void> {
    const members = [...topic.members]
    const contexts = members.map(([socket, sub]) => (sub.expiresAt <= now ? null : contextOf(socket)))
    // missing contexts are fetched together rather than one by one
    let awaited = contexts.some((c) => c instanceof Promise)
    if (awaited) {
      const settled = await Promise.allSettled(contexts)
      settled.forEach((r, i) => {
        contexts[i] = r.status === 'fulfilled' ? r.value : null
      })
    }
    const takers: [Socket, Subscription][] = []
    for (let i = 0; i < members.length; i++) {
      const [socket, sub] = members[i]!
      if (sub.expiresAt <= now) {
        this.drop(socket, sub)
        continue
      }
      const ctx = contexts[i] as Ctx | null
      if (!ctx || !socket.open) continue
      let taken = admits(ctx, sub, out, true)
      if (taken instanceof Promise) {
        awaited = true
        taken = await taken.catch((err) => {
          this.log.error('websocket push failed', { socket: socket.id, error: String(err) })
          return false
        })
      }
      if (taken) takers.push([socket, sub])
    }
    if (takers.length === 0) return
    const frame = out.frame(takers[0]![1])
    // still members with the subscription that took it (a socket may have closed or renewed while it waited)
    const live = awaited ? takers.filter(([s, sub]) => s.open && topic.members.get(s) === sub) : takers
    if (live.length > 1 && live.length === topic.members.size) {
      live[0]![0].ws.publish(topic.name, frame) // every other member
      live[0]![0].send(frame)
    } else for (const [socket] of live) socket.send(frame)
  }

  private leave(socket: Socket, sub: Subscription): void {
    const topic = this.topics.get(sub.topic)
    if (topic?.members.get(socket) !== sub) return
    topic.members.delete(socket)
    if (topic.members.size > 0) return
    this.topics.delete(topic.name)
    const set = this.byDomain.get(topic.domain)
    set?.delete(topic)
    if (set?.size === 0) this.byDomain.delete(topic.domain)
  }
}
