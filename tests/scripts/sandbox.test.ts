// The QuickJS sandbox by itself: the script's globals, async host calls, each limit breached on
// purpose (the process goes on), and the external-stop branch.
import { expect, test } from 'bun:test'
import { type HostApi, runInSandbox, type SandboxLimits } from '~/scripts/sandbox'

const LIMITS: SandboxLimits = { memoryBytes: 8 * 1024 * 1024, stackBytes: 256 * 1024, cpuMs: 300, durationMs: 5000 }
const run = async (source: string, host: HostApi = {}, limits = LIMITS) =>
  (await runInSandbox(source, host, limits)).outcome

test('a script sees only what the host gives it', async () => {
  const seen = await run(
    `return [typeof process, typeof Bun, typeof require, typeof setTimeout, typeof fetch, typeof eval, typeof Function, typeof globalThis.host]`,
    { host: () => 1 },
  )
  expect(seen).toEqual({
    status: 'done',
    result: ['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'function'],
  })
  expect(await run(`return await import('fs')`)).toMatchObject({ status: 'failed' })
  // nor make code from a string through a function's constructor
  const constructors = await run(
    `return [function () {}, async () => {}, function* () {}, async function* () {}, run].map((f) => typeof f.constructor)`,
    { run: () => 1 },
  )
  expect(constructors).toEqual({ status: 'done', result: Array(5).fill('undefined') })
  expect(await run(`return (() => {}).constructor('return 1')()`)).toMatchObject({ status: 'failed' })
})

test('async host calls are awaited; their failures are the script to catch', async () => {
  const host: HostApi = {
    later: (x) => new Promise((r) => setTimeout(() => r({ got: x }), 5)),
    data: { boom: async () => Promise.reject(new Error('nope')) },
  }
  expect(
    await run(
      `const a = await later(2); let e; try { await data.boom() } catch (x) { e = x.message }; return {a, e}`,
      host,
    ),
  ).toEqual({
    status: 'done',
    result: { a: { got: 2 }, e: 'data.boom: nope' },
  })
})

test.each([
  ['an endless loop', 'while (true) {}', 'cpu'],
  ['a memory bomb', 'const a = []; let i = 0; while (true) a.push({ i: i++, s: "y".repeat(100) + i })', 'memory'],
  ['a deep recursion', 'function f(n) { return f(n + 1) + 1 }; return f(0)', 'stack'],
])('%s ends with its limit recorded', async (_name, source, limit) => {
  const started = performance.now()
  // the memory bomb gets CPU enough to reach its memory limit first
  const limits = limit === 'memory' ? { ...LIMITS, memoryBytes: 2 * 1024 * 1024, cpuMs: 5000 } : LIMITS
  expect(await run(source, {}, limits)).toMatchObject({ status: 'limit', limit })
  expect(performance.now() - started).toBeLessThan(3000)
})

test('the wall-clock limit ends a script that waits too long', async () => {
  const host: HostApi = { wait: () => new Promise((r) => setTimeout(r, 10_000)) }
  expect(await run('await wait()', host, { ...LIMITS, durationMs: 100 })).toMatchObject({
    status: 'limit',
    limit: 'duration',
  })
})

test('onStop: an external stop runs the registered branch and the script goes on', async () => {
  let release: () => void = () => {}
  const host: HostApi = { wait: () => new Promise<void>((r) => (release = r)) }
  const running = await runInSandbox(
    `let stopped = false; onStop(() => { stopped = true }); await wait(); return stopped`,
    host,
    LIMITS,
  )
  expect(await running.callRegistered('onStop')).toBe(true)
  release()
  expect(await running.outcome).toEqual({ status: 'done', result: true })
  const plain = await runInSandbox('await wait()', host, LIMITS)
  expect(await plain.callRegistered('onStop')).toBe(false)
  plain.end({ status: 'stopped', error: 'stopped' })
  expect(await plain.outcome).toEqual({ status: 'stopped', error: 'stopped' })
})
