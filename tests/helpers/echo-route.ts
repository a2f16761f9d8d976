/** A public route for transport tests, at every method the gateway carries, answering what reached it. */
import { TEST_ROUTE } from '../helpers/test-route'
import { defineRoute, type RouteModule } from '~/http/route'

/** Answers the method, the body's size, the client address and the request headers `shown` names (by the key they are shown as). */
export function echoModule(shown: Record<string, string> = {}): RouteModule {
  const echo = defineRoute({
    ...TEST_ROUTE,
    access: 'public',
    parse: 'none',
    maxBody: Number.MAX_SAFE_INTEGER, // MAX_BODY_BYTES, as a data route: transport tests send large bodies
    async handle(req) {
      const body = await req.bytes()
      const headers = Object.fromEntries(Object.entries(shown).map(([key, name]) => [key, req.header(name)]))
      return { method: req.method, bytes: body.byteLength, client: req.clientAddress, ...headers }
    },
  })
  return { GET: echo, POST: echo, LOOKUP: echo, SYNC: echo, CLEAR: echo }
}
