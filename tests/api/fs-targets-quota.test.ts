// The per-domain quota of channel files (FILES_QUOTA_BYTES, FILES_QUOTA_FILES; issue 35 item 7):
// 507 naming the quota when an upload or a PUT would pass it, deletions free it, uploads at once
// cannot pass it together, one domain's files never count for another, and the channel's read shows
// the figures.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

const PATH = '/rest/v1/fs/targets/token'
let t: TestService
let a: string
let b: string

beforeAll(async () => {
  t = await testService({ listen: true, env: { FILES_QUOTA_BYTES: '1000', FILES_QUOTA_FILES: '3' } })
  for (const name of ['qa', 'qb']) {
    const d = await t.createDomain(`${name}.master`)
    await t.createUser(d.id, 'boss', 'boss-Pass1', ['admin'])
  }
  a = await t.login('qa.master', 'boss', 'boss-Pass1')
  b = await t.login('qb.master', 'boss', 'boss-Pass1')
})
afterAll(() => t.close())

const auth = (token: string) => ({ authorization: `Bearer ${token}` })
const put = (token: string, name: string, bytes: number) =>
  fetch(`${t.service.url}${PATH}/${name}`, { method: 'PUT', headers: auth(token), body: 'x'.repeat(bytes) })
const del = (token: string, name: string) =>
  fetch(`${t.service.url}${PATH}/${name}`, { method: 'DELETE', headers: auth(token) })
function upload(token: string, files: [string, number][]) {
  const form = new FormData()
  for (const [name, bytes] of files) form.append('file', new File(['x'.repeat(bytes)], name))
  return fetch(`${t.service.url}${PATH}`, { method: 'POST', headers: auth(token), body: form })
}
const names = async (token: string) =>
  ((await (await fetch(`${t.service.url}${PATH}`, { headers: auth(token) })).json()) as { name: string }[])
    .map((f) => f.name)
    .sort()

test('bytes: a write that would pass FILES_QUOTA_BYTES is a 507 naming it, and nothing of it stays', async () => {
  expect((await put(a, 'one', 600)).status).toBe(204)
  const res = await put(a, 'two', 500)
  expect(res.status).toBe(507)
  const body = (await res.json()) as {
    error_code: number
    error_message: string
    error_details: Record<string, unknown>
  }
  expect(body.error_code).toBe(1507)
  expect(body.error_message).toContain('FILES_QUOTA_BYTES')
  expect(body.error_details).toMatchObject({ quota: 'FILES_QUOTA_BYTES', used: 600, limit: 1000, needed: 500 })
  // a replacement counts what it adds: 600 -> 900 fits
  expect((await put(a, 'one', 900)).status).toBe(204)
  expect(await names(a)).toEqual(['one'])
})

test('deleting frees the quota; a multipart upload stores what fits and marks the rest over_quota', async () => {
  expect((await del(a, 'one')).status).toBe(204)
  const res = await upload(a, [
    ['p1', 400],
    ['p2', 400],
    ['p3', 400],
  ])
  expect(res.status).toBe(200)
  expect(((await res.json()) as { status: string }[]).map((r) => r.status)).toEqual(['ok', 'ok', 'over_quota'])
  const refused = await upload(a, [['p4', 300]])
  expect(refused.status).toBe(507)
  expect(((await refused.json()) as { error_details: { files: unknown[] } }).error_details.files).toHaveLength(1)
})

test('count: the fourth file is a 507 naming FILES_QUOTA_FILES', async () => {
  expect((await put(a, 'p3', 1)).status).toBe(204)
  const res = await put(a, 'p5', 1)
  expect(res.status).toBe(507)
  expect(((await res.json()) as { error_message: string }).error_message).toContain('FILES_QUOTA_FILES')
})

test("tenant walls: domain A's files never count for B", async () => {
  expect((await put(b, 'big', 1000)).status).toBe(204)
  expect((await put(b, 'more', 1)).status).toBe(507)
})

test('uploads at once do not pass the quota together', async () => {
  const token = b
  expect((await del(token, 'big')).status).toBe(204)
  const all = await Promise.all(Array.from({ length: 8 }, (_, i) => put(token, `c${i}`, 300)))
  expect(all.filter((r) => r.status === 204)).toHaveLength(3)
  expect(all.filter((r) => r.status === 507)).toHaveLength(5)
})

test("the channel's read shows the figures", async () => {
  const created = await fetch(`${t.service.url}/rest/v1/service/integration_points`, {
    method: 'POST',
    headers: { ...auth(a), 'content-type': 'application/json' },
    body: JSON.stringify({ code: 'q', type: 'public' }),
  })
  const { id } = (await created.json()) as { id: string }
  const read = (await (
    await fetch(`${t.service.url}/rest/v1/service/integration_points/${id}`, { headers: auth(a) })
  ).json()) as { code: string; files_quota: unknown }
  expect(read.code).toBe('q')
  expect(read.files_quota).toEqual({ bytes_used: 801, bytes_limit: 1000, files_used: 3, files_limit: 3 })
})
