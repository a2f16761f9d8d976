// APP_PROCESSES=2 under load: every scrape of the shared public port, whichever process answers it,
// passes `promtool check metrics` and holds the figures of both processes, each series labelled
// with its `app_process` (the database's figures once, unlabelled), so successive scrapes carry the
// same series and no counter goes back. Each process logs one line when it starts (version, address,
// processes, background) and one when it stops (signal, drain, what was cut).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pkg from '../../package.json' with { type: 'json' }
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { promtoolCheck } from '../helpers/promtool'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from '../helpers/redis'

const prefix = testPrefix()
const work = mkdtempSync(join(tmpdir(), 'platform-scrape-'))
let svc: ServiceProcess

beforeAll(async () => {
  svc = await startProcess({ DATA_DIR: work, APP_PROCESSES: '2', REDIS_URL: TEST_REDIS_URL, KV_PREFIX: prefix })
}, 60_000)
afterAll(async () => {
  svc?.proc.kill('SIGKILL') // the stop test ends it cleanly; this is for a test that failed first
  rmSync(work, { recursive: true, force: true })
  await (await testRedisKv(prefix)).cleanup()
})

/** The database's figures: one per service, not per process. */
const SHARED = new Set([
  'platform_queue_jobs',
  'platform_queue_oldest_age_seconds',
  'platform_journal_pump_lag',
  'platform_app_processes_scraped',
])

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}
/** The samples of an exposition (promtool has checked its syntax). */
const samplesOf = (text: string): Sample[] =>
  text
    .split('\n')
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((line) => {
      const m = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line)!
      const labels: Record<string, string> = {}
      for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!
      return { name: m[1]!, labels, value: Number(m[3]) }
    })
const keyOf = (s: Sample) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`

/** One scrape on a connection of its own, so the kernel may give it to either process. */
async function scrape() {
  const res = await fetch(`${svc.url}/metrics`, { headers: { connection: 'close' } })
  expect(res.status).toBe(200)
  return { by: res.headers.get('x-request-id')!.split('-')[0]!, text: await res.text() }
}

test('under load, every scrape passes promtool and holds both processes, each series labelled', async () => {
  const token = await signInTo(svc)
  let busy = true
  const load = Array.from({ length: 6 }, async (_, i) => {
    while (busy) {
      const made = await fetch(`${svc.url}/rest/v1/reference/extobjs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ type: `load-${i}`, value: { at: Date.now() } }),
      })
      const { id } = (await made.json()) as { id: string }
      await fetch(`${svc.url}/rest/v1/reference/extobjs/${id}`, { headers: { authorization: `Bearer ${token}` } })
      await fetch(`${svc.url}/no/such/path`)
    }
  })
  const answeredBy = new Set<string>()
  const last = new Map<string, number>()
  try {
    for (let i = 0; i < 60 && (i < 8 || answeredBy.size < 2); i++) {
      const { by, text } = await scrape()
      answeredBy.add(by)
      const check = await promtoolCheck(text)
      expect(check).toEqual({ code: 0, problems: '' })
      const samples = samplesOf(text)
      // every series of a process names it; the database's figures come once, named by none
      const unlabelled = samples.filter((s) => !SHARED.has(s.name) && s.labels.app_process === undefined)
      expect(unlabelled).toEqual([])
      expect(samples.filter((s) => SHARED.has(s.name) && s.labels.app_process !== undefined)).toEqual([])
      // both processes, whichever answered
      for (const p of ['0', '1'])
        expect(samples.some((s) => s.name === 'process_cpu_seconds_total' && s.labels.app_process === p)).toBe(true)
      expect(samples.find((s) => s.name === 'platform_app_processes_scraped')?.value).toBe(2)
      // a counter of one process never goes back from one scrape to the next, whoever answers
      for (const s of samples.filter((s) => /_total$|_count$|_bucket$/.test(s.name))) {
        expect(s.value).toBeGreaterThanOrEqual(last.get(keyOf(s)) ?? 0)
        last.set(keyOf(s), s.value)
      }
    }
  } finally {
    busy = false
    await Promise.all(load)
  }
  expect(answeredBy.size).toBe(2)
  // the requests the load made were counted by both processes (the kernel spread its connections)
  const total = (p: string) =>
    [...last]
      .filter(([k]) => k.startsWith('platform_http_requests_total') && k.includes(`["app_process","${p}"]`))
      .reduce((n, [, v]) => n + v, 0)
  expect(total('0')).toBeGreaterThan(0)
  expect(total('1')).toBeGreaterThan(0)
}, 60_000)

test('one start line and one stop line for each process', async () => {
  const lines = () =>
    svc
      .out()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
  const started = lines().filter((l) => l.msg === 'listening' || l.msg === 'app process listening')
  expect(started.map((l) => [l.msg, l.appProcess]).sort()).toEqual([
    ['app process listening', 1],
    ['listening', 0],
  ])
  for (const l of started)
    expect(l).toMatchObject({
      version: pkg.version,
      url: svc.url,
      appProcesses: 2,
      background: true,
      pid: expect.any(Number),
    })

  svc.proc.kill('SIGTERM')
  expect(await svc.proc.exited).toBe(0)
  const stopped = lines().filter((l) => l.msg === 'stopped')
  expect(stopped.map((l) => l.appProcess).sort()).toEqual([0, 1])
  for (const l of stopped)
    expect(l).toMatchObject({
      level: 'info',
      signal: 'SIGTERM',
      drainMs: expect.any(Number),
      stopMs: expect.any(Number),
      cut: { requests: 0, longWork: [], websockets: 0 },
    })
}, 60_000)
