// kill -9 of an app process in the middle of load (issue 35): every process that survives reads
// every acknowledged write, takes writes again within WRITE_BOUND_MS, and the log checkpoints again.
// APP_PROCESSES=3 on one file and one Redis; each round kills one of the two processes the starter started
// (in turn) while creators write, then checks each process still up through connections that reach
// it (an answer's X-Request-Id prefix tells which). KILL_ROUNDS=100 runs the long form.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'libsql'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'
import { httpRequest, RawClient } from '../helpers/raw-http'
import { TEST_REDIS_URL, testPrefix, testRedisKv } from '../helpers/redis'

const ROUNDS = Number(process.env.KILL_ROUNDS ?? 20)
/** How soon after the kill a surviving process must take writes again. */
const WRITE_BOUND_MS = 2000
const prefix = testPrefix()
const work = mkdtempSync(join(tmpdir(), 'platform-kill-'))
let svc: ServiceProcess
let token: string

beforeAll(async () => {
  svc = await startProcess({
    DATA_DIR: work,
    APP_PROCESSES: '3',
    REDIS_URL: TEST_REDIS_URL,
    KV_PREFIX: prefix,
    APP_RESTART_MAX_MS: '100', // a killed process is back at once: the rounds need no pause
    LIST_ASIDE_MIN_ROWS: '0', // the lists below (a filter no index serves) run in the reader thread
  })
  token = await signInTo(svc)
}, 60_000)
afterAll(async () => {
  svc?.proc.kill('SIGTERM')
  await svc?.proc.exited
  rmSync(work, { recursive: true, force: true })
  await (await testRedisKv(prefix)).cleanup()
})

/** The pid of app process `index` (1 or 2), started by the service's first process. */
function pidOf(index: number): number | undefined {
  const children = Bun.spawnSync(['pgrep', '-P', String(svc.proc.pid)])
    .stdout.toString()
    .trim()
    .split('\n')
  for (const pid of children.filter(Boolean).map(Number)) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`PLATFORM_APP_INDEX=${index}`)) return pid
    } catch {
      // it ended meanwhile
    }
  }
}

/** A kept-alive connection and the process it reached. */
class Conn {
  private answered = 0
  private constructor(
    private readonly c: RawClient,
    readonly process: string,
  ) {}
  static async open(): Promise<Conn> {
    const c = await RawClient.open(svc.port)
    const conn = new Conn(c, '')
    const probe = await conn.call('GET', '/healthz')
    return new Conn(c, String(probe.headers['x-request-id']).split('-')[0] ?? '').skip(1)
  }
  private skip(n: number) {
    this.answered = n
    return this
  }
  async call(method: string, path: string, body?: unknown) {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }
    this.c.write(httpRequest(method, path, headers, body === undefined ? undefined : JSON.stringify(body)))
    const r = (await this.c.responses(++this.answered, 10_000))[this.answered - 1]
    if (!r) throw new Error(`no answer to ${method} ${path}`)
    return { status: r.status, headers: r.headers, body: r.body ? JSON.parse(r.body) : null }
  }
  end() {
    this.c.end()
  }
}

/** One connection to each process that answers now (the kernel spreads new connections over them). */
async function connectionsToEach(): Promise<Conn[]> {
  const byProcess = new Map<string, Conn>()
  for (let i = 0; i < 40; i++) {
    const c = await Conn.open().catch(() => null) // one reaching a process as it starts or ends
    if (!c) continue
    if (byProcess.has(c.process)) c.end()
    else byProcess.set(c.process, c)
  }
  return [...byProcess.values()]
}

/** Every id of the round's records a process lists, page by page (limit 1000, after), read in its reader thread. */
async function listed(c: Conn, type: string): Promise<Set<string>> {
  const ids = new Set<string>()
  let after = ''
  for (;;) {
    const filter = ['like', ['property', 'type'], type] // no index serves it: the reader thread reads
    const q = `filter=${encodeURIComponent(JSON.stringify(filter))}&limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`
    const r = await c.call('GET', `/rest/v1/reference/extobjs?${q}`)
    if (r.status !== 200) throw new Error(`list through ${c.process}: ${r.status} ${JSON.stringify(r.body)}`)
    for (const item of r.body as { id: string }[]) ids.add(item.id)
    after = r.headers['x-next-after'] ?? ''
    if (!after) return ids
  }
}

test(`${ROUNDS} rounds of kill -9 under load: every survivor reads every acknowledged write and writes again`, async () => {
  const summary: string[] = []
  for (let round = 0; round < ROUNDS; round++) {
    // the process killed last round is back and listening: three answer
    for (let until = Date.now() + 20_000; ; await Bun.sleep(50)) {
      const all = await connectionsToEach()
      for (const c of all) c.end()
      if (all.length === 3) break
      if (Date.now() > until) throw new Error(`round ${round}: ${all.length} processes answer, 3 expected`)
    }
    const type = `round${round}`
    const acknowledged: string[] = []
    let writing = true
    const creators = Array.from({ length: 8 }, async () => {
      while (writing) {
        const r = await fetch(`${svc.url}/rest/v1/reference/extobjs`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ type, value: { round } }),
        }).catch(() => null) // a connection to the killed process fails
        if (r?.status === 200) acknowledged.push(((await r.json()) as { id: string }).id)
        else await r?.text()
      }
    })
    const victim = pidOf(1 + (round % 2))
    expect(victim).toBeDefined()
    await Bun.sleep(150)
    process.kill(victim!, 'SIGKILL')
    const killedAt = Date.now()
    await Bun.sleep(150)
    writing = false
    await Promise.all(creators)
    expect(acknowledged.length).toBeGreaterThan(0)

    const reached = await connectionsToEach()
    expect(reached.length).toBeGreaterThanOrEqual(2) // the starter and the other one it started, at least
    for (const c of reached) {
      const ids = await listed(c, type)
      const missing = acknowledged.filter((id) => !ids.has(id))
      expect({ round, process: c.process, missing }).toEqual({ round, process: c.process, missing: [] })
      for (const id of acknowledged.slice(-10)) {
        const r = await c.call('GET', `/rest/v1/reference/extobjs/${id}`)
        expect({ round, process: c.process, id, status: r.status }).toEqual({
          round,
          process: c.process,
          id,
          status: 200,
        })
      }
      let write = await c.call('POST', '/rest/v1/reference/extobjs', { type: 'after-kill', value: {} })
      while (write.status !== 200 && Date.now() - killedAt < WRITE_BOUND_MS)
        write = await c.call('POST', '/rest/v1/reference/extobjs', { type: 'after-kill', value: {} })
      expect({ round, process: c.process, write: write.status }).toEqual({ round, process: c.process, write: 200 })
      const ready = await c.call('GET', '/readyz')
      expect({ round, process: c.process, ready: ready.status, why: ready.body?.error_message }).toEqual({
        round,
        process: c.process,
        ready: 200,
        why: undefined,
      })
      c.end()
    }
    summary.push(`round ${round}: ${acknowledged.length} acknowledged, read through ${reached.length} processes`)
  }
  console.log(summary.join('\n'))
  // the processes found no snapshot of theirs pinned (storage/db-pinned-read.ts): none stayed open
  expect(svc.out().match(/read an old snapshot/g) ?? []).toEqual([])
  // no snapshot is left pinned: a checkpoint copies the whole log into the file once writes stop
  const file = new Database(join(work, 'platform.db'), { timeout: 5000 })
  let checkpoint: number[] = []
  for (const until = Date.now() + 10_000; Date.now() < until; await Bun.sleep(200)) {
    checkpoint = file.prepare('PRAGMA wal_checkpoint(PASSIVE)').raw(true).get([]) as number[]
    if (checkpoint[1] === checkpoint[2]) break
  }
  file.close()
  expect(checkpoint[2]).toBe(checkpoint[1]!)
}, 600_000)
