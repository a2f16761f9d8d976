// The cluster lease across two real processes sharing one Redis: a cluster-exclusive worker whose
// passes outlast the lease (so only its renewal keeps the other out) never runs in both at once.
import { afterAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { createClient } from 'redis'
import { TEST_REDIS_URL, testPrefix } from '../helpers/redis'

const FIXTURE = join(import.meta.dir, 'fixtures/lease-worker.ts')
const ROOT = join(import.meta.dir, '../..')
const prefix = testPrefix()
const PASSES = 3
// renewals every LEASE_MS/3: a loaded machine's pauses must stay well below the lease
const STEP_MS = 700
const LEASE_MS = 500

const redis = createClient({ url: TEST_REDIS_URL })
await redis.connect()
afterAll(async () => {
  for await (const keys of redis.scanIterator({ MATCH: `${prefix}*` })) if (keys.length) await redis.del(keys)
  await redis.quit()
})

function spawnWorker(who: string) {
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    TEST_REDIS_URL,
    KV_PREFIX: prefix,
    WHO: who,
    PASSES: String(PASSES),
    STEP_MS: String(STEP_MS),
    LEASE_MS: String(LEASE_MS),
  }
  const proc = Bun.spawn([process.execPath, FIXTURE], { cwd: ROOT, env, stdout: 'pipe', stderr: 'pipe' })
  const done = Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { proc, done }
}

test('two processes take turns: their passes never overlap, and each runs all of its passes', async () => {
  const workers = [spawnWorker('a'), spawnWorker('b')]
  const deadline = setTimeout(() => {
    for (const w of workers) w.proc.kill('SIGKILL')
  }, 9000)
  const results = await Promise.all(workers.map((w) => w.done))
  clearTimeout(deadline)
  for (const [stdout, stderr, code] of results) {
    expect({ stdout, stderr, code }).toEqual({ stdout: '', stderr: '', code: 0 }) // nothing logged: no lease was lost
  }

  const events = (await redis.lRange(`${prefix}passes`, 0, -1)).map(
    (e) => JSON.parse(e) as { who: string; event: string; t: number },
  )
  expect(events).toHaveLength(2 * PASSES * 2)
  // in Redis's own order, every start is followed by the end of the same pass before any other start
  for (let i = 0; i < events.length; i += 2) {
    const [start, end] = [events[i]!, events[i + 1]!]
    expect([start.event, end.event, end.who]).toEqual(['start', 'end', start.who])
    expect(end.t - start.t).toBeGreaterThan(LEASE_MS) // each pass outlived one lease lifetime
    if (i > 0) expect(start.t).toBeGreaterThanOrEqual(events[i - 1]!.t)
  }
  const starts = events.filter((e) => e.event === 'start')
  expect(starts.filter((e) => e.who === 'a')).toHaveLength(PASSES)
  expect(starts.filter((e) => e.who === 'b')).toHaveLength(PASSES)
}, 10_000)
