// What lists keep in memory is bounded however clients vary their requests: presentations per
// page, and kept answers (an empty list asked with ever new cache-busting parameters costs its key).
import { expect, test } from 'bun:test'
import { JsonText } from '~storage/json-text'
import { pageText } from '~/http/json'
import { keptAnswer } from '~/http/kept-answers'
import type { Db } from '~storage/db'

test('a page keeps a few presentations: a client varying its mask makes new texts, not more memory', () => {
  const docs = [{ id: 1 }]
  const first = pageText(docs, 'mask 0', () => docs)
  expect(pageText(docs, 'mask 0', () => docs)).toBe(first)
  for (let i = 1; i <= 8; i++) pageText(docs, `mask ${i}`, () => docs)
  expect(pageText(docs, 'mask 0', () => docs)).not.toBe(first) // made again: the presentations started over
})

test('kept answers are kept until the generation moves, and at most 10,000 of them', async () => {
  let generation = 1
  const db = { generation: () => generation } as unknown as Db
  let made = 0
  const make = async () => ({ text: new JsonText(`[${++made}]`), headers: {} })
  const first = await keptAnswer(db, 'k0', make)
  expect(await keptAnswer(db, 'k0', make)).toBe(first)
  for (let i = 1; i <= 10_000; i++) await keptAnswer(db, `_=${i}`, make)
  expect(await keptAnswer(db, 'k0', make)).not.toBe(first) // the kept ones started over
  const again = await keptAnswer(db, 'k0', make)
  expect(await keptAnswer(db, 'k0', make)).toBe(again)
  generation++ // a write
  expect(await keptAnswer(db, 'k0', make)).not.toBe(again)
  // where writes are not all seen (a libSQL server), nothing is kept
  const remote = {} as Db
  expect(await keptAnswer(remote, 'k0', make)).not.toBe(await keptAnswer(remote, 'k0', make))
})
