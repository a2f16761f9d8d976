/**
 * The script sandbox: a service script's JavaScript runs in QuickJS (quickjs-emscripten), one runtime
 * and context per handler, with a memory limit, a stack limit, a CPU budget (the interrupt handler
 * counts the time spent inside QuickJS) and a wall-clock limit. The script sees only the globals the
 * host installs; values cross the boundary as JSON. Host functions may be async: the script awaits
 * them as promises, and the host resolves them and runs QuickJS's pending jobs. This runs inside a
 * script thread (script-thread.ts), so a script that computes never holds up the service's requests.
 */
import variant from '@jitl/quickjs-singlefile-mjs-release-sync'
import {
  newQuickJSWASMModuleFromVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core'
import { capHeap, type HeapShare, heapGrowths, holdHeap, sharedHeap } from './heap-cap'

export interface SandboxLimits {
  memoryBytes: number
  stackBytes: number
  cpuMs: number
  durationMs: number
}

/** How a script ended. */
export type Outcome =
  | { status: 'done'; result: unknown }
  | { status: 'failed'; error: string }
  | { status: 'limit'; error: string; limit: 'memory' | 'stack' | 'cpu' | 'duration' }
  | { status: 'stopped'; error: string }

/** A host function: JSON-like arguments in, a JSON-like value (or a promise of one) out. */
export type HostFunction = (...args: unknown[]) => unknown

/** The globals a script sees: functions, and objects of functions one level deep (`data.read`). */
export type HostApi = Record<string, HostFunction | Record<string, HostFunction>>

export interface Running {
  outcome: Promise<Outcome>
  /** Calls a function the script registered (its onStop branch); false when it had none. */
  callRegistered(name: string): boolean | Promise<boolean>
  /** Ends the script now with this outcome (a second stop, a node going down). */
  end(outcome: Outcome): void
}

let module: Promise<QuickJSWASMModule> | undefined
// the single-file build carries its WebAssembly inside, so the compiled binary needs no asset
const quickjs = () =>
  (module ??= newQuickJSWASMModuleFromVariant(variant).then((m) => {
    heapOf(m) // fails at once if it cannot be found, not at the first growth
    capHeap(() => heapOf(m))
    return m
  }))

/** The module's heap: not public in quickjs-emscripten, but the heap cap (./heap-cap.ts) needs it. */
function heapOf(m: QuickJSWASMModule): Uint8Array {
  const heap = (m as unknown as { module?: { HEAPU8?: Uint8Array } }).module?.HEAPU8
  if (!heap) throw new Error('quickjs-emscripten no longer shows its heap (module.HEAPU8), which the heap cap reads')
  return heap
}

/** The size of this thread's script heap now. */
export const scriptHeapBytes = async () => heapOf(await quickjs()).byteLength

/** Loads the WebAssembly module ahead of the first script (it takes a tenth of a second or more). */
export const warmSandbox = () => quickjs().then(() => undefined)

/** Runs `source` as the body of an async function with `host` as its only globals. */
export async function runInSandbox(source: string, host: HostApi, limits: SandboxLimits): Promise<Running> {
  const rt = (await quickjs()).newRuntime()
  rt.setMemoryLimit(limits.memoryBytes)
  rt.setMaxStackSize(limits.stackBytes)
  const vm = rt.newContext()
  return new Sandbox(rt, vm, host, limits).start(source)
}

/** Takes the code-making constructors off the prototypes of plain, async and generator functions. */
const UNREACHABLE_CONSTRUCTORS = `for (const f of [function () {}, async function () {}, function* () {}, async function* () {}])
  Object.defineProperty(Object.getPrototypeOf(f), 'constructor', { value: undefined })`

/** How often the heap's real size is measured, alone on the thread. */
const MEMORY_CHECK_MS = 20
/**
 * Sharing it, a slice is measured once the handler has run this long since its last measurement,
 * or the heap grew meanwhile: what it can take unmeasured stays within the cap's slack, and a
 * handler of many objects does not pay a measurement (a walk of them all) for every await.
 */
const SHARED_CHECK_MS = 2
/** The largest result or host answer carried across the boundary. */
export const MAX_VALUE_BYTES = 1024 * 1024

class Sandbox {
  private cpuMs = 0
  private sliceStart = 0
  /** The interrupt handler may also run while the host touches the VM: only time inside counts. */
  private inVm = false
  private lastMemoryCheck = 0
  /** Time inside QuickJS, and the heap's growths, at this handler's last measurement. */
  private insideSinceCheck = 0
  private growthsAtCheck = 0
  private ended = false
  private settle!: (o: Outcome) => void
  private readonly registered = new Map<string, QuickJSHandle>()
  private timer?: ReturnType<typeof setTimeout>
  private parse!: QuickJSHandle
  /** This sandbox's part in the thread's heap cap. */
  private readonly heap: HeapShare
  /** The script's own promise, checked after every run of pending jobs. */
  private main?: QuickJSHandle
  /** Promises of async host calls not yet settled (disposed if the script ends first). */
  private readonly deferreds = new Set<QuickJSDeferredPromise>()

  constructor(
    private readonly rt: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly host: HostApi,
    private readonly limits: SandboxLimits,
  ) {
    this.heap = holdHeap(limits.memoryBytes, () => this.memoryUsed())
  }

  start(source: string): Running {
    const outcome = new Promise<Outcome>((resolve) => (this.settle = resolve))
    this.rt.setInterruptHandler(
      () => this.inVm && this.cpuMs + (performance.now() - this.sliceStart) > this.limits.cpuMs,
    )
    this.timer = setTimeout(
      () => this.end({ status: 'limit', limit: 'duration', error: `ran longer than ${this.limits.durationMs} ms` }),
      this.limits.durationMs,
    )
    this.guarded(() => {
      this.install()
      const evaluated = this.inside(() => this.vm.evalCode(`(async () => {\n${source}\n})()`, 'script.js'))
      if (evaluated.error) return this.fail(evaluated.error)
      this.main = evaluated.value
      this.pump()
    })
    return this.running(outcome)
  }

  /** Host-side work on the VM: anything it throws (a host stack overflow, a spent heap) ends the script, not the thread. */
  private guarded(body: () => void): void {
    try {
      body()
    } catch (err) {
      this.end({ status: 'failed', error: `the script could not go on: ${(err as Error).name ?? 'Error'}` })
    }
  }

  /** Ends the handler when the script's promise has settled. */
  private check(): void {
    if (this.ended || !this.main) return
    const state = this.vm.getPromiseState(this.main)
    if (state.type === 'pending') return
    // source that closes the wrapper function early leaves a value that is no promise
    if (state.type === 'fulfilled' && state.notAPromise)
      return this.end({ status: 'failed', error: 'a script is the body of a function' })
    if (state.type === 'rejected') return this.fail(state.error)
    const result = this.dumped(state.value)
    state.value.dispose()
    if (this.cpuMs > this.limits.cpuMs) return this.cpuSpent()
    const size = JSON.stringify(result ?? null)?.length ?? 0
    if (size > MAX_VALUE_BYTES)
      return this.end({ status: 'failed', error: `the result is larger than ${MAX_VALUE_BYTES} bytes` })
    this.end({ status: 'done', result })
  }

  /**
   * What the script holds (QuickJS's own limit misses big strings and buffers), measured now and
   * then; while other handlers share the thread's heap (./heap-cap.ts), before they run whenever it
   * could have taken more than the cap's slack (SHARED_CHECK_MS), at the cost of its CPU budget.
   */
  private overMemory(): boolean {
    const now = performance.now()
    const shared = sharedHeap()
    if (shared) {
      if (this.insideSinceCheck < SHARED_CHECK_MS && heapGrowths() === this.growthsAtCheck) return false
    } else if (now - this.lastMemoryCheck < MEMORY_CHECK_MS) return false
    this.lastMemoryCheck = now
    this.insideSinceCheck = 0
    this.growthsAtCheck = heapGrowths()
    const used = this.memoryUsed()
    this.heap.measured(Math.min(used, this.limits.memoryBytes))
    if (shared) this.cpuMs += performance.now() - now
    return used > this.limits.memoryBytes
  }

  /** What the runtime holds now; a heap too full to measure it in counts as over any limit. */
  private memoryUsed(): number {
    try {
      const usage = this.rt.computeMemoryUsage()
      const used = (this.vm.dump(usage) as { memory_used_size?: number }).memory_used_size ?? 0
      usage.dispose()
      return used
    } catch {
      return Number.POSITIVE_INFINITY
    }
  }

  private running(outcome: Promise<Outcome>): Running {
    return {
      outcome,
      callRegistered: (name) => this.callRegistered(name),
      end: (o) => this.end(o),
    }
  }

  /** Runs QuickJS code, counting its time against the CPU budget. */
  private inside<T>(body: () => T): T {
    this.sliceStart = performance.now()
    this.inVm = true
    try {
      return this.heap.slice(body)
    } finally {
      this.inVm = false
      const spent = performance.now() - this.sliceStart
      this.cpuMs += spent
      this.insideSinceCheck += spent
    }
  }

  private pump(): void {
    if (this.ended) return
    const jobs = this.inside(() => this.rt.executePendingJobs())
    if (jobs.error) return this.fail(jobs.error)
    if (this.overMemory())
      return this.end({ status: 'limit', limit: 'memory', error: `used more than ${this.limits.memoryBytes} bytes` })
    this.check()
  }

  /**
   * A value read out of QuickJS: reading runs the script's own code (toJSON, getters), so it counts
   * against the CPU budget and is interrupted with it, as any other of its code is. Outside the
   * budget, `return {toJSON() {for (;;) {}}}` held its thread for good.
   */
  private dumped(handle: QuickJSHandle): unknown {
    return this.inside(() => this.vm.dump(handle))
  }

  private cpuSpent(): void {
    this.end({ status: 'limit', limit: 'cpu', error: `used more than ${this.limits.cpuMs} ms of CPU` })
  }

  private fail(error: QuickJSHandle): void {
    const dumped = this.dumped(error) as { name?: string; message?: string } | string
    error.dispose()
    if (this.cpuMs > this.limits.cpuMs) return this.cpuSpent()
    const message =
      typeof dumped === 'object' && dumped ? `${dumped.name ?? 'Error'}: ${dumped.message}` : String(dumped)
    if (message.includes('out of memory'))
      return this.end({ status: 'limit', limit: 'memory', error: `used more than ${this.limits.memoryBytes} bytes` })
    if (message.includes('stack overflow'))
      return this.end({ status: 'limit', limit: 'stack', error: 'the stack overflowed (too deep a recursion)' })
    this.end({ status: 'failed', error: message.slice(0, 2000) })
  }

  end(outcome: Outcome): void {
    if (this.ended) return
    this.ended = true
    clearTimeout(this.timer)
    try {
      for (const fn of this.registered.values()) if (fn.alive) fn.dispose()
      for (const d of this.deferreds) d.dispose()
      if (this.main?.alive) this.main.dispose()
      if (this.parse?.alive) this.parse.dispose()
      this.vm.dispose()
      this.rt.dispose()
    } catch {
      // a runtime left inconsistent (a host error, QuickJS aborting after a failed allocation): its
      // memory stays with the thread, which goes on; the handler ends all the same
    } finally {
      this.registered.clear()
      this.deferreds.clear()
      this.heap.release()
      this.settle(outcome)
    }
  }

  private callRegistered(name: string): boolean {
    const fn = this.registered.get(name)
    if (!fn || this.ended) return false
    this.guarded(() => {
      const called = this.inside(() => this.vm.callFunction(fn, this.vm.undefined))
      if (called.error) this.fail(called.error)
      else called.value.dispose() // an async branch runs on as pending jobs
      this.pump()
    })
    return true
  }

  /** The host's globals, plus `onStop(fn)` which the host keeps for an external stop. */
  private install(): void {
    const { vm } = this
    const json = vm.getProp(vm.global, 'JSON')
    this.parse = vm.getProp(json, 'parse')
    json.dispose()
    for (const name of ['eval', 'Function']) vm.setProp(vm.global, name, vm.undefined)
    // the function constructors stay reachable through every function's prototype: those go too
    vm.unwrapResult(vm.evalCode(UNREACHABLE_CONSTRUCTORS, 'install.js')).dispose()
    const onStop = vm.newFunction('onStop', (fn) => {
      // checked before the branch it replaces is let go: a failed call keeps that one
      if (fn === undefined || vm.typeof(fn) !== 'function') return { error: vm.newError('onStop takes a function') }
      this.registered.get('onStop')?.dispose()
      this.registered.set('onStop', fn.dup())
      return vm.undefined
    })
    vm.setProp(vm.global, 'onStop', onStop)
    onStop.dispose()
    for (const [name, value] of Object.entries(this.host)) {
      if (typeof value === 'function') {
        const fn = this.hostFunction(name, value)
        vm.setProp(vm.global, name, fn)
        fn.dispose()
      } else {
        const obj = vm.newObject()
        for (const [member, f] of Object.entries(value)) {
          const fn = this.hostFunction(`${name}.${member}`, f)
          vm.setProp(obj, member, fn)
          fn.dispose()
        }
        vm.setProp(vm.global, name, obj)
        obj.dispose()
      }
    }
  }

  /** A host function inside QuickJS: arguments dumped to JSON values, the answer (or its promise) brought back. */
  private hostFunction(name: string, f: HostFunction): QuickJSHandle {
    const { vm } = this
    return vm.newFunction(name, (...handles) => {
      const args = handles.map((h) => vm.dump(h))
      // reading them ran the script's getters (in its own slice): one the budget interrupted read as text
      if (this.cpuMs + (performance.now() - this.sliceStart) > this.limits.cpuMs)
        return { error: vm.newError(`${name}: interrupted`) }
      let answer: unknown
      try {
        answer = f(...args)
      } catch (err) {
        return { error: vm.newError(`${name}: ${(err as Error).message}`) }
      }
      if (!(answer instanceof Promise)) return this.toVm(answer)
      const deferred = vm.newPromise()
      this.deferreds.add(deferred)
      const settle = (fill: () => void) => {
        if (this.ended) return
        this.deferreds.delete(deferred)
        this.guarded(() => {
          // settling runs the script's code too (a `then` getter on the answer, a `message` setter)
          this.inside(fill)
          deferred.dispose()
          if (this.cpuMs > this.limits.cpuMs) return this.cpuSpent()
          this.pump()
        })
      }
      answer.then(
        (value) =>
          settle(() => {
            const handle = this.toVm(value)
            deferred.resolve(handle)
            handle.dispose()
          }),
        (err) =>
          settle(() => {
            const error = vm.newError(`${name}: ${(err as Error).message}`)
            deferred.reject(error)
            error.dispose()
          }),
      )
      return deferred.handle
    })
  }

  private toVm(value: unknown): QuickJSHandle {
    if (value === undefined) return this.vm.undefined
    const json = JSON.stringify(value)
    if (json.length > MAX_VALUE_BYTES) throw new Error(`the answer is larger than ${MAX_VALUE_BYTES} bytes`)
    const text = this.vm.newString(json)
    const parsed = this.vm.unwrapResult(this.vm.callFunction(this.parse, this.vm.undefined, text))
    text.dispose()
    return parsed
  }
}
