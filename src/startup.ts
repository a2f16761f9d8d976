/**
 * What can keep the service from starting, said in one line that names the setting: an unreachable
 * Redis or libSQL server (tried STARTUP_RETRIES times with a growing pause, a few seconds in all), a
 * data directory that cannot be made or written, a port in use. The process entry prints the line
 * and exits 2; nothing waits forever. Also what the data directory holds is made the service's alone.
 */
import { accessSync, constants, existsSync, mkdirSync, readdirSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { ensurePrivateFile, PRIVATE_DIR, type Tightened, tighten, tightenTree } from '~storage/private-files'

export class StartError extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`)
  }
}

/** Tries `attempt` up to `tries` times (pauses 100 ms, 200 ms, ... up to 1 s); the last failure is a StartError. */
export async function withRetries<T>(
  setting: string,
  what: string,
  tries: number,
  attempt: () => Promise<T>,
): Promise<T> {
  const started = Date.now()
  for (let n = 1; ; n++) {
    try {
      return await attempt()
    } catch (err) {
      if (err instanceof StartError) throw err
      if (n >= tries) {
        const spent = ((Date.now() - started) / 1000).toFixed(1)
        throw new StartError(setting, `${what}: ${(err as Error).message} (tried ${n} times over ${spent} s)`)
      }
      await Bun.sleep(Math.min(100 * 2 ** (n - 1), 1000))
    }
  }
}

/**
 * The data directory exists (made 0700 when missing) and is writable; one other users may enter is
 * made the service's alone (answered, for the start to warn).
 */
export function ensureDataDir(dir: string): Tightened | null {
  try {
    mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR })
    accessSync(dir, constants.W_OK)
    return tighten(dir)
  } catch (err) {
    throw new StartError('DATA_DIR', `cannot use ${dir}: ${(err as Error).message}`)
  }
}

/** The first administrator's generated password, until it is changed (src/identity/bootstrap.ts). */
export const initialPasswordFile = (dataDir: string) => join(dataDir, 'initial-admin-password')

/**
 * What the service keeps in its data directory is its alone: the embedded database (made 0600 before
 * SQLite writes it, so its log and shared-memory files, which SQLite makes with its mode, are too)
 * and every file beside it named after it (the log, the commit counter, a database kept aside by a
 * restore), the channel files (0600, their directories 0700) and the first administrator's password
 * file. Any of them found looser is tightened and answered, for the start to warn naming each.
 */
/** `channelFiles`: walk the channel files too (a stat of each: the first process only, not each app process). */
export function secureDataFiles(dataDir: string, libsqlUrl: string, channelFiles = true): Tightened[] {
  const changed: Tightened[] = []
  const add = (t: Tightened | null) => t && changed.push(t)
  try {
    if (libsqlUrl.startsWith('file:')) {
      const db = libsqlUrl.slice('file:'.length)
      const dir = dirname(db)
      const name = basename(db)
      // a LIBSQL_URL naming a folder that does not exist is for the driver to refuse, naming it
      if (existsSync(dir)) {
        ensurePrivateFile(db)
        for (const entry of readdirSync(dir)) if (entry.startsWith(name)) add(tighten(join(dir, entry)))
      }
    }
    if (channelFiles) changed.push(...tightenTree(join(dataDir, 'files')))
    add(tighten(initialPasswordFile(dataDir)))
  } catch (err) {
    throw new StartError('DATA_DIR', `cannot make the files of ${dataDir} private: ${(err as Error).message}`)
  }
  return changed
}

/** A listener that could not open its port, named by the setting at fault. */
export function listenError(host: string, port: number, err: unknown): StartError {
  const text = `${(err as { code?: string })?.code ?? ''} ${(err as Error)?.message ?? err}`
  if (/in use|EADDRINUSE/i.test(text))
    return new StartError('PORT', `cannot listen on ${host}:${port}: the port is in use`)
  // a port this process may not take is PORT's fault; an address it cannot listen at is HOST's
  const setting = /EACCES|permission/i.test(text) ? 'PORT' : 'HOST'
  return new StartError(setting, `cannot listen on ${host}:${port}: ${text.trim()}`)
}
