/**
 * Websocket pushes at scale: N sockets on one service process, each subscribed to the extobjs
 * collection, while a writer creates records over HTTP. Reports push latency (write sent -> frame
 * received, one clock: same machine; it includes the write itself), delivered / expected events, and the server's resident
 * memory per socket. `bun bench/ws-push.ts [N ...]` (default 1000 10000); `npm run bench` runs it
 * after the HTTP cases. The service listens directly (GATEWAY=off): through the gateway every
 * socket costs the process three descriptors, and 10,000 of them would pass a 20,000 fd limit.
 */
import { percentile, rssKb, startBenchService } from './service-process'
import { type BareSocket, connectBare } from './ws-client'

const COUNTS = process.argv.slice(2).map(Number).filter(Boolean)
const WRITES = Number(process.env.BENCH_WS_WRITES ?? 20)
const WRITE_GAP_MS = 250

async function run(count: number): Promise<void> {
  const service = await startBenchService()
  const { url: base, token, pid } = service
  const sockets: BareSocket[] = []
  try {
    const before = await rssKb(pid)

    const latencies: number[] = []
    const sentAt = new Map<number, number>()
    let acks = 0
    let events = 0
    const EVENT = Buffer.from('["event"')
    const SUBSCRIBE = Buffer.from('["subscribe"')
    const wsUrl = `${base.replace('http', 'ws')}/ws?token=${token}`
    const onFrame = (payload: Buffer) => {
      if (payload.subarray(0, SUBSCRIBE.length).equals(SUBSCRIBE)) return void acks++
      if (!payload.subarray(0, EVENT.length).equals(EVENT)) return
      events++
      const at = payload.lastIndexOf('"w":')
      const w = at < 0 ? undefined : Number.parseInt(payload.toString('latin1', at + 4, at + 12), 10)
      const sent = w === undefined ? undefined : sentAt.get(w)
      if (sent !== undefined) latencies.push(performance.now() - sent)
    }
    const subscribe = JSON.stringify([
      'subscribe',
      { id: 's', expires: 3600, events: ['modelevents.data_changed'], classpath: '/rest/v1/reference/extobjs' },
    ])
    for (let i = 0; i < count; i += 200) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(200, count - i) }, () => connectBare(wsUrl, onFrame)),
      )
      for (const socket of batch) {
        sockets.push(socket)
        socket.send(subscribe)
      }
    }
    while (acks < count) await Bun.sleep(20)
    const after = await rssKb(pid)

    for (let w = 0; w < WRITES; w++) {
      sentAt.set(w, performance.now())
      await fetch(`${base}/rest/v1/reference/extobjs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'push', value: { w } }),
      })
      await Bun.sleep(WRITE_GAP_MS)
    }
    const expected = count * WRITES
    const until = Date.now() + 10_000
    while (events < expected && Date.now() < until) await Bun.sleep(20)
    const sorted = latencies.sort((a, b) => a - b)
    console.log(
      `| ${count} sockets | ${WRITES} writes | ${percentile(sorted, 0.5).toFixed(1)} ms | ${percentile(sorted, 0.99).toFixed(1)} ms | ${events}/${expected} (${((100 * events) / expected).toFixed(2)} %) | ${(((after - before) * 1024) / count / 1024).toFixed(1)} KiB (RSS ${(before / 1024).toFixed(0)} -> ${(after / 1024).toFixed(0)} MiB) |`,
    )
  } finally {
    for (const ws of sockets) ws.close()
    await service.stop()
  }
}

console.log('\nwebsocket pushes (one process, GATEWAY=off; latency = write sent -> event received):')
console.log('| sockets | writes | p50 | p99 | delivered / expected | server RSS per socket |')
console.log('|---|---|---|---|---|---|')
for (const n of COUNTS.length ? COUNTS : [1000, 10_000]) await run(n)
