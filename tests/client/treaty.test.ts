// The typed client (client/index.ts, Eden treaty over the app's type) against a real server on its
// public port: sign in, make a domain and a user in it, list with a filter, LOOKUP, and a model
// class's records. The calls are type-checked with the rest of the code (`npm test` runs tsc): the
// lines marked @ts-expect-error must stay errors, so a wrong member fails the type check.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { lookup, modelRecords, type PlatformClient, platformClient } from '../../client'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

let t: TestService
let api: PlatformClient
beforeAll(async () => {
  t = await testService({ listen: true })
})
afterAll(() => t.close())

test('sign in, make a domain and a user in it, list them with a filter and LOOKUP one', async () => {
  const anonymous = platformClient(t.service.url!)
  const signIn = await anonymous.rest.v1.iam.sessions.post({
    domain: 'master',
    login: 'admin',
    pwd: ADMIN_PASSWORD,
    session_type: 'token',
  })
  expect(signIn.status).toBe(200)
  const token = signIn.data!.session_token
  api = platformClient(t.service.url!, { token })

  const domain = await api.rest.v1.domain.domains.post({ name: 'typed.master' })
  expect([domain.status, domain.data?.name]).toEqual([200, 'typed.master'])
  expect((await api.rest.v1.iam.sessions.current.patch({ domain: 'typed.master' })).status).toBe(204)

  const made = await api.rest.v1.domain.users.post({ login: 'ann', name: 'Ann', pwd: 'ann-Pass1', roles: ['user'] })
  expect(made.status).toBe(200)
  expect(made.data!.login).toBe('ann')
  const id = made.data!.id

  const listed = await api.rest.v1.domain.users.get({
    query: { filter: JSON.stringify({ login: 'ann' }), count: 'true' },
  })
  expect(listed.status).toBe(200)
  expect(listed.data!.map((u) => u.login)).toEqual(['ann'])
  expect(listed.headers).toBeDefined()

  const one = await api.rest.v1.domain.users({ id }).get()
  expect(one.data!.name).toBe('Ann')

  // LOOKUP travels as POST + X-HTTP-Method-Override (fetch sends no LOOKUP)
  const found = await lookup(api.rest.v1.domain.users, 'ann')
  expect(found.data).toEqual([id])

  // an error comes back typed by its status, with the error body
  const refused = await api.rest.v1.domain.users.post({ login: 'ann' })
  expect(refused.status).toBe(409)
  expect(refused.error?.value).toMatchObject({ error_code: 1409 })
})

test("a model class's records, typed by the caller", async () => {
  const made = await api.rest.v1.design.classes.post({
    classname: 'crm/deals',
    properties: [
      { name: 'title', data_type: 'string', required: true },
      { name: 'amount', data_type: 'int' },
    ],
  })
  expect(made.status).toBe(200)
  const deals = modelRecords<{ title: string; amount?: number }>(api, 'crm/deals')
  const deal = await deals.create({ title: 'First', amount: 5 })
  expect((await deals.lookup('First')).status).toBe(404) // no lookup properties: nothing is a key
  expect(deal.status).toBe(200)
  const read = await deals.read(deal.data!.id)
  expect([read.data?.title, read.data?.amount]).toEqual(['First', 5])
  expect((await deals.list({ filter: JSON.stringify({ title: 'First' }) })).data!.map((d) => d.id)).toEqual([
    deal.data!.id,
  ])
  expect((await deals.change(deal.data!.id, { amount: 6 })).data?.amount).toBe(6)
  expect((await deals.remove(deal.data!.id)).status).toBe(204)
})

/** Never run: what the type check must refuse. */
export async function wrongCalls(client: PlatformClient) {
  // @ts-expect-error a body member the route does not take
  await client.rest.v1.domain.users.post({ logn: 'ann' })
  const user = await client.rest.v1.domain.users({ id: 'x' }).get()
  // @ts-expect-error an answer member a user does not have
  user.data?.surname
  // @ts-expect-error a query parameter the list does not take
  await client.rest.v1.domain.users.get({ query: { limt: '5' } })
  // @ts-expect-error no such route
  await client.rest.v1.domain.customers.get()
  // @ts-expect-error a LOOKUP key is a string or a number
  await lookup(client.rest.v1.domain.users, { login: 'ann' })
}
