/**
 * What the push bench (./ws-push.ts) measures with: the subscription its sockets send, the reading
 * of event frames in place (which write each carries, when it came), the creates that make the
 * events and tell their commit time and process, the processes' CPU from /proc, and the floors'
 * servers.
 */
import { join } from 'node:path'
import { processOf } from './http-pinned'
import type { BenchService } from './service-process'
import { type BareSocket, connectBare, type OnFrame, startsWith } from './ws-client'

export const SUBSCRIBE = JSON.stringify([
  'subscribe',
  { id: 's', expires: 3600, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
])
const EVENT = Buffer.from('["event"')
const ACK = Buffer.from('["subscribe"')
/** Wall-clock milliseconds with sub-millisecond precision, comparable with the server's `lwt`. */
const wallNow = () => performance.timeOrigin + performance.now()

const W = Buffer.from('"w":')

/** The digits after the last `"w":` of the payload `buf[start, end)`, read in place; -1 when there is none. */
function writeNumber(buf: Buffer, start: number, end: number): number {
  const at = buf.lastIndexOf(W, end - W.length)
  if (at < start) return -1
  let w = 0
  let i = at + W.length
  for (; i < end && buf[i]! >= 0x30 && buf[i]! <= 0x39; i++) w = w * 10 + buf[i]! - 0x30
  return i === at + W.length ? -1 : w
}

/**
 * Counts acknowledgements and hands each event frame's write number `w`, arrival time and socket
 * (the number given to `onFrameOf`) over, allocating nothing.
 */
export function frameReader(onEvent: (w: number, at: number, socket: number) => void) {
  const state = { acks: 0, events: 0 }
  const onFrameOf =
    (socket: number): OnFrame =>
    (buf, start, end) => {
      if (startsWith(buf, start, end, ACK)) return void state.acks++
      if (!startsWith(buf, start, end, EVENT)) return
      state.events++
      const w = writeNumber(buf, start, end)
      if (w >= 0) onEvent(w, wallNow(), socket)
    }
  return { state, onFrameOf }
}

export async function openSockets(wsUrl: string, count: number, onFrame: OnFrame, acks: () => number) {
  const sockets: BareSocket[] = []
  for (let i = 0; i < count; i += 200) {
    const batch = await Promise.all(Array.from({ length: Math.min(200, count - i) }, () => connectBare(wsUrl, onFrame)))
    for (const socket of batch) {
      sockets.push(socket)
      socket.send(SUBSCRIBE)
    }
  }
  while (acks() < count) await Bun.sleep(20)
  return sockets
}

export const createPath = '/rest/v1/reference/extobjs'
export const createBody = (w: number) => JSON.stringify({ type: 'push', value: { w } })

/** Creates a record carrying `w`; its commit time and the process that took it, from the answer. */
export async function create(base: string, token: string, w: number): Promise<{ commit: number; process: string }> {
  const res = await fetch(`${base}${createPath}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: createBody(w),
  })
  return created(w, res.status, await res.text(), res.headers.get('x-request-id'))
}

/** The create's commit time and the process that took it, from its answer. */
export function created(w: number, status: number, text: string, requestId: string | null | undefined) {
  const body = JSON.parse(text) as { ext?: { lwt: string } }
  if (!body.ext) throw new Error(`create ${w}: ${status} ${text}`)
  return { commit: Date.parse(body.ext.lwt), process: processOf(requestId) }
}

/** User and system clock ticks (USER_HZ = 100) of a process and its children (APP_PROCESSES > 1), from /proc. */
export async function cpuTicks(pid: number): Promise<[number, number]> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(') ')[1]!.split(' ')
  const children = (await Bun.file(`/proc/${pid}/task/${pid}/children`).text()).trim().split(/\s+/).filter(Boolean)
  const sum: [number, number] = [Number(fields[11]), Number(fields[12])]
  for (const [user, system] of await Promise.all(children.map((c) => cpuTicks(Number(c))))) {
    sum[0] += user
    sum[1] += system
  }
  return sum
}

/** CPU per frame delivered, user + system, in microseconds. */
export function perFrame(now: [number, number], then: [number, number], frames: number): string {
  const us = (ticks: number) => ((ticks * 10_000) / Math.max(1, frames)).toFixed(1)
  return `${us(now[0] - then[0])} + ${us(now[1] - then[1])} µs`
}

/**
 * A floor's server: bench/raw-ws-server.ts (plain Bun.serve publishing to one topic),
 * bench/raw-listen-ws-server.ts (a Bun.listen server writing each socket in a JS loop: what a front
 * serving its sockets itself could reach), or one process of the cross-process floor
 * (bench/raw-cross-server.ts).
 */
export async function startRawServer(file: string, env: Record<string, string> = {}): Promise<BenchService> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, file)], {
    stdout: 'pipe',
    env: { ...process.env, ...env },
  })
  const reader = proc.stdout.getReader()
  let out = ''
  while (!/listening (\d+)/.test(out)) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the floor's server did not start: ${out}`)
    out += new TextDecoder().decode(value)
  }
  const port = /listening (\d+)/.exec(out)![1]
  const stop = async () => {
    proc.kill()
    await proc.exited
  }
  return { url: `http://127.0.0.1:${port}`, pid: proc.pid, token: '-', stop }
}
