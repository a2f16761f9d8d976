// SIGTERM during an upload: the service stops accepting, lets the upload finish (within
// SHUTDOWN_GRACE_SEC), closes websockets with "going away", and exits 0; the file is whole afterwards.
// One upload longer than the grace is cut. Each stop logs a line: the signal, the drain, what was cut.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, signInTo, startProcess } from '../helpers/process'

const dir = mkdtempSync(join(tmpdir(), 'platform-stop-'))
const started: ServiceProcess[] = []
afterAll(() => {
  for (const p of started) p.proc.kill('SIGKILL') // a failing test leaves no process behind
  rmSync(dir, { recursive: true, force: true })
})
const start = async (env: Record<string, string>) => {
  const p = await startProcess(env)
  started.push(p)
  return p
}

/** The service's `stopped` line. */
const stopLine = (node: ServiceProcess) =>
  node
    .out()
    .split('\n')
    .filter((l) => l.includes('"msg":"stopped"'))
    .map((l) => JSON.parse(l))[0]

test('an upload in flight at SIGTERM completes; open websockets hear 1001; the process exits 0', async () => {
  const node = await start({ DATA_DIR: dir, SHUTDOWN_GRACE_SEC: '20' })
  const token = await signInTo(node)
  const ws = new WebSocket(`${node.url.replace('http', 'ws')}/ws?token=${token}`)
  const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)))
  await new Promise((resolve) => ws.addEventListener('open', resolve))

  const chunks = 20
  const chunk = (i: number) => new Uint8Array(64 * 1024).fill(i)
  let sent = 0
  let signalled = false
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === chunks) return controller.close()
      if (sent === 3 && !signalled) {
        signalled = true
        node.proc.kill('SIGTERM') // the upload has begun and is far from done
      }
      await Bun.sleep(40)
      controller.enqueue(chunk(sent++))
    },
  })
  const upload = await fetch(`${node.url}/rest/v1/fs/targets/token/during-stop.bin`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body,
  })
  expect(signalled).toBe(true)
  expect(upload.status).toBe(204)
  expect(await closed).toBe(1001)
  expect(await node.proc.exited).toBe(0)
  // the stop is logged: the signal, how long the drain took (the upload's rest), nothing cut
  expect(stopLine(node)).toMatchObject({
    signal: 'SIGTERM',
    appProcess: 0,
    drainMs: expect.any(Number),
    cut: { requests: 0, longWork: [], websockets: 1 },
  })

  const again = await start({ DATA_DIR: dir })
  try {
    const read = await fetch(`${again.url}/rest/v1/fs/targets/token/during-stop.bin`, {
      headers: { authorization: `Bearer ${await signInTo(again)}` },
    })
    const bytes = new Uint8Array(await read.arrayBuffer())
    expect(bytes.length).toBe(chunks * 64 * 1024)
    expect(bytes[bytes.length - 1]).toBe(chunks - 1)
  } finally {
    again.proc.kill('SIGTERM')
    await again.proc.exited
  }
}, 60_000)

test('an upload longer than SHUTDOWN_GRACE_SEC is cut, and the stop line says so', async () => {
  const node = await start({ DATA_DIR: join(dir, 'cut'), SHUTDOWN_GRACE_SEC: '1' })
  const token = await signInTo(node)
  let sent = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (sent === 3) node.proc.kill('SIGINT')
      if (sent === 100) return controller.close() // 10 s: far past the grace
      await Bun.sleep(100)
      controller.enqueue(new Uint8Array(1024).fill(sent++))
    },
  })
  const upload = fetch(`${node.url}/rest/v1/fs/targets/token/too-slow.bin`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream' },
    body,
  }).catch((err: Error) => err)
  expect(await node.proc.exited).toBe(0)
  await upload
  const line = stopLine(node)
  expect(line).toMatchObject({ signal: 'SIGINT', cut: { requests: 1, longWork: [] } })
  expect(line.drainMs).toBeGreaterThanOrEqual(1000)
}, 60_000)
