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

test('calls that miss a key while it is made wait for that making; a write since starts a new one', async () => {
  let generation = 1
  const db = { generation: () => generation } as unknown as Db
  let made = 0
  let finish: (() => void) | undefined
  const make = () =>
    new Promise<{ text: JsonText; headers: Record<string, string> }>((resolve) => {
      const n = ++made
      finish = () => resolve({ text: new JsonText(`[${n}]`), headers: {} })
    })
  const asked = [keptAnswer(db, 'k', make), keptAnswer(db, 'k', make), keptAnswer(db, 'k', make)]
  await Bun.sleep(0)
  expect(made).toBe(1)
  finish!()
  const answers = await Promise.all(asked)
  expect(answers.map((a) => a.text.text)).toEqual(['[1]', '[1]', '[1]'])
  expect(await keptAnswer(db, 'k', make)).toBe(answers[0]!) // kept
  // a write while a making is under way: later calls do not wait for what read the older rows
  generation++
  void keptAnswer(db, 'k', make) // never finished: its making is let go of
  await Bun.sleep(0)
  generation++
  const after = keptAnswer(db, 'k', make)
  await Bun.sleep(0)
  expect(made).toBe(3)
  finish!() // the second making (generation 3) ends; the first one's promise still waits
  expect((await after).text.text).toBe('[3]')
  expect(await keptAnswer(db, 'k', make)).toBe(await after)
})

test('a making that fails fails every call that waited for it, and is not kept', async () => {
  const db = { generation: () => 7 } as unknown as Db
  let made = 0
  let fail: ((err: Error) => void) | undefined
  const failing = () =>
    new Promise<never>((_, reject) => {
      made++
      fail = reject
    })
  const asked = [keptAnswer(db, 'f', failing), keptAnswer(db, 'f', failing)]
  const outcomes = Promise.allSettled(asked)
  await Bun.sleep(0)
  fail!(new Error('the read failed'))
  const reasons = (await outcomes).map((o) => (o.status === 'rejected' ? (o.reason as Error).message : o.status))
  expect(reasons).toEqual(['the read failed', 'the read failed'])
  expect(made).toBe(1)
  const ok = await keptAnswer(db, 'f', async () => ({ text: new JsonText('[]'), headers: {} }))
  expect(ok.text.text).toBe('[]')
})
