/**
 * A service instance for API tests: a fresh libSQL file in a temp directory, a real Redis under a
 * fresh prefix (or the in-memory store), requests sent in-process through `app.handle`.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { api, routes } from '../../routes/_manifest.gen'
import { ManualClock } from '~/clock'
import { loadConfig } from '~/config'
import { systemCtx } from '~/context'
import { findMasterDomain } from '~/directory/domains'
import { domains } from '~/entities/registry'
import { users } from '~/directory/users'
import { createEntity } from '~/entities/writes'
import { OVERRIDE_HEADER } from '~/http/route'
import { DeliveryHandoff } from '~/integration/delivery-handoff'
import { installationId, installLicence, type LicenceLimit } from '~/master/licence'
import type { Logger } from '~/log'
import { type Service, startService } from '~/service'
import { createWorkers, type WorkerOptions } from '~/workers/index'
import type { WorkerContext } from '~/workers/runner'
import { openRemoteDb } from '~storage/db-remote'
import type { Doc } from '~storage/doc'
import type { Kv } from '~storage/kv/kv'
import { createMemoryKv } from '~storage/kv/memory'
import { issueLicence } from '../../scripts/licence-issue'
import { testRedisKv } from './redis'

export const ADMIN_PASSWORD = 'admin-Secret_1'

const randomAddress = () => `10.${[0, 0, 0].map(() => Math.floor(Math.random() * 256)).join('.')}`

export interface TestOptions {
  env?: Record<string, string>
  /** 'memory' uses the in-process store (with the test clock); default is the real Redis. */
  kv?: 'redis' | 'memory'
  clock?: ManualClock
  listen?: boolean
  /** Share a Redis key prefix with another test service (two processes of one cluster). */
  kvPrefix?: string
  log?: Logger
  /** Run the background workers on their schedules; by default tests drive them with `t.run(name)`. */
  schedule?: boolean
  /**
   * 'remote': the database through @libsql/client on a file: URL, which another connection may
   * share (the embedded driver locks its file). Default: the embedded driver, as the service picks.
   */
  driver?: 'embedded' | 'remote'
  /** Another test service's data directory (with driver 'remote': one cluster, one database); its owner removes it. */
  dataDir?: string
  /** Limits of a licence installed at start, for tests that need more than the evaluation licence allows. */
  licence?: Partial<Record<LicenceLimit, number>>
  /** The service's workers made with these options (a resolver of webhook targets' names). */
  workers?: WorkerOptions
}

export interface RequestOptions {
  body?: unknown
  /** Raw body text, sent as is. */
  raw?: string | Uint8Array
  cookie?: string
  token?: string
  headers?: Record<string, string>
}

export type TestService = Awaited<ReturnType<typeof testService>>

export async function testService(options: TestOptions = {}) {
  const dir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'platform-test-'))
  const clock = options.clock ?? new ManualClock(Date.now())
  let kv: Kv
  let cleanupKv: () => Promise<void>
  if (options.kv === 'memory') {
    kv = createMemoryKv({ now: () => clock.now() })
    cleanupKv = async () => {}
  } else {
    const r = await testRedisKv(options.kvPrefix)
    kv = r.kv
    cleanupKv = r.cleanup
  }
  const config = loadConfig({
    DATA_DIR: dir,
    ADMIN_PASSWORD,
    PORT: '0',
    LOG_LEVEL: process.env.LOG_LEVEL,
    CHECK_ANSWERS: process.env.CHECK_ANSWERS,
    // each test service is a node of its own, also where two share a KV prefix (one cluster)
    NODE_NAME: `test-${crypto.randomUUID().slice(0, 8)}`,
    ...options.env,
  })
  const service: Service = await startService(
    config,
    { routes, api },
    {
      db: options.driver === 'remote' ? openRemoteDb(config.libsqlUrl) : undefined,
      kv,
      clock,
      listen: options.listen ?? false,
      log: options.log,
      schedule: options.schedule ?? false,
      workers: options.workers && createWorkers(options.workers),
    },
  )
  const { deps, app } = service
  const master = (await findMasterDomain(deps))!
  const installation = await installationId(deps)

  /** Installs a licence with these limits (the others the evaluation licence's), signed with the development key. */
  async function licence(dql: Partial<Record<LicenceLimit, number>>) {
    const token = await issueLicence({ installation, dql })
    return installLicence(systemCtx(deps, master.id, 'test'), token)
  }
  if (options.licence) await licence(options.licence)

  /**
   * In-process requests have no peer; like the gateway, the helper names the client in X-Real-IP:
   * a fresh address per request unless the test gives one, so failed sign-ins in one test do not
   * trip the brute-force filter in another.
   */
  async function request(method: string, path: string, o: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { 'x-real-ip': randomAddress(), ...o.headers }
    if (o.cookie) headers.cookie = `RSession=${o.cookie}`
    if (o.token) headers.authorization = `Bearer ${o.token}`
    let wireMethod = method
    if (['LOOKUP', 'SYNC', 'CLEAR'].includes(method)) {
      wireMethod = 'POST' // what the gateway turns these into
      headers[OVERRIDE_HEADER] = method
    }
    let body: string | Uint8Array | undefined = o.raw
    // a raw string would go out as text/plain: raw bodies are JSON unless the test says otherwise
    if (o.raw !== undefined) headers['content-type'] ??= 'application/json'
    if (o.body !== undefined) {
      body = JSON.stringify(o.body)
      headers['content-type'] ??= 'application/json'
    }
    const response = await app.handle(new Request(`http://test.local${path}`, { method: wireMethod, headers, body }))
    // what follows an answer (its metrics and log line: onAfterResponse) runs in the next turn: let it
    await new Promise((resolve) => setImmediate(resolve))
    return response
  }

  /** Request and parse: status, JSON body (or null), headers. */
  async function call(method: string, path: string, o: RequestOptions = {}) {
    const res = await request(method, path, o)
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers, text }
  }

  async function login(
    domain: string,
    login: string,
    pwd: string,
    sessionType: 'cookie' | 'token' = 'token',
  ): Promise<string> {
    const res = await call('POST', '/rest/v1/iam/sessions', { body: { domain, login, pwd, session_type: sessionType } })
    if (sessionType === 'token') {
      if (res.status !== 200) throw new Error(`login failed: ${res.status} ${res.text}`)
      return res.body.session_token
    }
    const cookie = /RSession=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1]
    if (res.status !== 204 || !cookie) throw new Error(`login failed: ${res.status} ${res.text}`)
    return cookie
  }

  /** A working domain below the master domain, created through the write path as the system. */
  async function createDomain(name: string, opts: Doc = {}): Promise<{ id: string; name: string }> {
    const body = { name, opts: { title: name, isblocked: false, ...opts } }
    const created = await createEntity(systemCtx(deps, master.id, 'test'), domains, body)
    return { id: created.id, name }
  }

  /** A user created through the write path as the system. */
  async function createUser(domainId: string, login: string, pwd: string, roles: string[] = ['user']): Promise<string> {
    const body = { login, name: login, groups: [], roles, opts: {}, pwd }
    return (await createEntity(systemCtx(deps, domainId, 'test'), users, body)).id
  }

  /** One pass of a background worker (tests drive workers instead of waiting for their schedule). */
  const run = (worker: string) => service.workers.runOnce(worker)
  /** The work a worker's passes left running has finished (webhook deliveries in flight). */
  const settled = (worker: string) => service.workers.settled(worker)
  /** The context the service gives its workers, for one a test makes and steps itself. */
  const workerContext = (): WorkerContext => ({
    deps: service.deps,
    sockets: service.sockets,
    scripts: { refresh: async () => {} },
    // a worker a test makes is handed nothing as jobs are enqueued: it claims them
    deliveries: new DeliveryHandoff(),
  })
  /**
   * A pass of the journal pump, once this process's bus has handed on what it published: on Redis
   * the messages come back after the publish is answered, and a listener added right after the pass
   * would still hear them. A marker published after them comes back after them.
   */
  async function pumped(): Promise<number> {
    const published = await run('journal-pump')
    const marker = `pumped-${crypto.randomUUID()}`
    const back = Promise.withResolvers<void>()
    const off = deps.bus.on((e) => e.event === marker && back.resolve())
    try {
      await deps.bus.publish({ class: 'test', event: marker, domain: '', time: '', objects: [], data: {} })
      await back.promise
    } finally {
      off()
    }
    return published
  }

  /** A token session of the master administrator switched into the given domain. */
  async function adminIn(domain: string): Promise<string> {
    const token = await login(config.masterDomain, 'admin', ADMIN_PASSWORD)
    const res = await call('PATCH', '/rest/v1/iam/sessions/current', { token, body: { domain } })
    if (res.status !== 204) throw new Error(`switch failed: ${res.status} ${res.text}`)
    return token
  }

  /** Journal rows of a domain, newest last. */
  async function journal(domainId: string) {
    const rows = await deps.db.all(
      'SELECT cmdtype, objtype, objid, fields, obj, modifiername FROM journal WHERE domain = ? ORDER BY seq',
      [domainId],
    )
    return rows.map(([cmdtype, objtype, objid, fields, obj, modifiername]) => ({
      cmdtype,
      objtype,
      objid,
      fields,
      obj: JSON.parse(obj as string),
      modifiername,
    }))
  }

  return {
    service,
    deps,
    app,
    config,
    clock,
    master,
    installation,
    licence,
    dir,
    request,
    call,
    login,
    adminIn,
    createDomain,
    createUser,
    run,
    settled,
    workerContext,
    pumped,
    journal,
    async close() {
      await service.stop()
      await cleanupKv()
      if (!options.dataDir) rmSync(dir, { recursive: true, force: true })
    },
  }
}
