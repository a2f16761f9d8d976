/**
 * The script sandbox: a service script's JavaScript runs in QuickJS (quickjs-emscripten), one runtime
 * and context per handler in a WebAssembly instance of its own, with a memory limit (the instance's
 * heap cannot grow past it), a stack limit, a CPU budget (the interrupt handler counts the time
 * spent inside QuickJS) and a wall-clock limit. The script sees only the globals the host installs;
 * values cross the boundary as JSON. Host functions may be async: the script awaits them as
 * promises, and the host resolves them and runs QuickJS's pending jobs. This runs inside a script
 * thread (script-thread.ts), so a script that computes never holds up the service's requests.
 */
import type { QuickJSContext, QuickJSDeferredPromise, QuickJSHandle, QuickJSRuntime } from 'quickjs-emscripten-core'
import { BASE_HEAP_BYTES, newControl, newInstance, type SandboxControl } from './sandbox-instance'

export type { HostApi, HostFunction, Outcome, Running, SandboxLimits } from './sandbox-contract'
import type { HostApi, HostFunction, Outcome, Running, SandboxLimits } from './sandbox-contract'

/**
 * Runs `source` as the body of an async function with `host` as its only globals. Its heap is its
 * own: a WebAssembly memory whose maximum is the limit, so what it holds (strings and buffers in
 * variables and globals included) is what the limit counts, and its end frees it all.
 */
export async function runInSandbox(
  source: string,
  host: HostApi,
  limits: SandboxLimits,
  control: SandboxControl = newControl(),
): Promise<Running> {
  const { quickjs, heapSpent } = await newInstance(limits.memoryBytes)
  const rt = quickjs.newRuntime()
  rt.setMemoryLimit(limits.memoryBytes)
  rt.setMaxStackSize(limits.stackBytes)
  const vm = rt.newContext()
  return new Sandbox(rt, vm, host, limits, control, heapSpent).start(source)
}

/** Takes the code-making constructors off the prototypes of plain, async and generator functions. */
const UNREACHABLE_CONSTRUCTORS = `for (const f of [function () {}, async function () {}, function* () {}, async function* () {}])
  Object.defineProperty(Object.getPrototypeOf(f), 'constructor', { value: undefined })`

/**
 * Below the module's least heap a limit is checked by QuickJS's own count of what the runtime
 * holds, this often (that count misses big strings and buffers; the heap's maximum does not).
 */
const MEMORY_CHECK_MS = 20
/** The largest result or host answer carried across the boundary. */
export const MAX_VALUE_BYTES = 1024 * 1024

class Sandbox {
  private cpuMs = 0
  private sliceStart = 0
  /** The interrupt handler may also run while the host touches the VM: only time inside counts. */
  private inVm = false
  private lastMemoryCheck = 0
  /** Slices under way (the host may read a value inside one): the outermost marks the control. */
  private depth = 0
  private ended = false
  private settle!: (o: Outcome) => void
  private readonly registered = new Map<string, QuickJSHandle>()
  private timer?: ReturnType<typeof setTimeout>
  private parse!: QuickJSHandle
  /** The script's own promise, checked after every run of pending jobs. */
  private main?: QuickJSHandle
  /** Promises of async host calls not yet settled (disposed if the script ends first). */
  private readonly deferreds = new Set<QuickJSDeferredPromise>()

  constructor(
    private readonly rt: QuickJSRuntime,
    private readonly vm: QuickJSContext,
    private readonly host: HostApi,
    private readonly limits: SandboxLimits,
    private readonly control: SandboxControl,
    /** Whether its heap refused to grow past the limit (an allocation failed for want of memory). */
    private readonly heapSpent: () => boolean,
  ) {}

  start(source: string): Running {
    const outcome = new Promise<Outcome>((resolve) => (this.settle = resolve))
    this.rt.setInterruptHandler(
      () => this.inVm && (this.cpuMs + (performance.now() - this.sliceStart) > this.limits.cpuMs || this.stopAsked()),
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
      if (this.heapSpent()) {
        this.memorySpent()
        return
      }
      // deep recursion can overflow the host's stack (running the VM's WebAssembly) before the VM's own limit
      if (err instanceof RangeError && /stack/i.test(err.message)) {
        this.stackSpent()
        return
      }
      this.end({ status: 'failed', error: `the script could not go on: ${(err as Error).name ?? 'Error'}` })
    }
  }

  /** The thread was asked to end this handler (it has already been answered for). */
  private stopAsked(): boolean {
    return Atomics.load(this.control.stop, 0) !== 0
  }

  private stackSpent(): void {
    this.end({ status: 'limit', limit: 'stack', error: 'the stack overflowed (too deep a recursion)' })
  }

  private memorySpent(): void {
    this.end({ status: 'limit', limit: 'memory', error: `used more than ${this.limits.memoryBytes} bytes` })
  }

  /** Ends the handler when the script's promise has settled. */
  private check(): void {
    if (this.ended || !this.main) return
    const state = this.vm.getPromiseState(this.main)
    if (state.type === 'pending') return
    // source that closes the wrapper function early leaves a value that is no promise
    if (state.type === 'fulfilled' && state.notAPromise) {
      this.end({ status: 'failed', error: 'a script is the body of a function' })
      return
    }
    if (state.type === 'rejected') {
      this.fail(state.error)
      return
    }
    const result = this.dumped(state.value)
    state.value.dispose()
    if (this.cpuMs > this.limits.cpuMs) {
      this.cpuSpent()
      return
    }
    const size = JSON.stringify(result ?? null)?.length ?? 0
    if (size > MAX_VALUE_BYTES) {
      this.end({ status: 'failed', error: `the result is larger than ${MAX_VALUE_BYTES} bytes` })
      return
    }
    this.end({ status: 'done', result })
  }

  /** A limit below the least heap, checked now and then by QuickJS's own count (the heap bounds every other). */
  private overMemory(): boolean {
    if (this.limits.memoryBytes >= BASE_HEAP_BYTES) return false
    const now = performance.now()
    if (now - this.lastMemoryCheck < MEMORY_CHECK_MS) return false
    this.lastMemoryCheck = now
    return this.memoryUsed() > this.limits.memoryBytes
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
    if (this.depth++ === 0) {
      this.sliceStart = performance.now()
      this.control.since[0] = Date.now()
    }
    this.inVm = true
    try {
      return body()
    } finally {
      if (--this.depth === 0) {
        this.inVm = false
        this.control.since[0] = 0
        this.cpuMs += performance.now() - this.sliceStart
      }
    }
  }

  private pump(): void {
    if (this.ended) return
    const jobs = this.inside(() => this.rt.executePendingJobs())
    if (jobs.error) {
      this.fail(jobs.error)
      return
    }
    if (this.overMemory()) {
      this.memorySpent()
      return
    }
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
    if (this.cpuMs > this.limits.cpuMs) {
      this.cpuSpent()
      return
    }
    if (this.stopAsked()) {
      this.end({ status: 'stopped', error: 'ended from outside' })
      return
    }
    const message =
      typeof dumped === 'object' && dumped ? `${dumped.name ?? 'Error'}: ${dumped.message}` : String(dumped)
    // a heap too full to make the error leaves none (null), after a growth refused at the limit
    if (message.includes('out of memory') || (dumped === null && this.heapSpent())) {
      this.memorySpent()
      return
    }
    if (message.includes('stack overflow')) {
      this.stackSpent()
      return
    }
    this.end({ status: 'failed', error: message.slice(0, 2000) })
  }

  end(outcome: Outcome): void {
    if (this.ended) return
    this.ended = true
    clearTimeout(this.timer)
    try {
      // the instance goes with the handler, its heap too; a runtime that ran out of heap may be
      // inconsistent (QuickJS aborts freeing it), so it is only let go
      if (!this.heapSpent()) {
        for (const fn of this.registered.values()) if (fn.alive) fn.dispose()
        for (const d of this.deferreds) d.dispose()
        if (this.main?.alive) this.main.dispose()
        if (this.parse?.alive) this.parse.dispose()
        this.vm.dispose()
        this.rt.dispose()
      }
    } catch {
      // a runtime left inconsistent by a host error: it is let go all the same
    } finally {
      this.registered.clear()
      this.deferreds.clear()
      this.control.since[0] = 0
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
