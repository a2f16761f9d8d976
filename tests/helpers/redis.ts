/** The real Redis the tests use (`.ci/run` makes sure one answers), with a fresh key prefix per caller. */
import { createRedisKv } from '~storage/kv/redis'

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

export function testPrefix(): string {
  return `test:${crypto.randomUUID().slice(0, 8)}:`
}

/** A Redis Kv under a fresh prefix; `cleanup` deletes every key it made. */
export async function testRedisKv(prefix = testPrefix()) {
  const kv = await createRedisKv(TEST_REDIS_URL, { prefix })
  return {
    kv,
    prefix,
    async cleanup() {
      const { createClient } = await import('redis')
      const c = createClient({ url: TEST_REDIS_URL })
      await c.connect()
      for await (const keys of c.scanIterator({ MATCH: `${prefix}*`, COUNT: 500 })) if (keys.length) await c.del(keys)
      await c.quit()
      await kv.close()
    },
  }
}
