/**
 * GET /rest/v1/openapi.json: the API description, with the data-model classes of the caller's
 * domain when the caller is signed in; GET /rest/v1/asyncapi.json: the websocket's; GET /pages/api:
 * the description rendered by Scalar, whose script is bundled with the service (no CDN: the page's
 * content security policy allows this origin only).
 */
import { gzipSync } from 'node:zlib'
import * as v from 'valibot'
// Scalar's package exports no path to its browser bundle: it is taken from the package's files, as a
// file (embedded in the binary; read when asked, so its 4.8 MB stay out of the heap until then),
// which TypeScript, reading a .js file as a module, cannot type
// @ts-expect-error TS7016
import scalarFile from '../../node_modules/@scalar/api-reference/dist/browser/standalone.js' with { type: 'file' }
import type { ClassModel } from '../model/class-model'
import { authenticate } from '../http/authenticate'
import { NoQuery } from '../http/query-schemas'
import type { Req } from '../http/req'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { asyncApiDocument } from './asyncapi'
import { openApiDocument } from './openapi'

const AS_SESSION = { access: 'session', domainKind: 'any', duringLongWork: false } as const

/** The description as this caller may see it: classes only for a signed-in caller. */
async function documentFor(req: Req) {
  let classes: ClassModel[] = []
  if (req.header('authorization') || req.header('cookie')?.includes('RSession=')) {
    try {
      await authenticate(req, AS_SESSION)
      classes = [...((await req.deps.model.classes(req.ctx.domain))?.values() ?? [])]
    } catch {
      // not signed in after all: the description without classes
    }
  }
  return openApiDocument(req.deps.routes.routes, classes)
}

const JsonDocument = v.record(v.string(), v.unknown())

export const openApiRoute = defineRoute({
  access: 'public',
  summary: 'Read the API description (OpenAPI 3.1)',
  description: "With the model classes of the caller's domain when the caller is signed in.",
  query: NoQuery,
  response: { 200: answer(JsonDocument) },
  handle: documentFor,
})

export const asyncApiRoute = defineRoute({
  access: 'public',
  summary: 'Read the websocket description (AsyncAPI 3.0)',
  query: NoQuery,
  response: { 200: answer(JsonDocument) },
  handle: (req) => asyncApiDocument(req.deps.config.publicUrl),
})

/** The page: Scalar's bundle, then the script that starts it on the description. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API · Platform service</title><link rel="icon" href="data:,"></head>
<body><div id="app"></div>
<script src="/pages/api/scalar.js"></script>
<script src="/pages/api/start.js"></script>
</body></html>`

/**
 * Scalar's styles are inserted by its script (style-src needs 'unsafe-inline'); every script, font,
 * image and request stays on this origin.
 */
const API_PAGE_HEADERS = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; font-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
}

export const apiPageRoute = defineRoute({
  access: 'public',
  summary: 'The API description as a page',
  hide: true,
  query: NoQuery,
  response: { 200: answer(v.string(), 'text/html') },
  handle: () => new Response(PAGE, { headers: API_PAGE_HEADERS }),
})

/** What starts Scalar on this service's description: no fonts, assistant or other services of Scalar's own. */
const START = `Scalar.createApiReference('#app', {
  url: '/rest/v1/openapi.json',
  withDefaultFonts: false,
  hideClientButton: true,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: { disabled: true },
})
`

const ASSET_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'max-age=3600' }
const JS = 'text/javascript; charset=utf-8'

/** Scalar's bundle, and gzipped (4.8 MB as it is, 1.4 MB so), read when first asked. */
let scalar: Uint8Array | undefined
let scalarGzip: Uint8Array | undefined

export const scalarScript = defineRoute({
  access: 'public',
  summary: "Scalar's bundle, which renders the API page",
  hide: true,
  query: NoQuery,
  response: { 200: answer(v.string(), 'text/javascript') },
  async handle(req) {
    scalar ??= await Bun.file(scalarFile).bytes()
    if (!/\bgzip\b/.test(req.header('accept-encoding') ?? ''))
      return new Response(scalar, { headers: { ...ASSET_HEADERS, 'content-type': JS } })
    scalarGzip ??= gzipSync(scalar)
    return new Response(scalarGzip, {
      headers: { ...ASSET_HEADERS, 'content-type': JS, 'content-encoding': 'gzip', vary: 'Accept-Encoding' },
    })
  },
})

export const startScript = defineRoute({
  access: 'public',
  summary: 'The script that starts Scalar on the API description',
  hide: true,
  query: NoQuery,
  response: { 200: answer(v.string(), 'text/javascript') },
  handle: () => new Response(START, { headers: { ...ASSET_HEADERS, 'content-type': JS } }),
})
