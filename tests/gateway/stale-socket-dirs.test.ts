// The gateway's socket directories (`platform-gw-<pid>-XXXXXX` in the temporary directory): a
// process killed hard leaves its own behind, and the next start removes it, while the directory of a
// live process stays — one whose pid runs, or whose socket answers (a process this one cannot see).
import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { removeStaleSocketDirs } from '~/gateway/index'
import { type ServiceProcess, startProcess } from '../helpers/process'

const root = mkdtempSync(join(tmpdir(), 'platform-stale-'))
const started: ServiceProcess[] = []
const servers: { stop(): void }[] = []
afterAll(() => {
  for (const p of started) p.proc.kill('SIGKILL')
  for (const s of servers) s.stop()
  rmSync(root, { recursive: true, force: true })
})

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const proc = Bun.spawn(['true'])
  await proc.exited
  return proc.pid
}

test('removes the directories of pids that ended; keeps those of live pids, live sockets and fresh old-style ones', async () => {
  const dir = join(root, 'unit')
  mkdirSync(dir)
  const gone = await deadPid()
  const make = (name: string) => {
    const path = join(dir, name)
    mkdirSync(path)
    writeFileSync(join(path, 'app.sock'), '') // what a killed process leaves: a socket nobody listens on
    return path
  }
  const stale = make(`platform-gw-${gone}-AbC123`)
  const live = make(`platform-gw-${process.pid}-XyZ789`)
  // a pid this process cannot see (another pid namespace on the same /tmp), but its socket answers
  const unseen = join(dir, `platform-gw-${gone}-Unseen`)
  mkdirSync(unseen)
  servers.push(Bun.serve({ unix: join(unseen, 'app.sock'), fetch: () => new Response('') }))
  const oldStale = make('platform-gw-Old123')
  const longAgo = new Date(Date.now() - 3_600_000)
  utimesSync(oldStale, longAgo, longAgo)
  const oldFresh = make('platform-gw-New456') // being made right now, perhaps
  const other = make('something-else')

  expect((await removeStaleSocketDirs(dir)).sort()).toEqual([oldStale, stale].sort())
  for (const kept of [live, unseen, oldFresh, other]) expect(existsSync(kept)).toBe(true)
})

test('a service killed with SIGKILL leaves its directory; the next start removes it and leaves a live one', async () => {
  const tmp = join(root, 'tmp')
  mkdirSync(tmp)
  const start = async (name: string) => {
    const p = await startProcess({ DATA_DIR: join(root, name), TMPDIR: tmp })
    started.push(p)
    return p
  }
  const ownDirs = (pid: number) => readdirSync(tmp).filter((n) => n.startsWith(`platform-gw-${pid}-`))

  const live = await start('live')
  const killed = await start('killed')
  expect(ownDirs(live.proc.pid)).toHaveLength(1)
  expect(ownDirs(killed.proc.pid)).toHaveLength(1)
  killed.proc.kill('SIGKILL')
  await killed.proc.exited
  expect(ownDirs(killed.proc.pid)).toHaveLength(1) // left behind

  const next = await start('next')
  expect(ownDirs(killed.proc.pid)).toEqual([])
  expect(ownDirs(live.proc.pid)).toHaveLength(1)
  expect(ownDirs(next.proc.pid)).toHaveLength(1)
  expect(next.out()).toContain('"msg":"removed the socket directories of processes gone"')
  expect((await fetch(`${live.url}/healthz`)).status).toBe(200)

  // a clean stop removes its own
  for (const p of [live, next]) {
    p.proc.kill('SIGTERM')
    expect(await p.proc.exited).toBe(0)
    expect(ownDirs(p.proc.pid)).toEqual([])
  }
}, 60_000)
