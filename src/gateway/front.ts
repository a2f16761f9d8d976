/**
 * The gateway's sockets: a Bun.listen front on the public port, on the app's thread, and one
 * Bun.connect upstream per client connection to the app's Bun.serve on its private unix socket.
 * What a connection does is decided by its state machine (./machine.ts); this adapter turns socket
 * callbacks, timers and in-process answers into its events and performs the actions it returns:
 * writes (batched per turn, queued with backpressure), pauses, connects, closes and lingering.
 */
import { LINGER } from '../http/body'
import { failResponse } from './answers'
import { ConnectionCap } from './connection-cap'
import type { Answer } from '../http/answer'
import { inlineAnswers } from './inline-answers'
import { type SocketAdmission, type SocketIo, type Topics, upgradeInFront } from './front-socket'
import { type Conn, flushQueue, send, TurnReads, TurnWrites } from './connection'
import { type Action, type Chunk, clientEnded, type Event, httpPhase } from './conn-state'
import { step } from './machine'
import { RequestStream, type RouteLimits } from './request-stream'
import { ResponseStream } from './response-stream'

export interface FrontOptions {
  hostname: string
  port: number
  /** SO_REUSEPORT: the port is shared with the service's other app processes (APP_PROCESSES > 1). */
  reusePort?: boolean
  /** The unix socket of the app's Bun.serve, for upgrades and streaming bodies. */
  upstream: string
  /** Incomplete heads older than this are answered 408. */
  headTimeoutMs?: number
  /** The largest body any route takes (MAX_BODY_BYTES, FILES_MAX_BYTES): a body or chunk declared larger is answered 413. */
  maxBodyBytes: number
  /** Each route's own limit: a declared length past it is answered 413 without the app. */
  routeLimits?: RouteLimits
  /** Open connections one client address may hold (0: no cap); trusted proxies are not capped. */
  maxConnectionsPerAddress?: number
  /** TRUST_PROXY: the addresses of proxies, which carry many clients' connections. */
  trustedProxies?: string[]
  /** The app's request handler, for the requests answered in-process; the upstream is connected when the first other one comes. */
  serve: (request: Request) => Promise<Answer>
  /** False (GATEWAY_INLINE=off): every request goes to the app's Bun.serve; only the front's own answers stay. */
  inline?: boolean
  /** The app's decision on a websocket upgrade, for the front to serve the socket itself (with `inline`); relayed to Bun.serve without it. */
  admitSocket?: SocketAdmission
  /**
   * Connections with nothing in flight are closed after this long: the app's listener keeps its side
   * open (its own idle timeout would end a client between requests).
   */
  idleTimeoutMs?: number
}

export interface Front {
  port: number
  /** Stops accepting; `force` also closes the open connections. */
  stop(force?: boolean): void
  /** Requests being answered in-process. */
  inFlight(): number
}

export function startFront(options: FrontOptions): Front {
  const headMs = options.headTimeoutMs ?? 10_000
  const idleMs = options.idleTimeoutMs ?? 10_000
  /** The open connections, for the timeouts. */
  const connections = new Set<Conn>()
  const cap = new ConnectionCap(options.maxConnectionsPerAddress ?? 0, options.trustedProxies)

  /**
   * Events raised while actions are performed (an answer the front makes at once reports its end
   * while `serve` is performed) wait until the actions decided before them are done.
   */
  const later: [Conn, Event][] = []
  let performing = false
  const run = (c: Conn, e: Event) => {
    if (performing) return void later.push([c, e])
    performing = true
    try {
      perform(c, step(c, e).actions)
    } finally {
      performing = false
      const next = later.shift() // also after a throw: the other connections' events still run
      if (next) run(next[0], next[1])
    }
  }
  const perform = (c: Conn, actions: Action[]) => {
    for (const a of actions) {
      switch (a.do) {
        case 'to-client':
          writes.add(c, a.data)
          break
        case 'to-up':
          send(c.up!, c.toUp, a.data, () => c.client.pause())
          break
        case 'serve':
          inline.answer(c, a.request, a.head, a.close)
          break
        case 'connect':
          connect(c)
          break
        case 'shutdown-up':
          c.up?.shutdown()
          break
        case 'end-up':
          c.up?.end()
          break
        case 'pause-client':
          c.client.pause()
          break
        case 'resume-client':
          // not while the app's socket holds back what the client sent: its drain resumes it
          if (!a.whenSent || c.toUp.length === 0) c.client.resume()
          break
        case 'pause-up':
          c.up?.pause()
          break
        case 'resume-up':
          c.up?.resume()
          break
        case 'close-client':
          if (c.toClient.length === 0) closeClient(c) // else once the queue is written
          break
        case 'end-client':
          c.client.end()
          break
        case 'terminate':
          c.client.terminate()
          break
        case 'fail-timer':
          setTimeout(() => run(c, { on: 'fail-grace' }), a.ms).unref()
          break
        case 'ws-upgrade':
          // the app's decision comes after an await: its outcome is raised as events then
          void upgradeInFront(c, a, options.admitSocket!, socketIo, topics).catch(() => c.client.end())
          break
        case 'ws-data':
          c.ws?.read(a.data)
          break
      }
    }
    if (c.upstream === 'none') c.up = null
  }

  const writes = new TurnWrites((c, now) => connections.has(c) && written(c, now))
  /** The client can take more (its socket drained, or the turn's writes are due): what waits for that goes on. */
  const written = (c: Conn, now: number) => {
    const backlogged = !flushQueue(c.client, c.toClient)
    const drained = backlogged ? undefined : c.onDrained // a large answer waiting for the drain
    if (drained) c.onDrained = undefined
    run(c, { on: 'client-written', backlogged, waiter: drained !== undefined, now })
    drained?.()
  }
  /** A client that may still be sending is half-closed and lingers; one that ended is closed. */
  const closeClient = (c: Conn) => {
    if (clientEnded(c.clientSide)) return void c.client.end() // also one that ended while it lingered
    if (c.lingering) return
    c.client.shutdown()
    c.client.resume()
    c.lingering = { dropped: 0, timer: setTimeout(() => c.client.end(), LINGER.ms) }
  }

  const inline = inlineAnswers(options.serve, {
    toClient: (c: Conn, data: Chunk) => writes.add(c, data),
    answered: (c, close) => run(c, { on: 'answered', close, now: Date.now() }),
  })

  /** The websockets this front serves, by topic. */
  const topics: Topics = new Map()
  const socketIo: SocketIo = {
    toClient: (c, data) => writes.add(c, data),
    opened: (c) => run(c, { on: 'ws-open', now: Date.now() }),
    closing: (c) => run(c, { on: 'ws-close' }),
    refused: (c, answer, head, close) => inline.answer(c, answer, head, close),
    flush: (c) => void flushQueue(c.client, c.toClient),
  }

  const reads = new TurnReads(
    (c, data) => {
      if (!c.lingering) return run(c, { on: 'client-data', data, now: Date.now() })
      c.lingering.dropped += data.length
      if (c.lingering.dropped > LINGER.bytes) c.client.end()
    },
    (c) => run(c, { on: 'client-end' }),
  )

  const timer = setInterval(
    () => {
      const now = Date.now()
      for (const c of connections) {
        run(c, { on: 'tick', now, headMs, idleMs })
        c.ws?.tick(now)
      }
    },
    Math.min(1000, headMs / 2),
  )
  timer.unref() // a timer of the process's own sockets, not background work

  const connect = (c: Conn) => {
    let opened = false // until then a failure is the connect's own: the client gets a 502
    Bun.connect<Conn>({
      unix: options.upstream,
      data: c,
      socket: {
        open(up) {
          opened = true
          c.up = up
          run(c, { on: 'up-open', now: Date.now() })
        },
        data: (_up, data) => {
          writes.readingNow()
          run(c, { on: 'up-data', data, now: Date.now() })
        },
        drain(up) {
          if (flushQueue(up, c.toUp)) run(c, { on: 'up-drained' })
        },
        close: () => void (opened && run(c, { on: 'up-closed' })),
        error: () => void (opened && run(c, { on: 'up-error' })),
      },
    }).catch(() => run(c, { on: 'up-failed' }))
  }

  const listener = Bun.listen<Conn>({
    hostname: options.hostname,
    port: options.port,
    // Bun's types leave it out of listen options; it is kept (checked: two processes share a port)
    ...({ reusePort: options.reusePort === true } as object),
    allowHalfOpen: true,
    socket: {
      open(client) {
        const peer = client.remoteAddress
        const capKey = cap.admit(peer)
        if (capKey === null) {
          // over the cap: a short answer at once, with no upstream connection made for it
          client.data = { refused: true } as Conn
          client.write(failResponse(503))
          client.end()
          return
        }
        const c: Conn = {
          client,
          peer,
          up: null,
          upstream: 'none',
          inline: options.inline ?? true,
          sockets: (options.inline ?? true) && options.admitSocket !== undefined,
          stream: new RequestStream(Buffer.from(`X-Real-IP: ${peer}\r\n`), options.maxBodyBytes, options.routeLimits),
          responses: new ResponseStream(),
          pending: [],
          toUp: [],
          toClient: [],
          phase: httpPhase(),
          clientSide: 'open',
          backlogged: false,
          capKey,
          lastActive: Date.now(),
          lastWrite: 0,
        }
        client.data = c
        connections.add(c)
      },
      data(client, data) {
        const c = client.data
        if (c.refused) return
        reads.add(c, data) // first: its turn's end comes before the writes'
        writes.readingNow()
      },
      drain(client) {
        const c = client.data
        if (c.refused || writes.due(c)) return // the turn's end writes it
        written(c, Date.now())
      },
      end(client) {
        const c = client.data
        if (c.refused) return
        reads.add(c, null) // after what the client sent before it
      },
      close(client) {
        const c = client.data
        if (c.refused) return // never counted
        clearTimeout(c.lingering?.timer)
        cap.release(c.capKey)
        connections.delete(c)
        run(c, { on: 'client-closed' })
        c.onDrained?.()
        c.ws?.closed()
      },
      error: (client) => void client.end(),
    },
  })
  return {
    port: listener.port,
    stop(force?: boolean) {
      clearInterval(timer)
      listener.stop(force)
    },
    inFlight: () => inline.inFlight(),
  }
}
