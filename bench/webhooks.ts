/**
 * Webhook delivery on one service process: events ingested over POST /rest/v1/service/events go
 * to a local receiver (Bun.serve on 127.0.0.1 in this process, answering 204 at once) through a
 * `subscr` channel's subscription. Reports throughput (N events ingested in batches of 100; deliveries
 * per second from the first arrival to the last, received / expected) and latency (events sent one
 * at a time at a modest rate; ingest request sent -> delivery received, one clock), then the
 * throughput of the same receiver while another, answering in 200 ms, has a backlog of 2,000, and
 * the deliveries of journal changes (N extobj creates, 32 in flight, to a modelevents subscription).
 * `bun bench/webhooks.ts [events]` (default 20000); `npm run bench` runs it after bench/scripts.ts.
 * BENCH_WEBHOOK_RATE and BENCH_WEBHOOK_SECONDS set the latency run (default 1,000/s for 10 s),
 * BENCH_WEBHOOK_WAIT the seconds to wait for the last deliveries (default 120), BENCH_WEBHOOK_ONLY=<text>
 * the cases whose name (throughput, latency, journal, beside) holds it. BENCH_CPU_PROF=<dir>
 * runs the service under `bun --cpu-prof-md` and leaves its profile (markdown) in that folder.
 */
import { percentile, startBenchService } from './service-process'

/** The events of ids [from, from + count) never delivered, and the deliveries beyond one of the others. */
function tally(from: number, count: number): { lost: number; duplicates: number } {
  let lost = 0
  let duplicates = 0
  for (let n = from; n < from + count; n++) {
    const c = copies.get(n) ?? 0
    if (c === 0) lost++
    else duplicates += c - 1
  }
  return { lost, duplicates }
}

/** CPU time (user + system) of a process so far, in ms, from /proc (clock ticks of 10 ms). */
async function cpuMs(pid: number): Promise<number> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(') ')[1]!.split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

const EVENTS = Number(process.argv[2] ?? 20_000)
const BATCH = 100
const RATE = Number(process.env.BENCH_WEBHOOK_RATE ?? 1000)
const SECONDS = Number(process.env.BENCH_WEBHOOK_SECONDS ?? 10)
const WAIT_MS = Number(process.env.BENCH_WEBHOOK_WAIT ?? 120) * 1000
const ONLY = process.env.BENCH_WEBHOOK_ONLY

// The receiver: arrival time per event id (the envelope's `data.n`, set by this bench) of the
// current case (ids of other cases do not count there, so late deliveries of an earlier case do
// not), and how many times each id came over the whole run: the counts at the end show any event
// lost or delivered twice, late duplicates included.
const arrivals = new Map<number, number>()
const copies = new Map<number, number>()
let phase = { from: -10, to: 0 }
/** The client ports the deliveries came from: how many connections the service opened (keep-alive). */
const ports = new Set<number>()
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req, server) {
    const at = performance.now()
    const port = server.requestIP(req)?.port
    if (port !== undefined) ports.add(port)
    // an ingested event carries n in its data; a journal change in the new value of its extobj
    const { data } = (await req.json()) as { data: { n?: number; new?: { value?: { n?: number } } } }
    const n = data.n ?? data.new?.value?.n ?? -1
    copies.set(n, (copies.get(n) ?? 0) + 1)
    if (n < phase.from || n >= phase.to || arrivals.has(n)) return new Response(null, { status: 204 })
    arrivals.set(n, at)
    return new Response(null, { status: 204 })
  },
})

// A slow receiver (SLOW_MS an answer) on another port, so another host: its backlog must not hold
// the fast receiver's deliveries back
const SLOW_MS = 200
const SLOW_EVENTS = 2000
const BESIDE_EVENTS = 5000
let slowArrivals = 0
const slowReceiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch() {
    await Bun.sleep(SLOW_MS)
    slowArrivals++
    return new Response(null, { status: 204 })
  },
})

const PROFILE = process.env.BENCH_CPU_PROF
const profile = PROFILE ? ['--cpu-prof-md', `--cpu-prof-dir=${PROFILE}`] : []
const service = await startBenchService({ WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' }, profile)
const { url: base, token } = service
try {
  const call = async (method: string, path: string, body: unknown, bearer = token) => {
    const res = await fetch(`${base}/rest/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await res.text()
    const answer = (text ? JSON.parse(text) : {}) as Record<string, unknown>
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return answer
  }
  await call('POST', '/domain/domains', { name: 'bench.master' })
  await call('PATCH', '/iam/sessions/current', { domain: 'bench.master' })
  const receiverUrl = `http://127.0.0.1:${receiver.port}/hook`
  const channel = await call('POST', '/service/integration_points', {
    code: 'bench',
    type: 'subscr',
    url: receiverUrl,
    // roles that read extobjs, or their changes are not the channel's
    opts: { roles: ['admin'] },
  })
  await call('POST', '/service/webhooks', { events: ['customevents.*'], expires: 86400 }, channel.token_local as string)
  const slowUrl = `http://127.0.0.1:${slowReceiver.port}/hook`
  const slow = await call('POST', '/service/integration_points', { code: 'slow', type: 'subscr', url: slowUrl })
  await call('POST', '/service/webhooks', { events: ['callevents.*'], expires: 86400 }, slow.token_local as string)

  const sentAt = new Map<number, number>()
  const event = (n: number) => ({ class: 'customevents', event: 'tick', data: { n } })
  const waitFor = async (expected: number) => {
    const until = performance.now() + WAIT_MS
    let shown = performance.now()
    while (arrivals.size < expected && performance.now() < until) {
      await Bun.sleep(50)
      if (performance.now() - shown < 10_000) continue
      shown = performance.now()
      console.error(`  ${arrivals.size}/${expected} delivered`)
    }
  }

  // warm-up: a few deliveries so the first connection and the JIT do not count
  for (let n = -10; n < 0; n++) await call('POST', '/service/events', event(n))
  await waitFor(10)
  // each case's ids counted: none lost, none delivered twice
  const check = (from: number, n: number) => {
    const { lost, duplicates } = tally(from, n)
    return `${lost} | ${duplicates}`
  }

  /** 1. throughput: N events in batches of 100, four requests in flight. */
  const throughput = async () => {
    arrivals.clear()
    phase = { from: 0, to: EVENTS }
    ports.clear()
    const cpuStart = await cpuMs(service.pid)
    const ingestStart = performance.now()
    let next = 0
    const ingester = async () => {
      while (next < EVENTS) {
        const from = next
        next = Math.min(EVENTS, next + BATCH)
        const batch = Array.from({ length: next - from }, (_, i) => event(from + i))
        await call('POST', '/service/events', batch)
      }
    }
    await Promise.all([ingester(), ingester(), ingester(), ingester()])
    const ingestSeconds = (performance.now() - ingestStart) / 1000
    console.error(`ingested ${EVENTS} events in ${ingestSeconds.toFixed(1)} s; waiting for deliveries`)
    await waitFor(EVENTS)
    const cpuPerEvent = ((await cpuMs(service.pid)) - cpuStart) / EVENTS
    const connections = ports.size
    const times = [...arrivals.values()].sort((a, b) => a - b)
    const received = arrivals.size
    const spanSeconds = times.length > 1 ? (times.at(-1)! - times[0]!) / 1000 : 0
    const perSecond = spanSeconds > 0 ? (received - 1) / spanSeconds : 0
    const endToEnd = times.length ? (times.at(-1)! - ingestStart) / 1000 : 0
    return () =>
      `| throughput | ${EVENTS} | ${received}/${EVENTS} (${((100 * received) / EVENTS).toFixed(2)} %) | ${check(0, EVENTS)} | ${perSecond.toFixed(0)} | | | ingest took ${ingestSeconds.toFixed(1)} s (${(EVENTS / ingestSeconds).toFixed(0)} events/s); first ingest -> last arrival ${endToEnd.toFixed(1)} s; service CPU ${cpuPerEvent.toFixed(3)} ms an event (ingest and delivery); ${connections} connections |`
  }

  /** 2. latency: one event per request at RATE per second for SECONDS. */
  const latency = async () => {
    arrivals.clear()
    const OFFSET = 1_000_000
    const count = RATE * SECONDS
    phase = { from: OFFSET, to: OFFSET + count }
    const latencyCpu = await cpuMs(service.pid)
    const latencyStart = performance.now()
    const sends: Promise<unknown>[] = []
    for (let i = 0; i < count; i++) {
      const due = latencyStart + (i * 1000) / RATE
      const wait = due - performance.now()
      if (wait > 0) await Bun.sleep(wait)
      sentAt.set(OFFSET + i, performance.now())
      sends.push(call('POST', '/service/events', event(OFFSET + i)))
    }
    await Promise.all(sends)
    await waitFor(count)
    const latencyCpuPerEvent = ((await cpuMs(service.pid)) - latencyCpu) / count
    const latencyBusy = ((await cpuMs(service.pid)) - latencyCpu) / (performance.now() - latencyStart)
    const latencies = [...arrivals].map(([n, at]) => at - sentAt.get(n)!).sort((a, b) => a - b)
    // the tail's shape (a second's wait shows a job given back to the queue, or a lost wake-up)
    const tail = [0.9, 0.95, 0.99, 0.999].map((p) => `p${100 * p} ${percentile(latencies, p).toFixed(1)}`)
    if (latencies.length) console.error(`  latency: ${tail.join(', ')}, max ${latencies.at(-1)!.toFixed(1)} ms`)
    return () =>
      `| latency (${RATE}/s for ${SECONDS} s) | ${count} | ${latencies.length}/${count} (${((100 * latencies.length) / count).toFixed(2)} %) | ${check(OFFSET, count)} | | ${latencies.length ? percentile(latencies, 0.5).toFixed(1) : '-'} ms | ${latencies.length ? percentile(latencies, 0.99).toFixed(1) : '-'} ms | ingest request sent -> delivery received; service CPU ${latencyCpuPerEvent.toFixed(3)} ms an event (${(100 * latencyBusy).toFixed(0)} % of a core) |`
  }

  /**
   * 3. journal changes: creates (32 in flight) whose changes a subscription of the fast receiver's
   * channel takes, enqueued by the webhook-enqueue worker from its journal cursor.
   */
  const journal = async () => {
    const JOURNAL = 3_000_000
    arrivals.clear()
    phase = { from: JOURNAL, to: JOURNAL + EVENTS }
    await call(
      'POST',
      '/service/webhooks',
      { events: ['modelevents.data_changed'], objects: ['extobj'], expires: 86400 },
      channel.token_local as string,
    )
    const journalStart = performance.now()
    let made = 0
    const creator = async () => {
      while (made < EVENTS) await call('POST', '/reference/extobjs', { type: 'bench', value: { n: JOURNAL + made++ } })
    }
    await Promise.all(Array.from({ length: 32 }, creator))
    const createdAt = performance.now()
    await waitFor(EVENTS)
    const journalReceived = arrivals.size
    const journalTimes = [...arrivals.values()].sort((a, b) => a - b)
    const journalSpan = journalTimes.length > 1 ? (journalTimes.at(-1)! - journalTimes[0]!) / 1000 : 0
    const journalPerSecond = journalSpan > 0 ? (journalTimes.length - 1) / journalSpan : 0
    const journalAfter = journalTimes.length ? (journalTimes.at(-1)! - createdAt) / 1000 : 0
    const createSeconds = (createdAt - journalStart) / 1000
    return () =>
      `| journal changes | ${EVENTS} | ${journalReceived}/${EVENTS} (${((100 * journalReceived) / EVENTS).toFixed(2)} %) | ${check(JOURNAL, EVENTS)} | ${journalPerSecond.toFixed(0)} | | | ${EVENTS} extobj creates in ${createSeconds.toFixed(1)} s (32 in flight); last arrival ${journalAfter.toFixed(1)} s after the last create answered |`
  }

  /** 4. beside a slow receiver: its backlog first, then events for the fast one. */
  const beside = async () => {
    const BESIDE = 2_000_000
    arrivals.clear()
    phase = { from: BESIDE, to: BESIDE + BESIDE_EVENTS }
    const ingestAll = async (events: { class: string; event: string; data: { n: number } }[]) => {
      for (let at = 0; at < events.length; at += BATCH)
        await call('POST', '/service/events', events.slice(at, at + BATCH))
    }
    await ingestAll(
      Array.from({ length: SLOW_EVENTS }, (_, i) => ({ class: 'callevents', event: 'tick', data: { n: i } })),
    )
    const besideStart = performance.now()
    await ingestAll(Array.from({ length: BESIDE_EVENTS }, (_, i) => event(BESIDE + i)))
    await waitFor(BESIDE_EVENTS)
    const besideTimes = [...arrivals.values()].sort((a, b) => a - b)
    const besideSpan = besideTimes.length > 1 ? (besideTimes.at(-1)! - besideTimes[0]!) / 1000 : 0
    const besidePerSecond = besideSpan > 0 ? (besideTimes.length - 1) / besideSpan : 0
    const besideEnd = besideTimes.length ? (besideTimes.at(-1)! - besideStart) / 1000 : 0
    return () =>
      `| beside a slow receiver | ${BESIDE_EVENTS} | ${arrivals.size}/${BESIDE_EVENTS} (${((100 * arrivals.size) / BESIDE_EVENTS).toFixed(2)} %) | ${check(BESIDE, BESIDE_EVENTS)} | ${besidePerSecond.toFixed(0)} | | | ${SLOW_EVENTS} events for a receiver answering in ${SLOW_MS} ms were queued first (${slowArrivals} of them delivered by the end); ingest of these -> last arrival ${besideEnd.toFixed(1)} s |`
  }

  // each case's row is written at the end, once late duplicates have had a second to come
  const cases = { throughput, latency, journal, beside }
  const rows: (() => string)[] = []
  for (const [name, run] of Object.entries(cases)) if (!ONLY || name.includes(ONLY)) rows.push(await run())
  await Bun.sleep(1000)
  console.log(
    `\nwebhook deliveries (one process, GATEWAY=off, one local receiver answering 204; ${EVENTS} events in batches of ${BATCH}):`,
  )
  console.log('| case | events | received / expected | lost | duplicates | deliveries/s | p50 | p99 | notes |')
  console.log('|---|---|---|---|---|---|---|---|---|')
  for (const row of rows) console.log(row())
} finally {
  await service.stop()
  receiver.stop(true)
  slowReceiver.stop(true)
}
