/**
 * The subscriptions of this process's sockets and the pushing of events to them. Sockets whose
 * subscriptions are alike (same domain, id and terms) share a Bun topic; when every member of a
 * topic takes an event, one native `publish` sends it to all of them, otherwise each taker gets its
 * own send. Member counts are exact (a closed socket leaves its topics once) and takers are
 * re-checked before a publish, so a publish never reaches a member that did not take the event.
 */
import type { ServerWebSocket } from 'bun'
import type { SocketData } from '../app'
import type { Ctx } from '../context'
import type { Logger } from '../log'
import type { PlatformEvent } from '../events/event'
import { admits, Outgoing } from './push'
import type { Subscription } from './subscriptions'

/** One open socket of this process. */
export interface Socket {
  id: string
  ws: ServerWebSocket<SocketData>
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

export class Fanout {
  private readonly members = new Map<string, number>()

  constructor(private readonly log: Logger) {}

  join(socket: Socket, sub: Subscription): void {
    if (!socket.open) return
    socket.subs.set(sub.id, sub)
    socket.ws.subscribe(sub.topic)
    this.count(sub.topic, 1)
  }

  /** Ends a subscription on its socket (unsubscribed, expired, replaced, refused); a no-op if already gone. */
  drop(socket: Socket, sub: Subscription): void {
    if (socket.subs.get(sub.id) !== sub) return
    socket.subs.delete(sub.id)
    if (!socket.open) return
    socket.ws.unsubscribe(sub.topic)
    this.count(sub.topic, -1)
  }

  /** A socket closed: it left its topics, and its subscriptions end with it. */
  closed(socket: Socket): void {
    if (!socket.open) return
    for (const sub of socket.subs.values()) this.count(sub.topic, -1)
    socket.subs.clear()
    socket.open = false
  }

  /**
   * Offers the event to every subscription of these sockets. `contextOf` gives a socket's
   * subscriber as it is now, or null when it may no longer receive (its socket is being closed).
   */
  async push(
    event: PlatformEvent,
    sockets: Iterable<Socket>,
    contextOf: (s: Socket) => Ctx | null | Promise<Ctx | null>,
    now: number,
  ): Promise<void> {
    const out = new Outgoing(event)
    // the subscribers' contexts first, missing ones fetched together rather than one by one
    const list = [...sockets].filter((s) => s.subs.size > 0)
    const contexts = list.map((s) => contextOf(s))
    if (contexts.some((c) => c instanceof Promise)) {
      const settled = await Promise.allSettled(contexts)
      settled.forEach((r, i) => {
        contexts[i] = r.status === 'fulfilled' ? r.value : null
      })
    }
    const takers = new Map<string, { sub: Subscription; takers: [Socket, Subscription][] }>()
    for (const [i, socket] of list.entries()) {
      const ctx = contexts[i] as Ctx | null
      if (!ctx || !socket.open) continue
      for (const sub of [...socket.subs.values()]) {
        if (sub.expiresAt <= now) {
          this.drop(socket, sub)
          continue
        }
        let taken = admits(ctx, sub, out)
        if (taken instanceof Promise) {
          taken = await taken.catch((err) => {
            this.log.error('websocket push failed', { socket: socket.id, error: String(err) })
            return false
          })
        }
        if (!taken) continue
        const group = takers.get(sub.topic)
        if (group) group.takers.push([socket, sub])
        else takers.set(sub.topic, { sub, takers: [[socket, sub]] })
      }
    }
    for (const [topic, group] of takers) {
      const frame = out.frame(group.sub)
      // still members with the subscription that took it (a socket may have closed or renewed meanwhile)
      const live = group.takers.filter(([s, sub]) => s.open && s.subs.get(sub.id) === sub).map(([s]) => s)
      // each member holds one subscription of its topic, so as many live takers as members means all
      if (live.length > 1 && live.length === this.members.get(topic)) {
        live[0]!.ws.publish(topic, frame) // every other member
        live[0]!.send(frame)
      } else for (const socket of live) socket.send(frame)
    }
  }

  private count(topic: string, by: number): void {
    const n = (this.members.get(topic) ?? 0) + by
    if (n > 0) this.members.set(topic, n)
    else this.members.delete(topic)
  }
}
