/**
 * The public listener when GATEWAY=on (the default). Bun's HTTP parser drops LOOKUP, SYNC and CLEAR
 * (oven-sh/bun#6556), so the public port belongs to a small gateway that rewrites only those
 * request lines. The app itself listens on a unix socket in a private (0700) directory, which is
 * why it may believe the X-Real-IP the gateway adds.
 *
 * One app process: the gateway runs on the app's thread and answers what it can in-process
 * (./inline.ts); only upgrades and streaming bodies cross the unix socket. With WORKERS > 1 it runs
 * on a thread of its own and relays everything: each client connection goes to the next app process.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AppProcesses } from '../../cluster/app-processes'
import type { Config } from '../../config'
import type { IncomingRequest } from '../kernel'
import type { Answer } from '../respond'
import { type Front, type FrontOptions, startFront } from './front'

export interface Gateway {
  port: number
  /** Stops accepting, lets requests in flight finish for up to `graceMs`, then closes everything. */
  stop(graceMs?: number): Promise<void>
}

interface Listening {
  pendingRequests: number
  stop(closeActiveConnections?: boolean): unknown
}

interface Listenable {
  listen(options: Record<string, unknown>): Listening
  /** Answers one request in-process. */
  answer(request: IncomingRequest): Promise<Answer>
}

/** How long the server must have had no request in flight before a drain counts it idle. */
const QUIET_MS = 250

/**
 * Waits until the server has had no request in flight for QUIET_MS (a request the gateway already
 * accepted may still be on its way to the app), or until `graceMs` has passed.
 */
export async function drain(server: Pick<Listening, 'pendingRequests'>, graceMs: number): Promise<void> {
  const deadline = Date.now() + graceMs
  let quietSince = Date.now()
  while (Date.now() < deadline) {
    if (server.pendingRequests > 0) quietSince = Date.now()
    else if (Date.now() - quietSince >= Math.min(QUIET_MS, graceMs)) return
    await Bun.sleep(10)
  }
}

/** A directory only this user may enter, for the app's unix sockets. */
export function privateSocketDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'platform-gw-'))
  chmodSync(dir, 0o700)
  return dir
}

export async function startGateway(
  app: Listenable,
  config: Pick<Config, 'host' | 'port' | 'maxBodyBytes'> &
    Partial<Pick<Config, 'gatewayMaxConnectionsPerAddress' | 'trustProxy'>>,
  options: {
    headTimeoutMs?: number
    /** Serving in-process (one app process): how long a connection with nothing in flight is kept. */
    idleTimeoutMs?: number
    /** From privateSocketDir(); a new one otherwise. */
    dir?: string
    /** The other app processes (WORKERS > 1), listening in `dir`: stopped with the gateway. */
    others?: AppProcesses
  } = {},
): Promise<Gateway> {
  const dir = options.dir ?? privateSocketDir()
  const socketPath = join(dir, 'app.sock')
  const alone = !options.others?.sockets.length
  // alone, the front closes idle connections itself, the app's side of each only with it
  const listening = app.listen({ unix: socketPath, ...(alone ? { idleTimeout: 0 } : {}) })
  const frontOptions = {
    hostname: config.host,
    port: config.port,
    upstreams: [socketPath, ...(options.others?.sockets ?? [])],
    headTimeoutMs: options.headTimeoutMs,
    idleTimeoutMs: options.idleTimeoutMs,
    maxBodyBytes: config.maxBodyBytes,
    maxConnectionsPerAddress: config.gatewayMaxConnectionsPerAddress ?? 0,
    trustedProxies: config.trustProxy ?? [],
  }
  if (alone) return inProcess(app, listening, frontOptions, dir)

  // The single binary carries the worker as an entrypoint at its root, where this URL points once
  // bundled (scripts/build.ts); in a checkout it is the file beside this one.
  const worker = new Worker(new URL('./worker.ts', import.meta.url).href)
  let stopping = false
  let closed = () => {}
  const port = await new Promise<number>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<{ type: string; port?: number; message?: string }>) => {
      if (e.data.type === 'listening') resolve(e.data.port!)
      else if (e.data.type === 'closed') closed()
      else reject(new Error(`gateway could not listen on ${config.host}:${config.port}: ${e.data.message}`))
    }
    worker.onerror = (e) => reject(new Error(`gateway failed: ${e.message}`))
    worker.postMessage(frontOptions)
  })
  // Without its gateway the public port is dead; exit so a supervisor restarts the whole service.
  worker.addEventListener('close', () => {
    if (stopping) return
    console.error('gateway thread stopped; exiting')
    process.exit(1)
  })

  return {
    port,
    async stop(graceMs = 0) {
      stopping = true
      if (graceMs > 0) {
        await new Promise<void>((resolve) => {
          closed = resolve
          worker.postMessage({ close: true })
          setTimeout(resolve, graceMs)
        })
        // the other processes drain their own requests while this one drains its
        await Promise.all([drain(listening, graceMs), options.others?.stop(graceMs)])
      } else await options.others?.stop(0)
      worker.terminate()
      await listening.stop(true)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** The gateway on the app's own thread, answering in-process what it can. */
function inProcess(app: Listenable, listening: Listening, options: FrontOptions, dir: string): Gateway {
  let front: Front
  try {
    front = startFront({ ...options, serve: (request) => app.answer(request) })
  } catch (err) {
    listening.stop(true)
    rmSync(dir, { recursive: true, force: true })
    // the code (EADDRINUSE) says more than Bun's message ("Failed to listen at ...")
    const { code, message } = err as { code?: string; message: string }
    throw new Error(
      `gateway could not listen on ${options.hostname}:${options.port}: ${code ? `${code}: ` : ''}${message}`,
    )
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
      if (graceMs > 0) await drain(inFlight, graceMs)
      front.stop(true)
      await listening.stop(true)
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
