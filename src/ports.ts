/**
 * The narrow services domain code depends on (ports). Each is an interface, so a unit test builds only
 * the ones it uses, and this module imports nothing but storage types and leaf modules: the concrete
 * classes (SessionStore, AccessCache, ModelRegistry, ScriptHandlers, …) are named only where the
 * service is composed (src/service.ts). Deps (src/deps.ts) is the bag of these ports a Ctx carries.
 */
import type { Counter } from 'prom-client'
import type { Db } from '~storage/db'
import type { Doc } from '~storage/doc'
import type { JournalChangeText } from '~storage/journal'
import type { NewJob } from '~storage/queue'
import type { Repository, TableSpec } from '~storage/repository'
import type { PlatformEvent } from './events/event'
import type { PathPattern } from './identity/path-pattern'
import type { NewSession, Session } from './identity/sessions'
import type { LongWorkSpec, Progress } from './long-work'
import type { NodeLogLevel } from './log'
import type { NodeRecord, NodeService } from './master/nodes'
import type { ClassModel } from './model/class-model'
import type { Outcome } from './scripts/sandbox-contract'
import type { SignalName } from './signals'

export type { Clock } from './clock'
export type { Logger } from './log'

/**
 * Secrets kept at rest sealed with the key kept apart from the database (src/secret-box.ts): `where`
 * names the place a value is kept (its table, domain and id), and it opens only there.
 */
export interface SecretSealer {
  seal(plain: string, where: string): Promise<string>
  open(stored: string, where: string): Promise<string>
}

/** The database and the repository of each table: what storage-facing helpers need. */
export interface Store {
  db: Db
  /** The repository of a table, created on first use; its reads return the spec's document type. */
  repo<D extends Doc>(table: TableSpec<D>): Repository<D>
}

/** Reads a session, and hears of sessions that end (wherever they ended). */
export interface SessionReader {
  get(id: string): Session | null | Promise<Session | null>
  onInvalidate(listener: (id: string) => void): () => void
}

/** Sessions as sign-in, sign-out and the session routes use them. */
export interface Sessions extends SessionReader {
  readonly idleMs: number
  readonly slideMs: number
  create(data: NewSession, confirm?: () => Promise<boolean>): Promise<Session | null>
  touch(session: Session): Promise<boolean>
  update(id: string, changes: Partial<NewSession>): Promise<boolean>
  destroy(id: string): Promise<void>
  destroyUser(domain: string, userId: string, exceptId?: string): Promise<void>
}

export interface DomainInfo {
  id: string
  name: string
  isMaster: boolean
  blocked: boolean
  solution: string
  /** When it was created (ext.ct): a domain created again with the same id is another one. */
  created: string
}

/** A role's grant: a path pattern (`*` one segment, `**` any number) and its methods (`*` = all). */
export interface RouteGrant {
  pattern: PathPattern
  methods: Set<string> | null
}

/** Domains, roles and grants as admission reads them (cached; a value when cached, else a promise). */
export interface AccessReader {
  domainInfo(domainId: string): DomainInfo | null | Promise<DomainInfo | null>
  rolesOf(domain: string, userId: string): string[] | Promise<string[]>
  sessionRoles(s: Session): string[] | Promise<string[]>
  grantsOf(domain: string): Map<string, RouteGrant[]> | Promise<Map<string, RouteGrant[]>>
  /** Drops a domain's cached access in every process (after a commit that changed it). */
  invalidate(domain: string): Promise<void>
  onChange(listener: (domain: string) => void): () => void
}

/** The model classes of each domain, cached and reloaded when another process changes them. */
export interface ModelCatalog {
  classes(domain: string): Promise<Map<string, ClassModel>>
  ready(domain: string): Promise<Map<string, ClassModel>>
  resolve(domain: string, segments: string[]): Promise<{ model: ClassModel; rest: string[] } | null>
  changedSince(domain: string, generation: number | undefined): Promise<boolean>
  reloaded(domain: string, stale: ClassModel): Promise<ClassModel>
  invalidate(domain: string): Promise<void>
  forget(domain: string): void
}

/** A handler as /rest/v1/service/svcscript_runtimes shows it. */
export type HandlerInfo = {
  id: string
  site: string
  node: string
  domain: string
  type: 'svc'
  code: string
  name: string
  starttime: string
}

/** A line a handler's script logged (`log(level, ...)`), kept with the handler. */
export type HandlerLogLine = { time: string; level: string; message: string }

/** How a handler ended, kept a day after the end. */
export type HandlerOutcome = HandlerInfo & Outcome & { endtime: string; durationMs: number }

export interface StartRequest {
  domainId: string
  code: string
  params: unknown[]
  /** Who asked (the journal's modifier of the request is the handler itself). */
  reason?: string
  /** Overrides the wall-clock limit (a token login waits seconds, not an hour). */
  durationMs?: number
}

/** Script handlers of the cluster: started here or on a svc node, listed, read and stopped anywhere. */
export interface ScriptRunner {
  launch(ctx: { domain: string }, code: string, params: unknown[]): Promise<HandlerInfo>
  startHere(request: StartRequest): Promise<{ info: HandlerInfo; done: Promise<HandlerOutcome> }>
  runWithin(request: StartRequest & { durationMs: number }): Promise<HandlerOutcome | null>
  stopAnywhere(domainId: string, id: string): Promise<void>
  list(domainId: string): Promise<HandlerInfo[]>
  isRunning(domainId: string, id: string): Promise<boolean>
  read(domainId: string, id: string): Promise<(HandlerInfo | HandlerOutcome) & { log: HandlerLogLine[] }>
}

/** Events of every domain, fanned out to every process. */
export interface EventPublisher {
  on(listener: (e: PlatformEvent) => void): () => void
  publish(event: PlatformEvent): Promise<void>
  publishAll(events: PlatformEvent[]): Promise<void>
  /** Events already serialised (the journal pump's); `here`: this process's listeners have them without waiting for the KV where the order allows. */
  publishTexts(texts: string[], options?: { here?: boolean }): Promise<void>
  /** This process has just taken the journal pump over: what the last holder published may still be on its way here. */
  pumpTaken(): void
}

/** The journal records committed lately, here and passed on by the other processes (src/journal/recent.ts). */
export interface RecentJournalPort {
  /** Names this process where its records are passed on. */
  readonly origin: string
  /** Records of one commit of this process, in seq order, once it committed. */
  committed(records: readonly JournalChangeText[]): void
  /** Records another process committed and passed on (null: it let some go); how many were new here. */
  received(records: readonly JournalChangeText[] | null): number
  /** This process's records not yet passed on (none: nothing new); null when some were let go. */
  takeUnrelayed(): JournalChangeText[] | null
  /** At most `limit` records after `seq`, up to a hole, when the one right after it is kept (none: `seq` is the last); null: read the database. */
  after(seq: number, limit: number): JournalChangeText[] | null
  /** Keeps nothing: what was kept may be gone from the table. */
  clear(): void
}

/** Webhook deliveries this process takes over as it enqueues them (src/integration/delivery-handoff.ts). */
export interface DeliveryHandoffPort {
  /** Those of `jobs` this process will deliver itself, to be enqueued claimed; null when none. */
  reserve(jobs: readonly NewJob[], now: number): DeliveryReservation | null
}

/** Jobs reserved for this process's delivery: one of `started` or `cancelled` follows the write. */
export interface DeliveryReservation {
  /** How long the lease of a job enqueued claimed lasts, from its insert. */
  readonly leaseMs: number
  /** Whether the job of this id is reserved (enqueued claimed). */
  has(id: string): boolean
  /** The write committed: the reserved jobs it inserted are delivered now, the others let go. */
  started(inserted: ReadonlySet<string>): void
  /** The write failed: nothing was inserted. */
  cancelled(): void
}

/** Wake-ups for workers in this process (a commit, a queued job). */
export interface SignalPort {
  on(name: SignalName, listener: () => void): () => void
  raise(name: SignalName): void
}

/** Long write transactions: the domains they gate, their progress, and the wait for them to end. */
export interface LongWorkGate {
  gate(domain: string): Promise<unknown> | undefined
  enter(domain: string, requestId: string): () => void
  idle(): Promise<unknown> | undefined
  /** The kinds of the work running now (what a stop past its grace rolls back). */
  kinds(): string[]
  progress(domain: string, key: string): Progress | undefined
  run<T>(spec: LongWorkSpec, work: (report: (done: number, total: number) => void) => Promise<T>): Promise<T>
}

/** This process's entry in the cluster's node registry, and commands to the other nodes. */
export interface ClusterNodes {
  readonly name: string
  onTerminate: () => void
  heartbeat(): Promise<void>
  list(): Promise<NodeRecord[]>
  find(name: string): Promise<NodeRecord>
  setLogLevel(name: string, level: NodeLogLevel): Promise<NodeRecord>
  terminate(name: string): Promise<void>
  serve(name: string, service: NodeService): void
  call(node: string, name: string, payload: unknown): Promise<unknown>
}

/** Prometheus metrics of this process (and, when scraped, of the others), as requests and probes touch them. */
export interface MetricsPort {
  /** The answer's media type. */
  readonly contentType: string
  /** The figures of every app process and of the database, in the Prometheus text format (GET /metrics). */
  exposition(): Promise<string>
  readonly kvErrors: Counter
  readonly internalErrors: Counter
  /** The service has begun to stop: it is no longer ready for new work. */
  stopping: boolean
  observe(route: string, method: string, status: number, seconds: number): void
}

/**
 * How the GET route serving a path admits callers (`permission`: by the roles' grants), or null when
 * none serves it: what a websocket push asks of the route table, without the table's types.
 */
export interface ReadAccess {
  of(path: string): string | null
}

/** The HTTP app, for calls dispatched without HTTP (src/http/dispatch.ts). */
export interface HttpHandler {
  handle(request: Request): Promise<Response>
}
