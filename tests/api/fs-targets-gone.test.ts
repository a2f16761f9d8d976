// Channel-file uploads that a deletion of their domain overtakes: the deletion waits for requests in
// flight a few seconds only, then removes the domain's directory under them. A PUT still streaming
// then could not put its file in place, and a multipart POST went on to store its next file in a
// directory made again for a domain that no longer exists. Both answer 401 (the domain is gone),
// and nothing of the domain stays on disk. Slow: the deletion waits out its 5 s for them.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'

const URL_PATH = '/rest/v1/fs/targets/token'
let t: TestService
beforeAll(async () => {
  t = await testService()
})
afterAll(() => t.close())

/** A request body the test writes to piece by piece. */
function feed() {
  let controller!: ReadableStreamDefaultController<Uint8Array>
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c
    },
  })
  return {
    body,
    send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
    end: () => controller.close(),
  }
}

async function until(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await Bun.sleep(10)
  if (!done()) throw new Error(`${what}: not within 5 s`)
}

test('uploads in flight when their domain is deleted answer 401 and leave nothing behind', async () => {
  const domain = await t.createDomain('uploads.master')
  await t.createUser(domain.id, 'boss', 'boss-Pass1', ['admin'])
  const token = await t.login('uploads.master', 'boss', 'boss-Pass1')
  const dir = join(t.dir, 'files', domain.id)
  const upload = (method: string, path: string, contentType: string, body: ReadableStream<Uint8Array>) =>
    t.app.handle(
      new Request(`http://test.local${URL_PATH}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType, 'x-real-ip': '10.0.0.1' },
        body,
        duplex: 'half',
      } as RequestInit),
    )

  const put = feed()
  const putting = upload('PUT', '/slow.txt', 'text/plain', put.body)
  put.send('first chunk\n')
  const post = feed()
  const posting = upload('POST', '', 'multipart/form-data; boundary=XX', post.body)
  const part = (name: string, text: string) =>
    `--XX\r\nContent-Disposition: form-data; name="f"; filename="${name}"\r\n\r\n${text}\r\n`
  post.send(`${part('one.txt', 'first file')}--XX\r\n`) // the delimiter ends the first file: it is stored
  const writing = () => existsSync(join(dir, 'one.txt')) && readdirSync(dir).some((n) => n.startsWith('.part-'))
  await until('both uploads writing', writing)

  const master = await t.login('master', 'admin', ADMIN_PASSWORD)
  const deleted = await t.call('DELETE', `/rest/v1/domain/domains/${domain.id}`, { token: master })
  expect(deleted.status).toBe(204)
  expect(existsSync(dir)).toBe(false)

  put.send('second chunk\n')
  put.end()
  post.send(part('two.txt', 'second file').slice('--XX\r\n'.length))
  post.send('--XX--\r\n')
  post.end()
  for (const res of [await putting, await posting]) {
    expect(res.status).toBe(401)
    expect(await res.json()).toMatchObject({ error_message: 'the domain of this session no longer exists' })
  }
  expect(existsSync(dir)).toBe(false)
}, 20_000)
