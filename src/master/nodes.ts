/**
 * The cluster's nodes (/rest/v1/master/nodes): every service process keeps a record of itself in
 * the KV store under a heartbeat, so the list is whoever is alive; a process that stops beating
 * drops out when its record expires. A process obeys commands sent to it over pub/sub (change the
 * log level, terminate) and answers on the sender's reply channel, so any process can act on any
 * other. With the in-process store there is one process and the same code paths run locally.
 */
import { randomUUID } from 'node:crypto'
import { hostname, networkInterfaces } from 'node:os'
import type { Kv } from '~storage/kv/kv'
import type { Clock } from '../clock'
import type { Config } from '../config'
import { ApiError, notFound } from '../errors'
import type { Logger, NodeLogLevel } from '../log'

/** A node as /rest/v1/master/nodes shows it (the original's camelCase names). */
export type NodeRecord = {
  name: string
  fullName: string
  ipAddress: string
  server: string
  site: string
  type: 'role'
  roles: string[]
  status: 'active'
  dtStart: string
  upTimeSec: number
  maxLogLevel: NodeLogLevel
}

/** A beat every second; a record lives four, so a stopped process is gone within four seconds. */
export const HEARTBEAT_MS = 1000
export const NODE_TTL_MS = 4000
/** How long a command waits for the other process's answer. */
export const REPLY_TIMEOUT_MS = 3000

const NODES = 'nodes'
const recordKey = (name: string) => `node:${name}`
const commandChannel = (name: string) => `node-cmd:${name}`
const replyChannel = (name: string) => `node-reply:${name}`

type Command =
  | { op: 'log-level'; level: NodeLogLevel }
  | { op: 'terminate' }
  | { op: 'call'; name: string; payload: unknown }
type Envelope = Command & { id: string; from: string }
interface Reply {
  id: string
  node?: NodeRecord
  value?: unknown
  error?: string
  /** The error's HTTP status, when the other process refused with an ApiError. */
  status?: number
}

/** A service other processes may call on this one (start a script handler here, stop one). */
export type NodeService = (payload: unknown) => Promise<unknown>

/** The address others reach this process at: HOST unless it is a wildcard, else the first external IPv4. */
function addressOf(host: string): string {
  if (host !== '0.0.0.0' && host !== '::') return host
  for (const list of Object.values(networkInterfaces()))
    for (const nic of list ?? []) if (nic.family === 'IPv4' && !nic.internal) return nic.address
  return '127.0.0.1'
}

const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z')

export class NodeRegistry {
  readonly name: string
  /** What the service does when told to terminate (set by the service: a graceful stop). */
  onTerminate: () => void = () => {}
  private readonly startedAt: number
  private readonly self: Omit<NodeRecord, 'upTimeSec' | 'maxLogLevel' | 'dtStart'>
  private readonly pending = new Map<string, (reply: Reply) => void>()
  private readonly services = new Map<string, NodeService>()
  private readonly unsubscribe: (() => Promise<void>)[] = []
  /** Set once this process leaves: a late heartbeat must not bring its record back. */
  private leaving = false

  constructor(
    private readonly kv: Kv,
    private readonly clock: Clock,
    private readonly log: Logger,
    config: Pick<Config, 'nodeName' | 'host' | 'site' | 'background' | 'nodeRoles'>,
  ) {
    this.name = config.nodeName
    this.startedAt = clock.now()
    const ipAddress = addressOf(config.host)
    this.self = {
      name: config.nodeName,
      fullName: `${config.nodeName}@${ipAddress}`,
      ipAddress,
      server: hostname(),
      site: config.site,
      type: 'role',
      roles: ['webserver', ...(config.background ? ['worker'] : []), ...config.nodeRoles],
      status: 'active',
    }
  }

  /** Listens for commands and replies, then registers. */
  async start(): Promise<void> {
    this.unsubscribe.push(await this.kv.subscribe(commandChannel(this.name), (m) => void this.obey(m)))
    this.unsubscribe.push(await this.kv.subscribe(replyChannel(this.name), (m) => this.answered(m)))
    const existing = await this.kv.get(recordKey(this.name))
    if (existing)
      this.log.warn('another live process has this NODE_NAME; give each process its own', { node: this.name })
    await this.heartbeat()
  }

  /** Renews this process's record (the node-heartbeat worker calls it). */
  async heartbeat(): Promise<void> {
    if (this.leaving) return
    await this.kv.set(recordKey(this.name), JSON.stringify(this.record()), NODE_TTL_MS)
    await this.kv.sadd(NODES, this.name)
  }

  /** Leaves the registry at once (others stop counting on this process before it has finished). */
  async leave(): Promise<void> {
    this.leaving = true
    await this.kv.del(recordKey(this.name))
    await this.kv.srem(NODES, this.name)
  }

  /** Leaves the registry and stops listening for commands. */
  async stop(): Promise<void> {
    await this.leave()
    for (const off of this.unsubscribe.splice(0)) await off().catch(() => {})
  }

  /** Every live node, by name; names whose record expired are dropped from the index. */
  async list(): Promise<NodeRecord[]> {
    const names = (await this.kv.smembers(NODES)).sort()
    const values = names.length ? await this.kv.mget(names.map(recordKey)) : []
    const gone = names.filter((_, i) => values[i] === null)
    if (gone.length) await this.kv.srem(NODES, ...gone)
    const now = this.clock.now()
    return values
      .filter((v): v is string => v !== null)
      .map((v) => {
        const node = JSON.parse(v) as NodeRecord
        return { ...node, upTimeSec: Math.max(0, Math.floor((now - Date.parse(node.dtStart)) / 1000)) }
      })
  }

  /** The node named by its name or its full name, or a 404. */
  async find(name: string): Promise<NodeRecord> {
    const node = (await this.list()).find((n) => n.name === name || n.fullName === name)
    if (!node) throw notFound(`node ${name} not found`)
    return node
  }

  /** Sets the log level of a node, wherever it runs, and answers the node as it now is. */
  async setLogLevel(name: string, level: NodeLogLevel): Promise<NodeRecord> {
    const node = await this.find(name)
    if (node.name === this.name) {
      await this.apply({ op: 'log-level', level })
      return this.record()
    }
    const reply = await this.send(node.name, { op: 'log-level', level })
    return reply.node!
  }

  /** Asks a node to shut down gracefully; answers once it has acknowledged. */
  async terminate(name: string): Promise<void> {
    const node = await this.find(name)
    if (node.name !== this.name) return void (await this.send(node.name, { op: 'terminate' }))
    await this.apply({ op: 'terminate' })
    // the stop waits for requests in flight, the one that asked for it included
    queueMicrotask(() => this.onTerminate())
  }

  /** Offers a service to every process of the cluster under `name`. */
  serve(name: string, service: NodeService): void {
    this.services.set(name, service)
  }

  /** Calls a service on a node (this one included) and answers its value; its ApiError comes back as one. */
  async call(node: string, name: string, payload: unknown): Promise<unknown> {
    if (node === this.name) {
      const service = this.services.get(name)
      if (!service) throw new ApiError(501, `this node offers no ${name}`)
      return service(payload)
    }
    return (await this.send(node, { op: 'call', name, payload })).value
  }

  private record(): NodeRecord {
    return {
      ...this.self,
      dtStart: seconds(this.startedAt),
      upTimeSec: Math.floor((this.clock.now() - this.startedAt) / 1000),
      maxLogLevel: this.log.level,
    }
  }

  private async apply(command: Command): Promise<unknown> {
    if (command.op === 'call') {
      const service = this.services.get(command.name)
      if (!service) throw new ApiError(501, `node ${this.name} offers no ${command.name}`)
      return service(command.payload)
    }
    if (command.op === 'log-level') {
      // the change is written under whichever level lets it through (off writes nothing after it)
      const changed = () => this.log.warn('log level changed', { node: this.name, level: command.level })
      if (command.level === 'off') changed()
      this.log.level = command.level
      if (command.level !== 'off') changed()
      await this.heartbeat()
    } else {
      this.log.warn('terminating on request', { node: this.name })
      await this.leave()
    }
  }

  private async send(node: string, command: Command): Promise<Reply> {
    const id = randomUUID()
    const answer = new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new ApiError(504, `node ${node} did not answer within ${REPLY_TIMEOUT_MS / 1000} s`))
      }, REPLY_TIMEOUT_MS)
      this.pending.set(id, (reply) => {
        clearTimeout(timer)
        this.pending.delete(id)
        resolve(reply)
      })
    })
    const envelope: Envelope = { ...command, id, from: this.name }
    await this.kv.publish(commandChannel(node), JSON.stringify(envelope))
    const reply = await answer
    if (reply.error && reply.status) throw new ApiError(reply.status, reply.error)
    if (reply.error) throw new ApiError(502, `node ${node}: ${reply.error}`)
    return reply
  }

  private async obey(message: string): Promise<void> {
    let envelope: Envelope
    try {
      envelope = JSON.parse(message) as Envelope
    } catch {
      return
    }
    const reply: Reply = { id: envelope.id }
    try {
      reply.value = await this.apply(envelope)
      if (envelope.op === 'log-level') reply.node = this.record()
    } catch (err) {
      reply.error = err instanceof ApiError ? err.message : String(err)
      if (err instanceof ApiError) reply.status = err.status
    }
    await this.kv.publish(replyChannel(envelope.from), JSON.stringify(reply)).catch(() => {})
    // the stop closes the KV store, so it begins once the answer has gone out
    if (envelope.op === 'terminate' && !reply.error) this.onTerminate()
  }

  private answered(message: string): void {
    try {
      const reply = JSON.parse(message) as Reply
      this.pending.get(reply.id)?.(reply)
    } catch {
      // not a reply of ours
    }
  }
}
