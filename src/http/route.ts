/**
 * What a route file exports: one RouteSpec per method (`export const GET = list(users)`). A spec is
 * an Elysia route without its URL: what it declares (./route-declaration.ts: the schemas of its
 * parameters, query, body and answers, who may call it, the `admit` macro of ./hooks/admission.ts,
 * its description), and the handler, which gets the call as a `Req`. The generated manifest (routes/_manifest.gen.ts) mounts each spec on the app
 * at the URL its file names. Handlers return a value (sent as JSON with 200), a JsonText (sent as
 * is), undefined (204), or a Response.
 */
import type * as v from 'valibot'
import { SMALL_BODY } from './body-limits'
import type { Req } from './req'
import type { Access, BodyLimit, DeclaredEntry, DeclaredRoute, RouteHook } from './route-declaration'
import { type AnswerSchema, errors, type Responses } from './schemas'
import type { DomainKind, Method } from '../values'

type Schema = v.GenericSchema
/** A body's schema: checked by Elysia, or (checkedByHandler) by the handler. */
type BodySchema = Schema | AnswerSchema
/** What a call holds of a part its route declares (validated), or leaves undeclared (as read). */
type Out<S, D> = S extends Schema ? v.InferOutput<S> : S extends AnswerSchema<infer I> ? v.InferOutput<I> : D
/** The Req a handler gets. */
export type ReqOf<P, Q, B> = Req<
  Out<P, Record<string, string>>,
  Out<Q, Record<string, string | undefined>>,
  Out<B, unknown>
>

/** A declared route (./route-declaration.ts) with its handler. */
export interface RouteSpec<
  P = Schema | undefined,
  Q = Schema | undefined,
  B = Schema | undefined,
  R extends Responses = Responses,
> extends DeclaredRoute<P, Q, B, R> {
  handle(req: ReqOf<P, Q, B>): unknown
}

/** What a route is defined by; everything but the handler, the summary and the answers has a default. */
export interface RouteDefinition<P, Q, B, R extends Responses> {
  summary: string
  description?: string
  tags?: string[]
  hide?: boolean
  access?: Access
  domainKind?: DomainKind
  duringLongWork?: boolean
  params?: P
  query?: Q
  body?: B
  /** `none`: the body is not read for the handler (it streams it, or takes it as bytes). */
  parse?: 'none'
  /**
   * The largest body it takes, refused with a 413 before it is read: bytes, or `files`
   * (FILES_MAX_BYTES). Absent: SMALL_BODY on public routes, MAX_BODY_BYTES on the others.
   */
  maxBody?: BodyLimit
  /** The answers by status: the successes, and the errors the route may give besides those every route may. */
  response: R
  handle(req: ReqOf<P, Q, B>): unknown
}

/**
 * Errors every route may answer: a request the schemas refuse (400), a caller not signed in (401)
 * or not allowed (403), an address banned for guessing (429), a fault (500), the store out of
 * reach or the service stopping (503).
 */
const EVERY_ROUTE = errors(400, 401, 403, 429, 500, 503)
/** ... and a route that reads a body: larger than it takes (413), not JSON (415). */
const WITH_BODY = errors(413, 415)
type Answers<B, R> = Omit<
  typeof EVERY_ROUTE & (B extends BodySchema ? typeof WITH_BODY : Record<never, never>),
  keyof R
> &
  R

export function defineRoute<
  const P extends Schema | undefined = undefined,
  const Q extends Schema | undefined = undefined,
  const B extends BodySchema | undefined = undefined,
  const R extends Responses = Responses,
>(def: RouteDefinition<P, Q, B, R>): RouteSpec<P, Q, B, Answers<B, R>> {
  const reads = def.body !== undefined || def.parse === 'none'
  const response = { ...EVERY_ROUTE, ...(reads ? WITH_BODY : {}), ...def.response } as Answers<B, R>
  const hook = {
    admit: {
      access: def.access ?? 'permission',
      domainKind: def.domainKind ?? 'any',
      duringLongWork: def.duringLongWork ?? false,
    },
    response,
    detail: {
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      ...(def.tags ? { tags: def.tags } : {}),
      ...(def.hide ? { hide: true } : {}),
    },
    parse: def.parse ?? 'jsonBody',
  } as RouteHook<P, Q, B, Answers<B, R>>
  // absent schemas stay absent: Elysia validates (and parses the query for) only what is declared
  if (def.params) hook.params = def.params
  if (def.query) hook.query = def.query
  if (def.body) hook.body = def.body
  // who may call without signing in may not make the app parse megabytes first
  const maxBody = def.maxBody ?? (hook.admit.access === 'public' ? SMALL_BODY : undefined)
  return { hook, handle: def.handle, ...(maxBody === undefined ? {} : { maxBody }) }
}

/** Methods Bun's HTTP parser drops; they travel as POST + X-HTTP-Method-Override. */
export const OVERRIDE_METHODS = new Set<string>(['LOOKUP', 'SYNC', 'CLEAR'])
export const OVERRIDE_HEADER = 'x-http-method-override'

export type RouteModule = Partial<Record<Method, RouteSpec<any, any, any, any>>>

/** A route file as the manifest lists it. */
export interface RouteEntry extends DeclaredEntry {
  module: RouteModule
}
