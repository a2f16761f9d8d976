/**
 * Change events keeping up with writes, on one service process whose bus is Redis (as in a
 * cluster): CREATES records created over HTTP, 64 at a time, while one websocket subscribed to the
 * collection counts the events the journal pump publishes for them. Reports creates per second, the
 * events that had arrived when the last create was answered, and how long after it the last came.
 * `bun bench/journal-events.ts [creates]` (default 20000); BENCH_REDIS_URL names the Redis (default
 * the machine's); `npm run bench` runs it after bench/ws-push.ts.
 */
import { startBenchService } from './service-process'
import { connectBare, startsWith } from './ws-client'

const CREATES = Number(process.argv[2] ?? 20_000)
const CONCURRENCY = 64
const WAIT_MS = 60_000

const service = await startBenchService({
  REDIS_URL: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379',
  KV_PREFIX: `bench-events:${process.pid}:`,
})
try {
  const { url: base, token } = service
  let acked = false
  let events = 0
  let lastEventAt = 0
  const EVENT = Buffer.from('["event"')
  const socket = await connectBare(`${base.replace('http', 'ws')}/ws?token=${token}`, (buf, start, end) => {
    if (!startsWith(buf, start, end, EVENT)) {
      acked = true
      return
    }
    events++
    lastEventAt = performance.now()
  })
  socket.send(
    JSON.stringify([
      'subscribe',
      { id: 's', expires: 3600, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
    ]),
  )
  while (!acked) await Bun.sleep(10)

  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
  const body = JSON.stringify({ type: 'evented', value: { n: 1, tags: ['a'] } })
  let left = CREATES
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left-- > 0) {
        const res = await fetch(`${base}/rest/v1/reference/extobjs`, { method: 'POST', headers, body })
        if (res.status !== 200) throw new Error(`create answered ${res.status}: ${await res.text()}`)
      }
    }),
  )
  const written = performance.now()
  const arrivedByThen = events
  const until = Date.now() + WAIT_MS
  while (events < CREATES && Date.now() < until) await Bun.sleep(5)
  socket.close()
  const seconds = (written - started) / 1000
  console.log('\nchange events through Redis (one process, GATEWAY=off, 64 writers, one subscribed websocket):')
  console.log(
    '| creates | creates/s | events arrived by the last answer | last event after the last answer | delivered |',
  )
  console.log('|---|---|---|---|---|')
  console.log(
    `| ${CREATES} | ${Math.round(CREATES / seconds)} | ${arrivedByThen} | ${Math.max(0, lastEventAt - written).toFixed(0)} ms | ${events}/${CREATES} |`,
  )
} finally {
  await service.stop()
}
