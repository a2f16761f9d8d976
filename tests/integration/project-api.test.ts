// Incoming HTTP to a channel (project API): a request with the channel's token runs its
// recv_svcscriptcode script with the request; the script's return is the answer.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { connect } from 'node:net'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
let hook: string
let bare: string
const IN = '/rest/v1/integration/in'
beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('proj.master')
  admin = await t.adminIn('proj.master')
  const scriptdata = `
    const r = startparam(1)
    if (r.path === '/echo') return { status: 201, body: { got: r.body, q: r.query, m: r.method }, headers: { 'x-hook': 'yes' } }
    if (r.path === '/empty') return { status: Number(r.query.s), body: r.query.text ? 'text' : { dropped: true }, headers: { 'content-type': 'text/plain', etag: '"v1"' } }
    if (r.path === '/fail') throw new Error('no such order')
    if (r.path === '/slow') await sleep(60000)
    return { method: r.method, path: r.path }`
  expect(
    (
      await t.call('POST', '/rest/v1/service/svcscripts', {
        token: admin,
        body: { code: 'hook', name: 'Hook', scriptdata },
      })
    ).status,
  ).toBe(200)
  const channel = async (body: Record<string, unknown>) =>
    (await t.call('POST', '/rest/v1/service/integration_points', { token: admin, body })).body.token_local as string
  hook = await channel({ code: 'shop', type: 'public', recv_svcscriptcode: 'hook', opts: { recv_timeout: 1 } })
  bare = await channel({ code: 'plain', type: 'public' })
})
afterAll(() => t.close())

test("the channel's script answers: its status, headers and body, or its value as JSON", async () => {
  const echoed = await t.call('POST', `${IN}/echo?x=1`, { token: hook, body: { order: 7 } })
  expect(echoed.status).toBe(201)
  expect(echoed.headers.get('x-hook')).toBe('yes')
  expect(echoed.body).toEqual({ got: { order: 7 }, q: { x: '1' }, m: 'POST' })
  const plain = await t.call('GET', `${IN}/orders/42`, { token: hook })
  expect([plain.status, plain.body]).toEqual([200, { method: 'GET', path: '/orders/42' }])
})

test('a failing script is a 502, a slow one a 504, a channel without one a 501: error bodies all', async () => {
  const failed = await t.call('GET', `${IN}/fail`, { token: hook })
  expect(failed.status).toBe(502)
  expect(failed.body.error_message).toContain('no such order')
  const slow = await t.call('GET', `${IN}/slow`, { token: hook })
  expect(slow.status).toBe(504)
  const none = await t.call('GET', `${IN}/x`, { token: bare })
  expect(none.status).toBe(501)
  expect(none.body.error_message).toContain('recv_svcscriptcode')
})

test('only a channel token: a session is 403, nothing is 401', async () => {
  expect((await t.call('GET', `${IN}/x`, { token: admin })).status).toBe(403)
  expect((await t.call('GET', `${IN}/x`)).status).toBe(401)
})

/** The bytes the service sends for a GET of `path` with `token`, over a socket of its own. */
function rawGet(path: string, token: string): Promise<string> {
  const { hostname, port } = new URL(t.service.url!)
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
      ),
    )
    let got = ''
    socket.on('data', (chunk) => (got += chunk.toString('latin1')))
    socket.on('end', () => resolve(got))
    socket.on('error', reject)
  })
}

test('204, 205 and 304 go without a body, nor a Content-Type for one, whatever body the script gave', async () => {
  for (const s of [204, 205, 304])
    for (const text of ['', '&text=1']) {
      const raw = await rawGet(`${IN}/empty?s=${s}${text}`, hook)
      const [head, body] = raw.split('\r\n\r\n') as [string, string]
      expect([s, text, head.split('\r\n')[0], body]).toEqual([s, text, expect.stringContaining(` ${s} `), ''])
      expect(head.toLowerCase()).not.toMatch(/^content-type:/m)
      expect(head.toLowerCase()).not.toMatch(/^content-length: [1-9]/m)
      expect(head.toLowerCase()).not.toMatch(/^transfer-encoding:/m)
      expect(head).toContain('"v1"') // the script's other headers go
    }
})
