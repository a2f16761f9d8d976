/**
 * The services a call may use: the ports of src/ports.ts, gathered in one record that every Ctx
 * carries. The service composes it (src/service.ts, the only place that names the concrete classes);
 * a unit test builds just the ports it uses. What only the service drives (starting and stopping, the
 * websockets, the script threads, the workers) is not here.
 */
import type { Kv } from '~storage/kv/kv'
import type { Config } from './config'
import type { Cidr } from './net/cidr'
import type {
  AccessReader,
  Clock,
  ClusterNodes,
  DeliveryHandoffPort,
  EventPublisher,
  HttpHandler,
  Logger,
  LongWorkGate,
  MetricsPort,
  ModelCatalog,
  ReadAccess,
  RecentJournalPort,
  ScriptRunner,
  SecretSealer,
  Sessions,
  SignalPort,
  Store,
} from './ports'

export type { Store } from './ports'

export interface Deps extends Store {
  config: Config
  kv: Kv
  clock: Clock
  log: Logger
  sessions: Sessions
  access: AccessReader
  model: ModelCatalog
  /** Events of every domain, fanned out to every process. */
  bus: EventPublisher
  /** This process's entry in the cluster's node registry, and commands to the other nodes. */
  nodes: ClusterNodes
  /** Script handlers: started, listed and stopped across the cluster. */
  scripts: ScriptRunner
  /** Wake-ups for workers in this process (a commit, a queued job). */
  signals: SignalPort
  /** What was journaled lately (here, and passed on by the other processes), for the journal's followers. */
  recentJournal: RecentJournalPort
  /** Webhook deliveries this process's worker takes as they are enqueued. */
  deliveryHandoff: DeliveryHandoffPort
  /** Long write transactions running now: the domains they gate and their progress. */
  longWork: LongWorkGate
  /** How the route serving a path admits a read (websocket pushes decide with it). */
  readAccess: ReadAccess
  /** The HTTP app, once made (src/app.ts): calls dispatched without HTTP go through it (src/http/dispatch.ts). */
  http?: HttpHandler
  /** TRUST_PROXY, parsed: peers whose X-Forwarded-For is believed. */
  trustedProxies: Cidr[]
  /** Prometheus metrics of this process (GET /metrics). */
  metrics: MetricsPort
  /** Seals the secrets the database keeps (webhook signing secrets) with the key kept apart from it. */
  secrets: SecretSealer
}
