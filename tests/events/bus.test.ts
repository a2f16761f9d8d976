// The event bus: a batch goes out as few messages as its size allows, in order, to every receiver;
// the journal pump's reach its own process without waiting for the store where the order allows,
// and not again when the store brings them back.
import { expect, test } from 'bun:test'
import { createMemoryKv } from '~storage/kv/memory'
import { EventBus, MESSAGE_MAX } from '~/events/bus'
import type { PlatformEvent } from '~/events/event'
import { createLogger } from '~/log'
import { testPrefix, testRedisKv } from '../helpers/redis'

const event = (n: number, size = 10): PlatformEvent => ({
  class: 'modelevents',
  event: 'data_changed',
  domain: 'd1',
  time: '2026-11-26T00:00:00.000Z',
  seq: n,
  objects: [{ type: 'class', value: 'extobj' }],
  data: { pad: 'x'.repeat(size) },
})

async function busPair() {
  const kv = createMemoryKv()
  const messages: string[] = []
  const publish = kv.publish.bind(kv)
  kv.publish = (channel, message) => {
    messages.push(message)
    return publish(channel, message)
  }
  const log = createLogger('error', () => {})
  const [sender, receiver, another] = [new EventBus(kv, log), new EventBus(kv, log), new EventBus(kv, log)]
  for (const bus of [sender, receiver, another]) await bus.start()
  const got: number[] = []
  const gotToo: number[] = []
  receiver.on((e) => got.push(e.seq!))
  another.on((e) => gotToo.push(e.seq!))
  return { sender, messages, got, gotToo }
}

test('a batch is one message; every receiver gets its events in order', async () => {
  const { sender, messages, got, gotToo } = await busPair()
  await sender.publishAll([1, 2, 3].map((n) => event(n)))
  await sender.publish(event(4))
  await Bun.sleep(0)
  expect(messages).toHaveLength(2)
  expect(got).toEqual([1, 2, 3, 4])
  expect(gotToo).toEqual([1, 2, 3, 4])
})

test('a batch larger than a message is split in order; a single larger event goes alone', async () => {
  const { sender, messages, got } = await busPair()
  const quarter = MESSAGE_MAX / 4
  const sizes = [quarter, quarter, quarter, quarter, MESSAGE_MAX * 2, 10]
  await sender.publishAll(sizes.map((size, i) => event(i + 1, size)))
  await sender.publishAll([])
  await Bun.sleep(0)
  expect(got).toEqual([1, 2, 3, 4, 5, 6])
  expect(messages.length).toBe(4) // three quarters, then the fourth, the large one, the small one
  for (const m of messages) expect(m.length <= MESSAGE_MAX || JSON.parse(m).length === 1).toBe(true)
})

test('the limit counts bytes, brackets and commas: two events that would pass it by one byte go apart', async () => {
  const { sender, messages } = await busPair()
  const text = (e: PlatformEvent) => Buffer.byteLength(JSON.stringify(e))
  // "ж" is two bytes in UTF-8: counted in characters, the second pair would fit too
  const first = { ...event(1), data: { pad: 'ж'.repeat(300_000) } }
  const filler = MESSAGE_MAX - 3 - text(first) - text(event(2, 0)) // '[' first ',' second ']'
  const fits = event(2, filler)
  const over = event(2, filler + 1)
  await sender.publishAll([first, fits])
  await sender.publishAll([first, over])
  expect(messages.map((m) => JSON.parse(m).length)).toEqual([2, 1, 1])
  expect(Buffer.byteLength(messages[0]!)).toBe(MESSAGE_MAX)
})

test("the pump's messages reach its own process at once once its own came back, and the others through the store", async () => {
  const prefix = testPrefix()
  const [a, b] = [await testRedisKv(prefix), await testRedisKv(prefix)]
  try {
    const log = createLogger('error', () => {})
    const [holder, other] = [new EventBus(a.kv, log), new EventBus(b.kv, log)]
    await Promise.all([holder.start(), other.start()])
    const here: number[] = []
    const there: number[] = []
    holder.on((e) => here.push(e.seq!))
    other.on((e) => there.push(e.seq!))
    const until = Date.now() + 5000
    const both = async (n: number) => {
      while ((here.length < n || there.length < n) && Date.now() < until) await Bun.sleep(5)
    }
    const pump = (bus: EventBus, seqs: number[], here = true) =>
      bus.publishTexts(
        seqs.map((n) => JSON.stringify(event(n))),
        { here },
      )
    // a new holder's first messages go through the store: the last holder's may still be on their way
    const first = pump(holder, [1, 2])
    expect(here).toEqual([])
    await first
    await both(2)
    // its own came back: what it publishes next is delivered here at once
    const next = pump(holder, [3])
    expect(here).toEqual([1, 2, 3])
    await next
    // a pump message of another process (the pump was elsewhere meanwhile): through the store again
    await pump(other, [4], false)
    await both(4)
    const after = pump(holder, [5])
    expect(here).toEqual([1, 2, 3, 4])
    await after
    await both(5)
    await pump(holder, [6])
    expect(here).toEqual([1, 2, 3, 4, 5, 6])
    await both(6)
    await Bun.sleep(50) // a second delivery would have come by now
    expect(here).toEqual([1, 2, 3, 4, 5, 6])
    expect(there).toEqual([1, 2, 3, 4, 5, 6])
    await Promise.all([holder.stop(), other.stop()])
  } finally {
    await a.cleanup()
    await b.cleanup()
  }
})

test('a message the store refused is not awaited back: the same text published later is delivered here once more', async () => {
  const kv = createMemoryKv()
  const log = createLogger('error', () => {})
  const bus = new EventBus(kv, log)
  await bus.start()
  const got: number[] = []
  bus.on((e) => got.push(e.seq!))
  const text = JSON.stringify(event(7))
  await bus.publishTexts([JSON.stringify(event(6))], { here: true }) // through the store: the first
  await Bun.sleep(0)
  expect(got).toEqual([6])
  const publish = kv.publish.bind(kv)
  kv.publish = async () => {
    throw new Error('the store is away')
  }
  await expect(bus.publishTexts([text], { here: true })).rejects.toThrow('the store is away')
  expect(got).toEqual([6, 7]) // delivered here before the store refused; the pump publishes it again
  kv.publish = publish
  await bus.publishTexts([text], { here: true })
  await Bun.sleep(0)
  expect(got).toEqual([6, 7, 7]) // once here again, and its echo passed over
  // nothing is awaited back any more: the same text from elsewhere is delivered
  await bus.publishTexts([text])
  await Bun.sleep(0)
  expect(got).toEqual([6, 7, 7, 7])
})
