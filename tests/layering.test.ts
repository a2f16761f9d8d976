// Imports go routes -> src -> storage, never back; route files hold no SQL; the domain imports neither HTTP nor
// a route adapter.
import { expect, test } from 'bun:test'
import { Glob } from 'bun'
import { dirname, join, relative, resolve } from 'node:path'

const root = join(import.meta.dir, '..')
const files = (dir: string) =>
  [...new Glob('**/*.ts').scanSync(join(root, dir))].map((f) => [f, join(root, dir, f)] as const)
const imports = async (path: string) =>
  [...(await Bun.file(path).text()).matchAll(/from ['"]([^'"]+)['"]/g)].map((m) => m[1]!)

test('storage/ imports nothing from src/ or routes/', async () => {
  for (const [name, path] of files('storage')) {
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).not.toMatch(/: (~\/|(\.\.\/)+(src|routes)\/)/)
  }
})

test('src/ imports nothing from routes/', async () => {
  for (const [name, path] of files('src')) {
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).not.toMatch(/: (\.\.\/)+routes\//)
  }
})

test('route files import only from src/ (no storage, no SQL)', async () => {
  for (const [name, path] of files('routes')) {
    if (name.startsWith('_')) continue
    for (const spec of await imports(path)) expect(`${name}: ${spec}`).toMatch(/: ~\//)
    expect(await Bun.file(path).text()).not.toMatch(/\b(select|insert into|delete from|update \w+ set)\b/i)
  }
})

/**
 * The domain does not know HTTP: outside src/http only route adapters (`*-api.ts`, beside the area
 * they serve, and `*-answers.ts`, the answer schemas several adapters of an area share) and the transport and composition listed here import src/http or an adapter. A domain
 * file needs neither: what an adapter holds that the domain uses (a collection, a schema) lives in a
 * domain file the adapter imports.
 */
const TRANSPORT = [
  /^app\.ts$/, // the Elysia app: hooks and the manifest's routes
  /^service\.ts$/, // starts the app and the gateway
  /^compose\.ts$/, // composition: the router is one of the request-time services
  /^gateway\//, // the public port (src/gateway)
  /^ops\//, // probes and the API description (OpenAPI, AsyncAPI) read the routes
  /^pages\/layout\.ts$/, // the system web pages are routes
  /^ws\/(hub|frames)\.ts$/, // a websocket frame runs a route through dispatch, admitted as over HTTP
  /^scripts\/host-calls\.ts$/, // a script's data calls run routes through dispatch, with their checks and journal
]
const ADAPTER = /-(api|answers)\.ts$/

test('no domain file imports src/http or a route adapter; only route adapters and the transport do', async () => {
  const found: string[] = []
  for (const [name, path] of files('src')) {
    if (name.startsWith('http/') || ADAPTER.test(name) || TRANSPORT.some((t) => t.test(name))) continue
    for (const spec of await imports(path)) {
      const target = spec.startsWith('~/')
        ? spec.slice(2)
        : spec.startsWith('.')
          ? relative(join(root, 'src'), resolve(dirname(path), spec))
          : null
      if (target !== null && (target.startsWith('http/') || ADAPTER.test(`${target.replace(/\.ts$/, '')}.ts`)))
        found.push(`${name}: ${spec}`)
    }
  }
  expect(found).toEqual([])
})
