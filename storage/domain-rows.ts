/** A domain's row, read in a write's transaction: another process may have deleted the domain since the write was admitted. */
import { type TxStep, tx } from './db'

export function* domainExists(id: string): TxStep<boolean> {
  return (yield* tx.get('SELECT 1 FROM domains WHERE id = ?', [id])) !== undefined
}
