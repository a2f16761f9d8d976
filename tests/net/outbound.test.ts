// Outgoing calls to tenant-named targets: which addresses count as public, and the call pinned to
// the address that was checked, so a name that resolves otherwise the second time (DNS rebinding)
// is never looked up again. The https case runs in a child process that trusts a CA made here.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseCidr } from '~/net/cidr'
import { checkedAddresses, NotPublic } from '~/net/outbound'
import { scriptFetch } from '~/scripts/http'

let echo: ReturnType<typeof Bun.serve>
beforeAll(() => {
  echo = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (r) => Response.json({ host: r.headers.get('host') }) })
})
afterAll(() => echo.stop(true))

test('addresses that are not public unicast, or carry an IPv4 address that could be, are refused', async () => {
  const refused = [
    '127.0.0.1',
    '::ffff:127.0.0.1', // IPv4-mapped
    '::127.0.0.1', // IPv4-compatible
    '::7f00:1',
    '64:ff9b::7f00:1', // NAT64 of 127.0.0.1
    '64:ff9b:1::a00:1',
    '2002:7f00:1::1', // 6to4 of 127.0.0.1
    '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '240.0.0.1',
    '198.18.0.1',
    '192.0.0.8',
    '192.0.2.1',
    '100::1',
    '2001:db8::1',
    'fec0::1',
    'ff02::1',
    '::',
    '0.0.0.0',
    '::ffff:0:7f00:1', // IPv4-translated
    '2001:2::1',
    '5f00::1',
    '100:0:0:1::1',
  ]
  for (const address of refused) {
    const url = new URL(`http://${address.includes(':') ? `[${address}]` : address}/`)
    const outcome = await checkedAddresses(url, []).then(
      () => 'passed',
      (err: unknown) => (err instanceof NotPublic ? 'refused' : String(err)),
    )
    expect([address, outcome]).toEqual([address, 'refused'])
  }
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2a00:1450::1']) {
    const url = new URL(`http://${address.includes(':') ? `[${address}]` : address}/`)
    expect(await checkedAddresses(url, [])).toEqual([address])
  }
})

test('a name is refused when any address it resolves to is not public, unless a private block lists it', async () => {
  const resolve = async () => ['93.184.215.14', '10.0.0.7']
  const url = new URL('http://mixed.test/')
  await expect(checkedAddresses(url, [], resolve)).rejects.toThrow('10.0.0.7')
  await expect(checkedAddresses(url, [parseCidr('0.0.0.0/0')!], resolve)).rejects.toThrow(NotPublic)
  expect(await checkedAddresses(url, [parseCidr('10.0.0.0/8')!], resolve)).toEqual(['93.184.215.14', '10.0.0.7'])
  await expect(checkedAddresses(url, [], async () => [])).rejects.toThrow('no address')
  await expect(checkedAddresses(url, [], async () => ['fe80::1%eth0'])).rejects.toThrow(NotPublic)
})

test('a script call goes to the address that was checked, once resolved, with its name in Host', async () => {
  let lookups = 0
  // a real resolver would not know this name: only the pinned address can reach the server
  const resolve = async (host: string) => {
    lookups++
    return host === 'rebind.test' ? ['127.0.0.1'] : []
  }
  const policy = { allow: ['rebind.test', '127.0.0.1/32'], timeoutMs: 2000, maxBytes: 1024, resolve }
  const res = await scriptFetch({ url: `http://rebind.test:${echo.port}/x` }, policy)
  expect(res.status).toBe(200)
  expect(JSON.parse(res.body)).toEqual({ host: `rebind.test:${echo.port}` })
  expect(lookups).toBe(1)
  // a Host header of the script's own does not replace the name that was checked
  const forged = await scriptFetch({ url: `http://rebind.test:${echo.port}/`, headers: { Host: 'intranet' } }, policy)
  expect(JSON.parse(forged.body)).toEqual({ host: `rebind.test:${echo.port}` })
})

test('a name whose first address cannot be reached is called at the next, as fetch itself would', async () => {
  const resolve = async () => ['::1', '127.0.0.1'] // the server listens on IPv4 only
  const policy = { allow: ['dual.test', '127.0.0.1/32', '::1/128'], timeoutMs: 2000, maxBytes: 1024, resolve }
  const res = await scriptFetch({ url: `http://dual.test:${echo.port}/` }, policy)
  expect(JSON.parse(res.body)).toEqual({ host: `dual.test:${echo.port}` })
})

test('https pinned to an address still checks the certificate against the name', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'platform-outbound-'))
  try {
    const openssl = (...args: string[]) => {
      const run = Bun.spawnSync(['openssl', ...args], { cwd: dir, stderr: 'pipe' })
      if (run.exitCode !== 0) throw new Error(`openssl ${args[0]}: ${run.stderr.toString()}`)
    }
    openssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '1',
      '-subj',
      '/CN=test ca',
    )
    openssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=svc.test')
    writeFileSync(join(dir, 'ext'), 'subjectAltName=DNS:svc.test\n')
    openssl(
      'x509',
      '-req',
      '-in',
      'srv.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'srv.pem',
      '-extfile',
      'ext',
    )
    writeFileSync(
      join(dir, 'child.ts'),
      `import { fetchPinned } from ${JSON.stringify(join(import.meta.dir, '../../src/net/outbound.ts'))}
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, tls: { cert: Bun.file('srv.pem'), key: Bun.file('srv.key') },
  fetch: (r) => new Response(r.headers.get('host')) })
const call = (name: string) => fetchPinned(new URL('https://' + name + ':' + server.port + '/'), ['127.0.0.1'], {})
  .then(async (r) => r.status + ' ' + (await r.text()).replace(/:\\d+$/, ''), (e) => 'failed ' + e.code)
console.log(JSON.stringify([await call('svc.test'), await call('other.test')]))
server.stop(true)
`,
    )
    const child = Bun.spawnSync([process.execPath, 'child.ts'], {
      cwd: dir,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') },
      stderr: 'pipe',
    })
    expect(child.stderr.toString()).toBe('')
    expect(JSON.parse(child.stdout.toString())).toEqual(['200 svc.test', 'failed ERR_TLS_CERT_ALTNAME_INVALID'])
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
