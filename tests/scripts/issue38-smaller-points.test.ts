// The smaller points of issue 38 (item 6, but webhooks), each a scenario over a listening service:
// script syntax refused when stored, call() with an object, http() with an object body, the token login
// setting, a node's `off` and unknown fields, what a project API script may answer, 413's own code.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
let master: string
let base: string
let upstream: ReturnType<typeof Bun.serve>
const seen: Record<string, string | null>[] = []
beforeAll(async () => {
  upstream = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (r) => {
      seen.push({ type: r.headers.get('content-type'), body: await r.text() })
      return Response.json({ ok: true })
    },
  })
  t = await testService({ listen: true, env: { SCRIPT_HTTP_ALLOW: '127.0.0.1/32' }, licence: { svcscripts: 50 } })
  base = `${t.service.url}/rest/v1`
  await t.createDomain('small.master')
  admin = await t.adminIn('small.master')
  master = await t.login('master', 'admin', ADMIN_PASSWORD)
})
afterAll(async () => {
  await t.close()
  upstream.stop(true)
})

/** A request over the service's socket. */
async function call(method: string, path: string, body?: unknown, token = admin, raw?: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined || raw ? { 'content-type': 'application/json' } : {}),
    },
    body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null }
}
const save = (code: string, scriptdata: string, token = admin) =>
  call('POST', '/service/svcscripts', { code, name: code, scriptdata }, token)

/** Starts the script `code` and answers its outcome once it has ended. */
async function run(code: string, startparam1?: unknown) {
  const started = await call('POST', '/service/svcscript_runtimes', { code, startparam1 })
  expect(started.status).toBe(200)
  for (let i = 0; i < 400; i++) {
    const res = await call('GET', `/service/svcscript_runtimes/${started.body.id}`)
    if (res.body.status !== 'running') return res.body
    await Bun.sleep(10)
  }
  throw new Error(`${code} did not end`)
}

describe('scripts', () => {
  // [what, scriptdata, line]
  const broken: [string, string, number][] = [
    ['an unclosed call', 'const a = 1\nfoo(\nreturn a', 3],
    ['a redeclared binding', 'let a = 1\nlet a = 2', 2],
    ['a stray brace', 'return 1\n}', 2],
  ]
  for (const [what, scriptdata, line] of broken)
    test(`${what}: refused at create and at PATCH with the parser's message and line ${line}`, async () => {
      const created = await save(`bad${line}${what.length}`, scriptdata)
      expect(created.status).toBe(400)
      expect(created.body).toMatchObject({ error_code: 1400, error_details: { field: 'scriptdata', line } })
      expect(created.body.error_message).toContain('SyntaxError')
      const good = await save(`good${line}${what.length}`, 'return 1')
      expect(good.status).toBe(200)
      const patched = await call('PATCH', `/service/svcscripts/${good.body.id}`, { scriptdata })
      expect(patched.body).toMatchObject({ error_code: 1400, error_details: { field: 'scriptdata', line } })
      expect((await call('GET', `/service/svcscripts/${good.body.id}`)).body.scriptdata).toBe('return 1')
    })

  test('call(code, params): an object params reaches the nested script (startparam(1)); an array is the parameters', async () => {
    expect((await save('inner', 'return { first: startparam(1), second: startparam(2) }')).status).toBe(200)
    const outer = `return { object: await call('inner', { a: 1, b: [2] }), array: await call('inner', [3, 4]), none: await call('inner') }`
    expect((await save('outer', outer)).status).toBe(200)
    expect(await run('outer')).toMatchObject({
      status: 'done',
      result: {
        object: { first: { a: 1, b: [2] }, second: null },
        array: { first: 3, second: 4 },
        none: { first: null, second: null },
      },
    })
  })

  test('http(): an object body goes as JSON with Content-Type: application/json; a type the script set is kept', async () => {
    const url = `http://127.0.0.1:${upstream.port}/`
    const script = `
      await http({ url: startparam(1), method: 'POST', body: { ping: 1 } })
      await http({ url: startparam(1), method: 'POST', body: 'plain', headers: { 'Content-Type': 'text/plain' } })
      await http({ url: startparam(1), method: 'POST', body: [1], headers: { 'content-type': 'application/x-custom+json' } })
      return true`
    expect((await save('poster', script)).status).toBe(200)
    seen.length = 0
    expect(await run('poster', url)).toMatchObject({ status: 'done', result: true })
    expect(seen).toEqual([
      { type: 'application/json', body: '{"ping":1}' },
      { type: 'text/plain', body: 'plain' },
      { type: 'application/x-custom+json', body: '[1]' },
    ])
  })
})

describe('the token login setting', () => {
  const path = '/domain/settings/iam_token_svcscript_code'
  test('refused outside the master domain, naming key', async () => {
    const res = await call('PATCH', path, { value: 'inner' })
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'key' }])
  })
  test('in the master domain it must name an existing script (naming value); an existing one and "" are taken', async () => {
    const missing = await call('PATCH', path, { value: 'nope' }, master)
    expect([missing.status, missing.body.error_details]).toEqual([400, { field: 'value' }])
    expect((await save('sso', 'return null', master)).status).toBe(200)
    expect((await call('PATCH', path, { value: 'sso' }, master)).body).toEqual({
      key: 'iam_token_svcscript_code',
      value: 'sso',
    })
    expect((await call('PATCH', path, { value: '' }, master)).status).toBe(200)
  })
})

describe('nodes', () => {
  test('maxLogLevel takes off; an unknown field is a 400 naming it', async () => {
    const name = t.config.nodeName
    const off = await call('PATCH', `/master/nodes/${name}`, { maxLogLevel: 'off' }, master)
    expect([off.status, off.body.maxLogLevel]).toEqual([200, 'off'])
    expect(t.deps.log.level).toBe('off')
    expect((await call('PATCH', `/master/nodes/${name}`, { maxLogLevel: 'error' }, master)).status).toBe(200)
    // [body, field named]
    const bad: [unknown, string][] = [
      [{ maxLogLevel: 'info', site: 'x' }, 'site'],
      [{ name: 'renamed' }, 'name'],
      [{ maxLogLevel: 'loud' }, 'maxLogLevel'],
    ]
    for (const [body, field] of bad) {
      const res = await call('PATCH', `/master/nodes/${name}`, body, master)
      expect([JSON.stringify(body), res.status, res.body.error_details?.field]).toEqual([
        JSON.stringify(body),
        400,
        field,
      ])
    }
  })
})

describe('the project API', () => {
  test('a status outside 200-599 or a header a script may not set is a 502 naming it', async () => {
    const script = `
      const r = startparam(1)
      const h = r.query.h
      if (r.query.s) return { status: Number(r.query.s), body: 'x' }
      return { status: 200, body: 'x', headers: { [h]: 'v' } }`
    expect((await save('answers', script)).status).toBe(200)
    const channel = await call('POST', '/service/integration_points', {
      code: 'ans',
      type: 'public',
      recv_svcscriptcode: 'answers',
    })
    const token = channel.body.token_local as string
    // [query, status, field named, or null when the answer goes through]
    const cases: [string, number, string | null][] = [
      ['h=Set-Cookie', 502, 'headers.set-cookie'],
      ['h=Access-Control-Allow-Origin', 502, 'headers.access-control-allow-origin'],
      ['h=Clear-Site-Data', 502, 'headers.clear-site-data'],
      ['h=Strict-Transport-Security', 502, 'headers.strict-transport-security'],
      ['h=Content-Length', 502, 'headers.content-length'],
      ['h=NEL', 502, 'headers.nel'],
      ['h=report-to', 502, 'headers.report-to'],
      ['h=Reporting-Endpoints', 502, 'headers.reporting-endpoints'],
      ['h=ALT-SVC', 502, 'headers.alt-svc'],
      ['h=Content-Encoding', 502, 'headers.content-encoding'],
      ['s=700', 502, 'status'],
      ['s=42', 502, 'status'],
      ['s=101', 502, 'status'],
      ['s=103', 502, 'status'],
      ['h=X-Order', 200, null],
      ['s=418', 418, null],
    ]
    for (const [query, status, field] of cases) {
      const res = await fetch(`${base}/integration/in/x?${query}`, { headers: { authorization: `Bearer ${token}` } })
      const text = await res.text()
      expect([query, res.status]).toEqual([query, status])
      if (field) expect(JSON.parse(text)).toMatchObject({ error_code: 1502, error_details: { field } })
      expect(res.headers.get('set-cookie')).toBeNull()
    }
    // a channel without a script: 501 with its own code
    const bare = await call('POST', '/service/integration_points', { code: 'bare', type: 'public' })
    const none = await fetch(`${base}/integration/in/x`, {
      headers: { authorization: `Bearer ${bare.body.token_local}` },
    })
    expect([none.status, ((await none.json()) as { error_code: number }).error_code]).toEqual([501, 2501])
  })
})

describe('error codes', () => {
  test('a body over its limit is 413 with 2413, over the socket; 1413 keeps the spec meaning (412)', async () => {
    const big = JSON.stringify({ type: 'x', value: 'y'.repeat(t.config.maxBodyBytes) })
    const res = await call('POST', '/reference/extobjs', undefined, admin, big)
    expect([res.status, res.body.error_code]).toEqual([413, 2413])
    const unknown = await fetch(`${base}/iam/pwd_reset_requests`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-real-ip': '10.38.6.1' },
      body: JSON.stringify({ key: 'nobody@example.com' }),
    })
    expect([unknown.status, ((await unknown.json()) as { error_code: number }).error_code]).toEqual([412, 1413])
  })
})
