/**
 * The websocket endpoint `/ws`: one socket per client, admitted at the upgrade by its session
 * (cookie, bearer token, or `?token=` for browsers). A `rest` frame runs the REST call it stands for
 * through `dispatch` (the same route, admission and write path as HTTP; journaled with initiator
 * `websocket`); a `subscribe` frame manages the socket's subscriptions (subscribe.ts), to which the
 * bus's events are pushed (fanout.ts). A session that ends closes its sockets, wherever it ended.
 */
import type { Doc } from '~storage/doc'
import type { AppSocket, SocketHandlers } from './endpoint'
import { type Ctx, sessionCtx } from '../context'
import type { Deps } from '../deps'
import { ApiError, tooManyRequests, unauthorized } from '../errors'
import type { PlatformEvent } from '../events/event'
import { dispatch } from '../http/dispatch'
import { blockedFor } from '../http/authenticate'
import { recordFailure } from '../identity/brute-force'
import { crossSiteRefusal, readCookie, SESSION_COOKIE } from '../http/cookies'
import type { Session } from '../identity/sessions'
import { channelCtx } from '../integration/tokens'
import { type ContextOf, Fanout, type Socket } from './fanout'
import { errorBody, leniently, qidOf, readFrame, readHead, restCall } from './frames'
import { sessionContexts } from './push-contexts'
import { subscribeFrame } from './subscribe'

/** Close codes: the session ended, it moved to another domain, the domain refuses it (blocked). */
export const CLOSE_SESSION_ENDED = 4001
export const CLOSE_DOMAIN_SWITCHED = 4002
export const CLOSE_FORBIDDEN = 4003
export const CLOSE_GOING_AWAY = 1001
/** The client reads too slowly: what waits for it passed WS_BACKPRESSURE_BYTES. */
export const CLOSE_TOO_SLOW = 4008
const SWITCHED = 'the session switched to another domain'

/** A 409 for a frame on a socket that is to close (it still answers the frames it was running). */
function refuseWhileClosing(socket: Socket): void {
  if (socket.closing) throw closingError(socket.closing.reason)
}
const closingError = (why: string) => new ApiError(409, `this socket is closing: ${why}`)

/** Who opened a socket: a session, or an integration channel by its token. */
interface Caller {
  session?: Session
  channel?: { token: string; domain: string }
  clientAddress: string
}

export class WsHub {
  private readonly fanout: Fanout
  private readonly sockets = new Set<Socket>()
  private readonly byDomain = new Map<string, Set<Socket>>()
  private readonly bySession = new Map<string, Set<Socket>>()
  private readonly queue: PlatformEvent[] = []
  private draining = false
  private readonly off: (() => void)[]
  private nextId = 0

  /**
   * Listens to the bus, to session ends and to domain changes from the start. `deps` are the services
   * the contexts of its frames carry (a frame runs a route as HTTP would).
   */
  constructor(private readonly deps: Deps) {
    this.fanout = new Fanout(deps.log)
    const guard = (what: string) => (err: unknown) => deps.log.error(`websocket ${what} failed`, { error: String(err) })
    this.off = [
      deps.bus.on((event) => this.enqueue(event)),
      deps.sessions.onInvalidate((id) => void this.recheckSession(id).catch(guard('session check'))),
      deps.access.onChange((domain) => void this.recheckDomain(domain).catch(guard('domain check'))),
    ]
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
      for (const sub of [...socket.subs.values()]) if (sub.expiresAt <= now) this.fanout.drop(socket, sub)
      const alive = socket.channelToken
        ? (await this.channelNow(socket)) !== null
        : (await this.deps.sessions.get(socket.sessionId)) !== null
      if (!alive) {
        socket.ws.close(CLOSE_SESSION_ENDED, socket.channelToken ? 'the channel is gone' : 'the session has expired')
        closed++
      }
    }
    return closed
  }

  handlers(): SocketHandlers {
    return {
      upgrade: (request, clientAddress) => this.upgrade(request, clientAddress),
      open: (ws) => this.open(ws),
      message: (ws, message) =>
        void this.message(ws, message).catch((err) =>
          this.deps.log.error('websocket frame failed', { error: String(err) }),
        ),
      close: (ws) => this.close(ws),
    }
  }

  /** The caller of an upgrade, or an ApiError the app answers with its error body (401, 403). */
  private async upgrade(request: Request, clientAddress: string): Promise<Caller> {
    const url = new URL(request.url)
    const auth = request.headers.get('authorization')
    const bearer = auth?.match(/^Bearer\s+(\S+)$/i)?.[1]
    const token = auth !== null ? (bearer ?? '') : url.searchParams.get('token')
    const cookie = token === null ? readCookie(request.headers.get('cookie'), SESSION_COOKIE) : null
    const id = token ?? cookie
    const session = id ? await this.deps.sessions.get(id) : null
    if (!session || session.kind !== (token !== null ? 'token' : 'cookie')) {
      // a token that names no session may be an integration channel's
      const channel = token ? await channelCtx(this.deps, token, clientAddress, 'ws-upgrade') : null
      if (channel && (await this.deps.access.domainInfo(channel.domain))?.blocked === false)
        return { channel: { token: token!, domain: channel.domain }, clientAddress }
      // a guessed token counts against the address as over HTTP (a failed sign-in)
      if (id && !channel) await recordFailure({ deps: this.deps, clientAddress })
      throw unauthorized(id ? 'session not found or expired' : 'a session is required: cookie, Bearer or ?token=')
    }
    // a socket opened with the cookie writes as the session: only from the service's own pages
    const crossSite = token === null ? crossSiteRefusal(this.deps.config, (name) => request.headers.get(name)) : null
    if (crossSite) throw crossSite
    const refused = await this.refusal(session)
    if (refused) throw refused
    return { session, clientAddress }
  }

  /** A channel socket's context now (its channel may be gone, or its mask no longer hold the address). */
  private channelNow(socket: Socket): Promise<Ctx | null> {
    return channelCtx(this.deps, socket.channelToken!, socket.clientAddress, `ws-${socket.id}`).catch(() => null)
  }

  /** Why the session may not use a socket now (its domain is gone or blocked), or null. */
  private async refusal(session: Session): Promise<ApiError | null> {
    const { access } = this.deps
    const domain = await access.domainInfo(session.domainId)
    // a domain deleted and created again with the same id is not the session's
    if (!domain || (session.domainCreated !== undefined && session.domainCreated !== domain.created))
      return unauthorized('the domain of this session no longer exists')
    if (!domain.blocked) return null
    return blockedFor(domain, session.homeIsMaster && (await access.sessionRoles(session)).includes('admin'))
  }

  private open(ws: AppSocket): void {
    const { session, channel, clientAddress } = ws.data.attached as Caller
    const socket: Socket = {
      id: `${this.deps.nodes.name}:${++this.nextId}`,
      ws,
      sessionId: session?.id ?? '',
      channelToken: channel?.token,
      domain: session?.domainId ?? channel!.domain,
      clientAddress,
      subs: new Map(),
      open: true,
      windowStart: 0,
      frames: 0,
      subscribing: Promise.resolve(),
      running: 0,
      send: (frame) => {
        // past the bound the socket is closed with a reason (Bun's own limit closes without one, for publish)
        if (ws.getBufferedAmount() + frame.length > this.deps.config.wsBackpressureBytes)
          return void ws.close(CLOSE_TOO_SLOW, 'the client reads too slowly: reconnect and resume with since')
        ws.send(frame)
      },
    }
    ws.data.attached = socket
    this.sockets.add(socket)
    if (socket.sessionId) index(this.bySession, socket.sessionId, socket)
    index(this.byDomain, socket.domain, socket)
  }

  private close(ws: AppSocket): void {
    const socket = ws.data.attached as Socket
    if (!this.sockets.delete(socket)) return
    unindex(this.bySession, socket.sessionId, socket)
    unindex(this.byDomain, socket.domain, socket)
    this.fanout.closed(socket)
  }

  private async message(ws: AppSocket, message: string | Buffer): Promise<void> {
    const socket = ws.data.attached as Socket
    const answer = (head: string, body: Doc) => socket.send(JSON.stringify([head, body]))
    let payload: Doc = {}
    try {
      // a closing socket runs no new frame: one kept in flight would otherwise hold it open for ever
      refuseWhileClosing(socket)
      const now = this.deps.clock.now()
      if (now - socket.windowStart >= 1000) {
        socket.windowStart = now
        socket.frames = 0
      }
      const limit = this.deps.config.wsFramesPerSec
      if (++socket.frames > limit)
        throw tooManyRequests(`more than ${limit} frames a second: this frame was refused`, 1)
      const frame = readFrame(message)
      payload = frame.payload
      if (frame.capability === 'rest') {
        const ctx: Ctx = { ...(await this.frameCtx(socket)), via: 'websocket' }
        const call = restCall(payload)
        // a frame that ends or switches its own session is answered before the socket closes
        socket.running++
        try {
          const result = await dispatch(ctx, { ...call, clientAddress: socket.clientAddress })
          const qid = qidOf(payload)
          // a 401 ends the socket only when its caller is gone; a route's own 401 (a failed sign-in) is an answer
          if (result.status === 401 && !(await this.callerLives(socket)))
            throw new ApiError(401, (result.body as { error_message: string }).error_message)
          if (result.status >= 400) answer('rest', { qid, error: result.body as Doc })
          else answer('rest', { qid, result: result.body ?? null })
        } finally {
          if (--socket.running === 0 && socket.closing) ws.close(socket.closing.code, socket.closing.reason)
        }
      } else {
        // one subscribe frame of a socket at a time: a renewal must not race the replay it replaces
        const turn = socket.subscribing.then(async () =>
          subscribeFrame(this.deps, this.fanout, socket, await this.actor(socket), payload),
        )
        socket.subscribing = turn.catch(() => {})
        await turn
      }
    } catch (err) {
      if (!(err instanceof ApiError)) this.deps.log.error('websocket frame failed', { error: String(err) })
      if (err instanceof ApiError && err.status === 401) return void ws.close(CLOSE_SESSION_ENDED, err.message)
      if (payload.qid === undefined && payload.id === undefined) payload = leniently(message)
      const head = readHead(message)
      if (head === 'rest') answer('rest', { qid: qidOf(payload), error: errorBody(err) })
      else if (head === 'subscribe') answer('subscribe', { id: payload.id ?? null, error: errorBody(err) })
      else answer('error', errorBody(err))
      if (socket.running === 0 && socket.closing) ws.close(socket.closing.code, socket.closing.reason)
    }
  }

  /** Closes the socket, once the rest frames it is running are answered (the first reason given wins). */
  private end(socket: Socket, code: number, reason: string): void {
    if (socket.running === 0) return void socket.ws.close(code, reason)
    socket.closing ??= { code, reason }
  }

  /** The socket's session (with its domain) or channel still exists. */
  private async callerLives(socket: Socket): Promise<boolean> {
    if (socket.channelToken) return (await this.channelNow(socket)) !== null
    const session = await this.deps.sessions.get(socket.sessionId)
    return session !== null && (await this.deps.access.domainInfo(session.domainId)) !== null
  }

  /** The context a rest frame is dispatched with: dispatch follows a session's live state itself. */
  private async frameCtx(socket: Socket): Promise<Ctx> {
    if (socket.channelToken) return this.actor(socket)
    const session = await this.deps.sessions.get(socket.sessionId)
    if (!session) throw unauthorized('the session has ended')
    if (session.domainId !== socket.domain) {
      // the switch was not heard here yet (another process made it): the socket's domain is gone
      // answered first: the frame's refusal closes the socket once no other frame runs
      socket.closing ??= { code: CLOSE_DOMAIN_SWITCHED, reason: SWITCHED }
      throw closingError(SWITCHED)
    }
    await this.deps.sessions.touch(session) // every frame is traffic, whatever route it runs
    return sessionCtx(this.deps, session, `ws-${socket.id}`)
  }

  /** The socket's caller acting now: its live session, its roles read live; the session's lifetime slides. */
  private async actor(socket: Socket): Promise<Ctx> {
    if (socket.channelToken) {
      const channel = await this.channelNow(socket)
      if (!channel) throw unauthorized('the channel of this socket no longer exists')
      return channel
    }
    const { sessions, access } = this.deps
    const session = await sessions.get(socket.sessionId)
    if (!session) throw unauthorized('the session has ended')
    const refused = await this.refusal(session)
    if (refused) throw refused
    await sessions.touch(session)
    return sessionCtx(this.deps, session, `ws-${socket.id}`, await access.sessionRoles(session))
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
      for (let event = this.queue.shift(); event; event = this.queue.shift()) {
        await this.fanout
          .push(event, () => this.pushContexts(), this.deps.clock.now())
          .catch((err) => this.deps.log.error('websocket push failed', { error: String(err) }))
      }
    } finally {
      this.draining = false
    }
  }

  /** The subscribers of one topic's offer (./push-contexts.ts); a channel socket whose channel is gone closes. */
  private pushContexts(): ContextOf {
    const channelNow = (socket: Socket) =>
      this.channelNow(socket).then((ctx) => {
        if (!ctx) socket.ws.close(CLOSE_SESSION_ENDED, 'the channel of this socket no longer exists')
        return ctx
      })
    return sessionContexts(this.deps, channelNow, (id) => void this.recheckSession(id).catch(() => {}))
  }

  /** A session changed or ended somewhere: its sockets close if it ended or moved to another domain. */
  private async recheckSession(id: string): Promise<void> {
    const sockets = this.bySession.get(id)
    if (!sockets?.size) return
    const session = await this.deps.sessions.get(id)
    for (const socket of [...sockets]) {
      if (!session) this.end(socket, CLOSE_SESSION_ENDED, 'the session has ended')
      else if (session.domainId !== socket.domain) this.end(socket, CLOSE_DOMAIN_SWITCHED, SWITCHED)
    }
  }

  /** A domain changed (blocked, deleted): its sockets whose sessions it now refuses close. */
  private async recheckDomain(domain: string): Promise<void> {
    for (const socket of [...(this.byDomain.get(domain) ?? [])]) {
      if (socket.channelToken) {
        const info = await this.deps.access.domainInfo(domain)
        if (!info || info.blocked) this.end(socket, CLOSE_FORBIDDEN, 'the domain of this channel is blocked or gone')
        continue
      }
      const session = await this.deps.sessions.get(socket.sessionId)
      const refused = session ? await this.refusal(session) : unauthorized('the session has ended')
      if (refused) this.end(socket, refused.status === 403 ? CLOSE_FORBIDDEN : CLOSE_SESSION_ENDED, refused.message)
    }
  }
}

function index(map: Map<string, Set<Socket>>, key: string, socket: Socket): void {
  let set = map.get(key)
  if (!set) {
    set = new Set()
    map.set(key, set)
  }
  set.add(socket)
}

function unindex(map: Map<string, Set<Socket>>, key: string, socket: Socket): void {
  const set = map.get(key)
  set?.delete(socket)
  if (set?.size === 0) map.delete(key)
}
