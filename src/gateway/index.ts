/**
 * The public listener when GATEWAY=on (the default). Bun's HTTP parser drops LOOKUP, SYNC and CLEAR
 * (oven-sh/bun#6556), so the public port belongs to a small gateway that rewrites only those request
 * lines. It runs on the app's thread and answers in-process what it can take whole (./inline.ts);
 * upgrades and streaming bodies go to the app's Bun.serve on a unix socket in a private (0700)
 * directory, which is why the app may believe the X-Real-IP the gateway adds. With APP_PROCESSES > 1 every
 * app process has its own gateway on the same port (SO_REUSEPORT): the kernel spreads connections.
 *
 * The directory is `platform-gw-<pid>-XXXXXX` in the temporary directory, removed at the stop. A
 * process killed hard leaves its own behind: each start removes those of processes that no longer
 * exist (`removeStaleSocketDirs`).
 */
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { connect } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Config } from '../config'
import type { Answer } from '../http/answer'
import { type Front, startFront } from './front'
import type { SocketAdmission } from './front-socket'
import type { RouteLimits } from './request-stream'

export interface Gateway {
  port: number
  /**
   * Stops accepting, lets requests in flight finish for up to `graceMs`, then closes everything.
   * Answers how many requests were still in flight when it closed them.
   */
  stop(graceMs?: number): Promise<number>
}

interface Listening {
  pendingRequests: number
  stop(closeActiveConnections?: boolean): unknown
}

interface Listenable {
  listen(options: Record<string, unknown>): Listening
  /** Answers one request in-process. */
  answer(request: Request): Promise<Answer>
  /** Its routes' body limits (../http/body-limits.ts). */
  bodyLimits?: RouteLimits
  /** Decides a websocket upgrade in-process: the front serves the socket itself. */
  admitSocket?: SocketAdmission
}

/** How long the server must have had no request in flight before a drain counts it idle. */
const QUIET_MS = 250

/**
 * Waits until the server has had no request in flight for QUIET_MS (a request the gateway already
 * accepted may still be on its way to the app), or until `graceMs` has passed. Answers how many were
 * still in flight then (0 when it went quiet): those the stop cuts.
 */
export async function drain(server: Pick<Listening, 'pendingRequests'>, graceMs: number): Promise<number> {
  const deadline = Date.now() + graceMs
  let quietSince = Date.now()
  while (Date.now() < deadline) {
    if (server.pendingRequests > 0) quietSince = Date.now()
    else if (Date.now() - quietSince >= Math.min(QUIET_MS, graceMs)) return 0
    await Bun.sleep(10)
  }
  return server.pendingRequests
}

const SOCKET_DIR_PREFIX = 'platform-gw-'

/** A directory only this user may enter, for the app's unix sockets; its name carries this process's pid. */
export function privateSocketDir(): string {
  const dir = mkdtempSync(join(tmpdir(), `${SOCKET_DIR_PREFIX}${process.pid}-`))
  chmodSync(dir, 0o700)
  return dir
}

/** Whether a process of this pid exists (signal 0 only asks; EPERM: it exists, another user's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return (err as { code?: string }).code === 'EPERM'
  }
}

/** Whether something listens on the unix socket `path` (a live process of another pid namespace, say). */
function answers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(path)
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

/** How old a socket directory without a pid in its name must be before it may be judged (one being made). */
const UNNAMED_MIN_AGE_MS = 60_000

/**
 * Removes the socket directories that processes killed hard left in `dir` (the temporary directory):
 * those whose pid no longer exists and whose socket nobody listens on. A directory of an older
 * version (no pid in its name) goes when its socket is dead and it is over a minute old. A live
 * process's directory is never touched, nor another user's (which this one could not remove).
 * Answers the directories removed.
 */
export async function removeStaleSocketDirs(dir = tmpdir()): Promise<string[]> {
  let names: string[]
  try {
    names = readdirSync(dir).filter((n) => n.startsWith(SOCKET_DIR_PREFIX))
  } catch {
    return []
  }
  const uid = process.getuid?.()
  const removed: string[] = []
  for (const name of names) {
    const path = join(dir, name)
    try {
      const stat = statSync(path)
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue
      const pid = /^platform-gw-(\d+)-/.exec(name)?.[1]
      if (pid !== undefined ? processExists(Number(pid)) : Date.now() - stat.mtimeMs < UNNAMED_MIN_AGE_MS) continue
      if (await answers(join(path, 'app.sock'))) continue
      rmSync(path, { recursive: true, force: true })
      removed.push(path)
    } catch {
      // gone meanwhile (another process cleaning up), or not ours to read: left alone
    }
  }
  return removed
}

export async function startGateway(
  app: Listenable,
  config: Pick<Config, 'host' | 'port' | 'maxBodyBytes'> &
    Partial<Pick<Config, 'gatewayMaxConnectionsPerAddress' | 'trustProxy' | 'gatewayInline'>>,
  options: {
    headTimeoutMs?: number
    /** How long a connection with nothing in flight is kept. */
    idleTimeoutMs?: number
    /** From privateSocketDir(); a new one otherwise. */
    dir?: string
    /**
     * APP_PROCESSES > 1: the public port is shared with the service's other app processes (SO_REUSEPORT).
     * `first` makes sure nobody else holds it before (SO_REUSEPORT alone would let a second service
     * bind the same port and take half its connections); `join` binds beside the first.
     */
    reusePort?: 'first' | 'join'
  } = {},
): Promise<Gateway> {
  const dir = options.dir ?? privateSocketDir()
  // the front closes idle connections itself: the app's side of each ends only with it
  const listening = app.listen({ unix: join(dir, 'app.sock'), idleTimeout: 0 })
  let front: Front
  try {
    // a plain bind fails (EADDRINUSE) wherever another process listens, also with SO_REUSEPORT
    if (options.reusePort === 'first' && config.port !== 0)
      Bun.listen({ hostname: config.host, port: config.port, socket: { data() {} } }).stop(true)
    front = startFront({
      hostname: config.host,
      port: config.port,
      reusePort: options.reusePort !== undefined,
      upstream: join(dir, 'app.sock'),
      headTimeoutMs: options.headTimeoutMs,
      idleTimeoutMs: options.idleTimeoutMs,
      maxBodyBytes: config.maxBodyBytes,
      routeLimits: app.bodyLimits,
      maxConnectionsPerAddress: config.gatewayMaxConnectionsPerAddress ?? 0,
      trustedProxies: config.trustProxy ?? [],
      inline: config.gatewayInline ?? true,
      serve: (request) => app.answer(request),
      admitSocket: app.admitSocket && ((request) => app.admitSocket!(request)),
    })
  } catch (err) {
    listening.stop(true)
    rmSync(dir, { recursive: true, force: true })
    // the code (EADDRINUSE) says more than Bun's message ("Failed to listen at ...")
    const { code, message } = err as { code?: string; message: string }
    throw new Error(`gateway could not listen on ${config.host}:${config.port}: ${code ? `${code}: ` : ''}${message}`)
  }
  const inFlight = {
    get pendingRequests() {
      return listening.pendingRequests + front.inFlight()
    },
  }
  return {
    port: front.port,
    async stop(graceMs = 0) {
      front.stop(false)
      const cut = graceMs > 0 ? await drain(inFlight, graceMs) : inFlight.pendingRequests
      front.stop(true)
      await listening.stop(true)
      rmSync(dir, { recursive: true, force: true })
      return cut
    },
  }
}
