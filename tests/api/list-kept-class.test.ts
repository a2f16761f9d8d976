// Two app processes on one file: a class changed by one is learned by the other a while later (a
// Redis message, or its class cache lapsing). Once it knows the new class, none of its lists is one
// it kept or made with the old class, whatever the generation says.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ManualClock } from '~/clock'
import { testService, type TestService } from '../helpers/service'

let a: TestService
let b: TestService
let tokA: string
let tokB: string
let classId: string
beforeAll(async () => {
  const clock = new ManualClock(Date.now())
  a = await testService({ kv: 'memory', clock })
  b = await testService({ kv: 'memory', clock, dataDir: a.dir })
  await a.createDomain('kept.master')
  tokA = await a.adminIn('kept.master')
  tokB = await b.adminIn('kept.master')
  const res = await a.call('POST', '/rest/v1/design/classes', {
    token: tokA,
    body: {
      classname: 'notes',
      properties: [
        { name: 'title', data_type: 'string' },
        { name: 'secret', data_type: 'string' },
      ],
    },
  })
  classId = res.body.id
  await a.call('POST', '/rest/v1/model/notes', { token: tokA, body: { title: 't', secret: 's3cr3t' } })
})
afterAll(async () => {
  await b.close()
  await a.close()
})

test('a class narrowed in one process: the other, once it knows, lists no kept text of the old class', async () => {
  expect((await b.call('GET', '/rest/v1/model/notes', { token: tokB })).body[0].secret).toBe('s3cr3t')
  const changed = await a.call('PATCH', `/rest/v1/design/classes/${classId}`, {
    token: tokA,
    body: { opts: { max_mask: ['id', 'title'] } },
  })
  expect(changed.status).toBe(200)
  await b.call('GET', '/rest/v1/model/notes', { token: tokB }) // made before B learns of the change
  b.clock.advance(31_000) // B's class cache lapses (no KV message between two in-memory KVs)
  expect((await b.call('GET', '/rest/v1/model/notes?mask=secret', { token: tokB })).status).toBe(400)
  expect((await b.call('GET', '/rest/v1/model/notes', { token: tokB })).body[0].secret).toBeUndefined()
  expect((await b.call('GET', '/rest/v1/model/notes?_=1', { token: tokB })).body[0].secret).toBeUndefined()
})
