/**
 * A cap on the WebAssembly heap the sandboxes of one thread share. QuickJS's own limit misses what
 * big strings and buffers take (this build does not count their bytes), and a script's usage is
 * measured only now and then, so a loop allocating 16 MB buffers took a thread's heap to its 2 GB
 * ceiling in a second, and a WebAssembly heap is never given back. The heap may hold what the live
 * sandboxes' limits allow together, plus room for the module itself and fragmentation; growing
 * past that fails like a spent heap, so the allocation that asked for it throws "out of memory"
 * (the sandbox's memory limit). A handler within its limit never meets the cap.
 */

/** Room beyond the live limits: the module's own data and what fragmentation costs. */
const SLACK_BYTES = 32 * 1024 * 1024
const FRAGMENTATION = 1.25
const PAGE_BYTES = 65536

/** The bytes the live sandboxes of this thread may use together. */
let held = 0
let baseBytes = 0

/**
 * Caps growth of the heap that `heap()` views. WebAssembly memory has no per-instance hook, so the
 * prototype's grow is wrapped and looks only at that heap; every other memory grows as before.
 * Emscripten grows the heap inside a try and treats a throw as a failed malloc.
 */
export function capHeap(heap: () => Uint8Array): void {
  if (baseBytes) return
  baseBytes = heap().byteLength
  const grow = WebAssembly.Memory.prototype.grow
  WebAssembly.Memory.prototype.grow = function (this: WebAssembly.Memory, pages: number) {
    if (this.buffer === heap().buffer && this.buffer.byteLength + pages * PAGE_BYTES > heapCapBytes())
      throw new RangeError('the scripts of this thread hold all the memory their limits allow')
    return grow.call(this, pages)
  }
}

export const heapCapBytes = () => baseBytes + SLACK_BYTES + held * FRAGMENTATION

/** A sandbox's limit counts toward the cap while it lives; the function returned lets it go (once). */
export function holdHeap(bytes: number): () => void {
  held += bytes
  let released = false
  return () => {
    if (released) return
    released = true
    held -= bytes
  }
}
