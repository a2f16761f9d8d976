/**
 * Keep-alive HTTP/1.1 connections to a port that several processes share (SO_REUSEPORT), each
 * known by the process that answers it (the prefix of its answers' x-request-id), so a bench can
 * send its requests to each process in turn. fetch's pool reuses the connection that is free: at a
 * steady rate most requests took one connection, and so one process, and which one was chance.
 * One request at a time on a connection, a process's connections taken in turn (none sits idle
 * long enough for the server to close it); answers are read by the tests' raw HTTP parser.
 */
import type { Socket } from 'bun'
import { parseResponses, type RawResponse } from '../tests/helpers/raw-http'

export type Answer = RawResponse

/** The process a request or an upgrade reached: the prefix of its x-request-id. */
export const processOf = (requestId: string | null | undefined) => requestId?.split('-')[0] ?? '?'

interface Conn {
  socket: Socket<State>
  process: string
  busy: boolean
}

interface State {
  buf: Buffer
  waiting: { resolve(answer: Answer): void; reject(err: Error): void; timer: Timer } | null
  closed: boolean
}

/** How long an answer may take before its request fails (and its connection is closed). */
const ANSWER_MS = 30_000

/** The request waiting on the socket fails with `err`. */
function fail(s: Socket<State>, err: Error): void {
  const waiting = s.data.waiting
  s.data.waiting = null
  if (!waiting) return
  clearTimeout(waiting.timer)
  waiting.reject(err)
}

function connect(hostname: string, port: number): Promise<Socket<State>> {
  return Bun.connect<State>({
    hostname,
    port,
    data: { buf: Buffer.alloc(0), waiting: null, closed: false },
    socket: {
      close(s) {
        s.data.closed = true
        fail(s, new Error('the server closed a keep-alive connection'))
      },
      data(s, chunk) {
        const st = s.data
        st.buf = st.buf.length ? Buffer.concat([st.buf, chunk]) : Buffer.from(chunk)
        const { responses, rest } = parseResponses(st.buf)
        const answer = responses[0]
        if (!answer) return
        st.buf = rest
        // the server closes it after this answer: it takes no more requests
        if (answer.headers.connection === 'close') st.closed = true
        const waiting = st.waiting
        st.waiting = null
        if (!waiting) return
        clearTimeout(waiting.timer)
        waiting.resolve(answer)
      },
    },
  })
}

function send(socket: Socket<State>, request: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    if (socket.data.closed) return reject(new Error('the server closed a keep-alive connection'))
    const timer = setTimeout(() => {
      fail(socket, new Error(`no answer in ${ANSWER_MS} ms`))
      socket.end()
    }, ANSWER_MS)
    socket.data.waiting = { resolve, reject, timer }
    socket.write(request)
  })
}

/**
 * Opens connections until each of `processes` processes holds `perProcess` of them (connections
 * past that are closed), asking `probePath` to learn which process took each.
 */
export async function pinnedConnections(base: string, processes: number, perProcess: number, probePath: string) {
  const { hostname, port } = new URL(base)
  const byProcess = new Map<string, Conn[]>()
  const full = () => byProcess.size === processes && [...byProcess.values()].every((c) => c.length >= perProcess)
  const closeAll = () => {
    for (const conns of byProcess.values()) for (const c of conns) c.socket.end()
  }
  try {
    for (let tries = 0; !full(); tries++) {
      if (tries > processes * perProcess * 50)
        throw new Error(`no ${perProcess} connections to each of ${processes} processes`)
      const socket = await connect(hostname, Number(port))
      const answer = await send(socket, `GET ${probePath} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`).catch((err) => {
        socket.end()
        throw err
      })
      const process = processOf(answer.headers['x-request-id'])
      const conns = byProcess.get(process) ?? []
      if (conns.length >= perProcess || socket.data.closed) socket.end()
      else byProcess.set(process, [...conns, { socket, process, busy: false }])
    }
  } catch (err) {
    closeAll()
    throw err
  }
  const names = [...byProcess.keys()]
  const next = names.map(() => 0)
  const isFree = (c: Conn) => !c.busy && !c.socket.data.closed
  /** The connections of the process numbered `i`; throws when the server closed them all. */
  const connsOf = (i: number): Conn[] => {
    const conns = byProcess.get(names[i]!)!
    if (conns.every((c) => c.socket.data.closed)) throw new Error(`every connection to process ${names[i]} was closed`)
    return conns
  }
  /** The process's next connection in turn that is free, if any. */
  const take = (i: number): Conn | undefined => {
    const conns = connsOf(i)
    for (let k = 0; k < conns.length; k++) {
      const c = conns[(next[i]! + k) % conns.length]!
      if (!isFree(c)) continue
      next[i] = (next[i]! + k + 1) % conns.length
      return c
    }
    return undefined
  }
  return {
    /** The processes, in the order `post` numbers them. */
    names,
    /** Whether the process numbered `i` has a connection free (throws when all of its connections were closed). */
    free: (i: number) => connsOf(i).some(isFree),
    /** POSTs on the next free connection of the process numbered `i` (check `free` first). */
    async post(i: number, path: string, headers: Record<string, string>, body: string): Promise<Answer> {
      const conn = take(i)
      if (!conn) throw new Error(`no free connection to ${names[i]}`)
      conn.busy = true
      const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`)
      try {
        return await send(
          conn.socket,
          `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${lines.join('')}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        )
      } finally {
        conn.busy = false
      }
    },
    close: closeAll,
  }
}
