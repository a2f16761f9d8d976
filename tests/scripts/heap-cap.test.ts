// The heap the sandboxes of one thread share (src/scripts/heap-cap.ts): QuickJS does not count big
// buffers and strings, so without the cap a loop of them took the heap to its 2 GB ceiling, which
// is never given back. Each case runs in this test process, whose sandboxes share one heap.
import { expect, test } from 'bun:test'
import { type HostApi, runInSandbox, type SandboxLimits, scriptHeapBytes } from '~/scripts/sandbox'

const MB = 1024 * 1024
const LIMITS: SandboxLimits = { memoryBytes: 32 * MB, stackBytes: 256 * 1024, cpuMs: 5000, durationMs: 20_000 }
/** The heap may stay under this in every case: a few times one handler's limit, far from 2 GB. */
const BOUND = 320 * MB

/** A host whose `wait()` returns once `go()` is called (every waiter at once). */
function gate() {
  const waiting: (() => void)[] = []
  const host: HostApi = { wait: () => new Promise<void>((r) => waiting.push(r)), tick: async () => {} }
  return { host, go: () => waiting.splice(0).forEach((r) => r()) }
}

test('big buffers or strings in a tight loop end at the memory limit at once, with the heap bounded', async () => {
  const sources = [
    'const a = []; for (;;) a.push(new Uint8Array(16 << 20))',
    'const a = []; for (let i = 0;; i++) a.push("y".repeat(4 << 20) + i)',
  ]
  for (const source of sources) {
    const started = performance.now()
    expect((await runInSandbox(source, {}, LIMITS)).outcome).resolves.toMatchObject({ limit: 'memory' })
    expect(performance.now() - started).toBeLessThan(3000)
    expect(await scriptHeapBytes()).toBeLessThan(BOUND)
  }
})

test('a handler that fills the heap and waits is ended before another runs: a neighbour within its limit is unharmed', async () => {
  for (let round = 0; round < 3; round++) {
    const { host, go } = gate()
    const keeper = await runInSandbox(
      'await wait(); const a = [new Uint8Array(8 << 20), new Uint8Array(8 << 20)]; return a.length',
      host,
      LIMITS,
    )
    // just measured (a slice ended), takes what it can within one slice, survives its own
    // failure, then waits holding it all: alone on the thread, it would be measured only now and then
    const hog = await runInSandbox(
      'await tick(); const a = []; try { for (;;) a.push(new Uint8Array(1 << 20)) } catch {} await wait(); return a.length',
      host,
      LIMITS,
    )
    await Bun.sleep(20)
    go()
    expect([round, await keeper.outcome]).toEqual([round, { status: 'done', result: 2 }])
    expect(await hog.outcome).toMatchObject({ limit: 'memory' })
  }
  expect(await scriptHeapBytes()).toBeLessThan(BOUND)
})

test('idle handlers do not lend their limits to a handler that allocates in a loop', async () => {
  const { host, go } = gate()
  const idle = await Promise.all(Array.from({ length: 25 }, () => runInSandbox('await wait(); return 1', host, LIMITS)))
  for (let i = 0; i < 3; i++) {
    const hog = await runInSandbox('const a = []; for (;;) a.push(new Uint8Array(16 << 20))', {}, LIMITS)
    expect(await hog.outcome).toMatchObject({ limit: 'memory' })
  }
  // 25 idle limits would have allowed a heap of about 1 GB
  expect(await scriptHeapBytes()).toBeLessThan(BOUND)
  go()
  for (const handler of idle) expect(await handler.outcome).toEqual({ status: 'done', result: 1 })
})

test('a handler that fills the heap to the last byte and then awaits ends, though QuickJS cannot free it; the thread goes on', async () => {
  const source = `await tick(); const a = [];
    for (const n of [1 << 20, 1 << 16, 1 << 12, 256]) { try { for (;;) a.push(new Uint8Array(n)) } catch {} }
    try { for (;;) a.push({}) } catch {}
    await tick(); return a.length`
  const { host } = gate()
  const filled = await runInSandbox(source, host, LIMITS)
  // it used to stay running for good: its end threw before the outcome was given
  const outcome = await Promise.race([filled.outcome, Bun.sleep(10_000).then(() => 'still running')])
  expect(outcome).toMatchObject({ status: expect.stringMatching(/failed|limit/) })
  expect(await (await runInSandbox('return 1', {}, LIMITS)).outcome).toEqual({ status: 'done', result: 1 })
}, 20_000)
