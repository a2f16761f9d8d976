/**
 * Script handlers: running instances of service scripts. A handler runs on a node with role `svc`
 * (one of this site's when there is one), in a sandbox of its own, acting in its domain as actor
 * type `script`. Each running handler has a record in the KV store (renewed by the node heartbeat,
 * so a crashed node's handlers drop out), which is what the list shows on every process; a stop
 * goes to the node that runs it. When a handler ends, its outcome is kept for a day. A change to a
 * domain reaches every process, and each ends its own handlers of a deleted or blocked domain
 * (handler-domain.ts); the heartbeat checks again, in case a process missed the change.
 */
import type { Ctx } from '../context'
import type { Deps } from '../deps'
import type { HandlerInfo, HandlerLogLine, HandlerOutcome, ScriptRunner, StartRequest } from '../ports'
import { ApiError, forbidden, notFound, tooManyRequests } from '../errors'
import { newId } from '../ids'
import type { NodeRecord } from '../master/nodes'
import { indexKey, OUTCOME_TTL_MS, outcomeKey, type Refusal, recordKey, refusalFor, refusalOf } from './handler-domain'
import { keepLine, readLog } from './handler-log'
import { hostApi } from './host-calls'
import type { Outcome, Running, SandboxLimits } from './sandbox-contract'
import { svcscripts } from './svcscripts'
import { ScriptThreads } from './threads'
import type { LogLevel } from '../log'

export type { HandlerInfo, HandlerOutcome, StartRequest } from '../ports'
export { OUTCOME_TTL_MS } from './handler-domain'

const RECORD_TTL_MS = 15_000

interface Local {
  info: HandlerInfo
  domainId: string
  /** Its domain's creation time at the start: a domain made again with the id is not its own. */
  created: string
  /** Set when its domain stopped letting it act: it is ending. */
  refused?: Refusal
  running?: Running
  stops: number
  startedAt: number
  done: Promise<HandlerOutcome>
  /** Nested calls running for it: they end with it. */
  children: Set<Running>
  /** Lines of its log kept so far, and the writes of them (its outcome is written after them). */
  logged: number
  writing: Promise<void>
}

/** How deep `call()` may nest. */
const MAX_NESTING = 8

/** What the handlers use, handed over by the service that owns them. */
export interface HandlerNeeds extends Pick<Deps, 'kv' | 'log' | 'clock' | 'config' | 'nodes' | 'access' | 'repo'> {
  /**
   * The context a script acts in. It carries the service's Deps, and those hold these handlers (a
   * script may run a route that starts a script), so the service makes it when a script starts.
   */
  scriptCtx(fields: Omit<Ctx, 'deps'>): Ctx
}

export class ScriptHandlers implements ScriptRunner {
  private readonly threads: ScriptThreads
  private readonly local = new Map<string, Local>()
  /** Starts under way (between the cap check and the handler's registration), by domain. */
  private readonly reserved = new Map<string, string>()
  private readonly offDomainChange: () => void

  /** Offers starting and stopping handlers here to the other processes from the start. */
  constructor(private readonly deps: HandlerNeeds) {
    this.threads = new ScriptThreads(deps.config.script.threads)
    deps.nodes.serve('script-start', (p) => this.startHere(p as StartRequest).then((h) => h.info))
    deps.nodes.serve('script-stop', async (p) => this.stopHere((p as { id: string }).id))
    this.offDomainChange = deps.access.onChange((domain) => this.recheck(domain))
  }

  /** Ends every handler of this process (the service is stopping). */
  async stop(): Promise<void> {
    this.offDomainChange()
    for (const h of this.local.values()) h.running?.end({ status: 'stopped', error: 'the node stopped' })
    await Promise.all([...this.local.values()].map((h) => h.done))
    this.threads.stop()
  }

  /** Renews the records of this process's handlers (with the node heartbeat). */
  async refresh(): Promise<void> {
    const { kv, log } = this.deps
    // the records are renewed even when the domains could not be read
    await this.checkDomains().catch((err) => log.warn('script handlers were not checked', { error: String(err) }))
    await Promise.all(
      // a deleted domain's keys are gone: renewing one would bring it back
      [...this.local.values()]
        .filter((h) => !h.refused?.gone)
        .map(async (h) => {
          const key = recordKey(h.domainId, h.info.id)
          await kv.set(key, JSON.stringify(h.info), RECORD_TTL_MS)
          if (!this.local.has(h.info.id)) await kv.del(key) // it ended meanwhile: no ghost record
        }),
    )
  }

  /** Starts the script of `code` on an svc node, this site's first; answers the handler. */
  async launch(ctx: Ctx, code: string, params: unknown[]): Promise<HandlerInfo> {
    const node = await this.placement()
    const request: StartRequest = { domainId: ctx.domain, code, params }
    if (node === this.deps.nodes.name) return (await this.startHere(request)).info
    return (await this.deps.nodes.call(node, 'script-start', request)) as HandlerInfo
  }

  /** Runs a handler in this process and answers once it started; `done` settles when it ends. */
  async startHere(request: StartRequest): Promise<{ info: HandlerInfo; done: Promise<HandlerOutcome> }> {
    const { deps } = this
    const { config } = deps
    // the slot is taken before the first await, so concurrent starts cannot pass the cap together
    const running = this.countIn(request.domainId)
    if (running >= config.script.maxPerDomain)
      throw tooManyRequests(`this domain already runs ${running} script handlers on this node`, 5)
    const id = newId()
    this.reserved.set(id, request.domainId)
    try {
      return await this.begin(id, request)
    } finally {
      this.reserved.delete(id)
    }
  }

  private async begin(
    id: string,
    request: StartRequest,
  ): Promise<{ info: HandlerInfo; done: Promise<HandlerOutcome> }> {
    const { deps } = this
    const { config } = deps
    const script = await this.scriptOf(request.domainId, request.code)
    const domain = await deps.access.domainInfo(request.domainId)
    if (!domain) throw notFound('the domain no longer exists')
    const refusal = refusalFor(domain, domain.created)
    if (refusal) throw forbidden(`no handler starts: ${refusal.why}`)
    const now = deps.clock.now()
    const info: HandlerInfo = {
      id,
      site: config.site,
      node: deps.nodes.name,
      domain: domain.name,
      type: 'svc',
      code: script.code,
      name: script.name,
      starttime: new Date(now).toISOString(),
    }
    let finish!: (o: HandlerOutcome) => void
    const local: Local = {
      info,
      domainId: request.domainId,
      created: domain.created,
      stops: 0,
      startedAt: now,
      done: new Promise((r) => (finish = r)),
      children: new Set(),
      logged: 0,
      writing: Promise.resolve(),
    }
    await deps.kv.set(recordKey(request.domainId, id), JSON.stringify(info), RECORD_TTL_MS)
    await deps.kv.sadd(indexKey(request.domainId), id)
    this.local.set(id, local)
    const ctx = deps.scriptCtx({
      domain: request.domainId,
      actor: { type: 'script', id, name: `script ${script.code}` },
      roles: ['admin'],
      requestId: `script-${id}`,
    })
    const limits = { ...config.script, durationMs: request.durationMs ?? config.script.durationMs }
    const host = hostApi({
      ctx,
      handlerId: id,
      code: () => local.info.code,
      keep: (level, message) => this.keep(local, level, message),
      mayAct: () => this.mayAct(local),
      callNested: (code, params) => this.nested(local, code, params, limits, 1),
    })
    local.running = this.threads.run(id, request.domainId, script.source, request.params, host, limits)
    void local.running.outcome.then((outcome) => this.ended(local, outcome)).then(finish)
    // a change to the domain told while it started found no handler of it here yet
    this.recheck(request.domainId)
    return { info, done: local.done }
  }

  /**
   * Runs a script here and waits for its outcome for at most `request.durationMs` from now (its
   * start and a wait for a busy thread count too); null when it did not end in time. Then it is
   * ended here and abandoned, whatever its thread is doing: the deadline never waits for a thread.
   */
  async runWithin(request: StartRequest & { durationMs: number }): Promise<HandlerOutcome | null> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const late = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), request.durationMs)))
    const over = { status: 'limit', limit: 'duration', error: `ran longer than ${request.durationMs} ms` } as const
    const starting = this.startHere(request)
    try {
      const started = await Promise.race([starting, late])
      if (!started) {
        starting.then((s) => this.local.get(s.info.id)?.running?.end(over)).catch(() => {})
        return null
      }
      const outcome = await Promise.race([started.done, late])
      if (!outcome) this.local.get(started.info.id)?.running?.end(over)
      return outcome
    } finally {
      clearTimeout(timer)
    }
  }

  /** Stops a handler wherever it runs: the first stop takes its onStop branch if it has one. */
  async stopAnywhere(domainId: string, id: string): Promise<void> {
    const text = await this.deps.kv.get(recordKey(domainId, id))
    if (!text) throw notFound(`no running handler ${id} in this domain`)
    const info = JSON.parse(text) as HandlerInfo
    await this.deps.nodes.call(info.node, 'script-stop', { id })
  }

  /** The domain's running handlers, from every node. */
  async list(domainId: string): Promise<HandlerInfo[]> {
    const ids = await this.deps.kv.smembers(indexKey(domainId))
    const values = ids.length ? await this.deps.kv.mget(ids.map((id) => recordKey(domainId, id))) : []
    const gone = ids.filter((_, i) => values[i] === null)
    if (gone.length) await this.deps.kv.srem(indexKey(domainId), ...gone)
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as HandlerInfo)
  }

  /** Whether a handler of the domain runs now, on any node. */
  async isRunning(domainId: string, id: string): Promise<boolean> {
    return (await this.deps.kv.get(recordKey(domainId, id))) !== null
  }

  /** A running handler (status running) or the outcome of one that ended within a day, with its log. */
  async read(domainId: string, id: string): Promise<(HandlerInfo | HandlerOutcome) & { log: HandlerLogLine[] }> {
    const [running, ended] = await this.deps.kv.mget([recordKey(domainId, id), outcomeKey(domainId, id)])
    if (!running && !ended) throw notFound(`no handler ${id} in this domain`)
    const log = await readLog(this.deps.kv, domainId, id)
    if (running)
      return { ...(JSON.parse(running) as HandlerInfo), status: 'running', log } as HandlerInfo & {
        log: HandlerLogLine[]
      }
    return { ...(JSON.parse(ended!) as HandlerOutcome), log }
  }

  /** Keeps a line the handler's script logged (./handler-log.ts). */
  private keep(h: Local, level: LogLevel, message: string): void {
    if (!h.refused?.gone) keepLine(this.deps, h, level, message)
  }

  private async stopHere(id: string): Promise<void> {
    const h = this.local.get(id)
    if (!h?.running) throw notFound(`no running handler ${id}`)
    h.stops++
    if (h.stops === 1 && (await h.running.callRegistered('onStop'))) return
    const outcome = { status: 'stopped', error: h.stops === 1 ? 'stopped' : 'stopped a second time' } as const
    for (const child of h.children) child.end(outcome)
    h.running.end(outcome)
  }

  private countIn(domainId: string): number {
    let n = 0
    for (const h of this.local.values()) if (h.domainId === domainId) n += 1 + h.children.size
    for (const d of this.reserved.values()) if (d === domainId) n++
    return n
  }

  /** Ends the handlers of `domain` here if it no longer lets them act (told of a change to it). */
  private recheck(domain: string): void {
    if (![...this.local.values()].some((h) => h.domainId === domain)) return
    this.checkDomains(domain).catch((err) =>
      this.deps.log.warn('script handlers were not checked against their domain', { domain, error: String(err) }),
    )
  }

  private async checkDomains(domain?: string): Promise<void> {
    for (const h of [...this.local.values()]) {
      if (h.refused || (domain !== undefined && h.domainId !== domain)) continue
      const refusal = await refusalOf(this.deps, h.domainId, h.created)
      if (!refusal || h.refused) continue
      h.refused = refusal
      const outcome = { status: 'stopped', error: refusal.why } as const
      for (const child of h.children) child.end(outcome)
      h.running?.end(outcome)
    }
  }

  /** Host calls of a handler whose domain is gone or blocked fail (its end may still be on the way). */
  private async mayAct(h: Local): Promise<void> {
    const refusal = h.refused ?? (await refusalOf(this.deps, h.domainId, h.created))
    if (refusal) throw new Error(refusal.why)
  }

  private async ended(h: Local, outcome: Outcome): Promise<HandlerOutcome> {
    this.local.delete(h.info.id)
    for (const child of h.children) child.end({ status: 'stopped', error: 'its caller ended' })
    const now = this.deps.clock.now()
    const record: HandlerOutcome = {
      ...h.info,
      ...outcome,
      endtime: new Date(now).toISOString(),
      durationMs: now - h.startedAt,
    }
    const { kv, log } = this.deps
    await h.writing // the outcome read means its log is whole
    try {
      // a deleted domain's outcome would be read by the next domain of its id
      const gone = h.refused?.gone ?? (await refusalOf(this.deps, h.domainId, h.created).catch(() => null))?.gone
      if (!gone) await kv.set(outcomeKey(h.domainId, h.info.id), JSON.stringify(record), OUTCOME_TTL_MS)
      await kv.del(recordKey(h.domainId, h.info.id))
      await kv.srem(indexKey(h.domainId), h.info.id)
    } catch (err) {
      log.warn('a handler outcome was not recorded', { handler: h.info.id, error: String(err) })
    }
    const level = outcome.status === 'done' ? 'info' : 'warn'
    log[level]('script handler ended', {
      handler: h.info.id,
      code: h.info.code,
      status: outcome.status,
      ms: record.durationMs,
    })
    return record
  }

  /**
   * A nested call: the handler shows the nested script's code and name while it runs. It counts
   * toward the domain's cap, nests at most MAX_NESTING deep, and ends when its caller ends.
   */
  private async nested(h: Local, code: string, params: unknown[], limits: SandboxLimits, depth: number) {
    if (depth > MAX_NESTING) throw new Error(`calls nest at most ${MAX_NESTING} deep`)
    if (this.countIn(h.domainId) >= this.deps.config.script.maxPerDomain)
      throw new Error('the domain runs as many script handlers as it may')
    const script = await this.scriptOf(h.domainId, code)
    if (!this.local.has(h.info.id)) throw new Error('the handler has ended')
    const outer = { code: h.info.code, name: h.info.name }
    Object.assign(h.info, { code: script.code, name: script.name })
    const ctx = this.deps.scriptCtx({
      domain: h.domainId,
      actor: { type: 'script', id: h.info.id, name: `script ${script.code}` },
      roles: ['admin'],
      requestId: `script-${h.info.id}`,
    })
    const host = hostApi({
      ctx,
      handlerId: h.info.id,
      code: () => script.code,
      keep: (level, message) => this.keep(h, level, message),
      mayAct: () => this.mayAct(h),
      callNested: (c, p) => this.nested(h, c, p, limits, depth + 1),
    })
    const child = this.threads.run(newId(), h.domainId, script.source, params, host, limits)
    h.children.add(child)
    try {
      const outcome = await child.outcome
      if (outcome.status !== 'done') throw new Error(`${code}: ${outcome.error}`)
      return outcome.result
    } finally {
      h.children.delete(child)
      Object.assign(h.info, outer)
    }
  }

  private async scriptOf(domainId: string, code: string): Promise<{ code: string; name: string; source: string }> {
    const [row] = await this.deps.repo(svcscripts.table).findBy(domainId, 'code', code, 1)
    if (!row) throw notFound(`no service script with code ${code} in this domain`)
    const source = row.doc.scriptdata ?? ''
    if (typeof source !== 'string')
      throw new ApiError(
        409,
        `script ${code} holds the original's visual form (an object), which this service cannot run; give its scriptdata as JavaScript text`,
        { field: 'scriptdata' },
      )
    return { code, name: String(row.doc.name ?? ''), source }
  }

  /** An svc node of this site (this one first), else of any site. */
  private async placement(): Promise<string> {
    const { nodes, config } = this.deps
    const svc = (await nodes.list()).filter((n: NodeRecord) => n.roles.includes('svc'))
    if (svc.some((n) => n.name === nodes.name)) return nodes.name
    const here = svc.find((n) => n.site === config.site) ?? svc[0]
    if (!here) throw new ApiError(503, 'no node with role svc runs scripts now')
    return here.name
  }
}
