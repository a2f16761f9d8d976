/**
 * A script thread: runs script handlers' sandboxes off the service's main thread, so a script that
 * computes (up to its CPU limit) never holds up requests. `startparam`, `sleep` and `onStop` are
 * answered here; every other host call goes to the main thread as a message and comes back as the
 * answer to the promise the script awaits. Work that runs a script (a start, an answer, a wake-up)
 * waits in a queue per domain, and the queues are served in turn, one piece each: a domain with
 * many busy handlers here delays another's by one of its slices, not by all of them.
 */
import {
  type HostApi,
  type HostFunction,
  type Outcome,
  type Running,
  runInSandbox,
  type SandboxLimits,
} from './sandbox'
import { type SandboxControl, warmSandbox } from './sandbox-instance'

declare const self: Worker

export type ToThread =
  | {
      t: 'run'
      id: string
      domain: string
      source: string
      params: unknown[]
      limits: SandboxLimits
      api: string[]
      control: SandboxControl
    }
  | { t: 'answer'; id: string; call: number; ok: boolean; value?: unknown; error?: string }
  | { t: 'branch'; id: string; name: string }
  | { t: 'end'; id: string; outcome: Outcome }

export type FromThread =
  | { t: 'call'; id: string; call: number; name: string; args: unknown[] }
  | { t: 'branch'; id: string; had: boolean }
  | { t: 'outcome'; id: string; outcome: Outcome }

const MAX_SLEEP_MS = 24 * 3600 * 1000
/** Host calls one handler may have waiting at once, and the largest arguments one may carry. */
const CALLS = { inFlight: 32, argsBytes: 256 * 1024 }
/**
 * `log` is called in loops without await: its lines wait apart and many more at once (smaller ones:
 * a line's values are cut, never refused), so that a loop of hundreds of lines never meets the calls'
 * limit, whatever the host's load.
 */
const LOG_LINES = { inFlight: 1000, argsBytes: 24 * 1024 }
const LOG_VALUES = 8
const LOG_VALUE_CHARS = 2000

/** A log line's values as they travel: at most LOG_VALUES, each cut to LOG_VALUE_CHARS characters. */
function cutLogValues(args: unknown[]): unknown[] {
  return args.slice(0, LOG_VALUES).map((value) => {
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    if (text === undefined || text.length <= LOG_VALUE_CHARS) return value
    return `${text.slice(0, LOG_VALUE_CHARS)}… (${text.length} characters)`
  })
}
const running = new Map<string, Running>()
/** Handlers whose sandbox is being made, with the end asked of them meanwhile. */
const starting = new Map<string, Outcome | null>()
const waiting = new Map<string, { resolve(v: unknown): void; reject(e: Error): void }>()
const inFlight = new Map<string, number>()
/** Each handler's sleep timers, cleared when it ends. */
const timers = new Map<string, Set<ReturnType<typeof setTimeout>>>()
/** Each handler's domain, for the queue its work waits in. */
const domainOf = new Map<string, string>()
let calls = 0
const post = (m: FromThread) => self.postMessage(m)
void warmSandbox() // the WebAssembly module compiles while the thread waits for its first script

/** Work waiting to run a script, by domain; a Map iterates in insertion order, so the domains take turns. */
const queues = new Map<string, (() => unknown)[]>()
let draining = false

function enqueue(domain: string, work: () => unknown): void {
  const queue = queues.get(domain)
  if (queue) queue.push(work)
  else queues.set(domain, [work])
  if (!draining) void drain()
}

/** One piece of work per domain in each round; between pieces, messages come in (and join their queues). */
async function drain(): Promise<void> {
  draining = true
  try {
    while (queues.size) {
      for (const [domain, queue] of queues) {
        const work = queue.shift()!
        if (!queue.length) queues.delete(domain)
        try {
          await work()
        } catch {
          // the work's own handler ends for it; the queue goes on
        }
        await new Promise((resolve) => setImmediate(resolve))
      }
    }
  } finally {
    draining = false
  }
}

function hostFor(m: Extract<ToThread, { t: 'run' }>): HostApi {
  const host: HostApi = {}
  for (const name of m.api) {
    const limits = name === 'log' ? LOG_LINES : CALLS
    const counted = name === 'log' ? `${m.id}:log` : m.id
    const proxy: HostFunction = (...given) => {
      let args = name === 'log' ? cutLogValues(given) : given
      const pending = inFlight.get(counted) ?? 0
      if (pending >= limits.inFlight)
        throw new Error(`more than ${limits.inFlight} ${name === 'log' ? 'log lines' : 'host calls'} at once`)
      const size = JSON.stringify(args)?.length ?? 0
      if (size > limits.argsBytes) {
        if (name !== 'log') throw new Error(`the arguments are larger than ${limits.argsBytes} bytes`)
        args = [`(a log line of ${size} characters as JSON, over ${limits.argsBytes}: left out)`]
      }
      inFlight.set(counted, pending + 1)
      return new Promise((resolve, reject) => {
        const call = ++calls
        const done = () => inFlight.set(counted, (inFlight.get(counted) ?? 1) - 1)
        waiting.set(`${m.id}:${call}`, {
          resolve: (v) => {
            done()
            resolve(v)
          },
          reject: (e) => {
            done()
            reject(e)
          },
        })
        post({ t: 'call', id: m.id, call, name, args })
      })
    }
    const [outer, inner] = name.split('.') as [string, string | undefined]
    if (inner === undefined) host[outer] = proxy
    else host[outer] = { ...(host[outer] as Record<string, HostFunction> | undefined), [inner]: proxy }
  }
  host.startparam = (n) => {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 9) throw new Error('startparam takes 1 to 9')
    return m.params[n - 1] ?? null
  }
  host.sleep = (ms) => {
    const wait = Math.min(Math.max(0, Number(ms) || 0), MAX_SLEEP_MS)
    const own = timers.get(m.id) ?? new Set()
    timers.set(m.id, own)
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        own.delete(timer)
        enqueue(m.domain, () => resolve(null))
      }, wait)
      own.add(timer)
    })
  }
  return host
}

/** An outcome as a message can carry it (a script may return what structured clone refuses). */
function cloneable(outcome: Outcome): Outcome {
  try {
    return JSON.parse(JSON.stringify(outcome)) as Outcome
  } catch {
    return { status: 'failed', error: 'the result is no JSON value' }
  }
}

// a failure inside a script must never end the thread and with it every other handler on it
self.addEventListener('unhandledrejection', (e) => e.preventDefault())

/** Starts a handler (unless it was ended while it waited its turn) and reports its outcome. */
async function start(m: Extract<ToThread, { t: 'run' }>): Promise<void> {
  const asked = starting.get(m.id)
  if (asked) return finish(m.id, asked)
  try {
    const r = await runInSandbox(m.source, hostFor(m), m.limits, m.control)
    const ended = starting.get(m.id)
    starting.delete(m.id)
    running.set(m.id, r)
    if (ended) r.end(ended)
    void r.outcome.then((outcome) => finish(m.id, outcome))
  } catch (err) {
    finish(m.id, { status: 'failed', error: String(err) })
  }
}

function finish(id: string, outcome: Outcome): void {
  starting.delete(id)
  running.delete(id)
  inFlight.delete(id)
  inFlight.delete(`${id}:log`)
  domainOf.delete(id)
  for (const key of waiting.keys()) if (key.startsWith(`${id}:`)) waiting.delete(key)
  for (const timer of timers.get(id) ?? []) clearTimeout(timer)
  timers.delete(id)
  post({ t: 'outcome', id, outcome: cloneable(outcome) })
}

self.onmessage = (event: MessageEvent<ToThread>) => {
  const m = event.data
  if (m.t === 'run') {
    starting.set(m.id, null)
    domainOf.set(m.id, m.domain)
    enqueue(m.domain, () => start(m))
  } else if (m.t === 'answer') {
    const key = `${m.id}:${m.call}`
    const w = waiting.get(key)
    waiting.delete(key)
    const domain = domainOf.get(m.id)
    if (w && domain !== undefined) enqueue(domain, () => (m.ok ? w.resolve(m.value) : w.reject(new Error(m.error))))
  } else if (m.t === 'branch') {
    const domain = domainOf.get(m.id)
    const answer = async () =>
      post({ t: 'branch', id: m.id, had: (await running.get(m.id)?.callRegistered(m.name)) ?? false })
    if (domain === undefined) void answer()
    else enqueue(domain, answer)
  } else if (running.has(m.id)) running.get(m.id)!.end(m.outcome)
  else if (starting.has(m.id)) starting.set(m.id, m.outcome) // ended before it began: ends as it begins
}
