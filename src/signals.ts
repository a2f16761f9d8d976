/**
 * Wake-ups inside one process: a commit raises `journal`, a queued job raises `queue:<kind>` (one
 * handed to this process's worker as it was enqueued needs none: src/integration/delivery-handoff.ts), an
 * event for the webhook-events worker's feed raises `bus`, and the worker runner wakes the workers
 * listening for them. Losing one costs only latency: every
 * worker also runs on its own schedule, which is what other processes of a cluster rely on.
 */
export type SignalName = 'journal' | 'bus' | `queue:${string}`

export class Signals {
  private readonly listeners = new Map<SignalName, Set<() => void>>()

  on(name: SignalName, listener: () => void): () => void {
    let set = this.listeners.get(name)
    if (!set) {
      set = new Set()
      this.listeners.set(name, set)
    }
    set.add(listener)
    return () => set.delete(listener)
  }

  raise(name: SignalName): void {
    for (const listener of this.listeners.get(name) ?? []) listener()
  }
}
