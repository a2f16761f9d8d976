// The floor of a push across processes: two of these share a port (SO_REUSEPORT), as the service's
// app processes do. A POST (any path) takes the time, commits a row carrying the body's `value.w` to
// a SQLite file both share (WAL, one statement, autocommit), publishes the event frame on Redis (the
// writer itself: no journal, no pump, no order kept), and answers with that time as `ext.lwt`; each
// process publishes what Redis brings to its own sockets' topic. A GET (any path) answers `ok`, so a
// client learns which process took its connection: answers and 101s carry an x-request-id
// `<INDEX>-<n>`, as the service's say which process took them.
import { Database } from 'bun:sqlite'
import { createClient } from 'redis'
import { pushFrameText, SUBSCRIBED } from './push-frame'

const { PORT = '0', INDEX = '0', DB = ':memory:', REDIS_URL = 'redis://127.0.0.1:6379' } = process.env
const CHANNEL = process.env.CHANNEL ?? 'bench-cross'

const db = new Database(DB)
db.exec('PRAGMA journal_mode=WAL')
db.exec('PRAGMA synchronous=NORMAL')
db.exec('PRAGMA busy_timeout=0') // a refused commit is tried again at the next turn, as the service does
db.exec('CREATE TABLE IF NOT EXISTS pushes (w INTEGER, lwt TEXT)')
const insert = db.prepare('INSERT INTO pushes (w, lwt) VALUES (?, ?)')
/** Commits the row, trying again at the next turn while the other process holds the write lock. */
async function commit(w: number, at: string): Promise<void> {
  for (;;) {
    try {
      insert.run(w, at)
      return
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err
      await new Promise((resolve) => setImmediate(resolve))
    }
  }
}
const publisher = await createClient({ url: REDIS_URL }).connect()
const subscriber = await createClient({ url: REDIS_URL }).connect()

let answered = 0
const requestId = () => ({ 'x-request-id': `${INDEX}-${++answered}` })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: Number(PORT),
  reusePort: true,
  async fetch(request, s) {
    if (request.headers.get('upgrade'))
      return s.upgrade(request, { headers: requestId() }) ? undefined : new Response('no', { status: 400 })
    if (request.method === 'GET') return new Response('ok', { headers: requestId() }) // which process took the connection
    const { value } = (await request.json()) as { value: { w: number } }
    const at = new Date().toISOString()
    await commit(value.w, at)
    void publisher.publish(CHANNEL, pushFrameText(value.w, at))
    return new Response(`{"ext":{"lwt":"${at}"}}`, { headers: { 'content-type': 'application/json', ...requestId() } })
  },
  websocket: {
    open: (ws) => void ws.subscribe('all'),
    message: (ws) => void ws.send(SUBSCRIBED),
  },
})
await subscriber.subscribe(CHANNEL, (frame) => void server.publish('all', frame))
console.log(`listening ${server.port}`)
