/**
 * What the service keeps on disk holds secrets (the database holds channel tokens and password
 * hashes; a backup is the database; channel files are tenants' data): its files are 0600 and its
 * directories 0700, whatever the umask. These helpers make them so and tighten what an earlier
 * version, a copy or an operator left looser, saying what they changed so the start can warn.
 */
import { chmodSync, closeSync, type Dirent, openSync, readdirSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'

export const PRIVATE_FILE = 0o600
export const PRIVATE_DIR = 0o700

/** A mode as `ls` and chmod say it: 0644. */
export const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`

/** Whether other users than the owner have any access by this mode. */
export const openToOthers = (mode: number) => (mode & 0o077) !== 0

/** A path whose mode was made private, and the mode it had; `error` when it could not be (another user's). */
export interface Tightened {
  path: string
  was: string
  error?: string
}

/**
 * Takes away the group's and others' access to `path` (0600 for a file, 0700 for a directory) when
 * it has any; what it had, or null when it had none or does not exist. A path this process may not
 * chmod (another user's, a folder it was given) is answered with the error: said, not fatal.
 */
export function tighten(path: string): Tightened | null {
  let mode: number
  let dir: boolean
  try {
    const s = statSync(path)
    mode = s.mode
    dir = s.isDirectory()
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null
    throw err
  }
  if (!openToOthers(mode)) return null
  try {
    chmodSync(path, dir ? PRIVATE_DIR : PRIVATE_FILE)
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') throw err
    return { path, was: octal(mode), error: (err as Error).message }
  }
  return { path, was: octal(mode) }
}

/** Makes `path` an empty file of mode 0600 unless it exists (a new database: SQLite then writes into it). */
export function ensurePrivateFile(path: string): void {
  closeSync(openSync(path, 'a', PRIVATE_FILE))
}

/**
 * Writes a new file through `write` (which fills the path it is given), private from its first byte:
 * made 0600 and empty before anything is in it (SQLite's VACUUM INTO takes an empty file), never
 * over an existing one, and removed when the write fails.
 */
export async function writePrivateFile(path: string, write: () => Promise<void>): Promise<void> {
  closeSync(openSync(path, 'wx', PRIVATE_FILE))
  try {
    await write()
    chmodSync(path, PRIVATE_FILE)
  } catch (err) {
    rmSync(path, { force: true })
    throw err
  }
}

/** Tightens `dir` and everything under it (directories 0700, files 0600), symbolic links left alone. */
export function tightenTree(dir: string): Tightened[] {
  const changed: Tightened[] = []
  const walk = (path: string) => {
    const done = tighten(path)
    if (done) changed.push(done)
    let entries: Dirent[]
    try {
      entries = readdirSync(path, { withFileTypes: true })
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return
      throw err
    }
    for (const entry of entries) {
      const child = join(path, entry.name)
      if (entry.isDirectory()) walk(child)
      else if (entry.isFile()) {
        const t = tighten(child)
        if (t) changed.push(t)
      }
    }
  }
  walk(dir)
  return changed
}
