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
  kv.publish = (channel, message) => (messages.push(message), publish(channel, message))
  const log = createLogger('error', () => {})
  const [sender, receiver] = [new EventBus(kv, log), new EventBus(kv, log)]
  await sender.start()
  await receiver.start()
  const got: number[] = []
  receiver.on((e) => got.push(e.seq!))
  return { sender, messages, got }
}

test('a batch is one message; every receiver gets its events in order', async () => {
  const { sender, messages, got } = await busPair()
  await sender.publishAll([1, 2, 3].map((n) => event(n)))
  await sender.publish(event(4))
  await Bun.sleep(0)
  expect(messages).toHaveLength(2)
  expect(got).toEqual([1, 2, 3, 4])
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
