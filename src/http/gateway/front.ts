/**
 * The gateway's sockets: a Bun.listen front on the public port, one Bun.connect upstream per client
 * connection to an app's private unix socket (the next one in turn when there are several app
 * processes; one that does not answer is passed over), bytes relayed both ways with backpressure. Requests
 * go through RequestStream and reach the app one at a time: the next head waits until the app's
 * answer to the last one has ended (ResponseStream), since Bun.serve drops a connection when it
 * parses a request behind an answer still pending. Responses pass back untouched.
 */
import type { Socket, TCPSocketListener } from 'bun'
import { LINGER } from '../body'
import { BAD_GATEWAY, failResponse, REFUSED } from './answers'
import { ConnectionCap } from './connection-cap'
import { RequestStream } from './request-stream'
import { ResponseStream } from './response-stream'

export interface FrontOptions {
  hostname: string
  port: number
  /** The unix sockets of the app processes (one unless WORKERS > 1). */
  upstreams: string[]
  /** Incomplete heads older than this are answered 408. */
  headTimeoutMs?: number
  /** The largest body any route takes (MAX_BODY_BYTES, FILES_MAX_BYTES): a body or chunk declared larger is answered 413. */
  maxBodyBytes: number
  /** Open connections one client address may hold (0: no cap); trusted proxies are not capped. */
  maxConnectionsPerAddress?: number
  /** TRUST_PROXY: the addresses of proxies, which carry many clients' connections. */
  trustedProxies?: string[]
}

/** How long a failed connection waits for the app to answer what was already forwarded. */
const FAIL_GRACE_MS = 2000

/** Request bytes for the app; `start` marks the first bytes of a request (and whether it is a HEAD request). */
interface Segment {
  data: Buffer
  start?: { head: boolean }
}

interface Conn {
  client: Socket<Conn>
  up: Socket<Conn> | null
  stream: RequestStream
  responses: ResponseStream
  /** Request bytes not yet sent to the app: a new request waits until the last one's answer ended. */
  pending: Segment[]
  /** The request sent to the app whose answer has not ended yet. */
  awaiting: { head: boolean } | null
  toUp: Buffer[]
  toClient: Buffer[]
  /** Client bytes held while an upgrade request waits for the app's answer. */
  held: Buffer[]
  mode: 'http' | 'upgrade-wait' | 'tunnel' | 'failing' | 'closed'
  failStatus: number
  clientEnded: boolean
  /** The app got our FIN: it answers what it has, then closes. */
  upEnded?: boolean
  /** Nothing more goes to the client but what is queued: it is closed once the queue is out. */
  finishing?: boolean
  /**
   * Answered and half-closed: what the client still sends is read and dropped (a lingering close,
   * see LINGER) until it ends, LINGER.ms pass or LINGER.bytes arrive, so it reads the answer
   * instead of a connection reset.
   */
  lingering?: { dropped: number; timer: Timer }
  /** What it counts against in the per-address cap ('' when it does not count). */
  capKey: string
  /** Refused over the cap: answered 503 and closed, nothing else. */
  refused?: true
}

/** Writes what it can; queues the rest and calls `backlog` (which pauses the other side) until `drain`. */
function send(sock: Socket<Conn>, queue: Buffer[], data: Buffer, backlog: () => void): void {
  if (queue.length === 0) {
    const n = sock.write(data)
    if (n === data.length) return
    data = data.subarray(Math.max(0, n))
  }
  queue.push(data)
  backlog()
}

/** True once the queue is written out. */
function flushQueue(sock: Socket<Conn>, queue: Buffer[]): boolean {
  while (queue.length) {
    const d = queue[0]!
    const n = sock.write(d)
    if (n < d.length) {
      queue[0] = d.subarray(Math.max(0, n))
      return false
    }
    queue.shift()
  }
  return true
}

export function startFront(options: FrontOptions): TCPSocketListener<Conn> {
  const headTimeoutMs = options.headTimeoutMs ?? 10_000
  const waitingHeads = new Set<Conn>()
  const cap = new ConnectionCap(options.maxConnectionsPerAddress ?? 0, options.trustedProxies)

  const toUpstream = (c: Conn, data: Buffer) => send(c.up!, c.toUp, data, () => c.client.pause())
  const toClient = (c: Conn, data: Buffer) => send(c.client, c.toClient, data, () => c.up?.pause())
  /** The client is read again once nothing it sent waits: no backlog upstream, no request held back. */
  const resumeClient = (c: Conn) => {
    if (c.toUp.length === 0 && c.pending.length === 0 && c.mode !== 'upgrade-wait') c.client.resume()
  }

  /** Sends what may go to the app now: everything up to the next request while an answer is awaited. */
  const pump = (c: Conn) => {
    if (!c.up) return // connecting: `open` pumps
    const batch: Buffer[] = []
    while (c.pending.length) {
      const seg = c.pending[0]!
      if (seg.start) {
        if (c.awaiting) break
        c.awaiting = seg.start
      }
      batch.push(seg.data)
      c.pending.shift()
    }
    if (batch.length) {
      toUpstream(c, batch.length === 1 ? batch[0]! : Buffer.concat(batch))
      // a head that began behind held requests had no way to go on: its time starts now
      if (c.stream.waitingForHead) c.stream.partialSince = Date.now()
    }
    if (c.pending.length) c.client.pause()
    else {
      resumeClient(c)
      endUpstreamWhenDone(c)
    }
  }
  /** A client that ended (or failed) has its FIN passed on once all it sent went to the app. */
  const endUpstreamWhenDone = (c: Conn) => {
    if (!c.up || c.upEnded || c.pending.length || c.mode === 'upgrade-wait') return
    if (!c.clientEnded && c.mode !== 'failing') return
    c.upEnded = true
    c.up.shutdown() // the app answers what it has, then closes
  }

  const fail = (c: Conn, status: number) => {
    if (c.mode === 'failing' || c.mode === 'closed') return
    c.mode = 'failing'
    c.failStatus = status
    waitingHeads.delete(c)
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
      c.pending.push(start ? { data: r.out[i]!, start: { head: start.head } } : { data: r.out[i]! })
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
    },
    Math.min(1000, headTimeoutMs / 2),
  )
  sweep.unref()

  let nextUpstream = 0
  /** Connects the client to the app at `turn`, or to the next one that answers; 502 when none does. */
  function connectUpstream(c: Conn, turn: number, tried: number): void {
    let opened = false // until then a failure is the connect's own: the next app is tried
    Bun.connect<Conn>({
      unix: options.upstreams[turn % options.upstreams.length]!,
      data: c,
      socket: {
        open(up) {
          opened = true
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
      if (c.mode === 'closed') return // the client left meanwhile
      if (tried + 1 < options.upstreams.length) return connectUpstream(c, turn + 1, tried + 1)
      c.mode = 'closed'
      toClient(c, BAD_GATEWAY)
      finishClient(c)
    })
  }

  const listener = Bun.listen<Conn>({
    hostname: options.hostname,
    port: options.port,
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
        }
        client.data = c
        connectUpstream(c, nextUpstream++, 0)
      },
      data(client, data) {
        const c = client.data
        if (c.refused) return
        if (!c.lingering) return fromClient(c, data)
        c.lingering.dropped += data.length
        if (c.lingering.dropped > LINGER.bytes) client.end()
      },
      drain(client) {
        const c = client.data
        if (c.refused || !flushQueue(client, c.toClient)) return
        c.up?.resume()
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
        c.mode = 'closed'
        c.up?.end()
      },
      error: (client) => void client.end(),
    },
  })
  const stop = listener.stop.bind(listener)
  listener.stop = (force?: boolean) => {
    clearInterval(sweep)
    stop(force)
  }
  return listener
}
