// Webhook outcomes written in batches (src/integration/delivery-writes.ts) on a real libSQL file:
// an outcome waits a moment for others, outcomes asked for while a batch commits go together in the next transaction, a lost claim is
// answered false without failing the others, and any other error fails its batch (the jobs stay
// claimed, to go again when their lease ends).
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Db } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { migrate } from '~storage/migrate'
import { claimJobs, completeJob, enqueueJob, jobsOf } from '~storage/queue'
import type { Deps } from '~/deps'
import { DeliveryWrites } from '~/integration/delivery-writes'

const dir = mkdtempSync(join(tmpdir(), 'platform-delivery-writes-'))
const opened: Db[] = []
afterAll(async () => {
  for (const db of opened) await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const KIND = 'test-delivery'

/** A database with `n` jobs claimed, and its writes counted. */
async function claimed(n: number) {
  const db = openEmbeddedDb(join(dir, `${crypto.randomUUID()}.db`))
  opened.push(db)
  await migrate(db)
  await db.write(function* () {
    for (let i = 0; i < n; i++)
      yield* enqueueJob({ kind: KIND, domain: 'd1', payload: { i }, runAt: T0 }, new Date(T0).toISOString())
  })
  const jobs = await claimJobs(db, KIND, T0, T0 + 60_000, n)
  let writes = 0
  const write = db.write.bind(db)
  db.write = ((body) => {
    writes++
    return write(body)
  }) as Db['write']
  // the batches use only the database of the service's ports
  return { db, jobs, deps: { db } as Deps, writes: () => writes }
}

test('outcomes that come while a batch commits go in the next one; a lost claim answers false alone', async () => {
  const { db, jobs, deps, writes } = await claimed(50)
  const out = new DeliveryWrites()
  const done = new Date(T0).toISOString()
  // the last job's claim is stale (another attempt took it): its statement changes nothing
  const stale = { ...jobs.at(-1)!, attempts: jobs.at(-1)!.attempts + 1 }
  const answers = await Promise.all([
    ...jobs.slice(0, -1).map((job) => out.write(deps, () => completeJob(job, done, { n: 1 }))),
    out.write(deps, () => completeJob(stale, done)),
  ])
  expect(answers.slice(0, -1).every(Boolean)).toBe(true)
  expect(answers.at(-1)).toBe(false)
  // the first 32 as soon as they have come, then the 18 others, which came while they were written
  expect(writes()).toBe(2)
  const statuses = (await jobsOf(db, KIND)).map((j) => j.status)
  expect(statuses.filter((s) => s === 'done')).toHaveLength(49)
  expect(statuses.filter((s) => s === 'running')).toHaveLength(1)
})

test('an outcome waits a moment for others: those of the next turns share its transaction (a longer moment here)', async () => {
  const { db, jobs, deps, writes } = await claimed(3)
  const out = new DeliveryWrites(1000)
  const done = new Date(T0).toISOString()
  const answers: Promise<boolean>[] = []
  for (const job of jobs) {
    answers.push(out.write(deps, () => completeJob(job, done)))
    await new Promise((turn) => setImmediate(turn))
  }
  expect(await Promise.all(answers)).toEqual([true, true, true])
  expect(writes()).toBe(1)
  expect((await jobsOf(db, KIND)).map((j) => j.status)).toEqual(['done', 'done', 'done'])
})

test('another error fails its batch, and the jobs stay claimed; the next batch is written', async () => {
  const { db, jobs, deps } = await claimed(3)
  const out = new DeliveryWrites()
  const done = new Date(T0).toISOString()
  expect(await out.write(deps, () => completeJob(jobs[0]!, done))).toBe(true)
  const broken = out.write(deps, function* () {
    yield* completeJob(jobs[1]!, done)
    throw new Error('broken')
  })
  const besides = out.write(deps, () => completeJob(jobs[2]!, done))
  for (const r of await Promise.allSettled([broken, besides]))
    expect(r.status === 'rejected' && String(r.reason)).toBe('Error: broken')
  const byId = new Map((await jobsOf(db, KIND)).map((j) => [j.id, j.status]))
  expect([jobs[0], jobs[1], jobs[2]].map((j) => byId.get(j!.id))).toEqual(['done', 'running', 'running'])
  expect(await out.write(deps, () => completeJob(jobs[2]!, done))).toBe(true)
})
