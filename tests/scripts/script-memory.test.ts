// Memory limits count what a script holds (src/scripts/sandbox-instance.ts): each handler's heap is a
// WebAssembly memory of its own whose maximum is the limit, so strings and buffers kept in variables
// and globals count, and a handler at its limit ends itself only, never a neighbour.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type HostApi, runInSandbox, type SandboxLimits } from '~/scripts/sandbox'
import { testService, type TestService } from '../helpers/service'

const MB = 1024 * 1024
const LIMITS: SandboxLimits = { memoryBytes: 64 * MB, stackBytes: 256 * 1024, cpuMs: 5000, durationMs: 20_000 }

/** 125 MB of distinct strings and buffers, half in a local array, half on a global, kept across awaits. */
const HOLD_125 = `
  const local = []
  globalThis.kept = []
  for (let i = 0; i < 125; i++) {
    if (i % 2) local.push(String(i).padStart(MB, 's'))
    else kept.push(new Uint8Array(MB).fill(i))
    await tick()
  }
  return local.length + kept.length`
/** 5 MB held the same way, while the other allocates. */
const HOLD_5 = `
  const local = ['x'.repeat(2 * MB)]
  globalThis.kept = [new Uint8Array(3 * MB).fill(1)]
  for (let i = 0; i < 200; i++) await tick()
  return local[0].length + kept[0].length`

const host: HostApi = { tick: () => new Promise((r) => setTimeout(r, 1)) }
const define = (source: string) => `const MB = ${MB};\n${source}`

test('strings and buffers held in variables and globals count: 125 MB against 64 MB ends that handler only', async () => {
  const started = performance.now()
  const [big, small] = await Promise.all([
    runInSandbox(define(HOLD_125), host, LIMITS),
    runInSandbox(define(HOLD_5), host, LIMITS),
  ])
  expect(await big.outcome).toMatchObject({ status: 'limit', limit: 'memory' })
  expect(await small.outcome).toEqual({ status: 'done', result: 5 * MB })
  expect(performance.now() - started).toBeLessThan(5000)
})

test('big buffers or strings in a tight loop end at the memory limit at once', async () => {
  for (const source of [
    'const a = []; for (;;) a.push(new Uint8Array(16 << 20))',
    'const a = []; for (let i = 0;; i++) a.push(("y" + i).repeat(4 << 20))',
  ]) {
    const started = performance.now()
    expect(await (await runInSandbox(source, {}, LIMITS)).outcome).toMatchObject({ limit: 'memory' })
    expect(performance.now() - started).toBeLessThan(3000)
  }
})

test('a handler that fills its own heap to the last byte harms only itself; others start and finish', async () => {
  const fill = `await tick(); const a = [];
    for (const n of [1 << 20, 1 << 16, 1 << 12, 256]) { try { for (;;) a.push(new Uint8Array(n)) } catch {} }
    try { for (;;) a.push({}) } catch {}
    await tick(); return a.length`
  const filled = await runInSandbox(fill, host, LIMITS)
  const neighbour = await runInSandbox('await tick(); return new Uint8Array(8 << 20).length', host, LIMITS)
  expect(await neighbour.outcome).toEqual({ status: 'done', result: 8 << 20 })
  // it may go on within its heap or end at its limit; it never stays running for good
  const outcome = await Promise.race([filled.outcome, Bun.sleep(10_000).then(() => 'still running')])
  expect(outcome).toMatchObject({ status: expect.stringMatching(/done|failed|limit/) })
  expect(await (await runInSandbox('return 1', {}, LIMITS)).outcome).toEqual({ status: 'done', result: 1 })
}, 20_000)

describe('handlers of two domains on one script thread', () => {
  let t: TestService
  beforeAll(async () => {
    t = await testService({ env: { SCRIPT_THREADS: '1', SCRIPT_MEMORY_MB: '64' } })
  })
  afterAll(() => t.close())

  test("a handler holding 125 MB ends at its 64 MB limit; another domain's 5 MB handler meanwhile runs fine", async () => {
    const BASE = '/rest/v1/service/svcscript_runtimes'
    const start = async (domain: string, code: string, source: string) => {
      await t.createDomain(domain)
      const token = await t.adminIn(domain)
      const scriptdata = define(source.replaceAll('await tick()', 'await sleep(1)'))
      expect(
        (await t.call('POST', '/rest/v1/service/svcscripts', { token, body: { code, name: code, scriptdata } })).status,
      ).toBe(200)
      await t.run('node-heartbeat') // the node's record lapses in 4 s of real time; tests drive its heartbeat
      const started = await t.call('POST', BASE, { token, body: { code } })
      expect(started.status).toBe(200)
      return async () => {
        for (;;) {
          const read = await t.call('GET', `${BASE}/${started.body.id}`, { token })
          if (read.body.status !== 'running') return read.body
          await Bun.sleep(10)
        }
      }
    }
    const small = await start('small.master', 'small', HOLD_5)
    const big = await start('big.master', 'big', HOLD_125)
    const [bigEnd, smallEnd] = await Promise.all([big(), small()])
    expect(bigEnd).toMatchObject({ status: 'limit', limit: 'memory' })
    expect(smallEnd).toMatchObject({ status: 'done', result: 5 * MB })
  })
})
