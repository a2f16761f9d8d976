/** Time as the service sees it; tests substitute a clock they can move. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

/** A clock that only moves when told to. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-01-01T00:00:00.000Z')) {}
  now(): number {
    return this.ms
  }
  advance(ms: number): void {
    this.ms += ms
  }
}

export const isoTime = (ms: number) => new Date(ms).toISOString()

export const HOUR_MS = 3_600_000
export const DAY_MS = 24 * HOUR_MS
