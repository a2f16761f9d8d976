/**
 * A sandbox's WebAssembly instance: the QuickJS module is compiled once per thread, and each
 * handler instantiates it with a memory of its own (a millisecond or two, about half a MB
 * resident). That memory's maximum is the handler's limit, so what a handler holds is counted by
 * the heap itself (QuickJS's own count misses big strings and buffers: this build's allocator
 * reports no block's size), a handler at its limit fails its own allocations only, and its end
 * frees all of it.
 */
import variant from '@jitl/quickjs-singlefile-mjs-release-sync'
import { newQuickJSWASMModuleFromVariant, newVariant, type QuickJSWASMModule } from 'quickjs-emscripten-core'

/**
 * Shared with the thread that owns the handler (script-thread.ts, threads.ts): `stop[0]` set asks
 * for the end between two QuickJS instructions, so a handler computing in a slice ends without a
 * message round trip; `since[0]` is when its current slice began (Date.now(), 0 between slices).
 */
export interface SandboxControl {
  stop: Int32Array
  since: Float64Array
}

/** A control over shared memory, made where the handler starts and passed to its thread. */
export function newControl(): SandboxControl {
  const shared = new SharedArrayBuffer(16)
  return { stop: new Int32Array(shared, 0, 1), since: new Float64Array(shared, 8, 1) }
}

const PAGE_BYTES = 65536
/** What the module declares as its least memory: every handler's heap starts at this size. */
export const BASE_HEAP_BYTES = 16 * 1024 * 1024

/** The most the module lets its memory grow to (it declares 2 GB). */
const MAX_HEAP_BYTES = 2048 * 1024 * 1024

/** The heap a handler of this limit may have: its whole instance's memory, within what the module allows. */
export const heapBytesFor = (limit: number) =>
  Math.min(MAX_HEAP_BYTES, Math.max(BASE_HEAP_BYTES, Math.ceil(limit / PAGE_BYTES) * PAGE_BYTES))

let compiled: Promise<WebAssembly.Module> | undefined
/**
 * The module compiled once per thread; each sandbox instantiates it with a memory of its own (a
 * millisecond or two). The single-file build compiles its embedded bytes inside Emscripten, so the
 * first load is watched for the module it compiled.
 */
const compiledModule = () => (compiled ??= compileOnce())

async function compileOnce(): Promise<WebAssembly.Module> {
  const instantiate = WebAssembly.instantiate
  const call = instantiate as (...args: unknown[]) => Promise<unknown>
  let module: WebAssembly.Module | undefined
  WebAssembly.instantiate = (async (...args: unknown[]) => {
    const made = await call.apply(WebAssembly, args)
    if (made && typeof made === 'object' && 'module' in made) module ??= made.module as WebAssembly.Module
    return made
  }) as unknown as typeof instantiate
  try {
    const pages = BASE_HEAP_BYTES / PAGE_BYTES
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages })
    await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory: memory }))
  } finally {
    WebAssembly.instantiate = instantiate
  }
  if (!module) throw new Error('quickjs-emscripten no longer compiles through WebAssembly.instantiate')
  return module
}

/** Compiles the WebAssembly module ahead of the first script (it takes a tenth of a second or more). */
export const warmSandbox = () => compiledModule().then(() => undefined)

/** A QuickJS module over a heap of its own, which grows no further than `limit` (or the least heap). */
export async function newInstance(limit: number): Promise<{ quickjs: QuickJSWASMModule; heapSpent(): boolean }> {
  const heap = new WebAssembly.Memory({
    initial: BASE_HEAP_BYTES / PAGE_BYTES,
    maximum: heapBytesFor(limit) / PAGE_BYTES,
  })
  // a growth refused at the maximum is how the handler's own allocation failed: remembered, so a
  // failure QuickJS could not even make an error for (a null) is told as the memory limit
  let spent = false
  const grow = heap.grow
  heap.grow = (pages: number) => {
    try {
      return grow.call(heap, pages)
    } catch (err) {
      spent = true
      throw err
    }
  }
  const wasmModule = await compiledModule()
  const quickjs = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmModule, wasmMemory: heap }))
  return { quickjs, heapSpent: () => spent }
}
