/** Answers a directory route gives besides those its factory (src/http/resource.ts) declares. */
import type { RouteSpec } from '../http/route'
import type { Responses } from '../http/schemas'

/** `spec`, declaring `more` answers too (a create whose entity's hook refuses with 412). */
export function alsoAnswering<P, Q, B, R extends Responses, M extends Responses>(
  spec: RouteSpec<P, Q, B, R>,
  more: M,
): RouteSpec<P, Q, B, R & M> {
  return { ...spec, hook: { ...spec.hook, response: { ...spec.hook.response, ...more } } }
}
