// Queue kinds (src/queue-kinds.ts): a claimed job whose payload does not fit its kind's schema is failed
// for good with an error naming the field, and logged, while the jobs that fit come back typed.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as v from 'valibot'
import { ManualClock } from '~/clock'
import { createLogger } from '~/log'
import { claim, claimShares, queueKind } from '~/queue-kinds'
import { Signals } from '~/signals'
import { openEmbeddedDb } from '~storage/db-embedded'
import { enqueueJob, jobsOf } from '~storage/queue'
import { migrate } from '~storage/migrate'

const dir = mkdtempSync(join(tmpdir(), 'platform-queue-kinds-'))
const db = openEmbeddedDb(join(dir, 'queue.db'))
afterAll(async () => {
  await db.close()
  rmSync(dir, { recursive: true, force: true })
})

const T0 = Date.parse('2026-01-01T00:00:00.000Z')
const lines: { msg: string; kind?: string; error?: string | null }[] = []
const signals = new Signals()
const deps = {
  db,
  clock: new ManualClock(T0),
  log: createLogger('error', (line) => lines.push(JSON.parse(line))),
  signals,
}

test('a claimed job whose payload does not fit its kind is failed, naming the field; the others are claimed', async () => {
  await migrate(db)
  const NOTE = queueKind('note', v.object({ to: v.string(), n: v.number() }))
  const payloads = [{ to: 'a', n: 1 }, { to: 'b' }, { to: 'c', n: 3 }, { to: 7, n: 4 }]
  await db.write(function* () {
    for (const [i, payload] of payloads.entries())
      yield* enqueueJob({ kind: 'note', domain: 'd', payload, runAt: T0 - 10 + i }, new Date(T0).toISOString())
  })
  let woken = 0
  signals.on('queue:note', () => woken++)
  const jobs = await claim(deps, NOTE, T0, T0 + 60_000, 10)
  expect(jobs.map((j) => j.payload)).toEqual([
    { to: 'a', n: 1 },
    { to: 'c', n: 3 },
  ])
  const failed = (await jobsOf(db, 'note')).filter((j) => j.status === 'failed')
  expect(failed.map((j) => [j.payload.to, j.error])).toEqual([
    [7, expect.stringMatching(/^the payload does not fit queue kind note: to: /)],
    ['b', expect.stringMatching(/^the payload does not fit queue kind note: n: /)],
  ])
  expect(failed.every((j) => j.finished !== null)).toBe(true) // given up, not due again
  expect(lines.filter((l) => l.kind === 'note').map((l) => l.error)).toEqual([failed[1]!.error, failed[0]!.error])
  expect(woken).toBe(2) // the worker looks again: jobs behind the refused ones are not left to its schedule
  // the refused jobs are not due again (the others are held by their leases)
  expect(await claim(deps, NOTE, T0 + 1000, T0 + 61_000, 10)).toEqual([])
})

test('a fair claim refuses a misfit the same way', async () => {
  const MARK = queueKind('mark', v.object({ at: v.number() }))
  await db.write(function* () {
    yield* enqueueJob({ kind: 'mark', domain: 'd', payload: { at: 'noon' }, runAt: T0 }, new Date(T0).toISOString())
    yield* enqueueJob({ kind: 'mark', domain: 'e', payload: { at: 1 }, runAt: T0 }, new Date(T0).toISOString())
  })
  const shares = { after: '', room: () => 10, full: [] }
  const { jobs } = await claimShares(deps, MARK, T0, T0 + 60_000, 10, shares)
  expect(jobs.map((j) => [j.domain, j.payload.at])).toEqual([['e', 1]])
  const [refused] = await jobsOf(db, 'mark', { domain: 'd' })
  expect(refused).toMatchObject({ status: 'failed', error: expect.stringContaining(': at: ') })
})
