// The API description: a valid OpenAPI 3.1 document (checked by a validator of that specification)
// holding every route of the manifest with its methods, body schemas from the routes' valibot
// schemas, and — for a signed-in caller — the model classes of its domain; the page shows it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import { routes } from '../../routes/_manifest.gen'
import { METHODS, OVERRIDE_METHODS } from '~/http/route'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let token: string
beforeAll(async () => {
  t = await testService()
  await t.createDomain('api.master')
  token = await t.adminIn('api.master')
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: {
      classname: 'crm/deals',
      properties: [
        { name: 'title', data_type: 'string', required: true },
        { name: 'stage', data_type: 'enum', items: ['new', 'won'] },
        { name: 'tags', data_type: 'string', multi: true },
      ],
    },
  })
})
afterAll(() => t.close())

const pathOf = (url: string) => url.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}')

test('the document is valid OpenAPI 3.1 and holds every route of the manifest with its methods', async () => {
  const res = await t.call('GET', '/rest/v1/openapi.json')
  expect(res.status).toBe(200)
  const doc = res.body
  const validator = new Validator()
  const result = await validator.validate(doc)
  expect(result.errors ?? []).toEqual([])
  expect(result.valid).toBe(true)
  expect(doc.openapi).toBe('3.1.0')
  for (const entry of routes) {
    const item = doc.paths[pathOf(entry.url)]
    expect([entry.url, item !== undefined]).toEqual([entry.url, true])
    for (const method of METHODS) {
      if (!entry.module[method]) continue
      const op = OVERRIDE_METHODS.has(method) ? item['x-method-override']?.[method] : item[method.toLowerCase()]
      expect([entry.url, method, op !== undefined]).toEqual([entry.url, method, true])
    }
  }
  // body schemas come from the valibot schemas: a project needs code and name
  const create = doc.paths['/rest/v1/domain/projects'].post.requestBody.content['application/json'].schema
  expect(create.required).toEqual(expect.arrayContaining(['code', 'name']))
  expect(create.properties.code.type).toBe('string')
  // no model classes for an anonymous caller
  expect(doc.paths['/rest/v1/model/crm/deals']).toBeUndefined()
})

test("a signed-in caller's description adds the model classes of its domain, with their properties", async () => {
  const doc = (await t.call('GET', '/rest/v1/openapi.json', { token })).body
  expect((await new Validator().validate(doc)).valid).toBe(true)
  expect(doc.paths['/rest/v1/model/crm/deals'].post).toBeDefined()
  const schema = doc.components.schemas.model_crm_deals
  expect(schema.required).toEqual(['title'])
  expect(schema.properties.stage).toEqual({ type: 'string', enum: ['new', 'won'] })
  expect(schema.properties.tags).toEqual({ type: 'array', items: { type: 'string' } })
  // the master administrator in the master domain sees no classes of a working domain
  const master = await t.login('master', 'admin', ADMIN_PASSWORD)
  expect(
    (await t.call('GET', '/rest/v1/openapi.json', { token: master })).body.paths['/rest/v1/model/crm/deals'],
  ).toBeUndefined()
})

test('the API page lists the operations, with a strict content security policy and no external assets', async () => {
  const res = await t.request('GET', '/pages/api')
  expect(res.headers.get('content-type')).toStartWith('text/html')
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
  const html = await res.text()
  expect(html).toContain('<code>/rest/v1/reference/extobjs/{id}</code>')
  expect(html).not.toMatch(/(src|href)="https?:/)
})
