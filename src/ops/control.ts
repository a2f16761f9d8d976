/**
 * The control socket: DATA_DIR/control.sock (0600), where the command line reaches the running
 * service for what needs its database, which the service holds locked (`backup`, `reset-password`).
 * Whoever may open the socket may read DATA_DIR anyway: the file's mode is the authentication.
 */
import { chmodSync, existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import * as v from 'valibot'
import type { Deps } from '../deps'
import { validate } from '../entities/validate'
import { ApiError, notFound } from '../errors'
import { backupDatabase, resetPassword } from './admin-ops'

export const controlSocketPath = (dataDir: string) => join(dataDir, 'control.sock')

const Backup = v.strictObject({ file: v.pipe(v.string(), v.minLength(1)) })
const Reset = v.strictObject({ login: v.pipe(v.string(), v.minLength(1)), domain: v.optional(v.string()) })

async function answer(deps: Deps, request: Request): Promise<unknown> {
  const path = new URL(request.url).pathname
  const body = await request.json().catch(() => undefined)
  if (request.method === 'POST' && path === '/backup') return backupDatabase(deps, validate(Backup, body).file)
  if (request.method === 'POST' && path === '/reset-password') {
    const { login, domain } = validate(Reset, body)
    return { login, password: await resetPassword(deps, login, domain) }
  }
  throw notFound(`no control operation ${request.method} ${path}`)
}

/** Serves the control socket; null when it cannot (another service answers on it, or the path is too long). */
export async function startControl(deps: Deps): Promise<{ stop(): void } | null> {
  const path = controlSocketPath(deps.config.dataDir)
  if (existsSync(path)) {
    if (await controlAnswers(path)) {
      deps.log.warn('another service answers on the control socket; this one serves none', { path })
      return null
    }
    rmSync(path, { force: true }) // left by a process that died
  }
  try {
    const server = Bun.serve({
      unix: path,
      async fetch(request) {
        try {
          return Response.json(await answer(deps, request))
        } catch (err) {
          const e = err instanceof ApiError ? err : new ApiError(500, (err as Error).message)
          return Response.json(e.body(), { status: e.status })
        }
      },
    })
    chmodSync(path, 0o600)
    return {
      stop() {
        void server.stop(true)
        rmSync(path, { force: true })
      },
    }
  } catch (err) {
    deps.log.warn('no control socket', { path, error: (err as Error).message })
    return null
  }
}

export async function controlAnswers(path: string): Promise<boolean> {
  try {
    await fetch('http://control/', { unix: path, signal: AbortSignal.timeout(1000) })
    return true
  } catch {
    return false
  }
}

/** One operation through the running service's control socket. */
export async function callControl(path: string, operation: string, body: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`http://control/${operation}`, {
    unix: path,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const result = (await res.json()) as Record<string, unknown>
  if (!res.ok) throw new Error(String(result.error_message ?? `status ${res.status}`))
  return result
}
