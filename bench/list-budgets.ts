/**
 * `bun bench/list-budgets.ts [records]`: lists of one large class (default 1,000,000 records, seeded
 * through the write path in large transactions), run in process through the app as a request would:
 * how long each holds the process. Shows an indexed filter, a filter no index serves with a common
 * and with a rare match (the rare one with and without LIST_SCAN_MAX_RECORDS), an order no index
 * serves, and deep paging by offset against the keyset cursor.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, routes } from '../routes/_manifest.gen'
import { loadConfig } from '../src/config'
import { systemCtx } from '../src/context'
import { findMasterDomain } from '../src/directory/domains'
import { commit } from '../src/entities/unit'
import { startService } from '../src/service'
import { percentile } from './service-process'

const RECORDS = Number(process.argv[2] ?? 1_000_000)
const dir = mkdtempSync(join(tmpdir(), 'platform-bench-lists-'))
const PASSWORD = 'bench-Pass1'
try {
  const config = loadConfig({ DATA_DIR: dir, ADMIN_PASSWORD: PASSWORD, LOG_LEVEL: 'error' })
  const service = await startService(config, { routes, api }, { listen: false, schedule: false })
  const call = async (method: string, path: string, token?: string, body?: unknown) => {
    const res = await service.app.handle(
      new Request(`http://bench${path}`, {
        method,
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    )
    return { status: res.status, headers: res.headers, body: (await res.json()) as any }
  }
  const login = { domain: 'master', login: 'admin', pwd: PASSWORD, session_type: 'token' }
  const token = (await call('POST', '/rest/v1/iam/sessions', undefined, login)).body.session_token as string
  const made = await call('POST', '/rest/v1/design/classes', token, {
    classname: 'bench/records',
    properties: [
      { name: 'name', data_type: 'string' },
      { name: 'kind', data_type: 'string' },
      { name: 'n', data_type: 'int' },
    ],
    opts: { indexes: [['kind', 'n']], max_limit: 1000 },
  })
  const { deps } = service
  if (made.status !== 200) throw new Error(JSON.stringify(made.body))
  const domainId = (await findMasterDomain(deps))!.id
  const model = (await deps.model.classes(domainId)).get('bench/records')!
  const repo = deps.repo(model.table!)
  const ctx = systemCtx(deps, domainId, 'bench-seed')
  const seeded = performance.now()
  for (let done = 0; done < RECORDS; done += 10_000)
    await commit(ctx, function* (u) {
      for (let i = done; i < Math.min(RECORDS, done + 10_000); i++)
        yield* repo.insert(u.w, { id: Bun.randomUUIDv7(), name: `record ${i}`, kind: `k${i % 20}`, n: i })
    })
  console.log(`seeded ${RECORDS} records in ${((performance.now() - seeded) / 1000).toFixed(1)} s`)

  const q = (v: unknown) => encodeURIComponent(JSON.stringify(v))
  const base = '/rest/v1/model/bench/records'
  const measure = async (name: string, path: () => string, times = 20) => {
    const ms: number[] = []
    let status = 0
    for (let i = 0; i < times; i++) {
      const t0 = performance.now()
      status = (await call('GET', path(), token)).status
      ms.push(performance.now() - t0)
    }
    ms.sort((a, b) => a - b)
    console.log(`| ${name} | ${status} | ${percentile(ms, 0.5).toFixed(2)} | ${ms.at(-1)!.toFixed(2)} |`)
  }
  console.log('\n| list (limit 20) | status | p50 ms | max ms |\n|---|---|---|---|')
  let i = 0
  await measure('filter kind (indexed)', () => `${base}?filter=${q({ kind: `k${i++ % 20}` })}&limit=20`)
  await measure(
    'filter name like "record 1%" (no index, common)',
    () => `${base}?filter=${q(['like', ['property', 'name'], 'record 1%'])}&limit=20`,
  )
  await measure(
    'filter name = a rare value (no index), budget',
    () => `${base}?filter=${q({ name: `record ${RECORDS - 1}` })}&limit=20`,
    5,
  )
  const budget = deps.config.listScanMaxRecords
  deps.config.listScanMaxRecords = Number.MAX_SAFE_INTEGER
  await measure(
    'filter name = a rare value (no index), no budget',
    () => `${base}?filter=${q({ name: `record ${RECORDS - 1}` })}&limit=20`,
    5,
  )
  deps.config.listScanMaxRecords = budget
  await measure('order name (no index)', () => `${base}?order=${q(['name'])}&limit=20`, 5)
  await measure(`offset ${RECORDS / 2}`, () => `${base}?offset=${RECORDS / 2}&limit=20`, 5)
  // the keyset cursor of the page at that depth, then the page after it
  const deep = await call('GET', `${base}?offset=${RECORDS / 2 - 20}&limit=20`, token)
  const after = deep.headers.get('x-next-after')!
  await measure(`after= at the same depth`, () => `${base}?after=${encodeURIComponent(after)}&limit=20`)
  await service.stop()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
