/**
 * Assembles one service instance: database (migrated), KV store, dependencies, first-start
 * bootstrap, the app, and its listener (the gateway in front, or Bun.serve directly).
 */
import { mkdirSync } from 'node:fs'
import type { Db } from '~storage/db'
import { openEmbeddedDb } from '~storage/db-embedded'
import { openRemoteDb } from '~storage/db-remote'
import type { Kv } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { createRedisKv } from '~storage/kv/redis'
import { migrate } from '~storage/migrate'
import { purgeExpiredRequests } from '~storage/requests'
import { createApp, type App } from './app'
import { systemClock, type Clock } from './clock'
import type { Config } from './config'
import { createDeps, type Deps } from './deps'
import { startGateway, type Gateway } from './http/gateway/index'
import type { RouteEntry } from './http/route'
import { bootstrap, type BootstrapResult } from './identity/bootstrap'
import { createLogger, type Logger } from './log'

export interface Service {
  deps: Deps
  app: App
  bootstrap: BootstrapResult
  /** Base URL of the public listener, when listening. */
  url?: string
  stop(): Promise<void>
}

export interface ServiceOptions {
  clock?: Clock
  log?: Logger
  kv?: Kv
  db?: Db
  /** false: build everything but do not listen (in-process tests use app.handle). */
  listen?: boolean
  /** Told at once what the first start created, so a generated password is shown even if listening then fails. */
  onBootstrap?: (result: BootstrapResult) => void
}

export function openDb(config: Config): Db {
  if (config.libsqlUrl.startsWith('file:')) {
    const file = config.libsqlUrl.slice('file:'.length)
    return openEmbeddedDb(file)
  }
  return openRemoteDb(config.libsqlUrl, config.libsqlAuthToken)
}

export async function startService(
  config: Config,
  routes: RouteEntry[],
  options: ServiceOptions = {},
): Promise<Service> {
  mkdirSync(config.dataDir, { recursive: true })
  const log = options.log ?? createLogger(config.logLevel)
  const db = options.db ?? openDb(config)
  await migrate(db)
  const kv =
    options.kv ??
    (config.redisUrl
      ? await createRedisKv(config.redisUrl, { prefix: config.kvPrefix })
      : createMemoryKv({ prefix: config.kvPrefix }))
  const deps = createDeps({ config, db, kv, clock: options.clock ?? systemClock, log })
  await deps.sessions.start()
  await deps.access.start()
  await deps.model.start()
  await deps.events.start()
  deps.expiry.start()
  deps.mail.start()
  const housekeeping = setInterval(() => void purgeExpiredRequests(db, deps.clock.now()).catch(() => {}), 60_000)
  housekeeping.unref()
  const first = await bootstrap(deps)
  options.onBootstrap?.(first)
  const app = createApp(deps, routes)

  let server: { stop(): Promise<void> | void } | undefined
  let gateway: Gateway | undefined
  let url: string | undefined
  if (options.listen !== false) {
    if (config.gateway) {
      gateway = await startGateway(app, config)
      url = `http://${config.host}:${gateway.port}`
    } else {
      const listening = app.listen({
        hostname: config.host,
        port: config.port,
        reusePort: false,
        maxRequestBodySize: config.maxBodyBytes + 1024,
      })
      server = { stop: async () => void (await listening.stop(true)) }
      url = `http://${config.host}:${listening.server!.port}`
    }
  }

  return {
    deps,
    app,
    bootstrap: first,
    url,
    async stop() {
      clearInterval(housekeeping)
      await deps.mail.stop()
      await deps.expiry.stop()
      await deps.events.stop()
      await gateway?.stop()
      await server?.stop()
      await kv.close()
      await db.close()
    },
  }
}
