// A unit of work whose group is run again (another body of its group failed, the first run rolled
// back) queues its after-commit effects again: each effect runs once, for the run that committed.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { systemCtx } from '~/context'
import { findMasterDomain } from '~/directory/domains'
import { commit } from '~/entities/unit'
import { tx } from '~storage/db'
import { testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService({ kv: 'memory' })
  await t.deps.db.run('CREATE TABLE run_again (k TEXT PRIMARY KEY)')
})
afterAll(() => t.close())

test('after-commit effects of a body run again are those of the run that committed, once', async () => {
  const ctx = systemCtx(t.deps, (await findMasterDomain(t.deps))!.id, 'test')
  const effects: string[] = []
  let runs = 0
  // one turn: the three commit together; the failing one makes the group run again
  const units = [0, 1, 2].map((i) =>
    commit(ctx, function* (u) {
      const run = ++runs
      yield* tx.run('INSERT INTO run_again VALUES (?)', [`k${i}`])
      // a key of this run's own, as one made from an id the body generates
      u.afterCommit(`effect:${i}:${run}`, () => effects.push(`k${i} run ${run}`))
      if (i === 1) throw new Error('the second fails')
      return i
    }),
  )
  const settled = await Promise.allSettled(units)
  expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
  // k0 (run 1), k1 fails (run 2) and takes k0 back: k0 runs again (run 3), then k2 (run 4)
  expect(runs).toBe(4)
  expect(effects).toEqual(['k0 run 3', 'k2 run 4'])
  expect(await t.deps.db.all('SELECT k FROM run_again ORDER BY k')).toEqual([['k0'], ['k2']])
})
