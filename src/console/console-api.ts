/**
 * The admin console (/console): an HTML shell, the Preact bundle's script and stylesheet (./bundle.ts),
 * served under the system pages' strict content security policy (scripts and styles of this origin
 * only, no inline script, no external asset). The console signs in with the pages' session cookie.
 */
import { gzipSync } from 'node:zlib'
import * as v from 'valibot'
import { NoQuery } from '../http/query-schemas'
import { defineRoute } from '../http/route'
import { answer } from '../http/schemas'
import { assetRoute, pageRoute } from '../pages/layout'
import { consoleBundle } from './bundle'

const SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Console</title>
<link rel="icon" href="/console/icon.svg">
<link rel="stylesheet" href="/console/app.css">
<script src="/console/app.js" defer></script>
</head>
<body>
<div id="app"><noscript>The console needs JavaScript.</noscript></div>
</body>
</html>`

export const consolePage = pageRoute(SHELL, 'The admin console')

const ASSET_HEADERS = { 'x-content-type-options': 'nosniff', 'cache-control': 'no-store' }
const gzipped = new Map<string, Uint8Array>()

function asset(part: 'js' | 'css', type: string, summary: string) {
  return defineRoute({
    access: 'public',
    summary,
    hide: true,
    query: NoQuery,
    response: { 200: answer(v.string(), type.split(';')[0]!) },
    async handle(req) {
      const text = (await consoleBundle())[part]
      const headers = { ...ASSET_HEADERS, 'content-type': type }
      if (!/\bgzip\b/.test(req.header('accept-encoding') ?? '')) return new Response(text, { headers })
      let zipped = gzipped.get(text)
      if (!zipped) {
        zipped = gzipSync(text)
        gzipped.set(text, zipped)
      }
      return new Response(zipped, { headers: { ...headers, 'content-encoding': 'gzip', vary: 'Accept-Encoding' } })
    },
  })
}

export const consoleScript = asset('js', 'text/javascript; charset=utf-8', "The console's script (Preact, bundled)")
export const consoleStyle = asset('css', 'text/css; charset=utf-8', "The console's stylesheet")

const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#1f5fbf"/><path d="M4 5h8M4 8h8M4 11h5" stroke="#fff" stroke-width="1.6"/></svg>'

export const consoleIcon = assetRoute(ICON, 'image/svg+xml', "The console's icon")
