// Secrets never reach the logs: a service process at LOG_LEVEL=debug goes through what handles
// secrets (sign-ins right and wrong, a user created with a password, a password changed, a channel
// with its token and signing secret, the secret rotated, a session token used), and its whole output
// is searched for every one of them.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ServiceProcess, startProcess } from '../helpers/process'
import { ADMIN_PASSWORD } from '../helpers/service'

const dir = mkdtempSync(join(tmpdir(), 'platform-secrets-'))
let node: ServiceProcess | undefined
afterAll(() => {
  node?.proc.kill('SIGKILL')
  rmSync(dir, { recursive: true, force: true })
})

test('no password, token or signing secret appears in a debug-level log', async () => {
  node = await startProcess({ DATA_DIR: dir, LOG_LEVEL: 'debug' })
  const secrets: string[] = [ADMIN_PASSWORD]
  const call = async (method: string, path: string, body?: unknown, token?: string) => {
    const res = await fetch(`${node!.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    return { status: res.status, body: text ? JSON.parse(text) : null }
  }
  const signIn = (domain: string, login: string, pwd: string) =>
    call('POST', '/rest/v1/iam/sessions', { domain, login, pwd, session_type: 'token' })

  const admin = (await signIn('master', 'admin', ADMIN_PASSWORD)).body.session_token as string
  secrets.push(admin, 'Wrong-Guess_123')
  await signIn('master', 'admin', 'Wrong-Guess_123')
  await call('POST', '/rest/v1/domain/domains', { name: 'sec.master' }, admin)
  await call('PATCH', '/rest/v1/iam/sessions/current', { domain: 'sec.master' }, admin)
  secrets.push('Ann-First_Pass1', 'Ann-Second_Pass2')
  expect(
    (await call('POST', '/rest/v1/domain/users', { login: 'ann', pwd: 'Ann-First_Pass1', roles: ['admin'] }, admin))
      .status,
  ).toBe(200)
  const ann = (await signIn('sec.master', 'ann', 'Ann-First_Pass1')).body.session_token as string
  secrets.push(ann)
  const changed = await call(
    'POST',
    '/rest/v1/iam/pwd_reset_requests',
    { current_pwd: 'Ann-First_Pass1', new_pwd: 'Ann-Second_Pass2' },
    ann,
  )
  expect(changed.status).toBe(200)
  const channel = await call('POST', '/rest/v1/service/integration_points', { code: 'c1', type: 'subscr' }, admin)
  expect(channel.status).toBe(200)
  secrets.push(channel.body.token_local, channel.body.secret)
  const rotated = await call('POST', `/rest/v1/service/integration_points/${channel.body.id}/secret`, undefined, admin)
  secrets.push(rotated.body.secret)
  // the channel's token acts as the channel
  expect((await call('GET', '/rest/v1/reference/extobjs', undefined, channel.body.token_local)).status).toBeLessThan(
    500,
  )

  await Bun.sleep(100) // the log lines of the last requests are written in the next turn
  const output = node.out()
  expect(output).toContain('"msg":"request"') // the log is there, at debug level
  expect(secrets.filter((s) => typeof s === 'string' && s.length > 0 && output.includes(s))).toEqual([])
})
