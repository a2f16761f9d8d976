/**
 * The running total of each domain's channel files (table channel_file_usage): bytes and files.
 * A change is checked against the limits and added in one statement of a write transaction, so
 * uploads at once, in any process, cannot together pass a limit; a decrease is always taken.
 */
import type { Db, TxStep } from './db'
import { tx } from './db'

export interface FileUsage {
  bytes: number
  files: number
}

/** Usage of a domain, or null when it has no row yet. */
export async function readUsage(db: Db, domain: string): Promise<FileUsage | null> {
  const row = await db.get('SELECT bytes, files FROM channel_file_usage WHERE domain = ?', [domain])
  return row ? { bytes: Number(row[0]), files: Number(row[1]) } : null
}

/** Makes the domain's row with `usage` (counted from its directory) unless another made it first. */
export function* startUsage(domain: string, usage: FileUsage): TxStep<void> {
  yield* tx.run('INSERT OR IGNORE INTO channel_file_usage (domain, bytes, files) VALUES (?, ?, ?)', [
    domain,
    usage.bytes,
    usage.files,
  ])
}

/**
 * Adds `change` when what grows stays within `limits` (0: no bound): the usage after it, or the
 * refusal naming the limit and the usage it would have passed.
 */
export function* addUsage(
  domain: string,
  change: FileUsage,
  limits: FileUsage,
): TxStep<{ ok: true } | { ok: false; quota: keyof FileUsage; used: FileUsage }> {
  const done = yield* tx.run(
    `UPDATE channel_file_usage SET bytes = max(0, bytes + ?), files = max(0, files + ?)
     WHERE domain = ? AND (? <= 0 OR ? = 0 OR bytes + ? <= ?) AND (? <= 0 OR ? = 0 OR files + ? <= ?)`,
    [
      change.bytes,
      change.files,
      domain,
      change.bytes,
      limits.bytes,
      change.bytes,
      limits.bytes,
      change.files,
      limits.files,
      change.files,
      limits.files,
    ],
  )
  if (done.changes > 0) return { ok: true }
  const row = yield* tx.get('SELECT bytes, files FROM channel_file_usage WHERE domain = ?', [domain])
  const used = { bytes: Number(row?.[0] ?? 0), files: Number(row?.[1] ?? 0) }
  const files = change.files > 0 && limits.files > 0 && used.files + change.files > limits.files
  return { ok: false, quota: files ? 'files' : 'bytes', used }
}

export function* purgeUsage(domain: string): TxStep<void> {
  yield* tx.run('DELETE FROM channel_file_usage WHERE domain = ?', [domain])
}
