/**
 * A script thread: runs script handlers' sandboxes off the service's main thread, so a script that
 * computes (up to its CPU limit) never holds up requests. `startparam`, `sleep` and `onStop` are
 * answered here; every other host call goes to the main thread as a message and comes back as the
 * answer to the promise the script awaits.
 */
import {
  type HostApi,
  type HostFunction,
  type Outcome,
  type Running,
  runInSandbox,
  type SandboxLimits,
  warmSandbox,
} from './sandbox'

declare const self: Worker

export type ToThread =
  | { t: 'run'; id: string; source: string; params: unknown[]; limits: SandboxLimits; api: string[] }
  | { t: 'answer'; id: string; call: number; ok: boolean; value?: unknown; error?: string }
  | { t: 'branch'; id: string; name: string }
  | { t: 'end'; id: string; outcome: Outcome }

export type FromThread =
  | { t: 'call'; id: string; call: number; name: string; args: unknown[] }
  | { t: 'branch'; id: string; had: boolean }
  | { t: 'outcome'; id: string; outcome: Outcome }

const MAX_SLEEP_MS = 24 * 3600 * 1000
/** Host calls one handler may have waiting at once, and the largest arguments one may carry. */
const MAX_CALLS_IN_FLIGHT = 32
const MAX_ARGS_BYTES = 256 * 1024
const running = new Map<string, Running>()
/** Handlers whose sandbox is being made, with the end asked of them meanwhile. */
const starting = new Map<string, Outcome | null>()
const waiting = new Map<string, { resolve(v: unknown): void; reject(e: Error): void }>()
const inFlight = new Map<string, number>()
/** Each handler's sleep timers, cleared when it ends. */
const timers = new Map<string, Set<ReturnType<typeof setTimeout>>>()
let calls = 0
const post = (m: FromThread) => self.postMessage(m)
void warmSandbox() // the WebAssembly module loads while the thread waits for its first script

function hostFor(m: Extract<ToThread, { t: 'run' }>): HostApi {
  const host: HostApi = {}
  for (const name of m.api) {
    const proxy: HostFunction = (...args) => {
      const pending = inFlight.get(m.id) ?? 0
      if (pending >= MAX_CALLS_IN_FLIGHT) throw new Error(`more than ${MAX_CALLS_IN_FLIGHT} host calls at once`)
      if ((JSON.stringify(args)?.length ?? 0) > MAX_ARGS_BYTES)
        throw new Error(`the arguments are larger than ${MAX_ARGS_BYTES} bytes`)
      inFlight.set(m.id, pending + 1)
      return new Promise((resolve, reject) => {
        const call = ++calls
        const done = () => inFlight.set(m.id, (inFlight.get(m.id) ?? 1) - 1)
        waiting.set(`${m.id}:${call}`, {
          resolve: (v) => (done(), resolve(v)),
          reject: (e) => (done(), reject(e)),
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
      const timer = setTimeout(() => (own.delete(timer), resolve(null)), wait)
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

self.onmessage = async (event: MessageEvent<ToThread>) => {
  const m = event.data
  if (m.t === 'run') {
    starting.set(m.id, null)
    try {
      const r = await runInSandbox(m.source, hostFor(m), m.limits)
      const ended = starting.get(m.id)
      starting.delete(m.id)
      running.set(m.id, r)
      if (ended) r.end(ended)
      void r.outcome.then((outcome) => {
        running.delete(m.id)
        inFlight.delete(m.id)
        for (const timer of timers.get(m.id) ?? []) clearTimeout(timer)
        timers.delete(m.id)
        post({ t: 'outcome', id: m.id, outcome: cloneable(outcome) })
      })
    } catch (err) {
      starting.delete(m.id)
      post({ t: 'outcome', id: m.id, outcome: { status: 'failed', error: String(err) } })
    }
  } else if (m.t === 'answer') {
    const key = `${m.id}:${m.call}`
    const w = waiting.get(key)
    waiting.delete(key)
    if (m.ok) w?.resolve(m.value)
    else w?.reject(new Error(m.error))
  } else if (m.t === 'branch') {
    post({ t: 'branch', id: m.id, had: (await running.get(m.id)?.callRegistered(m.name)) ?? false })
  } else if (running.has(m.id)) running.get(m.id)!.end(m.outcome)
  else if (starting.has(m.id)) starting.set(m.id, m.outcome) // ended before it began: ends as it begins
}
