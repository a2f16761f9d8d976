/**
 * The quota of a domain's channel files (FILES_QUOTA_BYTES, FILES_QUOTA_FILES): a running total per
 * domain in the database (storage/file-usage.ts), checked and added in one write transaction once an
 * upload's size is known and before the file is placed, so uploads at once cannot pass it; what a
 * write did not place, and what a deletion removed, is given back. Only the total is read, never
 * the files, except once for a domain without a total (files stored before the quota existed).
 */
import { addUsage, type FileUsage, readUsage, startUsage } from '~storage/file-usage'
import { listFiles, removeFile, statFile, writeFileAtomic } from '~storage/files'
import type { Ctx } from '../context'
import { ApiError } from '../errors'

/** The domain's total, made from its directory when it has none (one point read otherwise). */
async function ensureUsage(ctx: Ctx, dir: string): Promise<FileUsage> {
  const known = await readUsage(ctx.deps.db, ctx.domain)
  if (known) return known
  const files = await listFiles(dir)
  const usage = { bytes: files.reduce((n, f) => n + f.size, 0), files: files.length }
  await ctx.deps.db.write(() => startUsage(ctx.domain, usage))
  return usage
}

/** Adds a change to the domain's total, or the 507 naming the limit it would pass. */
async function change(ctx: Ctx, delta: FileUsage): Promise<void> {
  const limits = ctx.deps.config.filesQuota
  const done = await ctx.deps.db.write(() => addUsage(ctx.domain, delta, limits))
  if (done.ok) return
  const { quota, used } = done
  const what = quota === 'bytes' ? `${limits.bytes} bytes` : `${limits.files} files`
  throw new ApiError(
    507,
    `the domain's channel files would pass their quota of ${what} (FILES_QUOTA_${quota.toUpperCase()})`,
    {
      quota: `FILES_QUOTA_${quota.toUpperCase()}`,
      used: used[quota],
      limit: limits[quota],
      needed: delta[quota],
    },
  )
}

/**
 * writeFileAtomic within the quota: the content counts from before it is placed; what is not placed
 * is given back. A content the quota refuses is not placed: `refused` is its 507.
 */
export async function writeCounted(
  ctx: Ctx,
  dir: string,
  name: string,
  chunks: AsyncIterable<Uint8Array>,
  mode: 'create' | 'replace',
): Promise<{ size: number; placed: boolean; refused?: ApiError }> {
  await ensureUsage(ctx, dir)
  let counted: FileUsage | null = null
  let refused: { size: number; err: ApiError } | undefined
  const admit = async (size: number) => {
    // a replaced file gives its bytes back; another write of the name at once may race this stat
    const old = mode === 'replace' ? await statFile(dir, name) : null
    const delta = { bytes: size - (old?.size ?? 0), files: old ? 0 : 1 }
    try {
      await change(ctx, delta)
    } catch (err) {
      if (err instanceof ApiError) refused = { size, err }
      throw err
    }
    counted = delta
  }
  let result: { size: number; placed: boolean } | undefined
  try {
    result = await writeFileAtomic(dir, name, chunks, mode, admit)
    return result
  } catch (err) {
    if (refused && err === refused.err) return { size: refused.size, placed: false, refused: refused.err }
    throw err
  } finally {
    const given = counted as FileUsage | null
    if (given && !result?.placed) await change(ctx, { bytes: -given.bytes, files: -given.files })
  }
}

/** removeFile, giving its size back to the quota. */
export async function removeCounted(ctx: Ctx, dir: string, name: string): Promise<boolean> {
  await ensureUsage(ctx, dir)
  const file = await statFile(dir, name)
  if (!file || !(await removeFile(dir, name))) return false
  await change(ctx, { bytes: -file.size, files: -1 })
  return true
}

/** The figures a channel's read shows: what the domain's files hold, and the limits (0: none). */
export async function quotaFigures(ctx: Ctx, dir: string) {
  const used = await ensureUsage(ctx, dir)
  const limits = ctx.deps.config.filesQuota
  return { bytes_used: used.bytes, bytes_limit: limits.bytes, files_used: used.files, files_limit: limits.files }
}
