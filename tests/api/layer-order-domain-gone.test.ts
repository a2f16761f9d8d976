// A product-layer order whose domain is deleted (by another process) after the order was taken
// ends quietly: the order went with its domain, so there is nothing to record and no failure to
// report. Before, the write path's 401 for a domain that no longer exists was thrown out of the
// worker, and logged as its failure.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { strToU8, zipSync } from 'fflate'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { carryOutOrder, LAYER_ORDER } from '~/layers/product-layer-orders'
import { claim } from '~/queue-kinds'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
beforeAll(async () => {
  t = await testService()
})
afterAll(() => t.close())

test('an order taken before its domain was deleted ends without an error', async () => {
  const domain = await t.createDomain('gone-layer.master')
  const token = await t.adminIn('gone-layer.master')
  mkdirSync(join(t.dir, 'layers'), { recursive: true })
  const files = { 'classes/things.json': { classname: 'gone/things', properties: [{ name: 'n', data_type: 'int' }] } }
  const zip = zipSync(Object.fromEntries(Object.entries(files).map(([p, v]) => [p, strToU8(JSON.stringify(v))])))
  writeFileSync(join(t.dir, 'layers', 'gone_1.zip'), zip)
  const ordered = await t.call('POST', '/rest/v1/domain/product_layer', { token, body: { prefix: 'gone' } })
  expect(ordered.status).toBe(200)
  // taken, as a worker takes it; then the domain is deleted before the order is carried out
  const now = t.deps.clock.now()
  const [job] = await claim(t.deps, LAYER_ORDER, now, now + 60_000, 1)
  expect(job?.domain).toBe(domain.id)
  const master = await t.login('master', 'admin', ADMIN_PASSWORD)
  const deleted = await t.call('DELETE', `/rest/v1/domain/domains/${domain.id}`, { token: master })
  expect(deleted.status).toBe(204)
  await carryOutOrder(t.deps, job!)
  expect(await t.deps.db.all('SELECT id FROM queue WHERE domain = ?', [domain.id])).toEqual([])
  expect(
    await t.deps.db.all("SELECT name FROM sqlite_master WHERE name GLOB 'rec_*' AND name LIKE ?", [
      `rec_${domain.id.replace(/-/g, '')}_%`,
    ]),
  ).toEqual([])
})
