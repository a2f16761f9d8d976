/**
 * The composition: the one place that names the concrete services behind the ports of Deps (the
 * service, src/service.ts, starts and stops them).
 */
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { Kv } from '~storage/kv/kv'
import { Repository, type TableSpec } from '~storage/repository'
import type { Clock } from './clock'
import type { Config } from './config'
import type { Store } from './deps'
import { EventBus } from './events/bus'
import type { RouteEntry } from './http/route'
import { type HttpDeps, Router, readAccessOf } from './http/router'
import { AccessCache } from './identity/access'
import { SessionStore } from './identity/sessions'
import type { Logger } from './log'
import { DeliveryHandoff } from './integration/delivery-handoff'
import { RecentJournal } from './journal/recent'
import { LongWork } from './long-work'
import { NodeRegistry } from './master/nodes'
import { ModelRegistry } from './model/registry'
import { parseCidr } from './net/cidr'
import { Metrics } from './ops/metrics'
import type { SecretSealer } from './ports'
import { ScriptHandlers } from './scripts/handlers'
import { Signals } from './signals'

export function compose(parts: {
  config: Config
  db: Db
  kv: Kv
  clock: Clock
  log: Logger
  routes: readonly RouteEntry[]
  /** This app process's index (0: the first), which labels its metrics. */
  appProcess?: number
  secrets: SecretSealer
}) {
  const { config, db, kv, clock, log } = parts
  // weak: a model class gets a new table spec whenever it changes, and the old one must not stay alive
  const repos = new WeakMap<TableSpec, Repository>()
  const store: Store = {
    db,
    repo<D extends Doc>(table: TableSpec<D>): Repository<D> {
      // the map cannot say that each spec's repository is of its type; each is made from its key
      let repo = repos.get(table) as Repository<D> | undefined
      if (!repo) {
        repo = new Repository(db, table)
        repos.set(table, repo)
      }
      return repo
    },
  }
  const longWork = new LongWork(log)
  const sessions = new SessionStore(kv, clock, {
    idleTimeoutSec: config.sessionIdleTimeoutSec,
    maxPerUser: config.sessionMaxPerUser,
  })
  const access = new AccessCache(store, kv, clock, longWork)
  const model = new ModelRegistry(store, kv, clock)
  const bus = new EventBus(kv, log)
  const nodes = new NodeRegistry(kv, clock, log, config)
  // a script's context carries these deps, which hold the handlers: made when a script starts
  const scripts = new ScriptHandlers({
    kv,
    log,
    clock,
    config,
    nodes,
    access,
    repo: store.repo,
    scriptCtx: (fields) => ({ deps, ...fields }),
  })
  const metrics = new Metrics(parts.appProcess)
  const routes = new Router(parts.routes)
  const deliveryHandoff = new DeliveryHandoff()
  const deps: HttpDeps = {
    ...store,
    config,
    kv,
    clock,
    log,
    sessions,
    access,
    model,
    bus,
    nodes,
    scripts,
    signals: new Signals(),
    recentJournal: new RecentJournal(),
    deliveryHandoff,
    longWork,
    routes,
    readAccess: readAccessOf(routes),
    trustedProxies: config.trustProxy.map((c) => parseCidr(c)!),
    metrics,
    secrets: parts.secrets,
  }
  return { deps, sessions, access, model, bus, nodes, scripts, metrics, deliveryHandoff }
}
