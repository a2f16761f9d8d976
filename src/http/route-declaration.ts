/**
 * What a route declares, apart from its handler: who it admits, its schemas and answers, its
 * description, the largest body it takes. The route table (./router.ts) holds routes as these: it
 * never calls a handler, and a handler takes the call (./req.ts), which carries the table, so the
 * table's types must not name the handler's (tests/module-cycles.test.ts). A full route spec
 * (./route.ts) is a declared route with its handler.
 */
import type * as v from 'valibot'
import type { Responses } from './schemas'
import type { DomainKind, Method } from '../values'

/** public: anyone; session: any signed-in user; permission: a role must grant the route. */
export type Access = 'public' | 'session' | 'permission'

/** Who a route admits: the value of its `admit` macro. */
export interface Admission {
  access: Access
  domainKind: DomainKind
  /** The route's schemas of its path parameters and query, which admission checks (./hooks/admission.ts). */
  params?: v.GenericSchema
  query?: v.GenericSchema
  /**
   * Served while long work runs in its domain (src/long-work.ts), which other routes wait for: it
   * reads nothing that work changes before its last statements (the product-layer order status).
   */
  duringLongWork: boolean
}

/** What the API description says of a route besides its schemas. */
export interface Detail {
  summary: string
  description?: string
  /** The area it belongs to (`domain`, `iam`, ...): the first segment after /rest/v1 unless given. */
  tags?: string[]
  /** Left out of the API description (the description itself, pages, assets). */
  hide?: boolean
}

/** An Elysia hook object: what the manifest passes beside the handler. */
export interface RouteHook<P, Q, B, R extends Responses> {
  admit: Admission
  // present in the type even when absent (undefined): an optional member would make Elysia type it unknown
  params: P
  query: Q
  body: B
  response: R
  detail: Detail
  /** `jsonBody`: the body is read as JSON within MAX_BODY_BYTES (./route-base.ts); `none`: the handler reads it. */
  parse: 'jsonBody' | 'none'
}

/** Bytes, or `files`: FILES_MAX_BYTES (uploads stream to disk). Absent: MAX_BODY_BYTES (./body-limits.ts). */
export type BodyLimit = number | 'files'

// biome-ignore lint/suspicious/noExplicitAny: a route of any schemas
export interface DeclaredRoute<P = any, Q = any, B = any, R extends Responses = Responses> {
  hook: RouteHook<P, Q, B, R>
  /** The largest body it takes (./body-limits.ts); absent: MAX_BODY_BYTES. */
  maxBody?: BodyLimit
}

/** A route file's declared routes, by method. */
export type DeclaredModule = Partial<Record<Method, DeclaredRoute>>

/** A route file as the route table holds it. */
export interface DeclaredEntry {
  /** URL pattern with `:param` segments (`*`: the rest of the path). */
  url: string
  /** Route file, relative to the project root. */
  file: string
  module: DeclaredModule
}
