/**
 * Assembles one service instance: its data directory made private, database (migrated), the
 * secrets key (src/ops/secrets-key.ts), KV store, the request-time services
 * (deps), first-start bootstrap, the background workers, the app, and its listener (the gateway in
 * front, or Bun.serve directly). `stop()` takes them down in the reverse order.
 */
import type { Server } from 'bun'
import { type Db, Stopping } from '~storage/db'
import { Repository } from '~storage/repository'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import type { Kv } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { createRedisKv } from '~storage/kv/redis'
import { ensureInstallation } from '~storage/installation'
import { migrate } from '~storage/migrate'
import { releaseAllClaims } from '~storage/queue'
import { createApp, type HttpApp, type Manifest } from './app'
import { type Clock, isoTime, systemClock } from './clock'
import { WsHub } from './ws/hub'
import { type Config, largestBody } from './config'
import type { HttpDeps } from './http/router'
import {
  type AppProcesses,
  type AppProcessRole,
  serviceCommand,
  shareFigures,
  startAppProcesses,
} from './cluster/app-processes'
import { drain, type Gateway, removeStaleSocketDirs, startGateway } from './gateway/index'
import { announceFirstAdmin, type BootstrapResult, bootstrap } from './identity/bootstrap'
import { compose } from './compose'
import { sealClearSecrets, sealedSecretCount } from './integration/channels'
import { openSecretBox } from './ops/secrets-key'
import { createLogger, type Logger } from './log'
import { completeBuiltinClasses } from './model/builtin-start'
import { createWorkers } from './workers/index'
import { startJournalCursor } from './workers/journal-pump'
import { startWebhookCursor } from './workers/webhook-enqueue'
import { type Worker, WorkerRunner } from './workers/runner'
import { startControl } from './ops/control'
import { shownUrl } from './net/shown-url'
import { ensureDataDir, listenError, StartError, secureDataFiles, withRetries } from './startup'

export interface Service {
  /** The services of its calls, with the route table the HTTP layer uses. */
  deps: HttpDeps
  /** The open websockets of this process and their subscriptions (owned here, not in Deps). */
  sockets: WsHub
  app: HttpApp
  workers: WorkerRunner
  bootstrap: BootstrapResult
  /** Base URL of the public listener, when listening. */
  url?: string
  /**
   * Leaves the node registry, stops accepting, lets requests in flight finish (up to
   * SHUTDOWN_GRACE_SEC), then stops the workers after their current step and closes the stores; logs
   * one `stopped` line (why, how long the drain took, what was cut). Calling it again returns the
   * same stop.
   */
  stop(why?: StopCause): Promise<void>
}

/** Why a service stops: the signal, or what else asked (a node termination request, the starter gone). */
export interface StopCause {
  signal?: NodeJS.Signals
  reason: string
}

export interface ServiceOptions {
  clock?: Clock
  log?: Logger
  kv?: Kv
  db?: Db
  /** false: build everything but do not listen (in-process tests use app.handle). */
  listen?: boolean
  /** false: no background work is scheduled (tests drive workers with `workers.runOnce`). */
  schedule?: boolean
  /** Set in an app process another one started (APP_PROCESSES > 1): it listens on that socket only. */
  appProcess?: AppProcessRole | null
  /** Replaces the service's workers (tests of the runner). */
  workers?: readonly Worker[]
  /** What a node termination request does (the process entry exits after the stop); default: stop. */
  onTerminate?: (service: Service) => void
}

export function openDb(config: Config, log?: Logger): Db {
  if (config.libsqlUrl.startsWith('file:')) {
    const file = config.libsqlUrl.slice('file:'.length)
    // shared even alone: its checkpoints run in a process of their own (storage/db-checkpointer.ts)
    return openEmbeddedDb(file, {
      shared: true,
      checkpointCommand: serviceCommand(),
      onReaderGone: (err) =>
        log?.warn('a long read ran on the event loop: the reader thread failed', { err: err.message }),
      onPinEnded: ({ statements, ended }) =>
        log?.warn('the database connection read an old snapshot: its statements were reset', { statements, ended }),
    })
  }
  return openRemoteDb(config.libsqlUrl, config.libsqlAuthToken)
}

export async function startService(config: Config, manifest: Manifest, options: ServiceOptions = {}): Promise<Service> {
  const log = options.log ?? createLogger(config.logLevel)
  // what the data directory holds is the service's alone: what an earlier version or a copy left
  // open to other users is tightened, each said by name
  const dir = ensureDataDir(config.dataDir)
  for (const t of [dir, ...secureDataFiles(config.dataDir, config.libsqlUrl, !options.appProcess)])
    if (t?.error) log.warn('other users can read a file of the service, and it cannot be made private', { ...t })
    else if (t) log.warn('other users could read a file of the service: made private', { path: t.path, was: t.was })
  const tries = config.startupRetries
  const dbSetting = process.env.LIBSQL_URL ? 'LIBSQL_URL' : 'DATA_DIR'
  const db =
    options.db ??
    (await withRetries(dbSetting, `cannot open ${shownUrl(config.libsqlUrl)}`, tries, async () => openDb(config, log)))
  await withRetries(dbSetting, `cannot use ${shownUrl(config.libsqlUrl)}`, tries, () => migrate(db))
  const started = options.appProcess ?? null
  // an embedded file is this service's alone: a job still marked running belonged to a process that
  // died (the app processes this one starts come later; one that restarts leaves its jobs to their leases)
  if (db.driver === 'embedded' && !started) await releaseAllClaims(db)
  const kv =
    options.kv ??
    (config.redisUrl
      ? await createRedisKv(config.redisUrl, {
          prefix: config.kvPrefix,
          timeoutMs: config.kvTimeoutMs,
          connectTries: tries,
          onStateChange: (up, detail) =>
            up ? log.info('redis reachable again', { detail }) : log.error('redis unreachable', { detail }),
        }).catch((err) => {
          throw new StartError(
            'REDIS_URL',
            `cannot reach ${shownUrl(config.redisUrl ?? '')}: ${err.message} (tried ${tries} times)`,
          )
        })
      : createMemoryKv({ prefix: config.kvPrefix }))
  const clock = options.clock ?? systemClock
  // the id a licence is bound to: made once, at the first start
  await ensureInstallation(db, crypto.randomUUID(), isoTime(clock.now()))
  const secrets = await openSecretBox(config, db, log, () =>
    sealedSecretCount({ db, repo: (table) => new Repository(db, table) }),
  ).catch(async (err) => {
    if (!options.db) await db.close() // its checkpointer with it: a caller that goes on has nothing left open
    throw err
  })
  const own = compose({
    config,
    db,
    kv,
    clock,
    log,
    routes: manifest.routes,
    appProcess: started?.index ?? 0,
    secrets,
  })
  const { deps } = own
  // signing secrets stored in clear by an earlier version
  const sealed = await sealClearSecrets(deps)
  if (sealed) log.info('signing secrets kept in clear were sealed with the secrets key', { count: sealed })
  await own.sessions.start()
  await own.access.start()
  await own.model.start()
  await own.bus.start()
  await own.nodes.start()
  await startJournalCursor(db)
  await startWebhookCursor(db) // after the pump's: it starts where that one stands
  // the process that will listen is the one to announce a generated password
  let first = await bootstrap(deps, { retry: options.listen !== false && !started })
  await completeBuiltinClasses(deps)
  // the hub before the workers: ws-sessions sweeps it from its first pass
  const sockets = new WsHub(deps)
  // the workers' own context: the handles only background work uses, beside the services
  const context = { deps, sockets, scripts: own.scripts, deliveries: own.deliveryHandoff }
  const workers = new WorkerRunner(deps, options.workers ?? createWorkers(), context)
  own.metrics.provide({
    db,
    sockets: () => sockets.stats(),
    workers: () => workers.stats(),
    sessionsCached: () => own.sessions.cachedCount(),
  })
  // a scrape reaching this process answers the others' figures too, through the first one
  if (started && process.send) own.metrics.gatherFrom(shareFigures(() => own.metrics.ownFigures()))
  // BACKGROUND=off leaves this process only the work that keeps itself going (its heartbeat); the
  // others enqueue the webhook deliveries of bus events (they dedupe anyway)
  workers.start({ onlyAlways: !config.background, schedule: options.schedule !== false })
  const app = createApp(deps, manifest).ws('/ws', sockets.handlers(), {
    idleTimeoutSec: config.wsIdleTimeoutSec,
    maxPayloadLength: config.wsMaxFrameBytes,
    backpressureLimit: config.wsBackpressureBytes,
  })

  let server: Server<unknown> | undefined
  let gateway: Gateway | undefined
  let url: string | undefined
  let others: AppProcesses | undefined
  if (options.listen !== false && config.gateway) {
    // the gateway refuses what no route takes (a larger body or chunk); routes apply their own limits (src/http/body.ts)
    const port = started ? started.port : config.port
    const cap = config.gatewayMaxConnectionsPerAddress
    // processes killed hard left their socket directories behind; a live one's stays
    const stale = await removeStaleSocketDirs()
    if (stale.length) log.info('removed the socket directories of processes gone', { dirs: stale })
    gateway = await startGateway(
      app,
      {
        host: config.host,
        port,
        maxBodyBytes: largestBody(config),
        // each app process counts the connections the kernel gave it
        gatewayMaxConnectionsPerAddress: Math.ceil(cap / config.appProcesses),
        trustProxy: config.trustProxy,
        gatewayInline: config.gatewayInline,
      },
      { reusePort: config.appProcesses === 1 ? undefined : started ? 'join' : 'first' },
    ).catch((err) => {
      throw listenError(config.host, port, err)
    })
    url = `http://${config.host}:${gateway.port}`
    if (started) process.send?.({ type: 'listening' })
    else if (config.appProcesses > 1)
      others = await startAppProcesses(config.appProcesses - 1, gateway.port, log, config.appRestartMaxMs, () =>
        own.metrics.ownFigures(),
      ).catch(async (err) => {
        await gateway?.stop(0)
        throw err
      })
    if (others) {
      const processes = others
      own.metrics.gatherFrom(() => processes.figures())
    }
  } else if (options.listen !== false) {
    try {
      server = app.listen({
        hostname: config.host,
        port: config.port,
        reusePort: false,
      })
    } catch (err) {
      throw listenError(config.host, config.port, err)
    }
    url = `http://${config.host}:${server.port}`
  }

  // PORT=0 lets the system pick the port: links in e-mails point at the one it picked
  if (url && config.port === 0 && config.publicUrl === `http://${config.host}:0`) config.publicUrl = url
  if (url && !started) first = await announceFirstAdmin(deps, first)
  // operations (backup, password reset) go to the process `npm start` began
  const control = options.listen !== false && !started ? await startControl(deps) : null
  const graceMs = config.shutdownGraceSec * 1000
  let stopped: Promise<void> | undefined
  const service: Service = {
    deps,
    sockets,
    app,
    workers,
    bootstrap: first,
    url,
    stop: (why = { reason: 'stop requested' }) =>
      (stopped ??= (async () => {
        deps.metrics.stopping = true // /readyz answers 503 from now on: balancers send no more
        const began = performance.now()
        const graceEnds = began + graceMs
        /** The kinds of long work rolled back: still running when the grace ended. */
        let rolledBack: string[] | undefined
        const cutLongWork = () => {
          rolledBack ??= deps.longWork.kinds()
          db.stopLong?.(new Stopping())
        }
        // long work still running when the grace ends is rolled back then, while the connection of
        // a request doing it is still open for its 503 (the drains below wait ANSWER_MS more)
        const cut = setTimeout(cutLongWork, graceMs)
        control?.stop()
        await own.nodes.stop().catch(() => {})
        const websockets = sockets.stats().sockets
        sockets.stop()
        // the other processes drain their own requests while this one drains its
        let drainMs = 0
        const ownDrain = async () => {
          let requests = 0
          if (gateway) requests = await gateway.stop(graceMs + ANSWER_MS)
          if (server) {
            void server.stop(false) // stop accepting; connections in flight go on
            requests = await drain(server, graceMs + ANSWER_MS)
            await server.stop(true)
          }
          drainMs = performance.now() - began
          return requests
        }
        const [requestsCut] = await Promise.all([ownDrain(), others?.stop(graceMs)])
        // long work gets what is left of the grace, then is rolled back (a layer order runs again at the next start)
        await untilOrAfter(deps.longWork.idle(), graceEnds - performance.now())
        clearTimeout(cut)
        cutLongWork()
        await workers.stop() // first: the scheduler must not start a run on threads that are going
        await own.scripts.stop()
        await own.bus.stop().catch(() => {}) // an unreachable store must not hold the shutdown
        await kv.close()
        await db.close()
        log.info('stopped', {
          signal: why.signal ?? null,
          reason: why.reason,
          appProcess: started?.index ?? 0,
          pid: process.pid,
          drainMs: Math.round(drainMs),
          stopMs: Math.round(performance.now() - began),
          graceMs,
          cut: { requests: requestsCut, longWork: rolledBack ?? [], websockets },
        })
      })()),
  }
  deps.nodes.onTerminate = () =>
    options.onTerminate ? options.onTerminate(service) : void service.stop({ reason: 'node termination request' })
  return service
}

/** How long past the grace a request whose long work was rolled back has to be answered (503). */
const ANSWER_MS = 500

/** Waits for `work` (none: not at all), but no longer than `ms`. */
async function untilOrAfter(work: Promise<unknown> | undefined, ms: number): Promise<void> {
  if (!work || ms <= 0) return
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([work.catch(() => {}), new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
}
