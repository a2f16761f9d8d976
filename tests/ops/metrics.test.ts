// /metrics in the Prometheus text format, read back with a parser of that format; the request log
// line per request; and the token METRICS_TOKEN asks for.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createLogger } from '~/log'
import { enqueueJob } from '~storage/queue'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

interface Sample {
  name: string
  labels: Record<string, string>
  value: number
}

/** The text exposition format: # HELP / # TYPE lines, then `name{label="value",...} number`. */
function parsePrometheus(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = []
  const types = new Map<string, string>()
  for (const line of text.split('\n')) {
    if (line === '') continue
    const type = /^# TYPE (\w+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (/^# HELP \w+ .+$/.test(line)) continue
    const m = /^(\w+)(?:\{(.*)\})? (-?[\d.e+-]+|NaN|\+Inf|-Inf)$/.exec(line)
    if (!m) throw new Error(`not the Prometheus text format: ${line}`)
    const labels: Record<string, string> = {}
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!
    samples.push({ name: m[1]!, labels, value: Number(m[3]) })
  }
  return { samples, types }
}

const lines: Record<string, unknown>[] = []
/** GET /metrics as text (t.call parses JSON). */
async function scrape(s: TestService, token?: string) {
  const res = await s.request('GET', '/metrics', { token })
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() }
}
let t: TestService
let token: string
beforeAll(async () => {
  t = await testService({ log: createLogger('info', (l) => lines.push(JSON.parse(l))) })
  token = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(() => t.close())

describe('metrics', () => {
  test('requests by route pattern, method and status, with a latency histogram, and the scrape-time gauges', async () => {
    const made = await t.call('POST', '/rest/v1/reference/extobjs', { token, body: { type: 'm' } })
    for (let i = 0; i < 3; i++) await t.call('GET', `/rest/v1/reference/extobjs/${made.body.id}`, { token })
    await t.call('GET', '/rest/v1/reference/extobjs/0192a3b4-0000-7000-8000-00000000ffff', { token })
    await t.call('GET', '/no/such/thing')
    await t.run('journal-pump')
    const res = await scrape(t)
    expect(res.status).toBe(200)
    expect(res.type).toStartWith('text/plain')
    const { samples, types } = parsePrometheus(res.text)
    const value = (name: string, labels: Record<string, string> = {}) =>
      samples.find((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))?.value
    const byId = { route: '/rest/v1/reference/extobjs/:id', method: 'GET' }
    expect(value('platform_http_requests_total', { ...byId, status: '200' })).toBe(3)
    expect(value('platform_http_requests_total', { ...byId, status: '404' })).toBe(1)
    expect(value('platform_http_requests_total', { route: 'unmatched', status: '404' })).toBe(1)
    expect(types.get('platform_http_request_duration_seconds')).toBe('histogram')
    expect(value('platform_http_request_duration_seconds_count', byId)).toBe(4)
    expect(value('platform_http_request_duration_seconds_bucket', { ...byId, le: '+Inf' })).toBe(4)
    // cumulative: every bucket holds those below it, the widest all four
    expect(value('platform_http_request_duration_seconds_bucket', { ...byId, le: '10' })).toBe(4)
    expect(value('platform_http_request_duration_seconds_bucket', { ...byId, le: '0.0005' })).toBeLessThanOrEqual(
      value('platform_http_request_duration_seconds_bucket', { ...byId, le: '0.001' })!,
    )
    expect(value('platform_http_request_duration_seconds_sum', byId)).toBeGreaterThan(0)
    // no raw ids in labels: cardinality stays that of the route table
    expect(samples.some((s) => Object.values(s.labels).some((v) => v.includes(made.body.id)))).toBe(false)
    expect(value('platform_journal_pump_lag')).toBe(0)
    expect(value('platform_worker_runs_total', { worker: 'journal-pump' })).toBeGreaterThanOrEqual(1)
    expect(types.get('platform_worker_runs_total')).toBe('counter')
    expect(types.get('process_cpu_seconds_total')).toBe('counter')
    // one process: its series are labelled app_process="0"; the database's figures carry no process
    expect(samples.find((s) => s.name === 'platform_sessions_cached')?.labels).toEqual({ app_process: '0' })
    expect(samples.find((s) => s.name === 'platform_journal_pump_lag')?.labels).toEqual({})
    expect(value('platform_websocket_connections')).toBe(0)
    expect(value('platform_sessions_cached')).toBeGreaterThanOrEqual(1)
    expect(value('process_resident_memory_bytes')).toBeGreaterThan(0)
  })

  test('a method the service does not serve is counted as `other`: clients cannot add series', async () => {
    for (const method of ['FOO', 'X'.repeat(2000), 'PROPFIND']) await t.call(method, '/rest/v1/reference/extobjs')
    const { samples } = parsePrometheus((await scrape(t)).text)
    const methods = new Set(
      samples.filter((s) => s.name === 'platform_http_requests_total').map((s) => s.labels.method),
    )
    expect(
      [...methods].filter((m) => !['GET', 'POST', 'PATCH', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'].includes(m!)),
    ).toEqual(['other'])
  })

  test('queue depth and age per kind', async () => {
    const created = new Date(Date.now() - 90_000).toISOString()
    await t.service.deps.db.write(function* () {
      for (const n of [1, 2])
        yield* enqueueJob({ kind: 'mail', domain: 'd', payload: { n }, runAt: Date.now() + 3_600_000 }, created)
    })
    const { samples } = parsePrometheus((await scrape(t)).text)
    const of = (name: string) => samples.find((s) => s.name === name && s.labels.kind === 'mail')?.value
    expect(of('platform_queue_jobs')).toBe(2)
    expect(of('platform_queue_oldest_age_seconds')).toBeGreaterThanOrEqual(90)
  })
})

describe('request log', () => {
  test('one info line per request with id, route pattern, status, duration, bytes, actor, domain, client', async () => {
    lines.length = 0
    const res = await t.call('GET', '/rest/v1/reference/extobjs', { token, headers: { 'x-request-id': 'log-me-1' } })
    const line = lines.find((l) => l.msg === 'request' && l.id === 'log-me-1')
    expect(line).toMatchObject({
      level: 'info',
      method: 'GET',
      route: '/rest/v1/reference/extobjs',
      status: res.status,
      bytes: res.text.length,
      domain: expect.any(String),
      actor: expect.any(String),
      client: expect.any(String),
    })
    expect(line!.ms).toBeGreaterThanOrEqual(0)
  })
  test('a request line is JSON whatever its text holds', () => {
    const out: string[] = []
    const log = createLogger('info', (line) => out.push(line))
    const odd = { id: 'a"b\\c', method: 'GET', route: '/rest/v1/x/:id', status: 200, ms: 1.25, bytes: 3 }
    log.request({ ...odd, client: '10.0.0.1" , "admin":true', actor: 'ü\n', domain: undefined })
    log.request({ ...odd, client: '2001:db8::1' })
    expect(out.map((l) => JSON.parse(l))).toMatchObject([
      { msg: 'request', id: 'a"b\\c', client: '10.0.0.1" , "admin":true', actor: 'ü\n', route: '/rest/v1/x/:id' },
      { msg: 'request', client: '2001:db8::1', ms: 1.25 },
    ])
    expect(JSON.parse(out[0]!)).not.toHaveProperty('admin')
    expect(JSON.parse(out[1]!)).not.toHaveProperty('actor')
    createLogger('warn', (line) => out.push(line)).request({ ...odd, client: 'x' })
    expect(out).toHaveLength(2) // below its level
  })
  test('request lines of different callers one after another each carry their own caller', () => {
    const out: string[] = []
    const log = createLogger('info', (line) => out.push(line))
    const base = { id: 'r', method: 'GET', route: '/a', status: 200, ms: 1, bytes: 2 }
    const callers = [
      { client: '10.0.0.1', actor: 'u1', domain: 'd1' },
      { client: '10.0.0.1', actor: 'u1', domain: 'd1' },
      { client: '10.0.0.1', actor: 'u2', domain: 'd1' },
      { client: '10.0.0.1', actor: 'u2', domain: 'd2' },
      { client: '10.0.0.2', actor: 'u2', domain: 'd2' },
      { client: '10.0.0.2', actor: undefined, domain: undefined },
      { client: '10.0.0.2', actor: 'u2', domain: 'd2', route: '/b' },
      { client: '10.0.0.2', actor: 'u2', domain: 'd2', route: '/b', method: 'POST' },
    ]
    for (const c of callers) log.request({ ...base, ...c })
    expect(out.map((l) => JSON.parse(l))).toEqual(
      callers.map((c) => ({
        t: expect.any(String),
        level: 'info',
        msg: 'request',
        ...base,
        ...Object.fromEntries(Object.entries(c).filter(([, v]) => v !== undefined)),
      })),
    )
  })
  test('sign-ins are logged without their passwords', async () => {
    lines.length = 0
    await t.call('POST', '/rest/v1/iam/sessions', { body: { domain: 'master', login: 'admin', pwd: 'Wrong-Secret_9' } })
    await t.login('master', 'admin', ADMIN_PASSWORD)
    const text = JSON.stringify(lines)
    expect(lines.filter((l) => l.msg === 'request')).toHaveLength(2)
    expect(text).not.toContain('Wrong-Secret_9')
    expect(text).not.toContain(ADMIN_PASSWORD)
  })
})

test('security events: failed sign-ins with their reason, the ban with its end, a changed password', async () => {
  lines.length = 0
  const from = { 'x-real-ip': '10.9.9.9' }
  for (let i = 0; i < 6; i++)
    await t.call('POST', '/rest/v1/iam/sessions', {
      headers: from,
      body: { domain: 'master', login: 'admin', pwd: `Guess-${i}_pass` },
    })
  const failed = lines.filter((l) => l.msg === 'sign-in failed')
  expect(failed).toHaveLength(5)
  expect(failed[0]).toMatchObject({ level: 'warn', login: 'admin', client: '10.9.9.9', reason: expect.any(String) })
  const ban = lines.find((l) => l.msg === 'sign-in refused: too many failures')
  expect(ban).toMatchObject({ level: 'warn', address: '10.9.9.9', until: expect.stringMatching(/^\d{4}-/) })
  const user = await t.call('POST', '/rest/v1/domain/users', { token, body: { login: 'sec', pwd: 'sec-Pass_1' } })
  await t.call('PATCH', `/rest/v1/domain/users/${user.body.id}`, { token, body: { pwd: 'sec-Pass_2' } })
  expect(lines.find((l) => l.msg === 'password changed')).toMatchObject({ user: user.body.id, by: 'Administrator' })
  expect(JSON.stringify(lines)).not.toMatch(/Guess-\d_pass|sec-Pass_/)
})

test('METRICS_TOKEN: without it or with another the answer is 401; with it, the metrics', async () => {
  const s = await testService({ env: { METRICS_TOKEN: 'scrape-secret' } })
  try {
    expect((await scrape(s)).status).toBe(401)
    expect((await scrape(s, 'other-secret')).status).toBe(401)
    const ok = await scrape(s, 'scrape-secret')
    expect(ok.status).toBe(200)
    expect(ok.text).toContain('platform_http_requests_total')
    // the scheme's name is case-insensitive
    const lower = await s.request('GET', '/metrics', { headers: { authorization: 'bearer scrape-secret' } })
    expect(lower.status).toBe(200)
  } finally {
    await s.close()
  }
})

test('/readyz answers 503 naming workers once the service begins to stop', async () => {
  const s = await testService()
  expect((await s.call('GET', '/readyz')).status).toBe(200)
  s.service.deps.metrics.stopping = true // what service.stop() sets first
  const res = await s.call('GET', '/readyz')
  expect(res.status).toBe(503)
  expect(res.body.error_message).toContain('workers (the service is stopping)')
  s.service.deps.metrics.stopping = false
  await s.close()
})
