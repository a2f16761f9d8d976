// The read cache of the embedded driver (storage/read-cache.ts): an answer is kept per statement and
// per arguments as they are (1 is not "1", null is not ""), a missing row is kept as missing, and
// everything goes with the next write.
import { expect, test } from 'bun:test'
import type { Row } from '~storage/db'
import { ReadCache } from '~storage/read-cache'

/** A read that counts how often the database was asked. */
function reader(answer: (args: unknown[]) => Row | undefined) {
  const asked: unknown[][] = []
  return {
    asked,
    read: (args: unknown[]) => () => {
      asked.push(args)
      return answer(args)
    },
  }
}

test('an answer is kept per statement and per arguments, told apart by type', () => {
  const cache = new ReadCache()
  const r = reader((args) => [`row of ${JSON.stringify(args)}`])
  const ask = (sql: string, args: (string | number | null)[]) => cache.answer(sql, args, false, r.read(args))
  const cases: [string, (string | number | null)[]][] = [
    ['SELECT a', ['d', 'x']],
    ['SELECT a', ['d', 'y']],
    ['SELECT a', ['e', 'x']],
    ['SELECT b', ['d', 'x']],
    ['SELECT a', [1, 'x']],
    ['SELECT a', ['1', 'x']],
    ['SELECT a', [null, 'x']],
    ['SELECT a', ['', 'x']],
    ['SELECT c', []],
  ]
  const first = cases.map(([sql, args]) => ask(sql, args))
  expect(r.asked.length).toBe(cases.length) // no two of them met
  expect(cases.map(([sql, args]) => ask(sql, args))).toEqual(first)
  expect(r.asked.length).toBe(cases.length) // all answered from memory
  // one statement asked with another number of arguments (a mistake): answered right, not kept
  expect(ask('SELECT a', ['d'])).toEqual(['row of ["d"]'])
  expect(ask('SELECT a', ['d', 'x', 3])).toEqual(['row of ["d","x",3]'])
  expect(ask('SELECT a', ['d', 'x'])).toEqual(first[0])
})

test('a missing row is kept as missing; a write empties the cache', () => {
  const cache = new ReadCache()
  const r = reader(() => undefined)
  expect(cache.answer('SELECT a', ['d', 'gone'], false, r.read(['d', 'gone']))).toBeUndefined()
  expect(cache.answer('SELECT a', ['d', 'gone'], false, r.read(['d', 'gone']))).toBeUndefined()
  expect(r.asked.length).toBe(1)
  const generation = cache.generation
  cache.clear()
  expect(cache.generation).not.toBe(generation)
  cache.answer('SELECT a', ['d', 'gone'], false, r.read(['d', 'gone']))
  expect(r.asked.length).toBe(2)
})

test('rows read elsewhere are kept only when no write came while they were read', async () => {
  const cache = new ReadCache()
  let reads = 0
  const slow = (clearMeanwhile: boolean) => async () => {
    reads++
    if (clearMeanwhile) cache.clear()
    return [['r']] as Row[]
  }
  await cache.answerLater('SELECT l', ['d'], slow(true))
  await cache.answerLater('SELECT l', ['d'], slow(false))
  await cache.answerLater('SELECT l', ['d'], slow(false))
  expect(reads).toBe(2)
})
