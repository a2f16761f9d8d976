/**
 * What a running script can do on the service: the host calls its script thread passes to the main
 * thread (`startparam`, `sleep` and `onStop` are the thread's own). Every call acts through the
 * handler's context (actor type `script`, the handler's id, its domain), so data calls go through
 * `dispatch` and the same routes, checks and journal as REST; events go on the domain's bus.
 */
import type { Ctx } from '../context'
import { badRequest } from '../errors'
import type { PlatformEvent } from '../events/event'
import { parseObjects } from '../events/match'
import { dispatch } from '../http/dispatch'
import { newId } from '../ids'
import { LOG_LEVELS, type LogLevel } from '../log'
import { scriptFetch } from './http'
import { storableProblem } from '~storage/doc'
import type { HostApi } from './sandbox-contract'

export interface HostContext {
  ctx: Ctx
  handlerId: string
  /** The current script's code (a nested call changes it while it runs). */
  code(): string
  /** Throws when the handler's domain no longer lets it act (deleted, blocked). */
  mayAct(): Promise<void>
  /** Keeps a line the script logged with the handler, for its page (GET …/svcscript_runtimes/<id>). */
  keep(level: LogLevel, message: string): void
  /** Runs the script of `code` nested in this handler and answers its result. */
  callNested(code: string, params: unknown[]): Promise<unknown>
}

const EVENT_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

export function hostApi(h: HostContext): HostApi {
  const { ctx } = h
  const { deps } = ctx
  const rest = async (method: string, path: unknown, query?: unknown, body?: unknown) => {
    if (typeof path !== 'string' || !path.startsWith('/rest/v1/'))
      throw badRequest('a classpath is a REST path: /rest/v1/...')
    await h.mayAct()
    const q = query && typeof query === 'object' ? toQuery(query as Record<string, unknown>) : undefined
    const res = await dispatch(ctx, { method, path, query: q, body })
    if (res.status >= 400) {
      const e = res.body as { error_code?: number; error_message?: string }
      throw new Error(`${e.error_code ?? res.status} ${e.error_message ?? 'failed'}`)
    }
    return res.body ?? null
  }
  const record = (classpath: unknown, id: unknown) => `${classpath}/${encodeURIComponent(String(id))}`
  return {
    log: (level, ...args) => {
      const at: LogLevel = LOG_LEVELS.includes(level as LogLevel) ? (level as LogLevel) : 'info'
      const message = (LOG_LEVELS.includes(level as LogLevel) ? args : [level, ...args])
        .map(show)
        .join(' ')
        .slice(0, 4000)
      deps.log[at]('script', { handler: h.handlerId, code: h.code(), domain: ctx.domain, message })
      h.keep(at, message)
    },
    emit: async (name, payload, objects) => {
      if (typeof name !== 'string' || !EVENT_NAME.test(name)) throw new Error('an event name is an identifier')
      await h.mayAct()
      const event: PlatformEvent = {
        id: newId(),
        class: 'customevents',
        event: name,
        domain: ctx.domain,
        time: new Date(deps.clock.now()).toISOString(),
        objects: objects === undefined ? [] : parseObjects(objects),
        data:
          payload && typeof payload === 'object' ? (payload as Record<string, unknown>) : { value: payload ?? null },
      }
      const unstorable = storableProblem(event.data)
      if (unstorable) throw new Error(`the payload cannot be kept (${unstorable})`)
      await deps.bus.publish(event)
    },
    call: async (code, params) => {
      if (typeof code !== 'string' || code === '') throw new Error('call takes a script code')
      await h.mayAct()
      // an array is the start parameters in order; any other value (an object) is startparam(1)
      return h.callNested(
        code,
        Array.isArray(params) ? params : params === undefined || params === null ? [] : [params],
      )
    },
    http: async (request) => {
      await h.mayAct()
      return scriptFetch(request, {
        allow: deps.config.script.httpAllow,
        timeoutMs: deps.config.script.httpTimeoutMs,
        maxBytes: deps.config.script.httpMaxBytes,
      })
    },
    data: {
      read: (classpath, id, query) =>
        rest('GET', id === undefined || id === null ? classpath : record(classpath, id), query),
      list: (classpath, query) => rest('GET', classpath, query),
      lookup: (classpath, key) => rest('LOOKUP', classpath, undefined, key),
      create: (classpath, content) => rest('POST', classpath, undefined, content),
      update: (classpath, id, content) => rest('PATCH', record(classpath, id), undefined, content),
      replace: (classpath, id, content) => rest('PUT', record(classpath, id), undefined, content),
      delete: (classpath, id) => rest('DELETE', record(classpath, id)),
    },
  }
}

/** List parameters as the REST query carries them (structured ones JSON-encoded). */
function toQuery(params: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = Object.create(null) // as the REST query is: `__proto__` is a name
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== null)
      out[k] = typeof v === 'string' ? v : Array.isArray(v) && k === 'mask' ? v.join(',') : JSON.stringify(v)
  return out
}

const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v))
