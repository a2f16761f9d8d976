// The ring the request thread hands log lines over in (src/log-ring.ts), with a real writer thread:
// lines arrive whole and in order, across the ring's end too, and a line put after the writer went
// to sleep wakes it (a lost wake-up left an error line unwritten until the wait gave up), also
// after a long quiet.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LogRing, RING_BYTES } from '~/log-ring'

const dir = mkdtempSync(join(tmpdir(), 'log-ring-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A writer thread that appends what it is given to a buffer the test reads (its first word: the length). */
function writer(ring: LogRing): { text: () => string; stop: () => void } {
  const sink = new SharedArrayBuffer(4 + 16 * RING_BYTES)
  const file = join(dir, `writer-${crypto.randomUUID()}.ts`)
  Bun.write(
    file,
    `import { LogRing } from ${JSON.stringify(join(import.meta.dir, '../../src/log-ring.ts'))}
     self.onmessage = (e) => {
       const length = new Int32Array(e.data.sink, 0, 1)
       const bytes = new Uint8Array(e.data.sink, 4)
       new LogRing(e.data.ring).drainForever((b) => { bytes.set(b, length[0]); Atomics.add(length, 0, b.length) })
     }`,
  )
  const worker = new Worker(file)
  worker.unref()
  worker.postMessage({ ring: ring.shared, sink })
  const length = new Int32Array(sink, 0, 1)
  return {
    text: () => Buffer.from(sink, 4, Atomics.load(length, 0)).toString(),
    stop: () => worker.terminate(),
  }
}

test('every line put is written whole and in order, also across the end of the ring', async () => {
  const ring = LogRing.create()
  const w = writer(ring)
  const scratch = Buffer.allocUnsafe(1024)
  const lines: string[] = []
  try {
    // three times round the ring, lines of many sizes and characters
    for (let i = 0, size = 0; size < 3 * RING_BYTES; i++) {
      const line = JSON.stringify({ i, text: i % 5 ? 'x'.repeat(i % 300) : 'ünïcødé ✓ 🚀' })
      while (!ring.putLine(line, scratch)) if (!ring.waitWritten(2000)) throw new Error('the writer took nothing')
      lines.push(line)
      size += Buffer.byteLength(line) + 1
    }
    expect(ring.waitWritten(5000)).toBe(true)
    expect(w.text()).toBe(`${lines.join('\n')}\n`)
  } finally {
    w.stop()
  }
})

test('a line put after the writer has gone to sleep is written at once, every time', async () => {
  const ring = LogRing.create()
  const w = writer(ring)
  const scratch = Buffer.allocUnsafe(1024)
  try {
    for (let i = 0; i < 3000; i++) {
      ring.putLine(`{"i":${i}}`, scratch)
      if (!ring.waitWritten(2000)) throw new Error(`line ${i} was not written within 2 s`)
    }
    expect(w.text().split('\n').length).toBe(3001)
  } finally {
    w.stop()
  }
})

test('a line put after a quiet longer than the writer waits before it sleeps is written', async () => {
  const ring = LogRing.create()
  const w = writer(ring)
  try {
    for (let i = 0; i < 2; i++) {
      await Bun.sleep(1200) // the writer looks for a second (50 looks) before it sleeps
      ring.putLine(`{"i":${i}}`, Buffer.allocUnsafe(64))
      expect(ring.waitWritten(2000)).toBe(true)
    }
  } finally {
    w.stop()
  }
})

test('lines the ring has no room for are refused, not cut; bytes are taken as whole lines only', () => {
  const ring = LogRing.create() // no writer: nothing is taken
  const scratch = Buffer.allocUnsafe(1024)
  const line = 'y'.repeat(RING_BYTES / 4 - 1)
  for (let i = 0; i < 4; i++) expect(ring.putLine(line, scratch)).toBe(true)
  expect(ring.putLine('z', scratch)).toBe(false)
  expect(ring.putBytes(Buffer.from('a\nb\n'))).toBe(0)
  expect(ring.waiting()).toBe(RING_BYTES)
  const half = LogRing.create()
  half.putLine('y'.repeat(RING_BYTES - 6), scratch) // room for 5 bytes
  expect(half.putBytes(Buffer.from('ab\ncd\n'))).toBe(3)
})
