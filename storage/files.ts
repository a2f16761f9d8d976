/**
 * Files on local disk, one flat directory per domain (`DATA_DIR/files/<domain id>/`). A file is
 * written to a temporary name in the same directory and then renamed (or linked) into place, so a
 * reader sees the old file or the whole new one, never a partial one, and a failed upload leaves
 * nothing behind. Names are checked by the caller's rules; the checks here only keep every path
 * inside its directory whatever a caller passes.
 */
import { randomUUID } from 'node:crypto'
import { link, mkdir, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { PRIVATE_DIR, PRIVATE_FILE } from './private-files'

export interface StoredFile {
  name: string
  size: number
  /** Last modification, ms since the epoch. */
  mtimeMs: number
}

const SYNC_EVERY_BYTES = 8 * 1024 * 1024

/** Temporary files start with this; names starting with a dot are never listed. */
const TEMP_PREFIX = '.part-'

export function domainFilesDir(dataDir: string, domain: string): string {
  // domain ids are UUIDs; anything else must not become a path
  if (!/^[0-9a-f-]{1,64}$/i.test(domain)) throw new Error(`not a domain id: ${JSON.stringify(domain)}`)
  return join(dataDir, 'files', domain.toLowerCase())
}

function pathOf(dir: string, name: string): string {
  if (name === '' || name === '.' || name === '..' || /[/\\\0]/.test(name))
    throw new Error(`not a file name: ${JSON.stringify(name)}`)
  return join(dir, name)
}

const isMissing = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT'

export async function statFile(dir: string, name: string): Promise<StoredFile | null> {
  try {
    const s = await stat(pathOf(dir, name))
    return s.isFile() ? { name, size: s.size, mtimeMs: s.mtimeMs } : null
  } catch (err) {
    if (isMissing(err)) return null
    throw err
  }
}

export const filePath = pathOf

/** Every stored file of the directory (temporary files and anything not a regular file left out). */
export async function listFiles(dir: string): Promise<StoredFile[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (err) {
    if (isMissing(err)) return []
    throw err
  }
  const files = await Promise.all(names.filter((n) => !n.startsWith('.')).map((n) => statFile(dir, n)))
  return files.filter((f): f is StoredFile => f !== null)
}

/**
 * Writes `chunks` as the file `name`, awaiting each write (so a fast sender waits for the disk
 * instead of filling memory). `create` never replaces an existing file (`placed` false then);
 * `replace` swaps the new content in atomically. `admit` is told the size once the content is on
 * disk, before it is placed: it may refuse it (throw), and nothing of it stays.
 */
export async function writeFileAtomic(
  dir: string,
  name: string,
  chunks: AsyncIterable<Uint8Array>,
  mode: 'create' | 'replace',
  admit?: (size: number) => Promise<void>,
): Promise<{ size: number; placed: boolean }> {
  const target = pathOf(dir, name)
  // tenants' data: the owner's alone (./private-files.ts), as the database is
  await mkdir(dir, { recursive: true, mode: PRIVATE_DIR })
  const temp = join(dir, `${TEMP_PREFIX}${randomUUID()}`)
  const fh = await open(temp, 'wx', PRIVATE_FILE)
  let renamed = false // the temporary name is gone once renamed; after link() it is removed
  try {
    let size = 0
    let unsynced = 0
    for await (const chunk of chunks) {
      for (let off = 0; off < chunk.byteLength; ) off += (await fh.write(chunk, off)).bytesWritten
      size += chunk.byteLength
      unsynced += chunk.byteLength
      // flushed as it goes: one flush of a large file at the end stalls every other writer of the disk
      if (unsynced >= SYNC_EVERY_BYTES) {
        await fh.datasync()
        unsynced = 0
      }
    }
    await fh.datasync()
    await fh.close()
    await admit?.(size)
    if (mode === 'replace') await rename(temp, target)
    else {
      try {
        await link(temp, target) // fails when the name exists, also when another upload won the race
      } catch (err) {
        if ((err as NodeJS.ErrnoException)?.code === 'EEXIST') return { size, placed: false }
        throw err
      }
    }
    renamed = mode === 'replace'
    return { size, placed: true }
  } finally {
    await fh.close().catch(() => {})
    if (!renamed) await unlink(temp).catch(() => {})
  }
}

/** False when there was no such file. */
export async function removeFile(dir: string, name: string): Promise<boolean> {
  try {
    await unlink(pathOf(dir, name))
    return true
  } catch (err) {
    if (isMissing(err)) return false
    throw err
  }
}

/** Removes a domain's whole directory (the domain was deleted). */
export async function removeDomainFiles(dataDir: string, domain: string): Promise<void> {
  await rm(domainFilesDir(dataDir, domain), { recursive: true, force: true })
}
