// The route manifest is generated from routes/ and committed; the route table is part of the contract.
import { expect, test } from 'bun:test'
import { routes } from '../routes/_manifest.gen'
import { MANIFEST, renderManifest, urlOf } from '../scripts/routes'
import { routeRows } from '~/http/route-table'
import { METHODS } from '~/values'

test('the committed manifest matches routes/ (run `bun run routes --write` after adding a route file)', async () => {
  expect(await Bun.file(MANIFEST).text()).toBe(await renderManifest())
})

test('file names map to URLs', () => {
  expect(urlOf('rest/v1/design/classes/index.ts')).toBe('/rest/v1/design/classes')
  expect(urlOf('rest/v1/design/classes/[id].ts')).toBe('/rest/v1/design/classes/:id')
  expect(urlOf('rest/v1/user/sip/accounts/[id]/callback_requests/index.ts')).toBe(
    '/rest/v1/user/sip/accounts/:id/callback_requests',
  )
})

test('route files export only method handlers', () => {
  for (const r of routes) for (const name of Object.keys(r.module)) expect(METHODS as readonly string[]).toContain(name)
})

test('route table', () => {
  expect(routeRows(routes).map((r) => r.join(' '))).toMatchSnapshot()
})

test('the endpoint map (docs/api/README.md) lists every route with its methods', async () => {
  const map = await Bun.file(`${import.meta.dir}/../docs/api/README.md`).text()
  const rows = map.split('\n').filter((l) => l.startsWith('| '))
  for (const r of routes) {
    const methods = METHODS.filter((m) => r.module[m]).join(', ')
    const row = rows.find((l) => l.includes(`\`${r.url}\``))
    expect(row ?? `missing: ${r.url}`).toStartWith(`| ${methods} |`)
  }
})

test('every route declares its query, a summary, a success answer and the error body, each with a schema', () => {
  for (const r of routes) {
    for (const [method, spec] of Object.entries(r.module)) {
      const where = `${method} ${r.url}`
      const { hook } = spec!
      expect([where, hook.detail.summary.length > 0]).toEqual([where, true])
      // the query schema is what refuses an unknown parameter
      expect([where, hook.query !== undefined]).toEqual([where, true])
      const statuses = Object.keys(hook.response).map(Number)
      expect([where, statuses.some((s) => s >= 200 && s < 300)]).toEqual([where, true])
      for (const s of [400, 401, 403, 500, 503]) expect([where, s, statuses.includes(s)]).toEqual([where, s, true])
      for (const [status, answer] of Object.entries(hook.response as Record<string, { schema?: { '~run'?: unknown } }>))
        expect([where, status, typeof answer.schema?.['~run']]).toEqual([where, status, 'function'])
    }
  }
})
