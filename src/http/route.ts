/**
 * What a route file exports: one RouteDef per method. A RouteDef says who may call it (`access`),
 * in which kind of domain it is served, and the handler. Handlers return a value (sent as JSON
 * with 200), a JsonText (sent as is), undefined (204), or a Response.
 */
import type * as v from 'valibot'
import type { Req } from './req'

/** public: anyone; session: any signed-in user; permission: a role must grant the route. */
export type Access = 'public' | 'session' | 'permission'
export type DomainKind = 'any' | 'master' | 'working'

export interface RouteDef {
  access: Access
  domainKind: DomainKind
  handle(req: Req): unknown
  /** What the body must be, when a schema says it (the API description shows it). */
  body?: v.GenericSchema
  /** One line for the API description. */
  summary?: string
  /**
   * Served while long work runs in its domain (src/long-work.ts), which other routes wait for: it
   * reads nothing that work changes before its last statements (the product-layer order status).
   */
  duringLongWork?: boolean
}

export function defineRoute(def: Partial<Omit<RouteDef, 'handle'>> & Pick<RouteDef, 'handle'>): RouteDef {
  return { ...def, access: def.access ?? 'permission', domainKind: def.domainKind ?? 'any', handle: def.handle }
}

/** Methods a route file may export, in the order the route table lists them. */
export const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'LOOKUP', 'SYNC', 'CLEAR'] as const
export type Method = (typeof METHODS)[number]

/** Methods Bun's HTTP parser drops; they travel as POST + X-HTTP-Method-Override. */
export const OVERRIDE_METHODS = new Set<string>(['LOOKUP', 'SYNC', 'CLEAR'])

export type RouteModule = Partial<Record<Method, RouteDef>>

export interface RouteEntry {
  /** URL pattern with `:param` segments. */
  url: string
  /** Route file, relative to the project root. */
  file: string
  module: RouteModule
}
