/**
 * `bun bench/long-work.ts [classes] [records]`: installs a product layer of 1,000 classes and 30,000
 * records (extobjs) in one domain while a client reads point records of another domain, and prints
 * the install time, the reads' p50/p99 and how many reads were answered meanwhile (goal: p99 <= 50 ms).
 */
import { strToU8, zipSync } from 'fflate'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BENCH_PASSWORD, percentile, startBenchService } from './service-process'

const CLASSES = Number(process.argv[2] ?? 1000)
const RECORDS = Number(process.argv[3] ?? 30_000)
const READ_RECORDS = 100
const READERS = 4

const uuid = (kind: number, i: number) => `0192a3b4-0000-7000-8${kind}00-${String(i).padStart(12, '0')}`
const files: Record<string, Uint8Array> = {}
for (let i = 0; i < CLASSES; i++) {
  const properties = [
    { name: 'code', data_type: 'string' },
    { name: 'amount', data_type: 'float' },
  ]
  files[`classes/c${i}.json`] = strToU8(JSON.stringify({ classname: `big/c${i}`, properties }))
}
for (let f = 0; f * 1000 < RECORDS; f++) {
  const items = []
  for (let i = f * 1000; i < Math.min(RECORDS, (f + 1) * 1000); i++)
    items.push({ id: uuid(1, i), type: 'big_config', value: { n: i, url: `https://example.com/${i}` } })
  files[`extobjs/e${f}.json`] = strToU8(JSON.stringify(items))
}
const dataDir = mkdtempSync(join(tmpdir(), 'platform-bench-long-'))
mkdirSync(join(dataDir, 'layers'))
writeFileSync(join(dataDir, 'layers', 'big_1.zip'), zipSync(files))

const svc = await startBenchService({ DATA_DIR: dataDir })
try {
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(`${svc.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return text ? JSON.parse(text) : undefined
  }
  /** A token session of the master administrator, switched into a domain. */
  const adminIn = async (domain: string) => {
    const login = await fetch(`${svc.url}/rest/v1/iam/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ domain: 'master', login: 'admin', pwd: BENCH_PASSWORD, session_type: 'token' }),
    })
    const { session_token: token } = (await login.json()) as { session_token: string }
    await call(token, 'PATCH', '/rest/v1/iam/sessions/current', { domain })
    return token
  }
  for (const name of ['reads.master', 'layer.master'])
    await call(svc.token, 'POST', '/rest/v1/domain/domains', { name, opts: { title: name } })
  const reader = await adminIn('reads.master')
  const installer = await adminIn('layer.master')
  await call(reader, 'POST', '/rest/v1/design/classes', {
    classname: 'bench/points',
    properties: [{ name: 'n', data_type: 'long' }],
  })
  const ids: string[] = []
  for (let i = 0; i < READ_RECORDS; i++)
    ids.push((await call(reader, 'POST', '/rest/v1/model/bench/points', { n: i })).id)

  let installing = true
  const times: number[] = []
  const readLoop = async (k: number) => {
    for (let i = k; installing; i += READERS) {
      const t0 = performance.now()
      await call(reader, 'GET', `/rest/v1/model/bench/points/${ids[i % ids.length]}`)
      times.push(performance.now() - t0)
    }
  }
  const readers = Array.from({ length: READERS }, (_, k) => readLoop(k))
  await Bun.sleep(200) // the readers are warm before the install starts
  const before = times.length
  const t0 = performance.now()
  await call(installer, 'POST', '/rest/v1/domain/product_layer', { prefix: 'big' })
  let order: Record<string, unknown> = {}
  let progressSeen = 0
  for (;;) {
    ;[order] = await call(installer, 'GET', '/rest/v1/domain/product_layer')
    if (order.progress) progressSeen++
    if (order.status !== 'registered') break
    await Bun.sleep(100)
  }
  const seconds = (performance.now() - t0) / 1000
  installing = false
  await Promise.all(readers)
  if (order.status !== 'installed') throw new Error(`the install ended ${order.status}: ${order.trace}`)
  const during = times.slice(before).sort((a, b) => a - b)
  console.log(
    `layer of ${CLASSES} classes and ${RECORDS} records installed in ${seconds.toFixed(1)} s (${order.trace})`,
  )
  console.log(`order status showed progress ${progressSeen} time(s)`)
  console.log(
    `point reads of another domain meanwhile (${READERS} clients): ${during.length} reads, p50 ${percentile(during, 0.5).toFixed(1)} ms, p99 ${percentile(during, 0.99).toFixed(1)} ms, max ${during.at(-1)!.toFixed(1)} ms`,
  )
} finally {
  await svc.stop()
  rmSync(dataDir, { recursive: true, force: true })
}
