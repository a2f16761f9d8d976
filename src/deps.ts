/**
 * The services a call may use, built once per service instance (tests build several). Only what
 * requests need lives here; background workers are built from it and owned by the service
 * (src/service.ts), so nothing here depends on them.
 */
import { Metrics } from './ops/metrics'
import type { Db } from '~storage/db'
import type { Kv } from '~storage/kv/kv'
import { Repository, type TableSpec } from '~storage/repository'
import type { Clock } from './clock'
import type { Config } from './config'
import { EventBus } from './events/bus'
import { type Cidr, parseCidr } from './net/cidr'
import { Router } from './http/router'
import type { RouteEntry } from './http/route'
import { AccessCache } from './identity/access'
import { SessionStore } from './identity/sessions'
import type { Logger } from './log'
import { LongWork } from './long-work'
import { NodeRegistry } from './master/nodes'
import { ModelRegistry } from './model/registry'
import { ScriptHandlers } from './scripts/handlers'
import { Signals } from './signals'
import { WsHub } from './ws/hub'

/** The database and the repository of each table: what storage-facing helpers need. */
export interface Store {
  db: Db
  /** The repository of a table, created on first use. */
  repo(table: TableSpec): Repository
}

export interface Deps extends Store {
  config: Config
  kv: Kv
  clock: Clock
  log: Logger
  sessions: SessionStore
  access: AccessCache
  model: ModelRegistry
  /** Events of every domain, fanned out to every process. */
  bus: EventBus
  /** This process's entry in the cluster's node registry, and commands to the other nodes. */
  nodes: NodeRegistry
  /** Script handlers: started, listed and stopped across the cluster (started by the service). */
  scripts: ScriptHandlers
  /** The open websockets of this process and their subscriptions (started by the service). */
  sockets: WsHub
  /** Wake-ups for workers in this process (a commit, a queued job). */
  signals: Signals
  /** Long write transactions running now: the domains they gate and their progress. */
  longWork: LongWork
  /** The route files by URL: what a URL serves (Allow, the method override). */
  routes: Router
  /** The HTTP app, once made (src/app.ts): calls dispatched without HTTP go through it (src/http/dispatch.ts). */
  http?: { handle(request: Request): Promise<Response> }
  /** TRUST_PROXY, parsed: peers whose X-Forwarded-For is believed. */
  trustedProxies: Cidr[]
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: Metrics
}

export function createDeps(parts: {
  config: Config
  db: Db
  kv: Kv
  clock: Clock
  log: Logger
  routes: readonly RouteEntry[]
}): Deps {
  const { config, db, kv, clock, log } = parts
  // weak: a model class gets a new table spec whenever it changes, and the old one must not stay alive
  const repos = new WeakMap<TableSpec, Repository>()
  const store: Store = {
    db,
    repo(table) {
      let repo = repos.get(table)
      if (!repo) repos.set(table, (repo = new Repository(db, table)))
      return repo
    },
  }
  const longWork = new LongWork(log)
  return {
    ...store,
    config,
    kv,
    clock,
    log,
    sessions: new SessionStore(kv, clock, {
      idleTimeoutSec: config.sessionIdleTimeoutSec,
      maxPerUser: config.sessionMaxPerUser,
    }),
    access: new AccessCache(store, kv, clock, longWork),
    model: new ModelRegistry(store, kv, clock),
    bus: new EventBus(kv, log),
    nodes: new NodeRegistry(kv, clock, log, config),
    sockets: new WsHub(),
    scripts: new ScriptHandlers(),
    signals: new Signals(),
    longWork,
    routes: new Router(parts.routes),
    trustedProxies: config.trustProxy.map((c) => parseCidr(c)!),
    metrics: new Metrics(),
  }
}
