// node-redis on Bun (storage/kv/redis.ts): a command is traced only while someone listens on
// node-redis's tracing channel, as on Node; Bun's TracingChannel has no hasSubscribers of its own.
import { expect, test } from 'bun:test'
import { testRedisKv } from '../helpers/redis'

test('node-redis traces a command only while someone listens on its tracing channel', async () => {
  const { tracingChannel } = await import('node:diagnostics_channel')
  const commands = tracingChannel('node-redis:command')
  const r = await testRedisKv()
  try {
    expect(commands.hasSubscribers).toBe(false)
    const traced: unknown[] = []
    const listener = { start: (context: unknown) => void traced.push(context) }
    commands.subscribe(listener as never)
    expect(commands.hasSubscribers).toBe(true)
    await r.kv.set('traced', '1')
    commands.unsubscribe(listener as never)
    expect(traced).toHaveLength(1)
    await r.kv.set('traced', '2')
    expect(traced).toHaveLength(1)
  } finally {
    await r.cleanup()
  }
})
