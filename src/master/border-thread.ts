/**
 * The border-rule thread: runs the rules' regular expressions off the service's main thread, so a
 * pattern that backtracks without end holds only this thread, which ./border-matcher.ts then ends.
 */
import { type BorderCheck, type BorderQuery, type BorderRule, decide } from './border-match'

declare const self: Worker

export interface ToBorderThread {
  id: number
  rules: readonly BorderRule[]
  query: BorderQuery
}

export interface FromBorderThread {
  id: number
  /** The id of the rule that applies, or null when none does. */
  rule: string | null
  /** The check that decided (null when none did). */
  check: BorderCheck | null
}

self.onmessage = (e: MessageEvent<ToBorderThread>) => {
  const { id, rules, query } = e.data
  const { rule, check } = decide(rules, query)
  self.postMessage({ id, rule: rule?.id ?? null, check } satisfies FromBorderThread)
}
