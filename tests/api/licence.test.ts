// /rest/v1/master/license: the evaluation licence from the first start, licences posted as tokens
// bound to this installation, refusals that say which check failed (and change nothing), expiry,
// the issued licence against the one in force, and the configurable public key.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { exportPKCS8, exportSPKI, generateKeyPair, importPKCS8, SignJWT } from 'jose'
import { ConfigError, loadConfig } from '~/config'
import { EVALUATION } from '~/master/licence'
import { DEV_PRIVATE_KEY_FILE, issueLicence } from '../../scripts/licence-issue'
import { testService, type TestService } from '../helpers/service'

const base = '/rest/v1/master/license'
const HOUR = 3_600_000
let t: TestService
let admin: string
beforeAll(async () => {
  t = await testService()
  admin = await t.login('master', 'admin', 'admin-Secret_1')
})
afterAll(() => t.close())

const get = (query = '') => t.call('GET', `${base}${query}`, { token: admin })
const post = (body: unknown) => t.call('POST', base, { token: admin, body })
/** A licence for this test service, at its clock's time. */
const issue = (o: Partial<Parameters<typeof issueLicence>[0]> = {}) =>
  issueLicence({ installation: t.installation, issued: new Date(t.clock.now()), ...o })
const keyPair = async (alg: 'EdDSA' | 'ES256') => {
  const { publicKey, privateKey } = await generateKeyPair(alg, { extractable: true })
  return { pub: await exportSPKI(publicKey), priv: await exportPKCS8(privateKey) }
}

describe('a fresh installation', () => {
  test('answers the evaluation licence, in force and as "issued", with its installation id', async () => {
    const res = await get()
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ ...EVALUATION, installation: t.installation, evaluation: true })
    expect(t.installation).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(res.body.dql).toMatchObject({ domains: 5, svcscripts: 10, webservice_public: 2, webservice_subscr: 2 })
    expect((await get('?file=true')).body).toEqual(res.body)
    expect((await get('?file=false')).body).toEqual(res.body)
  })

  test('another query parameter is a 400 naming it (a cache-buster starting with _ passes)', async () => {
    const res = await get('?file=true&x=1')
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'x' }])
    expect((await get('?_=1')).status).toBe(200)
  })

  test('file is a boolean: another value is a 400 naming it', async () => {
    const res = await get('?file=yes')
    expect([res.status, res.body.error_details]).toEqual([400, { field: 'file' }])
    expect(res.body.error_message).toBe('file must be true or false, got "yes"')
  })

  test('a working-domain session gets 403 on GET and POST', async () => {
    await t.createDomain('lic.master')
    const token = await t.adminIn('lic.master')
    for (const method of ['GET', 'POST']) {
      const res = await t.call(method, base, { token, body: await issue({ dql: { domains: 99 } }) })
      expect([method, res.status, res.body.error_message]).toEqual([
        method,
        403,
        'this endpoint is served in the master domain only',
      ])
    }
    expect((await get()).body.evaluation).toBe(true)
  })
})

describe('posting a licence', () => {
  test('a licence made with the issuing function is answered and then in force', async () => {
    const expires = new Date(t.clock.now() + 30 * 24 * HOUR)
    const token = await issue({ dql: { domains: 40, svcscripts: 25 }, sqf: { rec: true }, expires, issuer: 'acme' })
    const res = await post(token)
    expect(res.status).toBe(200)
    const expected = {
      products: 'platform',
      topleveldnpolicy: 0,
      dql: { ...EVALUATION.dql, domains: 40, svcscripts: 25 },
      sqf: { rec: true, cdr: true, sel: false },
      installation: t.installation,
      evaluation: false,
      issuer: 'acme',
      issued: new Date(Math.floor(t.clock.now() / 1000) * 1000).toISOString(),
      expires: new Date(Math.floor(expires.getTime() / 1000) * 1000).toISOString(),
    }
    expect(res.body).toEqual(expected)
    expect((await get()).body).toEqual(expected)
    expect((await get('?file=true')).body).toEqual(expected)
  })

  test('a licence made by running the script is accepted', async () => {
    const proc = Bun.spawn(
      [process.execPath, 'scripts/licence-issue.ts', '--installation', t.installation, '--domains', '7', '--days', '3'],
      { cwd: join(import.meta.dir, '../..'), stdout: 'pipe', stderr: 'pipe' },
    )
    const [out, err, code] = await Promise.all([
      new Response(proc.stdout).text(),
      new Response(proc.stderr).text(),
      proc.exited,
    ])
    expect([code, err]).toEqual([0, ''])
    const res = await post(out.trim())
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ dql: { domains: 7, svcscripts: 10 }, evaluation: false, issuer: 'licence-dev' })
  })

  test('each refusal says what is wrong and leaves the licence in force unchanged', async () => {
    expect((await post(await issue({ dql: { domains: 12 } }))).status).toBe(200)
    const before = (await get()).body
    const other = await keyPair('EdDSA')
    const p256 = await keyPair('ES256')
    const cases: [string, unknown, string, string][] = [
      ['garbage', 'not-a-licence', 'malformed', 'license: not a licence token'],
      ['three parts of garbage', 'a.b.c', 'malformed', 'license: not a licence token'],
      ['another key', await issue({ privateKey: other.priv }), 'signature', 'license: the signature does not verify'],
      [
        'another algorithm',
        await issue({ privateKey: p256.priv }),
        'algorithm',
        'license: signed with an algorithm the licence key does not verify (it verifies EdDSA)',
      ],
      [
        'another installation',
        await issue({ installation: '0192a3b4-0000-7000-8000-000000000001' }),
        'installation',
        `license: issued for installation "0192a3b4-0000-7000-8000-000000000001", not for this installation (${t.installation})`,
      ],
      [
        'expired',
        await issue({ issued: new Date(t.clock.now() - 2 * HOUR), expires: new Date(t.clock.now() - HOUR) }),
        'expired',
        'license: expired at ',
      ],
    ]
    for (const [what, body, reason, message] of cases) {
      const res = await post(body)
      expect([what, res.status, res.body.error_details]).toEqual([what, 400, { field: 'license', reason }])
      expect([what, res.body.error_message.slice(0, message.length)]).toEqual([what, message])
      expect((await get()).body).toEqual(before)
      expect((await get('?file=true')).body).toEqual(before)
    }
    const notString = await post({ token: 'x' })
    expect([notString.status, notString.body.error_details]).toEqual([400, { field: 'body' }])
  })

  test('a time claim no date can hold (exp 1e300) is refused; it was stored, and every read of the licence failed', async () => {
    const before = (await get()).body
    const { products, topleveldnpolicy, dql, sqf } = EVALUATION
    const iat = Math.floor(t.clock.now() / 1000)
    for (const claims of [{ iat, exp: 1e300 }, { iat, exp: 8640000000001 }, { iat: 1e300 }, { iat, nbf: -1e300 }]) {
      const token = await new SignJWT({ license: { products, topleveldnpolicy, dql, sqf }, ...claims })
        .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' })
        .setSubject(t.installation)
        .setIssuer('licence-dev')
        .sign(await importPKCS8(readFileSync(DEV_PRIVATE_KEY_FILE, 'utf8'), 'EdDSA'))
      const res = await post(token)
      expect([claims, res.status, res.body.error_details]).toEqual([
        claims,
        400,
        { field: 'license', reason: 'claims' },
      ])
      expect((await get()).body).toEqual(before)
    }
  })

  test('a token without a licence object, or with a malformed one, is refused naming the member', async () => {
    const token = await issue({ dql: { domains: -1 } })
    const res = await post(token)
    expect(res.body.error_details).toEqual({ field: 'license', reason: 'content' })
    expect(res.body.error_message).toStartWith('license: the license claim is not a licence object (dql.domains: ')
  })
})

describe('expiry', () => {
  test('once the stored licence expires, the evaluation licence is in force; file=true still shows the issued one', async () => {
    const expires = new Date(t.clock.now() + HOUR)
    const posted = (await post(await issue({ dql: { domains: 30 }, expires }))).body
    expect((await get()).body).toEqual(posted)
    t.clock.advance(HOUR - 1000)
    expect((await get()).body.dql.domains).toBe(30)
    t.clock.advance(1000)
    expect((await get()).body).toEqual({ ...EVALUATION, installation: t.installation, evaluation: true })
    expect((await get('?file=true')).body).toEqual(posted)
  })
})

describe('the public key', () => {
  test('LICENSE_PUBLIC_KEY takes PEM text or a file; a bad one stops the start naming it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'licence-key-'))
    try {
      const { pub, priv } = await keyPair('ES256')
      writeFileSync(join(dir, 'pub.pem'), pub)
      writeFileSync(join(dir, 'key.pem'), priv)
      expect(loadConfig({ LICENSE_PUBLIC_KEY: pub }).licenseKey).toMatchObject({ alg: 'ES256', development: false })
      expect(loadConfig({ LICENSE_PUBLIC_KEY: join(dir, 'pub.pem') }).licenseKey.pem.trim()).toBe(pub.trim())
      expect(loadConfig({}).licenseKey).toMatchObject({ alg: 'EdDSA', development: true })
      for (const [value, message] of [
        [join(dir, 'missing.pem'), 'is neither PEM text nor a readable file'],
        [join(dir, 'key.pem'), 'must be the public key, not the private one'],
        ['-----BEGIN PUBLIC KEY-----\nnope\n-----END PUBLIC KEY-----', 'is not a PEM public key'],
      ] as const) {
        expect(() => loadConfig({ LICENSE_PUBLIC_KEY: value })).toThrow(ConfigError)
        expect(() => loadConfig({ LICENSE_PUBLIC_KEY: value })).toThrow(`LICENSE_PUBLIC_KEY: ${message}`)
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('a licence counts only under the key that verified it; the installation id outlives restarts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'licence-restart-'))
    const { pub, priv } = await keyPair('ES256')
    try {
      // the remote driver: the embedded one keeps the file locked in this process after closing
      const first = await testService({ dataDir: dir, kv: 'memory', driver: 'remote' })
      const installation = first.installation
      const devToken = await issueLicence({ installation, dql: { domains: 20 } })
      const token = await first.login('master', 'admin', 'admin-Secret_1')
      expect((await first.call('POST', base, { token, body: devToken })).status).toBe(200)
      await first.close()

      // the production key: the development licence no longer counts, but is still shown as issued
      const second = await testService({
        dataDir: dir,
        kv: 'memory',
        driver: 'remote',
        env: { LICENSE_PUBLIC_KEY: pub },
      })
      expect(second.installation).toBe(installation)
      const admin2 = await second.login('master', 'admin', 'admin-Secret_1')
      const call = (method: string, path: string, body?: unknown) => second.call(method, path, { token: admin2, body })
      expect((await call('GET', base)).body).toMatchObject({ evaluation: true, dql: { domains: 5 } })
      expect((await call('GET', `${base}?file=true`)).body).toMatchObject({ evaluation: false, dql: { domains: 20 } })
      expect((await call('POST', base, await issueLicence({ installation }))).body.error_details.reason).toBe(
        'algorithm',
      )
      const posted = await call(
        'POST',
        base,
        await issueLicence({ installation, privateKey: priv, dql: { domains: 9 } }),
      )
      expect([posted.status, posted.body.dql.domains]).toEqual([200, 9])
      expect((await call('GET', base)).body.dql.domains).toBe(9)
      await second.close()
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
