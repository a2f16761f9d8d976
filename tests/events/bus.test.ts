// The event bus: a batch goes out as few messages as its size allows, in order, to every receiver.
import { expect, test } from 'bun:test'
import { createMemoryKv } from '~storage/kv/memory'
import { EventBus, MESSAGE_MAX } from '~/events/bus'
import type { PlatformEvent } from '~/events/event'
import { createLogger } from '~/log'

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
