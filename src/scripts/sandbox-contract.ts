/**
 * What the sandbox (./sandbox.ts) promises its callers: the limits a script runs under, how it ended,
 * the host functions it may call and the handle of a running one. Apart from the sandbox itself so
 * that the threads, the handlers and the ports name these without loading QuickJS's code.
 */
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
