// Long work (a layer install, a class migration, CLEAR, a domain deletion) runs in time slices inside
// one transaction: reads of another domain are answered meanwhile, requests of its own domain wait
// for its end, a failure midway leaves nothing of it, and its progress is visible while it runs.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { strToU8, zipSync } from 'fflate'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { systemCtx } from '~/context'
import { findMasterDomain } from '~/directory/domains'
import { refreshCaches } from '~/directory/refresh'
import { users } from '~/directory/users'
import { commit } from '~/entities/unit'
import { createLogger } from '~/log'
import type { Progress } from '~/long-work'
import { Stopping } from '~storage/db'
import { recordTable } from '~storage/model-tables'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const lines: string[] = []
let other: string
let readId: string

beforeAll(async () => {
  t = await testService({ log: createLogger('info', (l) => lines.push(l)) })
  await t.createDomain('other.master')
  other = await t.adminIn('other.master')
  await t.call('POST', '/rest/v1/design/classes', {
    token: other,
    body: { classname: 'o/points', properties: [{ name: 'n', data_type: 'long' }] },
  })
  readId = (await t.call('POST', '/rest/v1/model/o/points', { token: other, body: { n: 1 } })).body.id
})
afterAll(() => t.close())

const domains = new Map<string, { id: string; token: string }>()
let classes = 0
/** A class of `records` records (`v` a string: "0", "1", …) in a domain (created once: the licence allows few). */
async function domainWith(name: string, records: number) {
  if (!domains.has(name)) {
    const { id } = await t.createDomain(name)
    domains.set(name, { id, token: await t.adminIn(name) })
  }
  const { id, token } = domains.get(name)!
  const classname = `w/items${++classes}`
  const made = await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: { classname, properties: [{ name: 'v', data_type: 'string' }] },
  })
  const model = (await t.deps.model.classes(id)).get(classname)!
  const repo = t.deps.repo(model.table!)
  await commit(systemCtx(t.deps, id, 'test'), function* (u) {
    for (let i = 0; i < records; i++) yield* repo.insert(u.w, { id: Bun.randomUUIDv7(), v: String(i) })
  })
  return { id, token, classname, classId: made.body.id as string, table: recordTable(id, made.body.id) }
}

/**
 * Starts `work` and reads a record of the other domain until the long work ends: how long each
 * read took, and the progress seen meanwhile (by `progress`).
 */
async function during(work: () => Promise<unknown>, progress: () => Progress | undefined) {
  const done = work()
  while (!t.deps.longWork.idle()) await Bun.sleep(1)
  const reads: number[] = []
  const seen: Progress[] = []
  while (t.deps.longWork.idle()) {
    const t0 = performance.now()
    const res = await t.call('GET', `/rest/v1/model/o/points/${readId}`, { token: other })
    expect(res.status).toBe(200)
    reads.push(performance.now() - t0)
    const p = progress()
    if (p) seen.push(p)
    await Bun.sleep(1) // a client's pace: an in-process call answered from caches never leaves the microtask queue
  }
  return { result: await done, reads, seen }
}

/** Reads went on: several answered, none held up the way one held by the whole work would be. */
function expectServed(reads: number[]) {
  expect(reads.length).toBeGreaterThan(2)
  expect(Math.max(...reads)).toBeLessThan(250)
}

const count = async (table: string) => (await t.deps.db.get(`SELECT count(*) FROM ${table}`))![0]
const failOnDelete = (table: string) =>
  t.deps.db.run(`CREATE TRIGGER fail_midway BEFORE DELETE ON ${table}
    WHEN (SELECT count(*) FROM ${table}) = 2 BEGIN SELECT RAISE(ABORT, 'failing midway'); END`)
const dropTrigger = () => t.deps.db.run('DROP TRIGGER fail_midway')
const logged = (msg: string) => lines.map((l) => JSON.parse(l)).filter((l) => l.msg === msg)

describe('CLEAR of a large collection', () => {
  test('reads of another domain are served, the domain itself waits, progress counts the records', async () => {
    const d = await domainWith('work.master', 6000)
    let ownRead: Promise<{ status: number; body: unknown }> | undefined
    const { result, reads, seen } = await during(
      async () => {
        const res = t.call('CLEAR', `/rest/v1/model/${d.classname}`, { token: d.token })
        // once the work holds its gate (a fixed pause lost that race on a loaded machine)
        while (!t.deps.longWork.idle()) await Bun.sleep(1)
        ownRead = t.call('GET', `/rest/v1/model/${d.classname}?limit=1`, { token: d.token })
        return res
      },
      () => t.deps.longWork.progress(d.id, d.classname),
    )
    expect((result as { body: unknown }).body).toEqual({ deleted: 6000 })
    expectServed(reads)
    // the read of the domain under work waited for it: it sees the end state, not a part of it
    expect((await ownRead!).body).toEqual([])
    expect(seen.some((p) => p.done > 0 && p.done < 6000 && p.total === 6000)).toBe(true)
    expect(logged('long work done').some((l) => l.kind === 'clear' && l.key === d.classname && l.done === 6000)).toBe(
      true,
    )
  })

  test('a failure midway leaves every record', async () => {
    const d = await domainWith('work.master', 3000)
    await failOnDelete(d.table)
    const res = await t.call('CLEAR', `/rest/v1/model/${d.classname}`, { token: d.token })
    await dropTrigger()
    expect(res.status).toBe(500)
    expect(await count(d.table)).toBe(3000)
    expect(logged('long work failed, nothing of it stays').some((l) => l.kind === 'clear')).toBe(true)
  })
})

describe('a stop of the service', () => {
  test('a CLEAR still running when the grace ends is answered 503 over the socket before it closes', async () => {
    const s = await testService({ listen: true, env: { SHUTDOWN_GRACE_SEC: '0' } })
    const { id } = await s.createDomain('stop.master')
    const token = await s.adminIn('stop.master')
    const classname = 'w/stopped'
    await s.call('POST', '/rest/v1/design/classes', {
      token,
      body: { classname, properties: [{ name: 'v', data_type: 'string' }] },
    })
    const repo = s.deps.repo((await s.deps.model.classes(id)).get(classname)!.table!)
    await commit(systemCtx(s.deps, id, 'test'), function* (u) {
      for (let i = 0; i < 30_000; i++) yield* repo.insert(u.w, { id: Bun.randomUUIDv7(), v: String(i) })
    })
    const client = await RawClient.open(Number(new URL(s.service.url!).port), '127.0.0.1')
    client.write(httpRequest('CLEAR', `/rest/v1/model/${classname}`, { authorization: `Bearer ${token}` }))
    while (!s.deps.longWork.idle()) await Bun.sleep(1)
    const stopping = s.service.stop()
    const [answer] = await client.responses(1)
    await stopping
    expect(answer!.status).toBe(503)
    expect(answer!.headers['retry-after']).toBe('5')
    expect(JSON.parse(answer!.body)).toMatchObject({ error_code: 1503 })
    await s.close()
  })

  test('CLEAR cut short by a stop answers 503 and leaves every record', async () => {
    const s = await testService()
    try {
      const { id } = await s.createDomain('stop.master')
      const token = await s.adminIn('stop.master')
      const classname = 'w/stopped'
      const made = await s.call('POST', '/rest/v1/design/classes', {
        token,
        body: { classname, properties: [{ name: 'v', data_type: 'string' }] },
      })
      const repo = s.deps.repo((await s.deps.model.classes(id)).get(classname)!.table!)
      await commit(systemCtx(s.deps, id, 'test'), function* (u) {
        for (let i = 0; i < 20_000; i++) yield* repo.insert(u.w, { id: Bun.randomUUIDv7(), v: String(i) })
      })
      const clearing = s.call('CLEAR', `/rest/v1/model/${classname}`, { token })
      while (!s.deps.longWork.idle()) await Bun.sleep(1)
      s.deps.db.stopLong!(new Stopping())
      const res = await clearing
      expect(res.status).toBe(503)
      expect(res.body).toMatchObject({ error_code: 1503 })
      expect(res.body.error_message).toContain('rolled back')
      const table = recordTable(id, made.body.id)
      expect((await s.deps.db.get(`SELECT count(*) FROM ${table}`))![0]).toBe(20_000)
    } finally {
      await s.close()
    }
  })
})

describe('class migration over many records', () => {
  test('reads of another domain are served while every record is converted; progress counts them', async () => {
    const d = await domainWith('work.master', 5000)
    const retype = () =>
      t.call('PATCH', `/rest/v1/design/classes/${d.classId}`, {
        token: d.token,
        body: { properties: [{ name: 'v', data_type: 'long' }] },
      })
    const { result, reads, seen } = await during(retype, () => t.deps.longWork.progress(d.id, d.classId))
    expect((result as { status: number }).status).toBe(200)
    expectServed(reads)
    expect(seen.some((p) => p.done > 0 && p.total === 5000)).toBe(true)
    const [row] = (await t.call('GET', `/rest/v1/model/${d.classname}?limit=1`, { token: d.token })).body
    expect(typeof row.v).toBe('number')
  })

  test('a subclass whose values cannot convert refuses it after the class converted: nothing changes', async () => {
    const d = await domainWith('work.master', 3000)
    const sub = await t.call('POST', '/rest/v1/design/classes', {
      token: d.token,
      body: { classname: `${d.classname}sub`, parent_id: d.classId, properties: [] },
    })
    expect(
      (await t.call('POST', `/rest/v1/model/${d.classname}sub`, { token: d.token, body: { v: 'abc' } })).status,
    ).toBe(200)
    const res = await t.call('PATCH', `/rest/v1/design/classes/${d.classId}`, {
      token: d.token,
      body: { properties: [{ name: 'v', data_type: 'long' }] },
    })
    expect(res.status).toBe(409)
    expect(sub.status).toBe(200)
    const rows = await t.deps.db.all(`SELECT doc FROM ${d.table} WHERE json_type(doc, '$.v') != 'text'`)
    expect(rows).toHaveLength(0)
  })
})

describe('domain deletion', () => {
  test('reads of another domain are served; the master domain waits; progress counts the tables', async () => {
    const d = await domainWith('gone.master', 15_000)
    const master = await t.adminIn('master')
    const masterId = (await findMasterDomain(t.deps))!.id
    let listing: Promise<{ body: { name: string }[] }> | undefined
    const { result, reads, seen } = await during(
      async () => {
        const res = t.call('DELETE', `/rest/v1/domain/domains/${d.id}`, { token: master })
        // once the work holds its gate (a fixed pause lost that race on a loaded machine)
        while (!t.deps.longWork.idle()) await Bun.sleep(1)
        listing = t.call('GET', '/rest/v1/domain/domains', { token: master })
        return res
      },
      () => t.deps.longWork.progress(masterId, d.id),
    )
    expect((result as { status: number }).status).toBe(204)
    expectServed(reads)
    expect((await listing!).body.map((x) => x.name)).not.toContain('gone.master')
    const ended = logged('long work done').find((l) => l.kind === 'domain deletion' && l.key === d.id)
    expect(ended.done).toBe(ended.total)
    expect(seen.some((p) => p.done > 0 && p.total === ended.total)).toBe(true)
  })

  test('a failure midway leaves the domain and all it holds', async () => {
    const d = await domainWith('kept.master', 2000)
    const master = await t.adminIn('master')
    await failOnDelete(d.table)
    const res = await t.call('DELETE', `/rest/v1/domain/domains/${d.id}`, { token: master })
    await dropTrigger()
    expect(res.status).toBe(500)
    expect(await count(d.table)).toBe(2000)
    const names = (await t.call('GET', '/rest/v1/domain/domains', { token: master })).body.map((x: Doc) => x.name)
    expect(names).toContain('kept.master')
    expect((await t.call('GET', `/rest/v1/model/${d.classname}?limit=1`, { token: d.token })).body).toHaveLength(1)
  })
})

type Doc = Record<string, unknown>
/** A layer archive in the service's layers directory: `classes` classes and `extobjs` extobjs. */
function archive(name: string, classes: number, extobjs: number, broken = false) {
  const files: Record<string, Uint8Array> = {}
  for (let i = 0; i < classes; i++)
    files[`classes/c${i}.json`] = strToU8(JSON.stringify({ classname: `l/c${i}`, properties: [] }))
  const items: Doc[] = []
  for (let i = 0; i < extobjs; i++)
    items.push({ id: `0192a3b4-0000-7000-8000-${String(i).padStart(12, '0')}`, type: 'cfg', value: { i } })
  if (broken) items.push({ type: 'cfg' }) // no id: refused after everything before it was applied
  files['extobjs/all.json'] = strToU8(JSON.stringify(items))
  mkdirSync(join(t.dir, 'layers'), { recursive: true })
  writeFileSync(join(t.dir, 'layers', name), zipSync(files))
}

describe('product layer install', () => {
  test('reads of another domain are served; the order status shows the progress', async () => {
    const { token } = await domainWith('work.master', 0)
    archive('big_1.zip', 100, 5000)
    const order = await t.call('POST', '/rest/v1/domain/product_layer', { token, body: { prefix: 'big' } })
    expect(order.status).toBe(200)
    const { reads } = await during(
      () => t.run('layer-orders'),
      () => undefined,
    )
    expectServed(reads)
    const statuses: Doc[] = []
    // asked again while a second install runs: the status answers at once, with the progress
    archive('big_2.zip', 100, 5000)
    await t.call('POST', '/rest/v1/domain/product_layer', { token, body: { prefix: 'big' } })
    const running = t.run('layer-orders')
    while (!t.deps.longWork.idle()) await Bun.sleep(1)
    while (t.deps.longWork.idle()) {
      statuses.push((await t.call('GET', '/rest/v1/domain/product_layer', { token })).body.at(-1))
      await Bun.sleep(5)
    }
    await running
    const progress = statuses.map((s) => s.progress as { done: number; total: number } | undefined).filter(Boolean)
    expect(progress.some((p) => p!.done > 0 && p!.done < 5100 && p!.total === 5100)).toBe(true)
    const [current] = (await t.call('GET', '/rest/v1/domain/product_layer', { token })).body
    expect(current).toMatchObject({ status: 'installed', file: 'big_2.zip' })
    expect(current.progress).toBeUndefined()
  })

  test('a broken item at the end leaves nothing of the layer', async () => {
    const { id, token } = await domainWith('kept.master', 0)
    archive('bad_1.zip', 50, 3000, true)
    await t.call('POST', '/rest/v1/domain/product_layer', { token, body: { prefix: 'bad' } })
    await t.run('layer-orders')
    const [current] = (await t.call('GET', '/rest/v1/domain/product_layer', { token })).body
    expect(current.status).toBe('failure')
    expect((await t.deps.db.get('SELECT count(*) FROM extobjs WHERE domain = ?', [id]))![0]).toBe(0)
    const classes = (await t.call('GET', '/rest/v1/design/classes?limit=1000', { token })).body
    expect(classes.some((c: Doc) => String(c.classname).startsWith('l/'))).toBe(false)
  })
})

describe('moving a group with many deep users', () => {
  test("reads of another domain are served while its users' caches are refreshed; the move is whole", async () => {
    const { id, token } = await domainWith('groups.master', 0)
    const ctx = systemCtx(t.deps, id, 'test')
    const made = async (code: string, parents: string[] = []) =>
      (await t.call('POST', '/rest/v1/domain/groups', { token, body: { code, parents } })).body.id as string
    const [top, team] = [await made('top'), await made('team')]
    // 4,000 users in `team`, seeded as the directory bench does (rows, then their caches)
    await commit(ctx, function* (u) {
      const ids: string[] = []
      for (let i = 0; i < 4000; i++) {
        const doc = { id: Bun.randomUUIDv7(), login: `member${i}`, name: `Member ${i}`, groups: [team], roles: [] }
        yield* t.deps.repo(users.table).insert(u.w, doc)
        ids.push(doc.id)
      }
      yield* refreshCaches(u, { users: ids })
    })
    const move = () => t.call('PATCH', `/rest/v1/domain/groups/${team}`, { token, body: { parents: [top] } })
    const { result, reads } = await during(move, () => undefined)
    expect((result as { status: number }).status).toBe(200)
    expectServed(reads)
    const inTop = await t.call(
      'GET',
      `/rest/v1/domain/users_caches?filter=${encodeURIComponent(
        JSON.stringify(['contains', ['property', 'deep_groups'], top]),
      )}&limit=1&count=true`,
      { token },
    )
    expect(inTop.headers.get('x-total-count')).toBe('4000')
  })
})

describe('the gate', () => {
  test('long work waits for the calls already admitted in its domains, but not for the one that starts it', async () => {
    const { longWork } = t.deps
    const leaveOther = longWork.enter('gate.domain', 'other-call')
    const leaveOwn = longWork.enter('gate.domain', 'own-call')
    let started = false
    const done = longWork.run({ kind: 'test', domain: 'gate.domain', requestId: 'own-call' }, async () => {
      started = true
      return 'done'
    })
    await Bun.sleep(30)
    // the gate is up meanwhile: a new call of the domain would wait
    expect(longWork.gate('gate.domain')).toBeDefined()
    expect(started).toBe(false)
    leaveOther()
    expect(await done).toBe('done')
    expect(started).toBe(true)
    leaveOwn()
    expect(longWork.gate('gate.domain')).toBeUndefined()
  })
  test('two changes sent together: the second waits for the first request, the first not for the second', async () => {
    const { longWork } = t.deps
    const leaveFirst = longWork.enter('pair.domain', 'first-call')
    const leaveSecond = longWork.enter('pair.domain', 'second-call')
    const order: string[] = []
    const first = longWork.run({ kind: 'test', domain: 'pair.domain', requestId: 'first-call' }, async () => {
      order.push('first')
    })
    const second = longWork.run({ kind: 'test', domain: 'pair.domain', requestId: 'second-call' }, async () => {
      order.push('second')
    })
    const started = performance.now()
    await first // it waited 5 s (DRAIN_MS) for the second call, which waited for it
    expect(performance.now() - started).toBeLessThan(1000)
    await Bun.sleep(30)
    expect(order).toEqual(['first']) // the second waits until the first call has ended
    leaveFirst()
    await second
    expect(order).toEqual(['first', 'second'])
    leaveSecond()
  })

  test('a read in flight under the id of later work (the frames of one websocket share theirs) is still waited for', async () => {
    const { longWork } = t.deps
    const leaveRead = longWork.enter('frames.domain', 'ws-7')
    const leaveHttp = longWork.enter('frames.domain', 'http-1')
    const leaveChange = longWork.enter('frames.domain', 'ws-7')
    const order: string[] = []
    const first = longWork.run({ kind: 'test', domain: 'frames.domain', requestId: 'http-1' }, async () => {
      order.push('first writes')
    })
    const second = longWork.run({ kind: 'test', domain: 'frames.domain', requestId: 'ws-7' }, async () => {
      order.push('second writes')
    })
    await Bun.sleep(60)
    order.push('the read ends')
    leaveRead()
    await first
    leaveHttp()
    await second
    leaveChange()
    expect(order).toEqual(['the read ends', 'first writes', 'second writes'])
  })

  test('two group changes sent together in one domain are both done at once', async () => {
    const { token } = await domainWith('pair.master', 0)
    const made = async (code: string) =>
      (await t.call('POST', '/rest/v1/domain/groups', { token, body: { code } })).body.id as string
    const [a, b] = [await made('a'), await made('b')]
    const started = performance.now()
    const answers = await Promise.all([
      t.call('PATCH', `/rest/v1/domain/groups/${a}`, { token, body: { name: 'A' } }),
      t.call('PATCH', `/rest/v1/domain/groups/${b}`, { token, body: { name: 'B' } }),
    ])
    expect(answers.map((r) => r.status)).toEqual([200, 200])
    expect(performance.now() - started).toBeLessThan(2000) // 5 s and more before
  })
})
