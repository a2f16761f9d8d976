/** Everything a request handler may use, built once per service instance (tests build several). */
import type { Db } from '~storage/db'
import type { Kv } from '~storage/kv/kv'
import { Repository, type TableSpec } from '~storage/repository'
import type { Clock } from './clock'
import type { Config } from './config'
import { parseCidr, type Cidr } from './http/cidr'
import { AccessCache } from './identity/access'
import { SessionStore } from './identity/sessions'
import type { Logger } from './log'
import { EventStream } from './events/stream'
import { MailService } from './mail/mail-service'
import { LayerService } from './layers/service'
import { ExpirySweeper } from './model/expiry'
import { ModelRegistry } from './model/registry'

export interface Deps {
  config: Config
  db: Db
  kv: Kv
  clock: Clock
  log: Logger
  sessions: SessionStore
  access: AccessCache
  mail: MailService
  model: ModelRegistry
  events: EventStream
  expiry: ExpirySweeper
  layers: LayerService
  /** TRUST_PROXY, parsed: peers whose X-Forwarded-For is believed. */
  trustedProxies: Cidr[]
  /** The repository of a table, created on first use. */
  repo(table: TableSpec): Repository
}

export function createDeps(parts: { config: Config; db: Db; kv: Kv; clock: Clock; log: Logger }): Deps {
  // weak: a model class gets a new table spec whenever it changes, and the old one must not stay alive
  const repos = new WeakMap<TableSpec, Repository>()
  const deps: Deps = {
    ...parts,
    sessions: new SessionStore(parts.kv, parts.clock, {
      idleTimeoutSec: parts.config.sessionIdleTimeoutSec,
      maxPerUser: parts.config.sessionMaxPerUser,
    }),
    access: new AccessCache(parts.db, parts.kv, parts.clock),
    mail: new MailService(parts.db, parts.clock, parts.log, parts.config),
    model: new ModelRegistry(parts.db, parts.kv, parts.clock),
    events: new EventStream(parts.db, parts.kv, parts.log),
    // these two need the finished deps; set below
    expiry: undefined as unknown as ExpirySweeper,
    layers: undefined as unknown as LayerService,
    trustedProxies: parts.config.trustProxy.map((c) => parseCidr(c)!),
    repo(table) {
      let repo = repos.get(table)
      if (!repo) repos.set(table, (repo = new Repository(parts.db, table)))
      return repo
    },
  }
  deps.expiry = new ExpirySweeper(deps)
  deps.layers = new LayerService(deps)
  return deps
}
