/**
 * The gateway's sockets: a Bun.listen front on the public port, on the app's thread. Requests go
 * through RequestStream and are answered one at a time, in order: in-process when the front can take
 * them whole (./inline.ts), otherwise over one Bun.connect upstream per client connection to the
 * app's Bun.serve on its private unix socket, bytes relayed both ways with backpressure. A request
 * sent upstream waits until the app's answer to the last one has ended (ResponseStream), since
 * Bun.serve drops a connection when it parses a request behind an answer still pending. Those
 * responses pass back untouched.
 */
import { LINGER } from '../body'
import { BAD_GATEWAY, failResponse, REFUSED } from './answers'
import { ConnectionCap } from './connection-cap'
import type { IncomingRequest } from '../kernel'
import type { Answer } from '../respond'
import { INLINE_MAX_BODY, INLINE_RESPONSE_PIECE, InlineRequest, inlineAnswer, parseInlineHead } from './inline'
import { type Conn, flushQueue, send } from './connection'
import { type RequestStart, RequestStream } from './request-stream'
import { ResponseStream } from './response-stream'

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
  /** Open connections one client address may hold (0: no cap); trusted proxies are not capped. */
  maxConnectionsPerAddress?: number
  /** TRUST_PROXY: the addresses of proxies, which carry many clients' connections. */
  trustedProxies?: string[]
  /** The app's request handler, for the requests answered in-process; the upstream is connected when the first other one comes. */
  serve: (request: IncomingRequest) => Promise<Answer>
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

/** How long a failed connection waits for the app to answer what was already forwarded. */
const FAIL_GRACE_MS = 2000

export function startFront(options: FrontOptions): Front {
  const headTimeoutMs = options.headTimeoutMs ?? 10_000
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000
  const serving = options.serve
  const waitingHeads = new Set<Conn>()
  /** The open connections, for the idle sweep. */
  const idle = new Set<Conn>()
  const cap = new ConnectionCap(options.maxConnectionsPerAddress ?? 0, options.trustedProxies)

  const toUpstream = (c: Conn, data: Buffer) => send(c.up!, c.toUp, data, () => c.client.pause())
  const toClient = (c: Conn, data: Buffer | string) => send(c.client, c.toClient, data, () => c.up?.pause())
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
    while (c.pending.length) {
      const seg = c.pending[0]!
      if (seg.start) {
        if (c.awaiting) break
        const inline = takeInline(c, seg.start)
        if (inline === 'incomplete') {
          collecting = true
          break
        }
        if (inline === 'taken') continue
        if (!c.up) {
          connect(c)
          break
        }
        c.awaiting = seg.start
      } else if (!c.up) break // the body of a request whose upstream is connecting
      batch.push(seg.data)
      c.pending.shift()
    }
    if (batch.length) {
      toUpstream(c, batch.length === 1 ? batch[0]! : Buffer.concat(batch))
      // a head that began behind held requests had no way to go on: its time starts now
      if (c.stream.waitingForHead) c.stream.partialSince = Date.now()
    }
    if (collecting) c.client.resume()
    else if (c.pending.length) c.client.pause()
    else {
      resumeClient(c)
      endUpstreamWhenDone(c)
    }
  }
  /** A client that ended (or failed) has its FIN passed on once all it sent went to the app. */
  const endUpstreamWhenDone = (c: Conn) => {
    if (c.upEnded || c.pending.length || c.mode === 'upgrade-wait') return
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

  let inFlight = 0
  /** The connection ended (also while an answer was awaited: a check after an `await`). */
  const gone = (c: Conn) => c.mode === 'closed'
  /** Takes the request at the head of `pending` when it is one to answer in-process and its body is whole. */
  const takeInline = (c: Conn, start: RequestStart): 'taken' | 'incomplete' | 'upstream' => {
    if (start.bodyBytes < 0 || start.bodyBytes > INLINE_MAX_BODY) return 'upstream'
    const head = parseInlineHead(c.pending.slice(0, start.parts).map((s) => s.data))
    if (!head) return 'upstream'
    let end = start.parts
    let have = 0
    while (have < start.bodyBytes && end < c.pending.length && !c.pending[end]!.start)
      have += c.pending[end++]!.data.length
    if (have < start.bodyBytes) return 'incomplete'
    const bodyParts = c.pending.slice(start.parts, end).map((s) => s.data)
    const body = bodyParts.length === 0 ? null : bodyParts.length === 1 ? bodyParts[0]! : Buffer.concat(bodyParts)
    c.pending.splice(0, end)
    c.awaiting = { head: start.head, inline: true }
    void answerInline(c, new InlineRequest(head, body), start.head, head.close)
    return 'taken'
  }
  const answerInline = async (c: Conn, request: IncomingRequest, headRequest: boolean, close: boolean) => {
    inFlight++
    try {
      const answer = await inlineAnswer(await serving(request), headRequest, close)
      close = answer.close
      if (c.mode === 'closed') return
      toClient(c, answer.bytes)
      const rest = answer.rest
      for (let at = 0; rest && at < rest.size; at += INLINE_RESPONSE_PIECE) {
        if (c.toClient.length) await new Promise<void>((resolve) => (c.onDrained = resolve))
        if (gone(c)) return
        const piece = await rest.slice(at, at + INLINE_RESPONSE_PIECE).bytes()
        toClient(c, Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength))
      }
    } catch {
      // the answer could not be made (a file gone while it was read): the client sees the connection end
      if (c.mode !== 'closed') close = true
    } finally {
      inFlight--
    }
    c.awaiting = null
    c.lastActive = Date.now()
    if (c.mode === 'failing') return pump(c) // what came before the failure is answered first
    if (c.mode !== 'http') return
    if (close) {
      c.mode = 'closed'
      return finishClient(c)
    }
    pump(c)
  }

  const fail = (c: Conn, status: number) => {
    if (c.mode === 'failing' || c.mode === 'closed') return
    c.mode = 'failing'
    c.failStatus = status
    waitingHeads.delete(c)
    // nothing is being answered: the failure goes out at once
    if (!c.up && !c.connecting && !c.awaiting && !c.pending.length) return finishFail(c)
    endUpstreamWhenDone(c)
    setTimeout(() => finishFail(c), FAIL_GRACE_MS).unref()
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

  const sweep = setInterval(
    () => {
      const now = Date.now()
      for (const c of waitingHeads)
        if (c.pending.length === 0 && now - c.stream.partialSince > headTimeoutMs) fail(c, 408)
      // no app closes an idle connection for us
      for (const c of idle)
        if (c.mode === 'http' && !c.connecting && !c.awaiting && !c.pending.length)
          if (now - c.lastActive > idleTimeoutMs && !c.stream.waitingForHead) c.client.end()
    },
    Math.min(1000, headTimeoutMs / 2),
  )
  sweep.unref()

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
          c.up = up
          pump(c)
          endUpstreamWhenDone(c)
        },
        data: (_up, data) => fromUpstream(c, data),
        drain(up) {
          if (flushQueue(up, c.toUp)) resumeClient(c)
        },
        close() {
          if (!opened) return
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
      toClient(c, BAD_GATEWAY)
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
          client.write(REFUSED)
          client.end()
          return
        }
        const c: Conn = {
          client,
          up: null,
          stream: new RequestStream(Buffer.from(`X-Real-IP: ${peer}\r\n`), options.maxBodyBytes),
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
        }
        client.data = c
        idle.add(c)
      },
      data(client, data) {
        const c = client.data
        if (c.refused) return
        c.lastActive = Date.now()
        if (!c.lingering) return fromClient(c, data)
        c.lingering.dropped += data.length
        if (c.lingering.dropped > LINGER.bytes) client.end()
      },
      drain(client) {
        const c = client.data
        if (c.refused || !flushQueue(client, c.toClient)) return
        c.up?.resume()
        c.onDrained?.()
        c.onDrained = undefined
        if (c.finishing) closeClient(c)
      },
      end(client) {
        const c = client.data
        if (c.refused) return
        c.clientEnded = true
        if (c.lingering) return void client.end()
        // requests still held (behind an answer or a pending upgrade) go to the app first
        endUpstreamWhenDone(c)
      },
      close(client) {
        const c = client.data
        if (c.refused) return // never counted
        clearTimeout(c.lingering?.timer)
        cap.release(c.capKey)
        waitingHeads.delete(c)
        idle.delete(c)
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
      clearInterval(sweep)
      listener.stop(force)
    },
    inFlight: () => inFlight,
  }
}
