/**
 * A cap on the WebAssembly heap the sandboxes of one thread share. QuickJS's own limit misses what
 * big strings and buffers take (this build counts no allocation's bytes, only its size check), and
 * a WebAssembly heap is never given back once grown: unchecked, a loop allocating 16 MB buffers
 * took a thread's heap to its 2 GB ceiling in a second.
 *
 * While a sandbox runs (a slice), the heap may grow only as far as what the other sandboxes were
 * last measured to hold plus this one's own limit allow, with room for the module itself and for
 * fragmentation; a growth past that fails like a spent heap, so the allocation throws "out of
 * memory" and the handler ends at its memory limit. A sandbox does not change what it holds
 * between its slices, and while others share the thread a slice is measured as it ends whenever it
 * could have taken more than the slack (`shared`, src/scripts/sandbox.ts), so what a handler holds
 * beyond its limit is let go before any other runs: a handler within its limit never meets the cap. Outside slices (the host making runtimes, reading values)
 * the heap may hold what every live sandbox's limit allows.
 */

/** Room beyond what the sandboxes may hold: the module's own data and what fragmentation costs. */
const SLACK_BYTES = 32 * 1024 * 1024
const FRAGMENTATION = 1.25
const PAGE_BYTES = 65536

/** One live sandbox's part in the cap. */
export interface HeapShare {
  /** What the sandbox was measured to hold just now. */
  measured(bytes: number): void
  /** Runs `body` as the sandbox's slice (nested calls belong to the outer one). */
  slice<T>(body: () => T): T
  /** The sandbox has ended (once; later calls do nothing). */
  release(): void
}

interface Share {
  limit: number
  held: number
  measure: () => number
}

const live = new Set<Share>()
let running: Share | undefined
let baseBytes = 0
let growths = 0

/** How many times the heap has grown: a sandbox that sees it grew since its last measurement is measured. */
export const heapGrowths = () => growths

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
    if (this.buffer !== heap().buffer) return grow.call(this, pages)
    if (this.buffer.byteLength + pages * PAGE_BYTES > heapCapBytes())
      throw new RangeError('the script heap is at its cap')
    growths++
    return grow.call(this, pages)
  }
}

/** How large the heap may grow now. */
export function heapCapBytes(): number {
  let bytes = 0
  for (const share of live) bytes += running ? (share === running ? share.limit : share.held) : share.limit
  return baseBytes + SLACK_BYTES + FRAGMENTATION * bytes
}

/** Other sandboxes live on this thread: each slice is measured as it ends, before theirs run. */
export const sharedHeap = () => live.size > 1

/**
 * A sandbox of `limit` bytes counts toward the cap while it lives; `measure` tells what it holds.
 * When a second one comes, the first is measured now (alone, it was measured only now and then).
 */
export function holdHeap(limit: number, measure: () => number): HeapShare {
  const share: Share = { limit, held: 0, measure }
  // a measurement that failed (Infinity) counts as the whole limit, not as a cap without end
  if (live.size === 1) for (const other of live) other.held = Math.min(other.measure(), other.limit)
  live.add(share)
  return {
    measured: (bytes) => void (share.held = bytes),
    slice: (body) => {
      if (running) return body()
      running = share
      try {
        return body()
      } finally {
        running = undefined
      }
    },
    release: () => void live.delete(share),
  }
}
