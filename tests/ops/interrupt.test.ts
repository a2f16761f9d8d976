// Ctrl-C reaches the whole process group: the WAL checkpointer (a child process of the service)
// gets SIGINT too. It must not end under the service, whose stop then runs as usual, exit 0, with no
// worker failing on the way.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { alive, startProcess } from '../helpers/process'

const dir = mkdtempSync(join(tmpdir(), 'platform-interrupt-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** The service's child processes (the checkpointer among them). */
const childrenOf = async (pid: number) =>
  (await Bun.file(`/proc/${pid}/task/${pid}/children`).text()).trim().split(/\s+/).filter(Boolean).map(Number)

test('SIGINT to the service and its checkpointer at once: a clean stop, no worker failure', async () => {
  const node = await startProcess({ DATA_DIR: join(dir, 'data') })
  let children: number[] = []
  for (const until = Date.now() + 10_000; children.length === 0 && Date.now() < until; await Bun.sleep(100))
    children = await childrenOf(node.proc.pid) // the checkpointer starts with the first checkpoint
  expect(children.length).toBeGreaterThan(0)
  // once it has started (a signal during its start would end it whatever it does)
  const catchesSigint = async (pid: number) =>
    (BigInt(`0x${/SigCgt:\s*(\w+)/.exec(await Bun.file(`/proc/${pid}/status`).text())![1]}`) >> 1n) & 1n
  for (const until = Date.now() + 5000; Date.now() < until; await Bun.sleep(50))
    if ((await Promise.all(children.map(catchesSigint))).every((c) => c === 1n)) break
  for (const pid of children) process.kill(pid, 'SIGINT')
  await Bun.sleep(1500) // checkpoints go on meanwhile (one a second)
  for (const pid of children) expect(alive(pid)).toBe(true)
  node.proc.kill('SIGINT')
  expect(await node.proc.exited).toBe(0)
  expect(node.out()).not.toContain('worker failed')
  for (const pid of children) expect(alive(pid)).toBe(false)
}, 30_000)
