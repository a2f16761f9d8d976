/**
 * GET /rest/v1/openapi.json: the API description, with the data-model classes of the caller's
 * domain when the caller is signed in; GET /pages/api: the same as a plain HTML page (no script, no
 * external assets).
 */
import { escapeHtml } from '../html'
import { authenticate } from '../identity/authenticate'
import type { Req } from '../http/req'
import * as v from 'valibot'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { PAGE_HEADERS } from '../pages/layout'
import { openApiDocument } from './openapi'

const AS_SESSION = { access: 'session', domainKind: 'any', duringLongWork: false } as const

/** The description as this caller may see it: classes only for a signed-in caller. */
async function documentFor(req: Req) {
  let classes: Awaited<ReturnType<Req['deps']['model']['classes']>> | undefined
  if (req.header('authorization') || req.header('cookie')?.includes('RSession=')) {
    try {
      await authenticate(req, AS_SESSION)
      classes = await req.deps.model.classes(req.ctx.domain)
    } catch {
      // not signed in after all: the description without classes
    }
  }
  return openApiDocument(req.deps.routes.routes, [...(classes?.values() ?? [])])
}

export const openApiRoute = defineRoute({
  access: 'public',
  summary: 'This description (OpenAPI 3.1)',
  hide: true,
  response: { 200: answer(v.record(v.string(), v.unknown())) },
  handle: documentFor,
})

export const apiPageRoute = defineRoute({
  access: 'public',
  summary: 'The API description as a page',
  hide: true,
  response: { 200: answer(v.string(), 'text/html') },
  async handle(req) {
    const doc = await documentFor(req)
    const rows = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.entries({ ...item, ...((item['x-method-override'] as object) ?? {}) })
        .filter(([method]) => method !== 'x-method-override')
        .map(([method, op]) => {
          const o = op as { summary?: string; requestBody?: { content: Record<string, { schema: unknown }> } }
          const schema = o.requestBody?.content['application/json']?.schema
          const body =
            schema && Object.keys(schema).length ? `<pre>${escapeHtml(JSON.stringify(schema, null, 1))}</pre>` : ''
          return `<tr><td><code>${method.toUpperCase()}</code></td><td><code>${escapeHtml(path)}</code></td><td>${escapeHtml(o.summary ?? '')}${body}</td></tr>`
        }),
    )
    const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>API</title><link rel="stylesheet" href="/pages/assets/pages.css"></head>
<body><main><h1>API</h1><p>The machine-readable description: <a href="/rest/v1/openapi.json">/rest/v1/openapi.json</a> (OpenAPI 3.1).</p>
<table><thead><tr><th>method</th><th>path</th><th>what</th></tr></thead><tbody>
${rows.join('\n')}
</tbody></table></main></body></html>`
    return new Response(html, { headers: PAGE_HEADERS })
  },
})
