// /rest/v1/service/integration_points, integration_tokens, and requests authorized by a channel's token.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { channelSecret } from '~/integration/channels'
import { testPrefix } from '../helpers/redis'
import { testService, type TestService } from '../helpers/service'

const prefix = testPrefix()
let t: TestService
let token: string
let other: string
let acme: { id: string; name: string }
const base = '/rest/v1/service/integration_points'
const tokens = '/rest/v1/service/integration_tokens'
beforeAll(async () => {
  // the remote driver lets a second instance share the database (one cluster)
  t = await testService({ driver: 'remote', kvPrefix: prefix })
  acme = await t.createDomain('acme.master')
  await t.createDomain('other.master')
  token = await t.adminIn('acme.master')
  other = await t.adminIn('other.master')
})
afterAll(() => t.close())

const call = (method: string, path: string, body?: unknown) => t.call(method, path, { token, body })
/** The stored row; its secret is kept sealed (never `whsec_` in the row) and read through the secrets key. */
const row = async (id: string) => {
  const r = await t.deps.db.get('SELECT doc, secret FROM integration_points WHERE domain = ? AND id = ?', [acme.id, id])
  if (!r) return r
  const stored = r[1] as string | null
  expect(stored ?? '').not.toContain('whsec_')
  return { doc: JSON.parse(r[0] as string), secret: stored && (await channelSecret(t.deps, acme.id, id)) }
}
const lastJournal = async () => (await t.journal(acme.id)).at(-1)!
const HEX32 = /^[0-9a-f]{32}$/
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/

/** The original documentation's example, less the id, token and times. */
const EXAMPLE = {
  code: 'ABCDE',
  type: 'public',
  token_remote: '',
  token_remote2: '',
  url: 'http://trapper.com',
  recv_svcscriptcode: 'ws_hook',
  recv_svcscriptcode_ws: '',
  send_svcscriptcode: 'send_to_web',
  send_svcscriptcode_ws: '',
  opts: { title: '', comment: '', allow_files_api: false, issync: false },
}

describe('CRUD', () => {
  test('create, read, list, lookup, patch, delete: responses, rows and journal', async () => {
    const created = await call('POST', base, EXAMPLE)
    expect(created.status).toBe(200)
    const { secret, ...r } = created.body
    expect(r).toEqual({ id: r.id, ...EXAMPLE, token_local: r.token_local, ext: { ct: r.ext.ct, lwt: r.ext.ct } })
    expect(Object.keys(r).slice(0, 4)).toEqual(['id', 'code', 'type', 'token_local'])
    expect(r.token_local).toMatch(HEX32)
    expect(secret).toMatch(SECRET)
    expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32)
    expect(await row(r.id)).toEqual({ doc: r, secret })
    const journaled = await lastJournal()
    expect(journaled).toMatchObject({ cmdtype: 'create', objtype: 'integration_point', objid: r.id })
    // the tokens and the secret authorize: the journal (readable by roles that cannot read channels) masks them
    const masked = { token_local: '***', token_remote: '***', token_remote2: '***', secret: '***' }
    expect(journaled.obj).toEqual({ ...r, ...masked })

    // whole, the read adds the quota figures of the domain's channel files
    const { files_quota, ...read } = (await call('GET', `${base}/${r.id}`)).body
    expect(read).toEqual(r)
    expect(files_quota).toEqual({ bytes_used: 0, bytes_limit: 10 * 2 ** 30, files_used: 0, files_limit: 100_000 })
    const { opts, ext, url: _url, ...listed } = r
    expect((await call('GET', base)).body).toEqual([
      { ...listed, opts: { title: '', allow_files_api: false, issync: false }, ext: { lwt: ext.lwt, ct: ext.ct } },
    ])
    expect((await call('LOOKUP', base, 'ABCDE')).body).toEqual([r.id])
    expect((await call('LOOKUP', base, r.id)).body).toEqual([r.id])
    expect((await call('LOOKUP', base, 'nope')).status).toBe(404)

    t.clock.advance(1000)
    const changes = { url: 'https://example.com/hook', opts: { issync: true, recv_timeout: 30, comment: null } }
    const patched = await call('PATCH', `${base}/${r.id}`, changes)
    expect(patched.status).toBe(200)
    const after = {
      ...r,
      url: 'https://example.com/hook',
      opts: { title: '', comment: '', allow_files_api: false, issync: true, recv_timeout: 30 },
      ext: { ...r.ext, lwt: patched.body.ext.lwt },
    }
    expect(patched.body).toEqual(after)
    expect(await row(r.id)).toEqual({ doc: after, secret })
    expect(await lastJournal()).toMatchObject({ cmdtype: 'update', objid: r.id, obj: { ...after, ...masked } })

    expect((await call('DELETE', `${base}/${r.id}`)).status).toBe(204)
    expect(await row(r.id)).toBeUndefined()
    expect(await lastJournal()).toMatchObject({ cmdtype: 'delete', objtype: 'integration_point', objid: r.id })
    expect((await call('GET', `${base}/${r.id}`)).status).toBe(404)
    expect((await call('DELETE', `${base}/${r.id}`)).status).toBe(404)
  })

  test('token_local is generated, distinct, and cannot be set or changed (400 naming it)', async () => {
    const a = (await call('POST', base, { code: 'a', type: 'subscr' })).body
    const b = (await call('POST', base, { code: 'b', type: 'public' })).body
    expect([a.token_local, b.token_local].every((x) => HEX32.test(x))).toBe(true)
    expect(a.token_local).not.toBe(b.token_local)
    expect(a.opts).toEqual({ title: '', comment: '', allow_files_api: false, issync: false })
    for (const [method, path] of [
      ['POST', base],
      ['PATCH', `${base}/${a.id}`],
    ] as const) {
      for (const value of [a.token_local, '0'.repeat(32)]) {
        const res = await call(method, path, { code: 'c', type: 'public', token_local: value })
        expect(res.status).toBe(400)
        expect(res.body.error_details).toEqual({ field: 'token_local' })
      }
    }
    expect((await call('GET', `${base}/${a.id}`)).body.token_local).toBe(a.token_local)
    for (const x of [a, b]) await call('DELETE', `${base}/${x.id}`)
  })

  test('code is unique in the domain (409 naming code) but not across domains', async () => {
    const a = (await call('POST', base, { code: 'dup', type: 'subscr' })).body
    const again = await call('POST', base, { code: 'dup', type: 'subscr' })
    expect(again.status).toBe(409)
    expect(again.body.error_details).toEqual({ field: 'code' })
    const elsewhere = await t.call('POST', base, { token: other, body: { code: 'dup', type: 'subscr' } })
    expect(elsewhere.status).toBe(200)
    await call('DELETE', `${base}/${a.id}`)
    await t.call('DELETE', `${base}/${elsewhere.body.id}`, { token: other })
  })

  test('invalid fields: 400 naming the field, nothing stored', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ type: 'public' }, 'code'],
      [{ code: 'a b', type: 'public' }, 'code'],
      [{ code: 'x' }, 'type'],
      [{ code: 'x', type: 'private' }, 'type'],
      [{ code: 'x', type: 'public', url: 'ftp://example.com' }, 'url'],
      [{ code: 'x', type: 'public', recv_svcscriptcode: 'a b' }, 'recv_svcscriptcode'],
      [{ code: 'x', type: 'public', send_svcscriptcode_ws: 5 }, 'send_svcscriptcode_ws'],
      [{ code: 'x', type: 'public', token_remote: 5 }, 'token_remote'],
      [{ code: 'x', type: 'public', opts: { allow_files_api: 1 } }, 'opts.allow_files_api'],
      [{ code: 'x', type: 'public', opts: { recv_timeout: 1.5 } }, 'opts.recv_timeout'],
      [{ code: 'x', type: 'public', opts: { roles: ['nosuch'] } }, 'opts.roles'],
      [{ code: 'x', type: 'public', opts: { userid: crypto.randomUUID() } }, 'opts.userid'],
      [{ code: 'x', type: 'public', opts: { sender_mask: ['10.0.0.0/33'] } }, 'opts.sender_mask.0'],
      [{ code: 'x', type: 'public', opts: { other: 1 } }, 'opts.other'],
      [{ code: 'x', type: 'public', secret: 'whsec_x' }, 'secret'],
    ]
    for (const [body, field] of cases) {
      const res = await call('POST', base, body)
      expect([field, res.status, res.body.error_details]).toEqual([field, 400, { field }])
    }
    expect((await call('GET', base)).body).toEqual([])
  })
})

describe('signing secret', () => {
  test('shown once at create, never in reads or the journal; rotation answers a new one', async () => {
    const created = (await call('POST', base, { code: 'sig', type: 'subscr' })).body
    const id = created.id
    const reads = [
      (await call('GET', `${base}/${id}`)).text,
      (await call('GET', `${base}/${id}?mask=id,opts`)).text,
      (await call('GET', base)).text,
      JSON.stringify(await t.journal(acme.id)),
    ]
    for (const text of reads) expect(text).not.toContain(created.secret)

    t.clock.advance(1000)
    const rotated = await call('POST', `${base}/${id}/secret`)
    expect(rotated.status).toBe(200)
    expect(rotated.body).toEqual({ id, secret: rotated.body.secret })
    expect(rotated.body.secret).toMatch(SECRET)
    expect(rotated.body.secret).not.toBe(created.secret)
    expect((await row(id))!.secret).toBe(rotated.body.secret)
    const j = await lastJournal()
    expect(j).toMatchObject({ cmdtype: 'update', objid: id, fields: 'secret', obj: { secret: '***' } })
    expect(JSON.stringify(await t.journal(acme.id))).not.toContain(rotated.body.secret)
    expect((await call('GET', `${base}/${id}`)).body.token_local).toBe(created.token_local)

    expect((await call('POST', `${base}/${crypto.randomUUID()}/secret`)).status).toBe(404)
    expect((await t.call('POST', `${base}/${id}/secret`, { token: other })).status).toBe(404)
    await call('DELETE', `${base}/${id}`)
  })
})

describe('integration_tokens', () => {
  test("a token of the current domain answers its channel; another domain's or an unknown one is 404 1404", async () => {
    const mine = (await call('POST', base, { code: 'tok', type: 'public' })).body
    const theirs = (await t.call('POST', base, { token: other, body: { code: 'tok', type: 'public' } })).body
    const res = await call('GET', `${tokens}/${mine.token_local}`)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      domain: 'acme.master',
      integration_point: { id: mine.id, _links: { self: { href: `${base}/${mine.id}` } } },
    })
    for (const tok of [theirs.token_local, '0'.repeat(32), 'not-a-token']) {
      const miss = await call('GET', `${tokens}/${tok}`)
      expect([miss.status, miss.body]).toEqual([404, { error_code: 1404, error_message: 'Token not found' }])
    }
    await call('DELETE', `${base}/${mine.id}`)
    await t.call('DELETE', `${base}/${theirs.id}`, { token: other })
  })
})

describe('requests authorized by a channel token', () => {
  test('the channel acts with its roles; writes are journaled with initiator integration', async () => {
    expect(
      (
        await call('POST', '/rest/v1/domain/roles', {
          name: 'refread',
          routes: [{ path: '/rest/v1/reference/**', methods: ['GET'] }],
        })
      ).status,
    ).toBe(200)
    const user = await t.createUser(acme.id, 'bot', 'bot-Pass_1')
    const reader = (await call('POST', base, { code: 'reader', type: 'public', opts: { roles: ['refread'] } })).body
    const ch = { token: reader.token_local }
    expect((await t.call('GET', '/rest/v1/reference/extobjs', ch)).status).toBe(200)
    const refused = await t.call('POST', '/rest/v1/reference/extobjs', { ...ch, body: { type: 'x' } })
    expect(refused.status).toBe(403)
    expect(refused.body.error_message).toBe('no role of this channel grants POST /rest/v1/reference/extobjs')
    expect((await t.call('GET', base, ch)).status).toBe(403)
    // endpoints of a signed-in user are not a channel's
    expect((await t.call('GET', '/rest/v1/user/info', ch)).status).toBe(401)

    const writer = (
      await call('POST', base, { code: 'writer', type: 'public', opts: { roles: ['admin'], userid: user } })
    ).body
    const made = await t.call('POST', '/rest/v1/reference/extobjs', { token: writer.token_local, body: { type: 'x' } })
    expect(made.status).toBe(200)
    const [journaled] = await t.deps.db.all(
      'SELECT cmdtype, objtype, objid, modifierid, modifiername, initiator FROM journal WHERE domain = ? ORDER BY seq DESC LIMIT 1',
      [acme.id],
    )
    expect(journaled).toEqual(['create', 'extobj', made.body.id, writer.id, 'channel writer', 'integration'])
    // the channel acts in its own domain only
    const listed = await t.call('GET', '/rest/v1/reference/extobjs?mask=id', { token: writer.token_local })
    expect(listed.body).toEqual([{ id: made.body.id }])

    // a role taken away applies at once
    expect((await call('PATCH', `${base}/${reader.id}`, { opts: { roles: [] } })).status).toBe(200)
    expect((await t.call('GET', '/rest/v1/reference/extobjs', ch)).status).toBe(403)
    for (const c of [reader, writer]) await call('DELETE', `${base}/${c.id}`)
  })

  test('the sender mask: addresses outside it are 403 naming it', async () => {
    const body = {
      code: 'masked',
      type: 'public',
      opts: { roles: ['admin'], sender_mask: ['10.1.1.0/24', 'fd00::/8'] },
    }
    const c = (await call('POST', base, body)).body
    const from = (ip: string) =>
      t.call('GET', '/rest/v1/reference/extobjs', { token: c.token_local, headers: { 'x-real-ip': ip } })
    expect((await from('10.1.1.1')).status).toBe(200)
    expect((await from('fd00::5')).status).toBe(200)
    const outside = await from('10.1.2.1')
    expect(outside.status).toBe(403)
    expect(outside.body).toEqual({
      error_code: 1403,
      error_message: "the address 10.1.2.1 is outside the channel's opts.sender_mask",
      error_details: { field: 'opts.sender_mask' },
    })
    expect((await call('PATCH', `${base}/${c.id}`, { opts: { sender_mask: null } })).status).toBe(200)
    expect((await from('10.1.2.1')).status).toBe(200)
    await call('DELETE', `${base}/${c.id}`)
  })

  test('an unknown token is 401; a deleted channel is unknown at once, also on another process', async () => {
    expect((await t.call('GET', '/rest/v1/reference/extobjs', { token: '0'.repeat(32) })).status).toBe(401)
    const c = (await call('POST', base, { code: 'gone', type: 'public', opts: { roles: ['admin'] } })).body
    const b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: t.dir, clock: t.clock })
    try {
      for (const s of [t, b])
        expect((await s.call('GET', '/rest/v1/reference/extobjs', { token: c.token_local })).status).toBe(200)
      expect((await call('DELETE', `${base}/${c.id}`)).status).toBe(204)
      for (const s of [t, b]) {
        const res = await s.call('GET', '/rest/v1/reference/extobjs', { token: c.token_local })
        expect(res.status).toBe(401)
      }
    } finally {
      // stopped, not closed: closing would clear the shared Redis prefix
      await b.service.stop()
    }
  })
})

describe('licence limits per type', () => {
  test('webservice_public and webservice_subscr count channels across domains, on create and on a type change', async () => {
    const expectLimit = (res: { status: number; body: unknown }, limit: string, value: number) =>
      expect([res.status, res.body]).toEqual([
        403,
        {
          error_code: 1403,
          error_message: `licence limit reached: ${limit} = ${value}`,
          error_details: { limit, value },
        },
      ])
    const p1 = (await call('POST', base, { code: 'p1', type: 'public' })).body
    expect((await t.call('POST', base, { token: other, body: { code: 'p2', type: 'public' } })).status).toBe(200)
    expectLimit(await call('POST', base, { code: 'p3', type: 'public' }), 'webservice_public', 2)
    expect((await call('LOOKUP', base, 'p3')).status).toBe(404)
    const s1 = (await call('POST', base, { code: 's1', type: 'subscr' })).body
    expect((await call('POST', base, { code: 's2', type: 'subscr' })).status).toBe(200)
    expectLimit(await call('POST', base, { code: 's3', type: 'subscr' }), 'webservice_subscr', 2)
    // a type change takes a place of the new type
    expectLimit(await call('PATCH', `${base}/${s1.id}`, { type: 'public' }), 'webservice_public', 2)
    expect((await call('PATCH', `${base}/${s1.id}`, { opts: { title: 'same type' } })).status).toBe(200)
    await t.licence({ webservice_public: 3 })
    expect((await call('PATCH', `${base}/${s1.id}`, { type: 'public' })).status).toBe(200)
    expectLimit(await call('POST', base, { code: 'p3', type: 'public' }), 'webservice_public', 3)
    expect((await call('DELETE', `${base}/${p1.id}`)).status).toBe(204)
    expect((await call('POST', base, { code: 'p3', type: 'public' })).status).toBe(200)
  })
})
