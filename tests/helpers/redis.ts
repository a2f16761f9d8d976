/** The real Redis the tests use (`npm test` starts a private one), with a fresh key prefix per caller. */
import { connect } from 'node:net'
import { createRedisKv } from '~storage/kv/redis'

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Fails at once when nothing answers (node-redis would retry for as long as the test runs). */
function redisAnswers(): Promise<boolean> {
  const { hostname, port } = new URL(TEST_REDIS_URL)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port || 6379), timeout: 2000 }, () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}
let reachable: Promise<boolean> | undefined

export function testPrefix(): string {
  return `test:${crypto.randomUUID().slice(0, 8)}:`
}

/** A Redis Kv under a fresh prefix; `cleanup` deletes every key it made. */
export async function testRedisKv(prefix = testPrefix()) {
  reachable ??= redisAnswers()
  if (!(await reachable))
    throw new Error(
      `no Redis at ${TEST_REDIS_URL}: run the tests with npm test, which starts one, or set TEST_REDIS_URL`,
    )
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

/** A redis-server of a test's own, which the test may pause, kill and start again on the same port. */
export async function ownRedisServer() {
  const port = await new Promise<number>((resolve) => {
    const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
    const { port } = probe
    probe.stop(true)
    resolve(port)
  })
  let server: Bun.Subprocess | undefined
  const answers = () =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port }, () => socket.write('PING\r\n'))
      socket.once('data', (d) => {
        socket.destroy()
        resolve(d.toString().startsWith('+PONG'))
      })
      socket.once('error', () => resolve(false))
    })
  const start = async () => {
    server = Bun.spawn(
      ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'ignore', 'ignore'],
      },
    )
    for (let tries = 0; tries < 200; tries++) {
      if (await answers()) return
      await Bun.sleep(25)
    }
    throw new Error(`redis-server did not start on port ${port}`)
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    start,
    /** SIGSTOP: connections stay open and nothing answers (a hung or overloaded Redis). */
    pause: () => server!.kill('SIGSTOP'),
    resume: () => server!.kill('SIGCONT'),
    async kill() {
      server!.kill('SIGKILL')
      await server!.exited
    },
  }
}
