/**
 * What can keep the service from starting, said in one line that names the setting: an unreachable
 * Redis or libSQL server (tried STARTUP_RETRIES times with a growing pause, a few seconds in all), a
 * data directory that cannot be made or written, a port in use. The process entry prints the line
 * and exits 2; nothing waits forever.
 */
import { accessSync, constants, mkdirSync } from 'node:fs'

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

/** The data directory exists (made when missing) and is writable. */
export function ensureDataDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true })
    accessSync(dir, constants.W_OK)
  } catch (err) {
    throw new StartError('DATA_DIR', `cannot use ${dir}: ${(err as Error).message}`)
  }
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
