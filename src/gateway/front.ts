/**
 * The gateway's sockets: a Bun.listen front on the public port, on the app's thread. Requests go
 * through RequestStream and are answered one at a time, in order: in-process when the front can take
 * them whole (./inline.ts), otherwise over one Bun.connect upstream per client connection to the
 * app's Bun.serve on its private unix socket, bytes relayed both ways with backpressure. A request
 * sent upstream waits until the app's answer to the last one has ended (ResponseStream), since
 * Bun.serve drops a connection when it parses a request behind an answer still pending. Those
 * responses pass back untouched.
 */
import { LINGER } from '../http/body'
import { badGateway, failResponse } from './answers'
import { ConnectionCap } from './connection-cap'
import type { Answer } from '../http/hooks/answers'
import { inlineAnswers } from './inline-answers'
import { type Chunk, type Conn, flushQueue, queued, send, TurnReads, TurnWrites } from './connection'
import { RequestStream, type RouteLimits } from './request-stream'
import { ResponseStream } from './response-stream'
import { startTimeouts } from './timeouts'

export interface FrontOptions {
  hostname: string
  port: number
  /** SO_REUSEPORT: the port is shared with the service's other app processes (WORKERS > 1). */
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

/** What may wait for the turn's end on one connection before its next pipelined request is taken. */
const PIPELINED_MAX = 64 * 1024

/** How long a failed connection waits for the app to answer what was already forwarded. */
const FAIL_GRACE_MS = 2000

export function startFront(options: FrontOptions): Front {
  const headTimeoutMs = options.headTimeoutMs ?? 10_000
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000
  const waitingHeads = new Set<Conn>()
  /** The open connections, for the idle timeouts. */
  const connections = new Set<Conn>()
  const cap = new ConnectionCap(options.maxConnectionsPerAddress ?? 0, options.trustedProxies)

  const toUpstream = (c: Conn, data: Buffer) => send(c.up!, c.toUp, data, () => c.client.pause())
  const writes = new TurnWrites((c, now) => connections.has(c) && written(c, now))
  const toClient = (c: Conn, data: Chunk) => writes.add(c, data)
  /** The client can take more (its socket drained, or the turn's writes are due): what waits for that goes on. */
  const written = (c: Conn, now: number) => {
    c.lastWrite = now // the client takes what it is sent, however slowly
    c.backlogged = !flushQueue(c.client, c.toClient)
    if (c.backlogged) return void c.up?.pause()
    c.up?.resume()
    const drained = c.onDrained
    c.onDrained = undefined
    if (drained) drained()
    else if (!c.finishing && (c.mode === 'http' || c.mode === 'failing')) pump(c)
    if (c.finishing && c.toClient.length === 0) closeClient(c) // an answer pump just queued goes out first
  }
  /** The client is read again once nothing it sent waits: no backlog upstream, no request held back. */
  const resumeClient = (c: Conn) => {
    if (c.toUp.length === 0 && c.pending.length === 0 && c.mode !== 'upgrade-wait') c.client.resume()
  }

  /**
   * Sends what may go to the app now: everything up to the next request while an answer is awaited.
   * Serving in-process, a request whose body is whole is answered here instead; one whose body is
   * still arriving is read on until it is.
   */
  const pump = (c: Conn) => {
    const batch: Buffer[] = []
    let collecting = false
    let answered = false
    while (c.pending.length) {
      const seg = c.pending[0]!
      if (seg.start) {
        // the next request waits for the last answer, for a client that stopped taking answers, and
        // for the turn's end when much is queued for this one
        if (c.awaiting || c.backlogged || queued(c.toClient) > PIPELINED_MAX) break
        const taken = inline.take(c, seg.start)
        if (taken === 'incomplete') {
          // a body that can no longer come whole (the client ended): nothing more is answered
          if (c.clientEnded) {
            c.pending.length = 0
            return finishClient(c)
          }
          collecting = true
          break
        }
        if (taken === 'taken') {
          answered = true
          continue
        }
        if (!c.up) {
          connect(c)
          break
        }
        c.awaiting = seg.start
      } else if (!c.up) break // the body of a request whose upstream is connecting
      batch.push(seg.data)
      c.pending.shift()
    }
    if (batch.length) toUpstream(c, batch.length === 1 ? batch[0]! : Buffer.concat(batch))
    // a head that began behind held requests had no way to go on: its time starts now
    if ((batch.length || answered) && c.stream.waitingForHead) c.stream.partialSince = Date.now()
    if (collecting) c.client.resume()
    else if (c.pending.length) c.client.pause()
    else {
      resumeClient(c)
      endUpstreamWhenDone(c)
    }
  }
  /** A client that ended (or failed) has its FIN passed on once all it sent went to the app. */
  const endUpstreamWhenDone = (c: Conn) => {
    // an in-process answer in flight comes first: its end calls this again
    if (c.upEnded || c.pending.length || c.mode === 'upgrade-wait' || c.awaiting?.inline) return
    if (!c.clientEnded && c.mode !== 'failing') return
    if (!c.up) {
      // nothing is upstream: once the last answer is out, the failure goes out, or the ended client is closed
      if (c.connecting || c.awaiting) return
      if (c.mode === 'failing') finishFail(c)
      else if (c.mode === 'http') finishClient(c)
      return
    }
    c.upEnded = true
    c.up.shutdown() // the app answers what it has, then closes
  }

  const inline = inlineAnswers(
    options.serve,
    { toClient, pump: (c) => pump(c), finishClient: (c) => finishClient(c) },
    options.inline ?? true,
  )

  const fail = (c: Conn, status: number) => {
    if (c.mode === 'failing' || c.mode === 'closed') return
    c.mode = 'failing'
    c.failStatus = status
    waitingHeads.delete(c)
    // nothing is being answered: the failure goes out at once
    if (!c.up && !c.connecting && !c.awaiting && !c.pending.length) return finishFail(c)
    endUpstreamWhenDone(c)
    // an in-process answer still in flight goes first: its end sends the failure
    setTimeout(() => c.awaiting?.inline || finishFail(c), FAIL_GRACE_MS).unref()
  }
  const finishFail = (c: Conn) => {
    if (c.mode === 'closed') return
    c.mode = 'closed'
    toClient(c, failResponse(c.failStatus))
    c.up?.end()
    finishClient(c)
  }
  /** Closes the client connection once what is queued for it is written. */
  const finishClient = (c: Conn) => {
    if (c.finishing) return
    c.finishing = true
    if (c.toClient.length === 0) closeClient(c)
  }
  /** A client that may still be sending is half-closed and lingers; one that ended is closed. */
  const closeClient = (c: Conn) => {
    if (c.lingering) return
    if (c.clientEnded) return void c.client.end()
    c.client.shutdown()
    c.client.resume()
    c.lingering = { dropped: 0, timer: setTimeout(() => c.client.end(), LINGER.ms) }
  }

  const fromClient = (c: Conn, data: Buffer) => {
    if (c.mode === 'tunnel') return toUpstream(c, data)
    if (c.mode === 'upgrade-wait') {
      c.held.push(data)
      return c.client.pause()
    }
    if (c.mode !== 'http') return
    const r = c.stream.push(data, Date.now())
    let next = 0
    for (let i = 0; i < r.out.length; i++) {
      const start = r.starts[next]?.at === i ? r.starts[next++] : undefined
      c.pending.push(start ? { data: r.out[i]!, start } : { data: r.out[i]! })
    }
    if (r.fail) fail(c, r.fail)
    else if (r.held) {
      c.mode = 'upgrade-wait'
      if (r.held.length) c.held.push(r.held)
    }
    pump(c)
    if (c.stream.waitingForHead && c.mode === 'http') waitingHeads.add(c)
    else waitingHeads.delete(c)
  }

  const clientEnded = (c: Conn) => {
    c.clientEnded = true
    if (c.lingering) return void c.client.end()
    // requests still held (behind an answer or a pending upgrade) go to the app first
    endUpstreamWhenDone(c)
  }
  const reads = new TurnReads((c, data) => {
    if (!c.lingering) return fromClient(c, data)
    c.lingering.dropped += data.length
    if (c.lingering.dropped > LINGER.bytes) c.client.end()
  }, clientEnded)

  const fromUpstream = (c: Conn, data: Buffer) => {
    if (c.mode === 'closed') return
    if (c.mode === 'tunnel') return toClient(c, data)
    const seen = c.responses.observe(data, c.awaiting?.head ?? false)
    toClient(c, data)
    if (seen.switched) {
      c.mode = 'tunnel'
      c.awaiting = null
      for (const h of c.held.splice(0)) toUpstream(c, h)
      resumeClient(c)
      return endUpstreamWhenDone(c)
    }
    if (seen.completed === 0) return
    c.awaiting = null
    c.lastActive = Date.now()
    if (c.mode === 'upgrade-wait') {
      // the app answered the upgrade request without switching: what the client sent since is HTTP
      c.mode = 'http'
      c.stream.upgradeDeclined()
      for (const h of c.held.splice(0)) fromClient(c, h)
    }
    pump(c)
  }

  const timeouts = startTimeouts({ connections, waitingHeads, headTimeoutMs, idleTimeoutMs, fail })

  const connect = (c: Conn) => {
    if (c.connecting || c.up) return
    c.connecting = true
    let opened = false // until then a failure is the connect's own: the client gets a 502
    Bun.connect<Conn>({
      unix: options.upstream,
      data: c,
      socket: {
        open(up) {
          opened = true
          c.connecting = false
          if (c.mode === 'closed') return void up.end() // the client left while it connected
          c.up = up
          pump(c)
          endUpstreamWhenDone(c)
        },
        data: (_up, data) => {
          writes.readingNow()
          fromUpstream(c, data)
        },
        drain(up) {
          if (flushQueue(up, c.toUp)) resumeClient(c)
        },
        close() {
          if (!opened) return
          if (c.awaiting?.inline) {
            // nothing is awaited from the app: the in-process answer goes out, then the connection goes on or ends
            c.up = null
            c.upEnded = false
            return
          }
          if (c.mode === 'failing') return finishFail(c)
          c.mode = 'closed'
          waitingHeads.delete(c)
          finishClient(c)
        },
        error: () => void (opened && finishClient(c)),
      },
    }).catch(() => {
      c.connecting = false
      if (c.mode === 'closed') return // the client left meanwhile
      c.mode = 'closed'
      toClient(c, badGateway())
      finishClient(c)
    })
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
          stream: new RequestStream(Buffer.from(`X-Real-IP: ${peer}\r\n`), options.maxBodyBytes, options.routeLimits),
          responses: new ResponseStream(),
          pending: [],
          awaiting: null,
          toUp: [],
          toClient: [],
          held: [],
          mode: 'http',
          failStatus: 0,
          clientEnded: false,
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
        c.lastActive = Date.now()
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
        waitingHeads.delete(c)
        connections.delete(c)
        c.mode = 'closed'
        c.up?.end()
        c.onDrained?.()
      },
      error: (client) => void client.end(),
    },
  })
  return {
    port: listener.port,
    stop(force?: boolean) {
      timeouts.stop()
      listener.stop(force)
    },
    inFlight: () => inline.inFlight(),
  }
}
