// The API description: a valid OpenAPI 3.1 document made from the routes' own schemas, holding every
// route of the manifest, lint-clean under Redocly's recommended rules, typed without `unknown` by
// openapi-typescript, and — for a signed-in caller — the model classes of its domain; the websocket's
// AsyncAPI 3 description beside it.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Parser } from '@asyncapi/parser'
import { Validator } from '@seriousme/openapi-schema-validator'
import { routes } from '../../routes/_manifest.gen'
import { OVERRIDE_METHODS } from '~/http/route'
import { METHODS } from '~/values'
import { openApiPath, pathKeyOf } from '~/ops/openapi'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const ROOT = join(import.meta.dir, '../..')
let t: TestService
let token: string
let work: string
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'openapi-test-'))
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
  await t.call('POST', '/rest/v1/design/classes', {
    token,
    body: {
      classname: 'logs/visits',
      storage_mode: 'history',
      opts: { partition_property: 'day' },
      properties: [{ name: 'day', data_type: 'date', required: true }],
    },
  })
})
afterAll(async () => {
  await t.close()
  rmSync(work, { recursive: true, force: true })
})

/** The description as a file, for the tools that read one. */
async function written(doc: unknown): Promise<string> {
  const file = join(work, `openapi-${crypto.randomUUID()}.json`)
  await Bun.write(file, JSON.stringify(doc))
  return file
}

test('the document is valid OpenAPI 3.1 and holds every route of the manifest with its methods', async () => {
  const res = await t.call('GET', '/rest/v1/openapi.json')
  expect(res.status).toBe(200)
  const doc = res.body
  const result = await new Validator().validate(doc)
  expect(result.errors ?? []).toEqual([])
  expect(doc.openapi).toBe('3.1.0')
  const ids = new Set<string>()
  for (const entry of routes) {
    const { path } = openApiPath(entry.url)
    for (const method of METHODS) {
      const spec = entry.module[method]
      if (!spec || method === 'HEAD' || spec.hook.detail.hide) continue
      const verb = OVERRIDE_METHODS.has(method) ? 'post' : method.toLowerCase()
      const op = doc.paths[pathKeyOf(path, method)]?.[verb]
      expect([entry.url, method, op !== undefined]).toEqual([entry.url, method, true])
      expect(ids.has(op.operationId)).toBe(false)
      ids.add(op.operationId)
      expect(op.tags).toHaveLength(1)
      // every answer it may give is declared, errors with the one error body
      expect(Object.keys(op.responses)).toContain('400')
      expect(op.responses['400'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' })
    }
  }
  // LOOKUP travels as a POST naming it in X-HTTP-Method-Override
  const lookup = doc.paths['/rest/v1/domain/users#LOOKUP'].post
  expect(lookup.parameters).toContainEqual(expect.objectContaining({ name: 'X-HTTP-Method-Override', in: 'header' }))
  // body schemas come from the valibot schemas: a project needs code and name
  const create = doc.paths['/rest/v1/domain/projects'].post.requestBody.content['application/json'].schema
  expect(create).toEqual({ $ref: '#/components/schemas/ProjectCreate' })
  const project = doc.components.schemas.ProjectCreate
  expect(project.required).toEqual(expect.arrayContaining(['code', 'name']))
  expect(project.properties.code.type).toBe('string')
  // list parameters are declared, and unknown ones are refused by the same schema
  const list = doc.paths['/rest/v1/domain/users'].get
  const names = list.parameters.map((p: { name: string }) => p.name)
  expect(names).toEqual(
    expect.arrayContaining(['filter', 'mask', 'order', 'offset', 'limit', 'count', 'after', 'flat']),
  )
  // no model classes for an anonymous caller
  expect(doc.paths['/rest/v1/model/crm/deals']).toBeUndefined()
  // every area is a tag
  const tags = doc.tags.map((g: { name: string }) => g.name)
  expect(tags).toEqual(expect.arrayContaining(['iam', 'domain', 'service', 'model', 'master', 'operations']))
})

test("Redocly's recommended rules find no error in it", async () => {
  const doc = (await t.call('GET', '/rest/v1/openapi.json', { token })).body
  const run = Bun.spawnSync([join(ROOT, 'node_modules/.bin/redocly'), 'lint', '--format=json', await written(doc)], {
    cwd: work,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
  })
  const report = JSON.parse(run.stdout.toString()) as {
    totals: { errors: number }
    problems: { severity: string; message: string; location: { pointer: string }[] }[]
  }
  const errors = report.problems
    .filter((p) => p.severity === 'error')
    .map((p) => `${p.location[0]?.pointer}: ${p.message}`)
  expect(errors).toEqual([])
  expect(report.totals.errors).toBe(0)
}, 60_000)

test('openapi-typescript types every JSON answer: no `unknown`', async () => {
  const doc = (await t.call('GET', '/rest/v1/openapi.json', { token })).body
  const out = join(work, 'api.d.ts')
  const run = Bun.spawnSync(
    [
      'node',
      '--import',
      join(ROOT, 'tests/helpers/typescript5/register.mjs'),
      join(ROOT, 'node_modules/openapi-typescript/bin/cli.js'),
      await written(doc),
      '-o',
      out,
    ],
    { cwd: ROOT },
  )
  expect(run.exitCode).toBe(0)
  const types = await Bun.file(out).text()
  expect(types).toContain('"/rest/v1/domain/users": {')
  // an answer typed `unknown`: the nearest block above its line is `responses`, not `requestBody`
  const lines = types.split('\n')
  const unknownAnswers = lines.flatMap((line, i) => {
    if (!/"application\/json": unknown;/.test(line)) return []
    const above = lines.slice(0, i).findLast((l) => /^\s+(responses|requestBody)\??: \{$/.test(l)) ?? ''
    return above.includes('responses') ? [`line ${i + 1}`] : []
  })
  expect(unknownAnswers).toEqual([])
}, 60_000)

test("a signed-in caller's description adds the model classes of its domain, with their properties", async () => {
  const doc = (await t.call('GET', '/rest/v1/openapi.json', { token })).body
  expect((await new Validator().validate(doc)).valid).toBe(true)
  expect(doc.paths['/rest/v1/model/crm/deals'].post).toBeDefined()
  expect(doc.paths['/rest/v1/model/crm/deals/{id}'].patch).toBeDefined()
  expect(doc.paths['/rest/v1/model/crm/deals#LOOKUP'].post).toBeDefined()
  const schema = doc.components.schemas.Model_crm_deals
  expect(schema.required).toEqual(['title'])
  expect(schema.properties.stage).toEqual({ type: 'string', enum: ['new', 'won'] })
  expect(schema.properties.tags).toEqual({ type: 'array', items: { type: 'string' } })
  // a partitioned class's list needs its dates: a required interval
  expect(doc.paths['/rest/v1/model/crm/deals'].get.parameters).toBeUndefined()
  expect(doc.paths['/rest/v1/model/logs/visits'].get.parameters).toMatchObject([
    { name: 'interval', in: 'query', required: true },
  ])
  // the master administrator in the master domain sees no classes of a working domain
  const master = await t.login('master', 'admin', ADMIN_PASSWORD)
  expect(
    (await t.call('GET', '/rest/v1/openapi.json', { token: master })).body.paths['/rest/v1/model/crm/deals'],
  ).toBeUndefined()
})

test('the websocket is described by a valid AsyncAPI 3 document: rest, subscribe and event frames', async () => {
  const res = await t.call('GET', '/rest/v1/asyncapi.json')
  expect(res.status).toBe(200)
  const { document, diagnostics } = await new Parser().parse(res.body)
  expect(diagnostics.filter((d) => d.severity === 0).map((d) => d.message)).toEqual([])
  expect(document).toBeDefined()
  const messages = document!
    .allMessages()
    .all()
    .map((m) => m.name())
  expect(messages).toEqual(expect.arrayContaining(['rest', 'subscribe', 'event']))
})
