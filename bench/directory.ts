/**
 * `bun bench/directory.ts [users...]`: what a directory change costs as the domain grows (default
 * 100 and 100,000 users). Each domain has a group `all` that every user is in, `team` (under `dept_a`)
 * holding a tenth of them, a small group holding the role that is renamed, and a few users holding it.
 * Users are seeded in large transactions (rows, then their caches, as a change refreshes them);
 * the measured changes go through the real write path (createEntity/patchEntity, hooks and journal):
 * p50 and p99 of creating a user in `all`, adding a user to a group and renaming a role; then the
 * move of `team` under `dept_b` (its tenth of the users) once, and lists of users_caches with a
 * filter next to the users list with one, and of the superiors of a user (`sub contains`), as the
 * list route runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '~/config'
import { type Ctx, systemCtx } from '~/context'
import { groupsCaches, subordinationsCaches, usersCaches } from '~/directory/cache-collections'
import { findMasterDomain } from '~/directory/domains'
import { groups } from '~/directory/groups'
import { refreshCaches } from '~/directory/refresh'
import { roles } from '~/directory/roles'
import { users } from '~/directory/users'
import type { Collection } from '~/entities/entity'
import { domains } from '~/entities/registry'
import { readListPage } from '~/entities/lists'
import { commit } from '~/entities/unit'
import { createEntity, patchEntity } from '~/entities/writes'
import { parseListParams } from '~/query/list-query'
import { createLogger } from '~/log'
import { startService } from '~/service'
import { dbCheckpoint } from '~/workers/db-checkpoint'
import { createMemoryKv } from '~storage/kv/memory'
import { Elysia } from 'elysia'
import { percentile } from './service-process'

const SIZES = process.argv.length > 2 ? process.argv.slice(2).map(Number) : [100, 100_000]
const ROUNDS = 200
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-directory-'))
const service = await startService(
  loadConfig({ DATA_DIR: dir, PORT: '0', ADMIN_PASSWORD: 'bench-Pass1' }),
  { routes: [], api: new Elysia() },
  {
    kv: createMemoryKv(),
    listen: false,
    // of the background work only what a service always runs beside such changes: WAL checkpoints
    workers: [dbCheckpoint],
    log: createLogger('error'),
  },
)
const { deps } = service
const master = (await findMasterDomain(deps))!

const ms = (t: number) => `${t.toFixed(3)} ms`
function summary(name: string, times: number[]): number {
  times.sort((a, b) => a - b)
  const p50 = percentile(times, 0.5)
  console.log(`  ${name}: p50 ${ms(p50)}, p99 ${ms(percentile(times, 0.99))}`)
  return p50
}
async function timed(
  run: (i: number) => Promise<unknown>,
  rounds = ROUNDS,
  before?: () => Promise<unknown>,
): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < rounds; i++) {
    await before?.()
    const t0 = performance.now()
    await run(i)
    times.push(performance.now() - t0)
  }
  return times
}

/**
 * A list as the list route runs it: its query parameters parsed, then one page read. A write before
 * each round (not timed) keeps the page from being answered from memory: the query runs every time.
 */
const shapeOf = (c: Collection) => ({
  fields: c.fields,
  output: c.listFields,
  limits: c.limits,
  assembled: Object.keys(c.table.assembled ?? {}),
})

async function listTimes(ctx: Ctx, c: Collection, params: Record<string, string>, rounds = 100) {
  const shape = shapeOf(c)
  let rows = 0
  let bytes = 0
  const times = await timed(
    async () => {
      const { query } = parseListParams(params, shape)
      const { docs } = await deps.repo(c.table).listPage(ctx.domain, query)
      rows = docs.length
      bytes = JSON.stringify(docs).length
    },
    rounds,
    // any write, even one that changes no row, drops the pages the database answers from memory
    () => deps.db.run('UPDATE journal_cursors SET seq = seq'),
  )
  return { times, rows, bytes }
}

const results: Record<string, number>[] = []
try {
  for (const size of SIZES) {
    console.log(`domain of ${size.toLocaleString('en')} users`)
    const domain = await createEntity(systemCtx(deps, master.id, 'bench'), domains, {
      name: `dir${size}.master`,
      opts: { title: `${size}` },
    })
    const ctx = systemCtx(deps, domain.id, 'bench')
    const role = await createEntity(ctx, roles, { name: 'renamed' })
    const group = async (code: string, parents: string[] = [], roleNames: string[] = []) =>
      (await createEntity(ctx, groups, { code, parents, roles: roleNames })).id
    const all = await group('all')
    const deptA = await group('dept_a', [all])
    const deptB = await group('dept_b', [all])
    const team = await group('team', [deptA])
    const small = await group('small', [all], ['renamed'])
    const extra = await group('extra', [all])

    const seeded = performance.now()
    const ids: string[] = []
    const BATCH = 5000
    for (let at = 0; at < size; at += BATCH) {
      await commit(ctx, function* (u) {
        const batch: string[] = []
        for (let i = at; i < Math.min(size, at + BATCH); i++) {
          const own = i % 10 === 0 ? [all, team] : i < 5 ? [all, small] : [all]
          const doc = { id: Bun.randomUUIDv7(), login: `user${i}`, name: `User ${i}`, groups: own }
          yield* deps.repo(users.table).insert(u.w, { ...doc, roles: i < 50 && i % 10 === 3 ? ['renamed'] : [] })
          batch.push(doc.id)
        }
        yield* refreshCaches(u, { users: batch })
        ids.push(...batch)
      })
    }
    console.log(`  seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)

    const created = summary(
      'create a user in `all`',
      await timed((i) => createEntity(ctx, users, { login: `new${i}`, groups: [all] })),
    )
    // users in `all` only: each round adds one to `extra` (or, once all were, takes one out again)
    const plain = ids.filter((_, i) => i % 10 !== 0 && i >= 5)
    const added = summary(
      'add a user to a group',
      await timed((i) =>
        patchEntity(ctx, users, plain[(i * 7919) % plain.length]!, {
          groups: Math.floor(i / plain.length) % 2 === 0 ? [all, extra] : [all],
        }),
      ),
    )
    const renamed = summary(
      'rename a role (held by a small group and a few users)',
      await timed((i) => patchEntity(ctx, roles, role.id, { name: `renamed_${i}` })),
    )
    const moveStart = performance.now()
    await patchEntity(ctx, groups, team, { parents: [deptB] })
    const moved = performance.now() - moveStart
    const deep = Math.ceil(size / 10)
    console.log(`  move a group with ${deep.toLocaleString('en')} deep users under another group: ${ms(moved)}`)

    const filter = (f: unknown) => ({ filter: JSON.stringify(f), limit: '100' })
    const cacheList = await listTimes(ctx, usersCaches, filter(['contains', ['property', 'deep_groups'], team]))
    summary(`list users_caches, filter deep_groups contains team (${cacheList.rows} rows)`, cacheList.times)
    const userList = await listTimes(ctx, users, filter(['contains', ['property', 'groups'], team]))
    summary(`list users, filter groups contains team (${userList.rows} rows)`, userList.times)
    // ids[1] is in `small`: every user in `all` is its superior, and each of them has a tenth of the
    // domain below it, so the whole rows are large; `mask=top` reads only who the superiors are
    const subOf = filter(['contains', ['property', 'sub'], ids[1]!])
    const subTops = await listTimes(ctx, subordinationsCaches, { ...subOf, mask: 'top' })
    summary(`list subordinations_caches, filter sub contains a user, mask top (${subTops.rows} rows)`, subTops.times)
    const subList = await listTimes(ctx, subordinationsCaches, subOf, 5)
    const subBytes = `${subList.rows} rows, ${subList.bytes.toLocaleString('en')} bytes`
    summary(`list subordinations_caches, filter sub contains a user, whole rows (${subBytes})`, subList.times)
    // the member lists are assembled when read: a whole group of every user, and a superior of all
    const whole = async (c: Collection, id: string) => {
      const t0 = performance.now()
      const length = (await deps.repo(c.table).getText(ctx.domain, id))!.length
      console.log(
        `  GET ${c.table.table} of ${id === all ? '`all`' : 'a superior of all'}: ${ms(performance.now() - t0)}, ${length.toLocaleString('en')} bytes`,
      )
    }
    await whole(groupsCaches, all)
    // a search no index serves reads every user: in the reader thread, point reads go on meanwhile
    const search = parseListParams({ filter: JSON.stringify({ name: 'nobody' }) }, shapeOf(users)).query
    for (const where of ['list route', 'event loop'] as const) {
      await deps.db.run('UPDATE journal_cursors SET seq = seq')
      let done = false
      let reads = 0
      let longest = 0
      const t0 = performance.now()
      const repo = deps.repo(users.table)
      const read = where === 'event loop' ? repo.listPage(ctx.domain, search) : readListPage(ctx, repo, search)
      const searched = read.then(() => (done = true))
      while (!done) {
        const r0 = performance.now()
        await repo.get(ctx.domain, ids[reads++ % ids.length]!)
        longest = Math.max(longest, performance.now() - r0)
        await new Promise((resolve) => setImmediate(resolve))
      }
      await searched
      console.log(
        `  search users by name, no index (reads all), ${where === 'list route' ? 'as the list route reads it (reader thread beyond LIST_ASIDE_MIN_ROWS)' : 'on the event loop'}: ${ms(performance.now() - t0)}; meanwhile ${reads} point reads, the slowest ${ms(longest)}`,
      )
    }
    const boss = await createEntity(ctx, users, { login: 'boss', groups: [all] })
    await whole(subordinationsCaches, boss.id)
    results.push({ size, created, added, renamed, moved })
  }
  if (results.length > 1) {
    const [a, b] = [results[0]!, results.at(-1)!]
    console.log(`p50 ratio ${b.size} / ${a.size} users:`)
    for (const k of ['created', 'added', 'renamed'])
      console.log(`  ${k}: ${(b[k]! / a[k]!).toFixed(2)}x (${ms(a[k]!)} -> ${ms(b[k]!)})`)
  }
} finally {
  await service.stop()
  rmSync(dir, { recursive: true, force: true })
}
