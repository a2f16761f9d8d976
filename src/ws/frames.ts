/**
 * The websocket's frames: JSON arrays `[capability, payload]`. This module reads what a client sends
 * and turns a `rest` frame into the REST call it stands for; it holds no socket state.
 */
import { isPlainObject, type Doc } from '~storage/doc'
import { ApiError, badRequest } from '../errors'
import type { DispatchRequest } from '../http/dispatch'

export type ClientFrame = { capability: 'rest' | 'subscribe'; payload: Doc }

/** A frame the socket cannot use: answered with `["error", body]`, the socket stays open. */
export function readFrame(message: string | Buffer): ClientFrame {
  let parsed: unknown
  try {
    parsed = JSON.parse(typeof message === 'string' ? message : message.toString('utf8'))
  } catch {
    throw badRequest('a frame is a JSON array ["rest" | "subscribe", {...}]', 'frame')
  }
  if (!Array.isArray(parsed) || parsed.length !== 2 || typeof parsed[0] !== 'string')
    throw badRequest('a frame is a JSON array ["rest" | "subscribe", {...}]', 'frame')
  const [capability, payload] = parsed as [string, unknown]
  if (capability !== 'rest' && capability !== 'subscribe')
    throw badRequest(`unknown capability ${JSON.stringify(capability.slice(0, 40))}: rest or subscribe`, 'frame')
  if (!isPlainObject(payload)) throw badRequest(`the payload of a ${capability} frame is an object`, 'frame')
  return { capability, payload }
}

const METHODS = {
  read: 'GET',
  create: 'POST',
  replace: 'PUT',
  update: 'PATCH',
  delete: 'DELETE',
  clear: 'CLEAR',
  lookup: 'LOOKUP',
} as const
type Operation = keyof typeof METHODS
const NEEDS_ID: ReadonlySet<Operation> = new Set(['replace', 'update', 'delete'])
const NO_ID: ReadonlySet<Operation> = new Set(['create', 'clear', 'lookup'])
/**
 * List parameters travel as the REST query would carry them (structured ones JSON-encoded); the route
 * then refuses those it does not take, as over HTTP (`params` is the journal's, `interval` a
 * partitioned class's).
 */
const QUERY_MEMBERS = ['filter', 'mask', 'order', 'offset', 'limit', 'flat', 'interval', 'params'] as const
/** Every member a `rest` frame may carry: any other is a 400 naming it, as an unknown query parameter is. */
const REST_MEMBERS: ReadonlySet<string> = new Set(['qid', 'operation', 'classpath', 'id', 'content', ...QUERY_MEMBERS])

/** The longest path a frame may name (MAX_HEAD_BYTES of the gateway, for an HTTP request's whole head). */
const MAX_PATH_CHARS = 16 * 1024

/** A correlation id: the client's string or number, echoed in the answer. */
export type Qid = string | number | null

export function qidOf(payload: Doc): Qid {
  const { qid } = payload
  return typeof qid === 'string' || typeof qid === 'number' ? qid : null
}

/** The payload of a frame that was refused before it was read (rate limit), to address the answer. */
export function leniently(message: string | Buffer): Doc {
  try {
    return readFrame(message).payload
  } catch {
    return {}
  }
}

/** The capability a frame names, read leniently to address the error frame. */
export function readHead(message: string | Buffer): string | null {
  const text = typeof message === 'string' ? message : message.toString('utf8')
  return /^\s*\[\s*"(rest|subscribe)"/.exec(text)?.[1] ?? null
}

/** The REST call a `rest` frame stands for. */
export function restCall(payload: Doc): DispatchRequest {
  const qid = payload.qid
  if (typeof qid !== 'string' && typeof qid !== 'number')
    throw badRequest('qid is required (a string or number)', 'qid')
  const operation = payload.operation as Operation
  if (typeof operation !== 'string' || !Object.hasOwn(METHODS, operation))
    throw badRequest(`operation must be one of ${Object.keys(METHODS).join(', ')}`, 'operation')
  const { classpath, id } = payload
  if (typeof classpath !== 'string' || !classpath.startsWith('/rest/v1/') || classpath.includes('?'))
    throw badRequest('classpath must be the REST path of a collection, such as /rest/v1/domain/users', 'classpath')
  if (
    id !== undefined &&
    (typeof id !== 'string' || id === '' || id.includes('/') || id.includes('?') || !id.isWellFormed())
  )
    throw badRequest('id must be a non-empty string without / or ? (and no lone UTF-16 surrogate)', 'id')
  for (const name of Object.keys(payload))
    if (!REST_MEMBERS.has(name))
      throw badRequest(
        `unknown member ${JSON.stringify(name.slice(0, 40))} of a rest frame: it takes ${[...REST_MEMBERS].join(', ')}`,
        name.slice(0, 100),
      )
  if (NEEDS_ID.has(operation) && id === undefined) throw badRequest(`${operation} needs an id`, 'id')
  if (NO_ID.has(operation) && id !== undefined) throw badRequest(`${operation} acts on the collection: no id`, 'id')
  const query: Record<string, string> = {}
  for (const name of QUERY_MEMBERS) {
    const value = payload[name]
    if (value === undefined || value === null) continue
    if (name === 'mask' && Array.isArray(value)) query.mask = value.join(',')
    else query[name] = typeof value === 'string' ? value : JSON.stringify(value)
  }
  const path = `${withoutTrailingSlashes(classpath)}${id === undefined ? '' : `/${encodeURIComponent(id)}`}`
  // no longer than an HTTP request's whole head may be: routing and role patterns stay cheap
  if (path.length > MAX_PATH_CHARS)
    throw badRequest(`classpath and id are longer than ${MAX_PATH_CHARS} characters`, 'classpath')
  return { method: METHODS[operation], path, query, body: payload.content }
}

/** A loop: `/\/+$/` retries at every slash of a run, quadratic (a 200 KB run of them took 44 s). */
export function withoutTrailingSlashes(path: string): string {
  let end = path.length
  while (end > 0 && path[end - 1] === '/') end--
  return path.slice(0, end)
}

/** The error member of an answer frame, from anything thrown. */
export function errorBody(err: unknown): Doc {
  return err instanceof ApiError ? err.body() : new ApiError(500, 'internal error').body()
}
