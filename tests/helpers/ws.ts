import { httpRequest, RawClient } from './raw-http'

/** A websocket client for tests: Bun's WebSocket, with every frame it received kept in order. */

export interface WsClient {
  ws: WebSocket
  /** Every parsed frame received so far. */
  frames: unknown[]
  send(frame: unknown): void
  /** The next frame (after those already taken) that satisfies `match`, or a timeout error. */
  next(
    match?: (frame: [string, Record<string, unknown>]) => boolean,
    timeoutMs?: number,
  ): Promise<[string, Record<string, unknown>]>
  /** Frames received so far that satisfy `match` and were not taken. */
  pending(match?: (frame: [string, Record<string, unknown>]) => boolean): [string, Record<string, unknown>][]
  /** How the socket closed. */
  closed: Promise<{ code: number; reason: string }>
  close(): void
}

type Frame = [string, Record<string, unknown>]

/** Opens `url` (ws://...) with optional headers; resolves once open, rejects if refused. */
export function openWs(url: string, headers: Record<string, string> = {}): Promise<WsClient> {
  const ws = new WebSocket(url, { headers } as unknown as string[])
  const frames: unknown[] = []
  const taken = new Set<number>()
  let wake: (() => void) | null = null
  let resolveClosed: (v: { code: number; reason: string }) => void = () => {}
  const closed = new Promise<{ code: number; reason: string }>((r) => (resolveClosed = r))
  ws.onmessage = (e) => {
    frames.push(JSON.parse(String(e.data)))
    wake?.()
  }
  ws.onclose = (e) => {
    resolveClosed({ code: e.code, reason: e.reason })
    wake?.()
  }
  const find = (match: (f: Frame) => boolean) => {
    for (let i = 0; i < frames.length; i++) if (!taken.has(i) && match(frames[i] as Frame)) return i
    return -1
  }
  const client: WsClient = {
    ws,
    frames,
    send: (frame) => ws.send(typeof frame === 'string' ? frame : JSON.stringify(frame)),
    async next(match = () => true, timeoutMs = 3000) {
      const until = Date.now() + timeoutMs
      for (;;) {
        const i = find(match)
        if (i >= 0) {
          taken.add(i)
          return frames[i] as Frame
        }
        const left = until - Date.now()
        if (left <= 0 || ws.readyState === WebSocket.CLOSED)
          throw new Error(`no matching frame within ${timeoutMs} ms; received ${JSON.stringify(frames)}`)
        await new Promise<void>((r) => {
          wake = r
          setTimeout(r, Math.min(left, 50))
        })
      }
    },
    pending: (match = () => true) => frames.filter((f, i) => !taken.has(i) && match(f as Frame)) as Frame[],
    closed,
    close: () => ws.close(),
  }
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve(client)
    ws.onerror = () => reject(new Error(`websocket to ${url} was refused`))
  })
}

/** The answer to a websocket upgrade request on a fresh connection (the gateway upgrades only a connection's first request). */
export async function upgradeAnswer(url: string, headers: Record<string, string> = {}) {
  const { hostname, port, pathname, search } = new URL(url)
  const client = await RawClient.open(Number(port), hostname)
  client.write(
    httpRequest('GET', pathname + search, {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString('base64'),
      ...headers,
    }),
  )
  const [res] = await client.responses(1)
  client.end()
  return { status: res!.status, body: res!.body ? JSON.parse(res!.body) : null, headers: res!.headers }
}
