/**
 * The websocket endpoint `/ws`: one socket per client, admitted at the upgrade by its session
 * (cookie, bearer token, or `?token=` for browsers). A `rest` frame runs the REST call it stands for
 * through `dispatch` (the same route, admission and write path as HTTP; journaled with initiator
 * `websocket`); a `subscribe` frame manages the socket's subscriptions, to which events from the bus
 * are pushed (src/ws/push.ts). A session that ends closes its sockets, wherever it was ended.
 */
import type { ServerWebSocket } from 'bun'
import type { Doc } from '~storage/doc'
import type { JournalChange } from '~storage/journal'
import type { SocketData, SocketHandlers } from '../app'
import { type Ctx, sessionCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError, forbidden, tooManyRequests, unauthorized } from '../errors'
import type { PlatformEvent } from '../events/event'
import { dispatch } from '../http/dispatch'
import { readCookie, SESSION_COOKIE } from '../identity/cookies'
import type { Session } from '../identity/sessions'
import { errorBody, qidOf, readFrame, restCall } from './frames'
import { admits, missedChanges, Outgoing, replay } from './push'
import { MAX_SUBSCRIPTIONS_PER_SOCKET, readSubscribe, type Subscription } from './subscriptions'

/** Close codes: the session ended, the domain refuses it, the session moved to another domain. */
export const CLOSE_SESSION_ENDED = 4001
export const CLOSE_DOMAIN_SWITCHED = 4002
export const CLOSE_FORBIDDEN = 4003
export const CLOSE_GOING_AWAY = 1001

interface Caller {
  sessionId: string
  clientAddress: string
}

interface Socket {
  id: string
  ws: ServerWebSocket<SocketData>
  sessionId: string
  domain: string
  clientAddress: string
  subs: Map<string, Subscription>
  windowStart: number
  frames: number
  /** The context pushes were last offered with (rebuilt when the session or its roles change). */
  ctx?: Ctx
  send(frame: string): void
}

export class WsHub {
  private deps!: Deps
  private readonly sockets = new Set<Socket>()
  private readonly byDomain = new Map<string, Set<Socket>>()
  private readonly bySession = new Map<string, Set<Socket>>()
  private readonly queue: PlatformEvent[] = []
  private draining = false
  private readonly off: (() => void)[] = []
  /** Members of each subscription topic (sockets whose subscriptions are alike). */
  private readonly topics = new Map<string, number>()
  private nextId = 0

  /** Listens to the bus, to session ends and to domain changes. */
  start(deps: Deps): void {
    this.deps = deps
    this.off.push(deps.bus.on((event) => this.enqueue(event)))
    this.off.push(deps.sessions.onInvalidate((id) => void this.recheckSession(id)))
    this.off.push(deps.access.onChange((domain) => void this.recheckDomain(domain)))
  }

  /** Closes every socket ("going away") and stops listening. */
  stop(): void {
    for (const off of this.off.splice(0)) off()
    for (const socket of [...this.sockets]) socket.ws.close(CLOSE_GOING_AWAY, 'the service is stopping')
  }

  stats(): { sockets: number; subscriptions: number } {
    let subscriptions = 0
    for (const s of this.sockets) subscriptions += s.subs.size
    return { sockets: this.sockets.size, subscriptions }
  }

  /** A periodic check (the ws-sessions worker): sockets whose session expired close, expired subscriptions go. */
  async sweep(): Promise<number> {
    const now = this.deps.clock.now()
    let closed = 0
    for (const socket of [...this.sockets]) {
      for (const sub of [...socket.subs.values()]) if (sub.expiresAt <= now) this.drop(socket, sub)
      if (!(await this.deps.sessions.get(socket.sessionId))) {
        socket.ws.close(CLOSE_SESSION_ENDED, 'the session has expired')
        closed++
      }
    }
    return closed
  }

  handlers(): SocketHandlers {
    return {
      upgrade: (request, clientAddress) => this.upgrade(request, clientAddress),
      open: (ws) => this.open(ws),
      message: (ws, message) => void this.message(ws, message),
      close: (ws) => this.close(ws),
    }
  }

  private async upgrade(request: Request, clientAddress: string): Promise<Caller | Response> {
    const url = new URL(request.url)
    const auth = request.headers.get('authorization')
    const bearer = auth?.match(/^Bearer\s+(\S+)$/i)?.[1]
    const token = auth !== null ? (bearer ?? '') : url.searchParams.get('token')
    const cookie = token === null ? readCookie(request.headers.get('cookie'), SESSION_COOKIE) : null
    const id = token ?? cookie
    const session = id ? await this.deps.sessions.get(id) : null
    if (!session || session.kind !== (token !== null ? 'token' : 'cookie')) {
      const err = unauthorized(id ? 'session not found or expired' : 'a session is required: cookie, Bearer or ?token=')
      return Response.json(err.body(), { status: 401, headers: { 'www-authenticate': 'Bearer' } })
    }
    const refused = await this.refusal(session)
    if (refused) return Response.json(refused.body(), { status: refused.status })
    return { sessionId: session.id, clientAddress }
  }

  /** Why the session may not use a socket now (its domain is gone or blocked), or null. */
  private async refusal(session: Session): Promise<ApiError | null> {
    const { access } = this.deps
    const domain = await access.domainInfo(session.domainId)
    if (!domain) return unauthorized('the domain of this session no longer exists')
    if (!domain.blocked) return null
    const superuser = session.homeIsMaster && (await access.sessionRoles(session)).includes('admin')
    return superuser ? null : forbidden(`domain ${domain.name} is blocked`)
  }

  private open(ws: ServerWebSocket<SocketData>): void {
    const caller = ws.data.attached as Caller
    const session = this.deps.sessions.get(caller.sessionId)
    const domain = session instanceof Promise || !session ? '' : session.domainId
    const socket: Socket = {
      id: `${this.deps.nodes.name}:${++this.nextId}`,
      ws,
      sessionId: caller.sessionId,
      domain,
      clientAddress: caller.clientAddress,
      subs: new Map(),
      windowStart: 0,
      frames: 0,
      send: (frame) => void ws.send(frame),
    }
    ws.data.attached = socket
    this.sockets.add(socket)
    index(this.bySession, socket.sessionId, socket)
    if (domain) index(this.byDomain, domain, socket)
    else void this.recheckSession(caller.sessionId)
  }

  private close(ws: ServerWebSocket<SocketData>): void {
    const socket = ws.data.attached as Socket
    if (!this.sockets.delete(socket)) return
    unindex(this.bySession, socket.sessionId, socket)
    unindex(this.byDomain, socket.domain, socket)
    for (const sub of socket.subs.values()) this.count(sub.topic, -1) // a closed socket left its topics
    const keys = [...socket.subs.keys()].map((id) => subscriptionKey(socket, id))
    if (keys.length) void this.deps.kv.del(...keys).catch(() => {})
  }

  private async message(ws: ServerWebSocket<SocketData>, message: string | Buffer): Promise<void> {
    const socket = ws.data.attached as Socket
    const answer = (head: string, body: Doc) => socket.send(JSON.stringify([head, body]))
    let payload: Doc = {}
    try {
      const now = this.deps.clock.now()
      if (now - socket.windowStart >= 1000) (socket.windowStart = now), (socket.frames = 0)
      const limit = this.deps.config.wsFramesPerSec
      if (++socket.frames > limit)
        throw tooManyRequests(`more than ${limit} frames a second: this frame was refused`, 1)
      const frame = readFrame(message)
      payload = frame.payload
      const ctx = await this.actor(socket)
      if (frame.capability === 'rest') {
        const result = await dispatch(ctx, { ...restCall(payload), clientAddress: socket.clientAddress })
        const qid = qidOf(payload)
        if (result.status >= 400) answer('rest', { qid, error: result.body as Doc })
        else answer('rest', { qid, result: result.body ?? null })
      } else await this.subscribe(socket, ctx, payload)
    } catch (err) {
      if (!(err instanceof ApiError)) this.deps.log.error('websocket frame failed', { error: String(err) })
      if (err instanceof ApiError && err.status === 401) return void ws.close(CLOSE_SESSION_ENDED, err.message)
      if (payload.qid === undefined && payload.id === undefined) payload = leniently(message)
      const head = readHead(message)
      if (head === 'rest') answer('rest', { qid: qidOf(payload), error: errorBody(err) })
      else if (head === 'subscribe') answer('subscribe', { id: payload.id ?? null, error: errorBody(err) })
      else answer('error', errorBody(err))
    }
  }

  /** The socket's caller acting now: its live session, its roles read live; the session's lifetime slides. */
  private async actor(socket: Socket): Promise<Ctx> {
    const { sessions, access } = this.deps
    const session = await sessions.get(socket.sessionId)
    if (!session) throw unauthorized('the session has ended')
    const refused = await this.refusal(session)
    if (refused) throw refused
    await sessions.touch(session)
    const roles = await access.sessionRoles(session)
    return { ...sessionCtx(this.deps, session, `ws-${socket.id}`, roles), via: 'websocket' }
  }

  private async subscribe(socket: Socket, ctx: Ctx, payload: Doc): Promise<void> {
    const existing = typeof payload.id === 'string' ? socket.subs.get(payload.id) : undefined
    const request = await readSubscribe(ctx, payload, existing !== undefined)
    const key = subscriptionKey(socket, request.id)
    if (request.expires === 0) {
      if (existing) this.drop(socket, existing)
      await this.deps.kv.del(key)
      return socket.send(JSON.stringify(['subscribe', { id: request.id, expires: 0 }]))
    }
    if (!existing && !request.terms) throw new ApiError(400, 'a new subscription needs events', { field: 'events' })
    if (!existing && socket.subs.size >= MAX_SUBSCRIPTIONS_PER_SOCKET)
      throw new ApiError(400, `a socket holds at most ${MAX_SUBSCRIPTIONS_PER_SOCKET} subscriptions`, { field: 'id' })
    const now = this.deps.clock.now()
    const terms = request.terms ?? { terms: existing!.terms, target: existing!.target }
    if (existing) this.drop(socket, existing)
    const sub: Subscription = {
      id: request.id,
      terms: terms.terms,
      target: terms.target,
      topic: topicOf(request.id, terms.terms),
      expiresAt: now + request.expires * 1000,
      lastSeq: existing?.lastSeq ?? 0,
      // a resume holds live events from now on, so none falls between the journal read and going live
      held: request.since !== undefined ? [] : null,
    }
    this.join(socket, sub)
    let missed: JournalChange[] = []
    try {
      if (request.since !== undefined) missed = await missedChanges(ctx, request.since)
    } catch (err) {
      this.drop(socket, sub)
      throw err
    }
    await this.deps.kv.set(key, JSON.stringify({ session: socket.sessionId, terms: sub.terms }), request.expires * 1000)
    socket.send(JSON.stringify(['subscribe', { id: sub.id, expires: request.expires }]))
    if (request.since !== undefined) await replay(ctx, socket, sub, request.since, missed)
  }

  private join(socket: Socket, sub: Subscription): void {
    socket.subs.set(sub.id, sub)
    socket.ws.subscribe(sub.topic)
    this.count(sub.topic, 1)
  }

  /** Ends a subscription on its socket (unsubscribed, expired, replaced, or refused). */
  private drop(socket: Socket, sub: Subscription): void {
    if (socket.subs.get(sub.id) !== sub) return
    socket.subs.delete(sub.id)
    if (this.sockets.has(socket)) socket.ws.unsubscribe(sub.topic)
    this.count(sub.topic, -1)
  }

  private count(topic: string, by: number): void {
    const n = (this.topics.get(topic) ?? 0) + by
    if (n > 0) this.topics.set(topic, n)
    else this.topics.delete(topic)
  }

  private enqueue(event: PlatformEvent): void {
    if (!this.byDomain.has(event.domain)) return
    this.queue.push(event)
    if (!this.draining) void this.drain()
  }

  /** One event at a time, so every socket sees events in the order they were published. */
  private async drain(): Promise<void> {
    this.draining = true
    try {
      for (let event = this.queue.shift(); event; event = this.queue.shift()) await this.push(event)
    } finally {
      this.draining = false
    }
  }

  /**
   * Offers the event to every subscription in its domain, awaiting only what is not cached. Sockets
   * whose subscriptions are alike (same id and terms) share a Bun topic: when all of a topic's
   * members take the event, one native publish sends it to all of them.
   */
  private async push(event: PlatformEvent): Promise<void> {
    const out = new Outgoing(event)
    const now = this.deps.clock.now()
    const takers = new Map<string, { sub: Subscription; sockets: Socket[] }>()
    for (const socket of this.byDomain.get(event.domain) ?? []) {
      if (socket.subs.size === 0) continue
      let ctx: Ctx | null | Promise<Ctx | null> = this.pushCtx(socket)
      if (ctx instanceof Promise) ctx = await ctx
      if (!ctx) continue
      for (const sub of socket.subs.values()) {
        if (sub.expiresAt <= now) {
          this.drop(socket, sub)
          continue
        }
        let taken = admits(ctx, sub, out)
        if (taken instanceof Promise) taken = await taken.catch(() => false)
        if (!taken) continue
        const group = takers.get(sub.topic)
        if (group) group.sockets.push(socket)
        else takers.set(sub.topic, { sub, sockets: [socket] })
      }
    }
    for (const [topic, { sub, sockets }] of takers) {
      const frame = out.frame(sub)
      const [first] = sockets
      if (sockets.length > 1 && sockets.length === this.topics.get(topic)) {
        first!.ws.publish(topic, frame) // every other member
        first!.send(frame)
      } else for (const socket of sockets) socket.send(frame)
    }
  }

  /**
   * The subscriber as it is now (its live session and roles), or null when its session ended (the
   * socket closes). Synchronous while both are cached; the context is reused while they are the same.
   */
  private pushCtx(socket: Socket): Ctx | null | Promise<Ctx | null> {
    const session = this.deps.sessions.get(socket.sessionId)
    if (session instanceof Promise) return session.then((s) => this.contextOf(socket, s))
    return this.contextOf(socket, session)
  }

  private contextOf(socket: Socket, session: Session | null): Ctx | null | Promise<Ctx | null> {
    if (!session || session.domainId !== socket.domain) {
      void this.recheckSession(socket.sessionId)
      return null
    }
    const roles = this.deps.access.sessionRolesNow(session)
    const make = (r: readonly string[]) => {
      if (socket.ctx?.session !== session || socket.ctx.roles !== r)
        socket.ctx = sessionCtx(this.deps, session, `ws-${socket.id}`, r)
      return socket.ctx
    }
    return roles instanceof Promise ? roles.then(make) : make(roles)
  }

  /** A session changed or ended somewhere: its sockets close if it ended or moved to another domain. */
  private async recheckSession(id: string): Promise<void> {
    const sockets = this.bySession.get(id)
    if (!sockets?.size) return
    const session = await this.deps.sessions.get(id)
    for (const socket of [...sockets]) {
      if (!session) socket.ws.close(CLOSE_SESSION_ENDED, 'the session has ended')
      else if (socket.domain && session.domainId !== socket.domain)
        socket.ws.close(CLOSE_DOMAIN_SWITCHED, 'the session switched to another domain')
      else if (!socket.domain) (socket.domain = session.domainId), index(this.byDomain, socket.domain, socket)
    }
  }

  /** A domain changed (blocked, deleted): its sockets whose sessions it now refuses close. */
  private async recheckDomain(domain: string): Promise<void> {
    for (const socket of [...(this.byDomain.get(domain) ?? [])]) {
      const session = await this.deps.sessions.get(socket.sessionId)
      const refused = session ? await this.refusal(session) : unauthorized('the session has ended')
      if (refused) socket.ws.close(refused.status === 403 ? CLOSE_FORBIDDEN : CLOSE_SESSION_ENDED, refused.message)
    }
  }
}

const subscriptionKey = (socket: Socket, id: string) => `ws-sub:${socket.id}:${id}`

/** Subscriptions with the same id and terms get the same frames: they share a topic. */
const topicOf = (id: string, terms: Subscription['terms']) =>
  `sub:${Bun.hash(JSON.stringify([id, terms])).toString(36)}`

/** The payload of a frame that was refused before it was read (rate limit), to address the answer. */
function leniently(message: string | Buffer): Doc {
  try {
    return readFrame(message).payload
  } catch {
    return {}
  }
}

/** The capability a frame names, read leniently to address the error frame. */
function readHead(message: string | Buffer): string | null {
  const text = typeof message === 'string' ? message : message.toString('utf8')
  return /^\s*\[\s*"(rest|subscribe)"/.exec(text)?.[1] ?? null
}

function index(map: Map<string, Set<Socket>>, key: string, socket: Socket): void {
  let set = map.get(key)
  if (!set) map.set(key, (set = new Set()))
  set.add(socket)
}

function unindex(map: Map<string, Set<Socket>>, key: string, socket: Socket): void {
  const set = map.get(key)
  set?.delete(socket)
  if (set?.size === 0) map.delete(key)
}
