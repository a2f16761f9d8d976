/**
 * The gateway's sockets: a Bun.listen front on the public port, one Bun.connect upstream per client
 * connection to the app's private unix socket, bytes relayed both ways with backpressure. Requests
 * go through RequestStream; responses pass back untouched.
 */
import type { Socket, TCPSocketListener } from 'bun'
import { LINGER } from '../body'
import { ConnectionCap } from './connection-cap'
import { RequestStream } from './request-stream'

export interface FrontOptions {
  hostname: string
  port: number
  /** The app's unix socket. */
  upstream: string
  /** Incomplete heads older than this are answered 408. */
  headTimeoutMs?: number
  /** The largest body any route takes (MAX_BODY_BYTES, FILES_MAX_BYTES): a body or chunk declared larger is answered 413. */
  maxBodyBytes: number
  /** Open connections one client address may hold (0: no cap); trusted proxies are not capped. */
  maxConnectionsPerAddress?: number
  /** TRUST_PROXY: the addresses of proxies, which carry many clients' connections. */
  trustedProxies?: string[]
}

const FAIL_BODY: Record<number, string> = {
  400: '{"error_code":1400,"error_message":"malformed HTTP request"}',
  408: '{"error_code":1408,"error_message":"request head not received in time"}',
  // the app answers a too-large body with the same status and code (payloadTooLarge)
  413: '{"error_code":1413,"error_message":"request body too large","error_details":{"field":"body"}}',
  431: '{"error_code":1431,"error_message":"request head too large"}',
  503: '{"error_code":1503,"error_message":"too many connections from this address; close some and try again"}',
}
const REASON: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Content Too Large',
  431: 'Request Header Fields Too Large',
  503: 'Service Unavailable',
}
const BAD_GATEWAY = Buffer.from('HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n')
const failResponse = (status: number) =>
  Buffer.from(
    `HTTP/1.1 ${status} ${REASON[status]}\r\ncontent-type: application/json\r\ncontent-length: ${FAIL_BODY[status]!.length}\r\n${status === 503 ? 'retry-after: 1\r\n' : ''}connection: close\r\n\r\n${FAIL_BODY[status]}`,
  )
/** The answer over the per-address cap, made once: refusing must cost next to nothing. */
const REFUSED = failResponse(503)

/** How long a failed connection waits for the app to answer what was already forwarded. */
const FAIL_GRACE_MS = 2000

interface Conn {
  client: Socket<Conn>
  up: Socket<Conn> | null
  stream: RequestStream
  /** Bytes for the upstream before it is open. */
  early: Buffer[]
  toUp: Buffer[]
  toClient: Buffer[]
  /** Client bytes held while an upgrade request waits for the app's answer. */
  held: Buffer[]
  mode: 'http' | 'upgrade-wait' | 'tunnel' | 'failing' | 'closed'
  failStatus: number
  clientEnded: boolean
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

/** Writes what it can; queues the rest and pauses the other side until `drain`. */
function send(sock: Socket<Conn>, queue: Buffer[], data: Buffer, other: Socket<Conn> | null): void {
  if (queue.length === 0) {
    const n = sock.write(data)
    if (n === data.length) return
    data = data.subarray(Math.max(0, n))
  }
  queue.push(data)
  other?.pause()
}

function flushQueue(sock: Socket<Conn>, queue: Buffer[], other: Socket<Conn> | null): boolean {
  while (queue.length) {
    const d = queue[0]!
    const n = sock.write(d)
    if (n < d.length) {
      queue[0] = d.subarray(Math.max(0, n))
      return false
    }
    queue.shift()
  }
  other?.resume()
  return true
}

export function startFront(options: FrontOptions): TCPSocketListener<Conn> {
  const headTimeoutMs = options.headTimeoutMs ?? 10_000
  const waitingHeads = new Set<Conn>()

  const toUpstream = (c: Conn, data: Buffer) => {
    if (!c.up) c.early.push(data)
    else send(c.up, c.toUp, data, c.client)
  }

  const fail = (c: Conn, status: number) => {
    if (c.mode === 'failing' || c.mode === 'closed') return
    c.mode = 'failing'
    c.failStatus = status
    waitingHeads.delete(c)
    // half-close: the app answers what it already has, then closes; a connecting upstream does this on open
    c.up?.shutdown()
    setTimeout(() => finishFail(c), FAIL_GRACE_MS).unref()
  }
  const finishFail = (c: Conn) => {
    if (c.mode === 'closed') return
    c.mode = 'closed'
    send(c.client, c.toClient, failResponse(c.failStatus), null)
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
    c.lingering = { dropped: 0, timer: setTimeout(() => c.client.end(), LINGER.ms) }
  }
  const cap = new ConnectionCap(options.maxConnectionsPerAddress ?? 0, options.trustedProxies)

  const fromClient = (c: Conn, data: Buffer) => {
    if (c.mode === 'tunnel') return toUpstream(c, data)
    if (c.mode === 'upgrade-wait') return void c.held.push(data)
    if (c.mode !== 'http') return
    const r = c.stream.push(data, Date.now())
    if (r.out.length) toUpstream(c, r.out.length === 1 ? r.out[0]! : Buffer.concat(r.out))
    if (r.fail) return fail(c, r.fail)
    if (r.held) {
      c.mode = 'upgrade-wait'
      if (r.held.length) c.held.push(r.held)
    }
    if (c.stream.waitingForHead) waitingHeads.add(c)
    else waitingHeads.delete(c)
  }

  const fromUpstream = (c: Conn, data: Buffer) => {
    if (c.mode === 'upgrade-wait') {
      const switched = data.toString('latin1', 0, 12) === 'HTTP/1.1 101'
      send(c.client, c.toClient, data, c.up)
      const held = c.held.splice(0)
      if (switched) {
        c.mode = 'tunnel'
        for (const h of held) toUpstream(c, h)
      } else {
        c.mode = 'http'
        c.stream.upgradeDeclined()
        for (const h of held) fromClient(c, h)
      }
      // a client that half-closed while its upgrade was pending: the app gets its FIN only now
      if (c.clientEnded && (c.mode as Conn['mode']) !== 'upgrade-wait') c.up?.shutdown()
      return
    }
    if (c.mode === 'closed') return
    send(c.client, c.toClient, data, c.up)
  }

  const sweep = setInterval(
    () => {
      const now = Date.now()
      for (const c of waitingHeads) if (now - c.stream.partialSince > headTimeoutMs) fail(c, 408)
    },
    Math.min(1000, headTimeoutMs / 2),
  )
  sweep.unref()

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
          early: [],
          toUp: [],
          toClient: [],
          held: [],
          mode: 'http',
          failStatus: 0,
          clientEnded: false,
          capKey,
        }
        client.data = c
        Bun.connect<Conn>({
          unix: options.upstream,
          data: c,
          socket: {
            open(up) {
              c.up = up
              for (const d of c.early.splice(0)) send(up, c.toUp, d, c.client)
              if (c.clientEnded && c.mode !== 'upgrade-wait') up.shutdown()
              if (c.mode === 'failing') up.shutdown()
            },
            data: (_up, data) => fromUpstream(c, data),
            drain: (up) => void flushQueue(up, c.toUp, c.client),
            close() {
              if (c.mode === 'failing') return finishFail(c)
              c.mode = 'closed'
              waitingHeads.delete(c)
              finishClient(c)
            },
            error: () => finishClient(c),
          },
        }).catch(() => {
          c.mode = 'closed'
          send(c.client, c.toClient, BAD_GATEWAY, null)
          finishClient(c)
        })
      },
      data: (client, data) => {
        const c = client.data
        if (c.refused) return
        if (!c.lingering) return fromClient(c, data)
        c.lingering.dropped += data.length
        if (c.lingering.dropped > LINGER.bytes) client.end()
      },
      drain(client) {
        const c = client.data
        if (c.refused) return
        if (flushQueue(client, c.toClient, c.up) && c.finishing) closeClient(c)
      },
      end(client) {
        const c = client.data
        if (c.refused) return
        c.clientEnded = true
        if (c.lingering) return void client.end()
        // requests held behind a pending upgrade still go to the app first (see fromUpstream)
        if (c.mode !== 'upgrade-wait') c.up?.shutdown()
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
