/** A domain's model generation (migration 0019): triggers move it on with every change to its classes. */
import { type TxStep, tx } from './db'

export function* modelGeneration(domain: string): TxStep<number> {
  const row = yield* tx.get('SELECT gen FROM model_generations WHERE domain = ?', [domain])
  return row ? Number(row[0]) : 0
}

/** A deleted domain's generation, once its classes are gone (their deletions moved it on). */
export function* purgeGeneration(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM model_generations WHERE domain = ?', [domain])
}
