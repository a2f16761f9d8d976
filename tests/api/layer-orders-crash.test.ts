// Product-layer orders survive crashes: a real service process killed (SIGKILL) after taking an
// order, or while carrying it out, completes the order after a restart, applying it once. And in
// one cluster (two services, one database) the orders of a domain are carried out one at a time.
import { afterAll, describe, expect, test } from 'bun:test'
import type { Subprocess } from 'bun'
import { strToU8, zipSync } from 'fflate'
import { closeSync, constants, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LAYER_ORDER } from '~/layers/product-layer-orders'
import { openEmbeddedDb } from '~storage/db-embedded'
import { jobsOf } from '~storage/queue'
import { testPrefix } from '../helpers/redis'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

/** How long an order may take to be carried out, an install of 40,000 records included. */
const SETTLE_MS = 30_000

const ROOT = join(import.meta.dir, '../..')
const URL = '/rest/v1/domain/product_layer'
const CLASS_ID = '0192a3b4-0000-7000-8000-00000000c7a5'
const DOMAIN = 'crash.master'
const EXTOBJ_ID = '0192a3b4-0000-7000-8000-00000000e7a5'

/** A layer archive's bytes: one class with a fixed id, so its journal is easy to find. */
const layerZip = (more: Record<string, unknown> = {}) =>
  zipSync(
    Object.fromEntries(
      Object.entries({
        'classes/things.json': {
          id: CLASS_ID,
          classname: 'crash/things',
          properties: [{ name: 'code', data_type: 'string' }],
        },
        ...more,
      }).map(([path, doc]) => [path, strToU8(JSON.stringify(doc))]),
    ),
  )

/** Data directories made here, removed at the end with any process still running. */
const dirs: string[] = []
const running = new Set<Subprocess>()
afterAll(async () => {
  for (const proc of running) proc.kill('SIGKILL')
  await Promise.all([...running].map((p) => p.exited))
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-crash-'))
  dirs.push(dir)
  mkdirSync(join(dir, 'layers'))
  return dir
}

/** `bun server.ts` from the checkout over a data directory, listening without the gateway. */
async function startProcess(dir: string, workers: 'on' | 'off', more: Record<string, string> = {}) {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TMPDIR: tmpdir(),
    DATA_DIR: dir,
    ADMIN_PASSWORD,
    PORT: '0',
    GATEWAY: 'off',
    BACKGROUND: workers,
    LOG_LEVEL: 'info',
    ...more,
  }
  const proc = Bun.spawn([process.execPath, 'server.ts'], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  running.add(proc)
  void proc.exited.then(() => running.delete(proc))
  const output = { stdout: '', stderr: '' }
  const collect = async (stream: ReadableStream<Uint8Array>, into: 'stdout' | 'stderr') => {
    for await (const chunk of stream) output[into] += new TextDecoder().decode(chunk)
  }
  void collect(proc.stdout, 'stdout')
  void collect(proc.stderr, 'stderr')
  let url: string | undefined
  for (const until = Date.now() + 15_000; !url && proc.exitCode === null && Date.now() < until; await Bun.sleep(20))
    url = /"msg":"listening","url":"([^"]+)"/.exec(output.stdout)?.[1]
  if (!url) throw new Error(`the service did not report listening\nstdout: ${output.stdout}\nstderr: ${output.stderr}`)
  const base = url

  /**
   * Signs in as the master administrator and switches into a domain (the working one unless null);
   * sessions live in the process's memory, so each process needs its own.
   */
  async function adminIn(domain: string | null = DOMAIN): Promise<string> {
    const signIn = await fetch(`${base}/rest/v1/iam/sessions`, {
      method: 'POST',
      body: JSON.stringify({ domain: 'master', login: 'admin', pwd: ADMIN_PASSWORD, session_type: 'token' }),
    })
    if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${await signIn.text()}`)
    const token = ((await signIn.json()) as { session_token: string }).session_token
    if (domain === null) return token
    const switched = await call(token, 'PATCH', '/rest/v1/iam/sessions/current', { domain })
    if (switched.status !== 204) throw new Error(`switch: ${switched.status} ${JSON.stringify(switched.body)}`)
    return token
  }

  async function call(token: string, method: string, path: string, body?: unknown) {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }

  /**
   * The order's state once it is no longer `registered` (the worker polls every 2 s). Bounded by
   * SETTLE_MS: the 40,000-record install took 10.3 s on a loaded 2-core machine, past the 10 s this was.
   */
  async function settled(token: string): Promise<Record<string, unknown>> {
    for (const until = Date.now() + SETTLE_MS; Date.now() < until; await Bun.sleep(100)) {
      const [current] = (await call(token, 'GET', URL)).body as Record<string, unknown>[]
      if (current && current.status !== 'registered') return current
    }
    throw new Error(
      `the order was not carried out within ${SETTLE_MS / 1000} s\nstdout: ${output.stdout}\nstderr: ${output.stderr}`,
    )
  }

  return {
    proc,
    output,
    adminIn,
    call,
    settled,
    /** kill -9: nothing of the process's shutdown runs. */
    async crash() {
      proc.kill('SIGKILL')
      await proc.exited
    },
    /** A clean stop (SIGTERM: the service closes its database and exits 0). */
    async stop() {
      proc.kill('SIGTERM')
      expect(await proc.exited).toBe(0)
    },
  }
}

/** Takes the order in a process without workers: the domain is created, the order answered `registered`. */
async function takeOrder(p: Awaited<ReturnType<typeof startProcess>>) {
  const masterToken = await p.adminIn(null)
  expect((await p.call(masterToken, 'POST', '/rest/v1/domain/domains', { name: DOMAIN })).status).toBe(200)
  const token = await p.adminIn()
  const order = await p.call(token, 'POST', URL, { prefix: 'crash' })
  expect(order.status).toBe(200)
  expect(order.body).toMatchObject({ operation: 'install', file: 'crash_1.zip', status: 'registered' })
}

/** What a finished crash test checks in the restarted process: the layer is there, and was applied once. */
async function expectInstalledOnce(p: Awaited<ReturnType<typeof startProcess>>) {
  const token = await p.adminIn()
  expect(await p.settled(token)).toMatchObject({ status: 'installed', kind: 'current', file: 'crash_1.zip' })
  expect((await p.call(token, 'GET', `/rest/v1/design/classes/${CLASS_ID}`)).body).toMatchObject({
    classname: 'crash/things',
  })
  expect((await p.call(token, 'POST', '/rest/v1/model/crash/things', { code: 'T1' })).status).toBe(200)
  const params = encodeURIComponent(JSON.stringify({ objtype: 'class', objid: CLASS_ID }))
  const changes = await p.call(token, 'GET', `/rest/v1/journal/changes?params=${params}`)
  expect(changes.body.map((c: { cmdtype: string }) => c.cmdtype)).toEqual(['create'])
}

/** The order's job, read from the file once no process holds it. */
async function layerJob(dir: string) {
  const db = openEmbeddedDb(join(dir, 'platform.db'))
  try {
    const [job] = await jobsOf(db, LAYER_ORDER.kind)
    return job!
  } finally {
    await db.close()
  }
}

/**
 * Waits until some process opens the FIFO for reading: a non-blocking open for writing fails
 * (ENXIO) while there is no reader. Answers the writing end, held open so the reader stays blocked.
 */
async function readerOf(fifo: string): Promise<number> {
  for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(20)) {
    try {
      return openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK)
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENXIO') throw err
    }
  }
  throw new Error(`nothing opened ${fifo} for reading within 10 s`)
}

describe('a crash during a product-layer order followed by a restart completes it', () => {
  test('killed after the order was taken: the restarted service carries it out', async () => {
    const dir = dataDir()
    writeFileSync(join(dir, 'layers/crash_1.zip'), layerZip())
    const taking = await startProcess(dir, 'off')
    await takeOrder(taking)
    await taking.crash()

    const after = await startProcess(dir, 'on')
    await expectInstalledOnce(after)
    await after.stop()
    expect(await layerJob(dir)).toMatchObject({ status: 'done', attempts: 1, result: { status: 'installed' } })
  }, 30_000)

  test('killed while carrying it out: the restarted service carries it out again, applying the layer once', async () => {
    const dir = dataDir()
    const archive = join(dir, 'layers/crash_1.zip')
    const bytes = layerZip()
    writeFileSync(archive, bytes)
    const taking = await startProcess(dir, 'off')
    await takeOrder(taking)
    await taking.stop()

    // the archive becomes a FIFO: the worker that carries the order out blocks reading it
    rmSync(archive)
    const mkfifo = Bun.spawn(['mkfifo', archive])
    expect(await mkfifo.exited).toBe(0)
    const carrying = await startProcess(dir, 'on')
    const writer = await readerOf(archive)
    await carrying.crash()
    closeSync(writer) // only now: an end of file would have let the worker go on (and fail the order)

    rmSync(archive)
    writeFileSync(archive, bytes)
    const after = await startProcess(dir, 'on')
    await expectInstalledOnce(after)
    await after.stop()
    // the first attempt claimed it and died; the second carried it out
    expect(await layerJob(dir)).toMatchObject({ status: 'done', attempts: 2, result: { status: 'installed' } })
  }, 30_000)
})

describe('a stop during a long install', () => {
  test('SIGTERM while an install runs: the stop keeps to its grace, the install is rolled back, the restart carries it out', async () => {
    const dir = dataDir()
    // 40,000 records: an install of seconds, far longer than the grace
    const records: Record<string, unknown> = {}
    for (let f = 0; f < 40; f++)
      records[`extobjs/e${f}.json`] = Array.from({ length: 1000 }, (_, i) => {
        const n = f * 1000 + i
        return { id: `0192a3b4-0000-7000-8100-${String(n).padStart(12, '0')}`, type: 'bulk', value: { n } }
      })
    writeFileSync(join(dir, 'layers/crash_1.zip'), layerZip(records))
    const taking = await startProcess(dir, 'off')
    await takeOrder(taking)
    await taking.stop()

    const carrying = await startProcess(dir, 'on', { SHUTDOWN_GRACE_SEC: '0' })
    const token = await carrying.adminIn()
    for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(20)) {
      const [current] = (await carrying.call(token, 'GET', URL)).body as Record<string, unknown>[]
      if (current?.progress) break
    }
    await carrying.stop()
    expect(carrying.output.stdout).not.toContain('product layer failed')
    // nothing of it was written, and the order waits for the next start
    const db = openEmbeddedDb(join(dir, 'platform.db'))
    try {
      expect((await db.get("SELECT count(*) FROM extobjs WHERE json_extract(doc, '$.type') = 'bulk'"))![0]).toBe(0)
    } finally {
      await db.close()
    }
    // given back: a stop is no failed attempt (three of them would have given the order up)
    expect(await layerJob(dir)).toMatchObject({ status: 'pending', attempts: 0 })

    const after = await startProcess(dir, 'on')
    await expectInstalledOnce(after)
    await after.stop()
    expect(await layerJob(dir)).toMatchObject({ status: 'done', attempts: 1, result: { status: 'installed' } })
  }, 60_000)
})

describe('in one cluster', () => {
  let a: TestService
  let b: TestService
  /** Ends a read still blocked on the FIFO (a failed test), so stopping the service does not wait forever. */
  let unblock = () => {}
  afterAll(async () => {
    unblock()
    await b?.close()
    await a?.close()
  })

  test("two services never carry out two orders of one domain at once; another domain's order goes meanwhile", async () => {
    // two processes of a cluster: one database (through the remote driver, file: URL), one Redis prefix
    const prefix = testPrefix()
    a = await testService({ driver: 'remote', kvPrefix: prefix })
    b = await testService({ driver: 'remote', kvPrefix: prefix, dataDir: a.dir, clock: a.clock })
    const domain = await a.createDomain(DOMAIN)
    await a.createDomain('other.master')
    const token = await a.adminIn(DOMAIN)
    const otherToken = await a.adminIn('other.master')
    mkdirSync(join(a.dir, 'layers'))
    const first = join(a.dir, 'layers/crash_1.zip')
    const bytes = layerZip()
    writeFileSync(first, bytes)
    expect((await a.call('POST', URL, { token, body: { prefix: 'crash' } })).body.file).toBe('crash_1.zip')
    writeFileSync(join(a.dir, 'layers/crash_2.zip'), layerZip({ 'extobjs/x.json': { id: EXTOBJ_ID, type: 'x' } }))
    expect((await a.call('POST', URL, { token, body: { prefix: 'crash' } })).body.file).toBe('crash_2.zip')
    expect((await a.call('POST', URL, { token: otherToken, body: { prefix: 'crash' } })).body.file).toBe('crash_2.zip')

    // a takes the domain's first order and is held reading its archive
    rmSync(first)
    expect(await Bun.spawn(['mkfifo', first]).exited).toBe(0)
    const passA = a.run('layer-orders')
    unblock = () => {
      try {
        closeSync(openSync(first, constants.O_WRONLY | constants.O_NONBLOCK)) // the reader sees the end of the file
      } catch {} // no reader: nothing to end
    }
    const writer = await readerOf(first)
    unblock = () => closeSync(writer)

    // meanwhile b finds the domain's second order waiting for the first, and carries out the other domain's
    expect(await b.run('layer-orders')).toBe(1)
    /** Each job, oldest first: whether it is the working domain's, and its status. */
    const statuses = async () =>
      (await jobsOf(a.deps.db, LAYER_ORDER.kind)).reverse().map((j) => [j.domain === domain.id, j.status])
    expect(await statuses()).toEqual([
      [true, 'running'],
      [true, 'pending'],
      [false, 'done'],
    ])

    // the first order's archive arrives: a installs it, then takes the second order
    writeSync(writer, bytes)
    closeSync(writer)
    unblock = () => {}
    expect(await passA).toBe(2)
    expect(await statuses()).toEqual([
      [true, 'done'],
      [true, 'done'],
      [false, 'done'],
    ])
    const listing = (await a.call('GET', URL, { token })).body
    expect(listing.map((o: { status: string; file: string }) => [o.status, o.file])).toEqual([
      ['installed', 'crash_2.zip'],
    ])
  })
})
