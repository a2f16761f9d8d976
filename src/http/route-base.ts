/**
 * What every group of routes is built on (routes/_manifest.gen.ts, src/app.ts): the call's Req in
 * Elysia's context, the JSON body parser with the service's limits, and the `admit` macro. It needs
 * no service instance: what a call uses of one comes with its Req (./hooks/call.ts).
 */
import { Elysia } from 'elysia'
import { NO_BODY, readJsonBody } from './body'
import { admitCall } from './hooks/admission'
import type { Req } from './req'
import type { RouteEntry, RouteSpec } from './route'
import type { Admission } from './route-declaration'

/** The parser a route's `parse: 'jsonBody'` names: JSON within the route's limit, JSON types only (src/http/body.ts). */
const readBody = async ({ req }: { req: Req }) =>
  (await readJsonBody(req.request, req.requestBody, req.bodyLimit)) ?? NO_BODY

export const routeBase = new Elysia({ name: 'route-base' })
  .decorate('req', undefined as unknown as Req)
  .parser('jsonBody', readBody)
  .macro({ admit: (rule: Admission) => ({ transform: admitCall(rule) }) })

/** A new group of routes (one folder of routes/). */
export const routeGroup = (name: string) => new Elysia({ name: `routes ${name}` }).use(routeBase)

/**
 * The Elysia handler of a route: the validated parts go to its Req, which goes to the route's handler.
 * What it returns is typed `any` for Elysia: a route's answers are typed by its response schemas
 * (a handler may return them as JSON text made once, ~storage/json-text.ts).
 */
export function run(spec: RouteSpec<any, any, any, any>) {
  // the path's parameters and the query were checked at admission: only the body is Elysia's here
  // biome-ignore lint/suspicious/noExplicitAny: see above
  return ({ req, body }: { req: Req<any, any, any>; body: unknown }): any => {
    req.body = body
    return spec.handle(req)
  }
}

/**
 * The hook of a route as Elysia is given it: a copy, since Elysia changes the hook objects it is
 * given (it takes the macros out and adds lifecycle arrays), and a spec is mounted in every app a
 * process makes. Its answers' schemas are in its type (what a typed client reads) but not given
 * to Elysia at run time: Elysia would check each answer against them, which a running service does
 * not do (the tests check every answer, ./hooks/answer-checks.ts; the API description reads them
 * from the spec).
 */
export const hookOf = <S extends RouteSpec<any, any, any, any>>(spec: S): S['hook'] => {
  const { response: _typedOnly, params, query, ...hook } = spec.hook
  // the path's parameters and the query are checked by admission, with these same schemas
  return { ...hook, admit: { ...hook.admit, params, query }, detail: { ...hook.detail } } as S['hook']
}

/** Route files mounted without types (tests' own routes): the same handlers and hooks. */
export function mountEntries<A extends Elysia<any, any, any, any, any, any, any>>(
  app: A,
  entries: readonly RouteEntry[],
): A {
  for (const { url, module } of entries) {
    for (const [method, spec] of Object.entries(module)) {
      if (!spec) continue
      // HEAD runs as GET (./hooks/call.ts)
      if (method !== 'HEAD') app.route(method, url, run(spec) as never, hookOf(spec) as never)
    }
  }
  return app
}
