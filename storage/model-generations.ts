/**
 * A domain's model generation (migrations 0019, 0020): triggers set it to the next number of one
 * sequence with every change to its classes, so it never repeats, even for a domain created again.
 */
import { type TxStep, tx } from './db'

export function* modelGeneration(domain: string): TxStep<number> {
  const row = yield* tx.get('SELECT gen FROM model_generations WHERE domain = ?', [domain])
  return row ? Number(row[0]) : 0
}

/** A deleted domain's generation, once its classes are gone (their deletions moved it on). */
export function* purgeGeneration(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM model_generations WHERE domain = ?', [domain])
}
