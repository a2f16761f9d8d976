// Channel files reached with a channel token: admitted when the channel has opts.allow_files_api.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let admin: string
beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('files-ch.master')
  admin = await t.adminIn('files-ch.master')
})
afterAll(() => t.close())

const url = (path = '') => `${t.service.url}/rest/v1/fs/targets/token${path}`
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

test('a channel token reaches the files when its channel has opts.allow_files_api, else 403', async () => {
  expect((await fetch(url('/note.txt'), { method: 'PUT', headers: bearer(admin), body: 'hello' })).status).toBe(204)
  const channel = async (code: string, allow: boolean) =>
    (
      await t.call('POST', '/rest/v1/service/integration_points', {
        token: admin,
        body: { code, type: 'public', opts: { allow_files_api: allow } },
      })
    ).body.token_local as string
  const open = await channel('files-open', true)
  const closed = await channel('files-closed', false)
  expect(await (await fetch(url('/note.txt'), { headers: bearer(open) })).text()).toBe('hello')
  const refused = await fetch(url('/note.txt'), { headers: bearer(closed) })
  expect(refused.status).toBe(403)
  expect(((await refused.json()) as { error_message: string }).error_message).toContain('allow_files_api')
})
