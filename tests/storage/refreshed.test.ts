// Figures that judge requests (a table's size) are read once per key and period, whoever asks:
// concurrent askers share the first read, and a stale value is answered at once while one read
// refreshes it, so no request waits for a recount.
import { describe, expect, test } from 'bun:test'
import type { Row, SqlValue } from '~storage/db'
import { approxRows } from '~storage/list-budget'
import { Refreshed } from '~storage/refreshed'
import type { Repository } from '~storage/repository'

/** A read the test settles when it wants, counting how often it was started. */
function reads() {
  const pending: PromiseWithResolvers<number>[] = []
  return {
    pending,
    read: () => {
      const p = Promise.withResolvers<number>()
      pending.push(p)
      return p.promise
    },
  }
}
const TTL = 1000

describe('Refreshed', () => {
  test('askers of a key being read for the first time share that read', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const r = reads()
    const asked = Array.from({ length: 64 }, () => cache.get('k', 0, r.read))
    expect(r.pending.length).toBe(1)
    r.pending[0]!.resolve(7)
    expect(await Promise.all(asked)).toEqual(Array(64).fill(7))
    expect(cache.get('k', 10, r.read)).toBe(7) // kept: no read, no promise
    expect(r.pending.length).toBe(1)
  })

  test('a stale value is answered at once while one read refreshes it', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const r = reads()
    const first = cache.get('k', 0, r.read)
    r.pending[0]!.resolve(1)
    await first
    // stale: the last value at once, for every asker, and a single refresh
    expect([cache.get('k', TTL, r.read), cache.get('k', TTL + 1, r.read)]).toEqual([1, 1])
    expect(r.pending.length).toBe(2)
    r.pending[1]!.resolve(2)
    await Bun.sleep(0) // the refresh's value lands a few microtasks later
    expect(cache.get('k', TTL + 2, r.read)).toBe(2)
    expect(r.pending.length).toBe(2) // fresh again: counted from the refresh's time
  })

  test('a failed refresh keeps the last value, and the next is tried a tenth of the period later', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const r = reads()
    const first = cache.get('k', 0, r.read)
    r.pending[0]!.resolve(1)
    await first
    expect(cache.get('k', TTL, r.read)).toBe(1)
    r.pending[1]!.reject(new Error('database is closed'))
    await r.pending[1]!.promise.catch(() => {})
    await Bun.sleep(0)
    expect(cache.get('k', TTL + 1, r.read)).toBe(1)
    expect(r.pending.length).toBe(2)
    expect(cache.get('k', TTL + TTL / 10, r.read)).toBe(1)
    expect(r.pending.length).toBe(3)
  })

  test('a value left unasked for twice the period is read afresh, and waited for', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const r = reads()
    const first = cache.get('k', 0, r.read)
    r.pending[0]!.resolve(1)
    await first
    const later = [cache.get('k', 2 * TTL, r.read), cache.get('k', 2 * TTL, r.read)]
    expect(later.every((v) => v instanceof Promise)).toBe(true)
    expect(r.pending.length).toBe(2) // shared, like a first read
    r.pending[1]!.resolve(9)
    expect(await Promise.all(later)).toEqual([9, 9])
  })

  test('a read that throws before it returns a promise fails like one that rejects', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const throwing = () => {
      throw new Error('no such table')
    }
    const failed = cache.get('k', 0, throwing)
    expect(await Promise.resolve(failed).then(String, (e: Error) => e.message)).toBe('no such table')
    const r = reads()
    const first = cache.get('k', 1, r.read)
    r.pending[0]!.resolve(3)
    await first
    // a refresh that throws leaves the value, and the key is refreshed again later
    expect(cache.get('k', TTL + 1, throwing)).toBe(3)
    await Bun.sleep(0)
    expect(cache.get('k', TTL + 1 + TTL / 10, r.read)).toBe(3)
    expect(r.pending.length).toBe(2)
  })

  test('a failed first read fails its askers; the next asker reads again', async () => {
    const cache = new Refreshed<number>(TTL, 100)
    const r = reads()
    const asked = [cache.get('k', 0, r.read), cache.get('k', 0, r.read)]
    r.pending[0]!.reject(new Error('no such table'))
    for (const a of asked) expect(await Promise.resolve(a).then(String, (e: Error) => e.message)).toBe('no such table')
    const again = cache.get('k', 1, r.read)
    expect(r.pending.length).toBe(2)
    r.pending[1]!.resolve(5)
    expect(await again).toBe(5)
  })
})

test('approxRows: 64 lists of one class at once count its rows once, and never wait for a recount', async () => {
  let counts = 0
  let gate = Promise.withResolvers<void>()
  const repo = {
    spec: { table: `t_${crypto.randomUUID().slice(0, 8)}` },
    db: {
      allAside: async (_sql: string, _args: SqlValue[]): Promise<Row[]> => {
        counts++
        await gate.promise
        return [[100_001]]
      },
    },
  } as unknown as Repository
  const first = Array.from({ length: 64 }, () => approxRows(repo, 'd', 100_000, 0))
  gate.resolve()
  expect(new Set(await Promise.all(first))).toEqual(new Set([100_001]))
  expect(counts).toBe(1)
  // ten seconds on: the last count answers all 64 at once, and one recount runs
  gate = Promise.withResolvers<void>()
  const later = await Promise.all(Array.from({ length: 64 }, () => approxRows(repo, 'd', 100_000, 10_000)))
  expect(new Set(later)).toEqual(new Set([100_001]))
  expect(counts).toBe(2)
  gate.resolve()
})
