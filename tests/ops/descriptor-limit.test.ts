// A socket through the gateway costs the process three descriptors (docs/operations.md): the service
// runs with its soft RLIMIT_NOFILE raised to the hard one, whatever soft limit it was started with.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, startProcess } from '../helpers/process'

const dir = mkdtempSync(join(tmpdir(), 'platform-nofile-'))
let node: ServiceProcess | undefined
afterAll(() => {
  node?.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

/** The soft and hard "Max open files" of a running process. */
async function openFiles(pid: number): Promise<[string, string]> {
  const line = (await Bun.file(`/proc/${pid}/limits`).text()).split('\n').find((l) => l.startsWith('Max open files'))
  const [soft, hard] = line!.replace('Max open files', '').trim().split(/\s+/)
  return [soft!, hard!]
}

test('started with a soft descriptor limit of 256, the running service holds the hard limit', async () => {
  node = await startProcess({ DATA_DIR: dir, GATEWAY: 'on' }, ['sh', '-c', 'ulimit -Sn 256 && exec "$@"', 'sh'])
  expect((await fetch(`${node.url}/healthz`)).status).toBe(200)
  const [soft, hard] = await openFiles(node.proc.pid)
  expect(Number(hard)).toBeGreaterThan(256)
  expect(soft).toBe(hard)
})
