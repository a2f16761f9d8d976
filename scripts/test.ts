/**
 * `npm test [-- <bun test arguments>]`: checks the format, the lint and the types, provisions what
 * the tests need (Debian's chromium, prometheus (for its promtool) and redis-server, installed when
 * missing; a private Redis on a free port for this run only, unless TEST_REDIS_URL names one), runs
 * `bun test` and exits with its status.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { CHROMIUM } from '../tests/helpers/browser'
import { PROMTOOL } from '../tests/helpers/promtool'

const ROOT = join(import.meta.dir, '..')
const tool = (name: string) => join(ROOT, 'node_modules/.bin', name)

function mustPass(command: string[], what: string): void {
  if (Bun.spawnSync(command, { cwd: ROOT, stdio: ['inherit', 'inherit', 'inherit'] }).exitCode !== 0) {
    console.error(`${what} failed`)
    process.exit(1)
  }
}

/**
 * apt-get install, through sudo unless root; the package lists are refreshed once when the first
 * try fails. It waits for a dpkg lock held by another install (another checkout's test run, say).
 */
function aptInstall(pkg: string, reason: string): boolean {
  console.log(`installing ${pkg} from Debian packages (${reason})`)
  const sudo = process.getuid?.() === 0 ? [] : ['sudo']
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }
  let output = ''
  const attempt = (...args: string[]) => {
    try {
      const done = Bun.spawnSync([...sudo, 'apt-get', '-o', 'DPkg::Lock::Timeout=300', ...args], {
        env,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      output = done.stdout.toString() + done.stderr.toString()
      return done.exitCode === 0
    } catch (err) {
      output = (err as Error).message // no apt-get, or no sudo
      return false
    }
  }
  const installed = attempt('install', '-y', pkg) || (attempt('update') && attempt('install', '-y', pkg))
  console.log(
    installed ? `installed ${pkg}` : `could not install ${pkg}:\n${output.trim().split('\n').slice(-10).join('\n')}`,
  )
  return installed
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })
}

function redisAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' }, () => socket.write('PING\r\n'))
    socket.once('data', (data) => {
      socket.destroy()
      resolve(data.toString().startsWith('+PONG'))
    })
    socket.once('error', () => resolve(false))
  })
}

/** Stops the private Redis and removes its directory; set as soon as it is spawned. */
let stopRedis: (() => Promise<void>) | undefined

/** A redis-server for this run only: a free port, a temp dir, nothing persisted. Answers its URL. */
async function startPrivateRedis(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'platform-test-redis-'))
  const port = await freePort()
  const log = join(dir, 'redis.log')
  const server = Bun.spawn(
    ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { cwd: dir, stdio: ['ignore', Bun.file(log), Bun.file(log)] },
  )
  stopRedis = async () => {
    server.kill()
    await server.exited
    rmSync(dir, { recursive: true, force: true })
  }
  for (let tries = 0; tries < 100 && server.exitCode === null; tries++) {
    if (await redisAnswers(port)) return `redis://127.0.0.1:${port}`
    await Bun.sleep(50)
  }
  console.error(`redis-server did not start on port ${port}:\n${await Bun.file(log).text()}`)
  await stopRedis()
  process.exit(1)
}

mustPass([tool('biome'), 'format', '.'], 'format check (npm run format fixes it)')
// errors only: an error fails the run, the warnings (mostly non-null assertions) would bury it
mustPass([tool('biome'), 'lint', '--diagnostic-level=error', '.'], 'lint (biome lint . lists all it finds)')
mustPass([tool('tsc'), '--noEmit', '-p', '.'], 'type check')
mustPass([tool('tsc'), '--noEmit', '-p', 'src/console/app'], 'type check of the console (DOM, Preact JSX)')

// Without it the page tests fail, each naming the reason; the other suites still run.
if (!existsSync(CHROMIUM)) aptInstall('chromium', `${CHROMIUM} not found`)
// promtool checks /metrics as Prometheus reads it; without it that test fails naming the reason
if (!existsSync(PROMTOOL)) aptInstall('prometheus', `${PROMTOOL} not found`)

let tests: Bun.Subprocess | undefined
// Ctrl-C or a kill must not leave the private Redis behind.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
  ['SIGHUP', 129],
] as const) {
  process.on(signal, async () => {
    tests?.kill(signal)
    await stopRedis?.()
    process.exit(code)
  })
}

let redisUrl = process.env.TEST_REDIS_URL
if (!redisUrl) {
  if (!Bun.which('redis-server') && !aptInstall('redis-server', 'redis-server not found')) process.exit(1)
  redisUrl = await startPrivateRedis()
  console.log(`private redis-server for this run at ${redisUrl}`)
}

tests = Bun.spawn([process.execPath, 'test', '--timeout', '20000', '--parallel=2', ...process.argv.slice(2)], {
  cwd: ROOT,
  env: { ...process.env, TEST_REDIS_URL: redisUrl },
  stdio: ['inherit', 'inherit', 'inherit'],
})
const status = await tests.exited
await stopRedis?.()
process.exit(status)
