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
import { MailService } from './mail/mail-service'

export interface Deps {
  config: Config
  db: Db
  kv: Kv
  clock: Clock
  log: Logger
  sessions: SessionStore
  access: AccessCache
  mail: MailService
  /** TRUST_PROXY, parsed: peers whose X-Forwarded-For is believed. */
  trustedProxies: Cidr[]
  /** The repository of a table, created on first use. */
  repo(table: TableSpec): Repository
}

export function createDeps(parts: { config: Config; db: Db; kv: Kv; clock: Clock; log: Logger }): Deps {
  const repos = new Map<TableSpec, Repository>()
  return {
    ...parts,
    sessions: new SessionStore(parts.kv, parts.clock, {
      idleTimeoutSec: parts.config.sessionIdleTimeoutSec,
      maxPerUser: parts.config.sessionMaxPerUser,
    }),
    access: new AccessCache(parts.db, parts.kv, parts.clock),
    mail: new MailService(parts.db, parts.clock, parts.log, parts.config),
    trustedProxies: parts.config.trustProxy.map((c) => parseCidr(c)!),
    repo(table) {
      let repo = repos.get(table)
      if (!repo) repos.set(table, (repo = new Repository(parts.db, table)))
      return repo
    },
  }
}
