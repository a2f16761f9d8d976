// The system web pages end to end in headless Chromium: open the mailed link, submit the form, then
// sign in with the new password on the sign-in page.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
import { sharedBrowser } from '../helpers/browser'
import { startMailCapture } from '../helpers/mail-capture'
import { testService, type TestService } from '../helpers/service'

let t: TestService
let capture: Awaited<ReturnType<typeof startMailCapture>>
const browser = sharedBrowser()
let admin: string

beforeAll(async () => {
  capture = await startMailCapture()
  t = await testService({ listen: true, env: { RESEND_API_KEY: 're_test', RESEND_BASE_URL: capture.url } })
  await t.createDomain('web.master')
  admin = await t.adminIn('web.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'ann', name: 'Ann', pwd: 'ann-Pass1', opts: { email: 'ann@example.com' } },
  })
})
afterAll(async () => {
  await browser.close()
  await t.close()
  capture.stop()
})

/**
 * The link of the newest mail to an address, once the mail worker has delivered what is queued.
 * Without PUBLIC_URL, on PORT=0, it points at the port the system picked.
 */
async function lastLink(to: string): Promise<string> {
  await t.run('mail-outbox')
  const link = capture.linkIn(capture.to(to).at(-1)!)!
  expect(link.startsWith(`${t.service.url}/pages/`)).toBe(true)
  return link
}

async function open(path: string): Promise<Page> {
  const context = await (await browser.get()).newContext()
  const page = await context.newPage()
  await page.goto(path.startsWith('http') ? path : `${t.service.url}${path}`)
  return page
}

/** The element's text once it settles on `expected` (or the last text seen after 5 s, for the assertion to show). */
async function textOf(locator: Locator, expected: string): Promise<string> {
  let text = ''
  for (const until = Date.now() + 5000; Date.now() < until; await Bun.sleep(20)) {
    text = ((await locator.textContent()) ?? '').trim()
    if (text.includes(expected)) break
  }
  return text
}

async function signInOnPage(domain: string, login: string, pwd: string): Promise<Page> {
  const page = await open('/pages/sign-in')
  await page.getByLabel('Domain').fill(domain)
  await page.getByLabel('Login').fill(login)
  await page.getByLabel('Password').fill(pwd)
  await page.getByRole('button', { name: 'Sign in' }).click()
  return page
}

describe('sign in', () => {
  test('a wrong password is said plainly; the right one signs in and shows who is signed in', async () => {
    const wrong = await signInOnPage('web.master', 'ann', 'nope')
    expect(await textOf(wrong.getByRole('status'), 'invalid domain, login or password')).toBe(
      'invalid domain, login or password',
    )
    expect(await wrong.getByLabel('Password').getAttribute('aria-invalid')).toBeNull()
    const page = await signInOnPage('web.master', 'ann', 'ann-Pass1')
    expect(await textOf(page.locator('#whoami'), 'Signed in as Ann (ann) in web.master.')).toBe(
      'Signed in as Ann (ann) in web.master.',
    )
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('button', { name: 'Sign in' }).waitFor({ state: 'visible' })
  })
})

describe('mailed links', () => {
  test('password recovery: ask on the page, open the link, set the password, sign in with it', async () => {
    const ask = await open('/pages/forgot-password')
    await ask.getByLabel('Login or e-mail address').fill('ann@example.com')
    await ask.getByRole('button', { name: 'Send the link' }).click()
    expect(await textOf(ask.getByRole('status'), 'a link is on its way')).toContain('a link is on its way')
    const page = await open(await lastLink('ann@example.com'))
    await page.getByLabel('New password', { exact: true }).fill('ann-Pass2')
    await page.getByLabel('Repeat the new password').fill('ann-Pass-typo')
    await page.getByRole('button', { name: 'Set the password' }).click()
    expect(await textOf(page.getByRole('status'), 'The two passwords differ.')).toBe('The two passwords differ.')
    await page.getByLabel('Repeat the new password').fill('ann-Pass2')
    await page.getByRole('button', { name: 'Set the password' }).click()
    expect(await textOf(page.getByRole('status'), 'Your password is set.')).toBe(
      'Your password is set. You can sign in with it now.',
    )
    const signedIn = await signInOnPage('web.master', 'ann', 'ann-Pass2')
    expect(await textOf(signedIn.locator('#whoami'), 'Signed in as Ann (ann) in web.master.')).toBe(
      'Signed in as Ann (ann) in web.master.',
    )
  })

  test('a policy violation is shown at the field', async () => {
    await t.call('POST', '/rest/v1/iam/pwd_reset_requests', { body: { key: 'ann', domain: 'web.master' } })
    const page = await open(await lastLink('ann@example.com'))
    await page.getByLabel('New password', { exact: true }).fill('has spaces in it')
    await page.getByLabel('Repeat the new password').fill('has spaces in it')
    await page.getByRole('button', { name: 'Set the password' }).click()
    expect(await textOf(page.getByRole('status'), 'password may contain only A-Z a-z 0-9 and _ - . ~ !')).toBe(
      'password may contain only A-Z a-z 0-9 and _ - . ~ !',
    )
    expect(await page.getByLabel('New password', { exact: true }).getAttribute('aria-invalid')).toBe('true')
  })

  test('invitation: open the link, choose login, name and password, sign in', async () => {
    const bob = (
      await t.call('POST', '/rest/v1/domain/users', {
        token: admin,
        body: { login: 'bob', opts: { email: 'bob@example.com' } },
      })
    ).body.id
    expect((await t.call('POST', '/rest/v1/iam/invites', { token: admin, body: { userid: bob } })).status).toBe(200)
    const page = await open(await lastLink('bob@example.com'))
    await page.getByLabel('Login (optional)').fill('robert')
    await page.getByLabel('Name (optional)').fill('Robert')
    await page.getByLabel('Password', { exact: true }).fill('bob-Pass1')
    await page.getByLabel('Repeat the new password').fill('bob-Pass1')
    await page.getByRole('button', { name: 'Accept' }).click()
    expect(await textOf(page.getByRole('status'), 'Welcome! Your account is ready. You can sign in now.')).toBe(
      'Welcome! Your account is ready. You can sign in now.',
    )
    const signedIn = await signInOnPage('web.master', 'robert', 'bob-Pass1')
    expect(await textOf(signedIn.locator('#whoami'), 'Signed in as Robert (robert) in web.master.')).toBe(
      'Signed in as Robert (robert) in web.master.',
    )
  })

  test('self-registration: register on the page, open the confirmation link, choose a password, sign in', async () => {
    await t.call('PATCH', '/rest/v1/domain/settings/self_register_allowed', { token: admin, body: { value: true } })
    const page = await open('/pages/self-register')
    await page.getByLabel('Domain').fill('web.master')
    await page.getByLabel('Login').fill('cleo')
    await page.getByLabel('Name').fill('Cleo')
    await page.getByLabel('E-mail address').fill('cleo@example.com')
    await page.getByRole('button', { name: 'Register' }).click()
    expect(
      await textOf(page.getByRole('status'), 'Check your e-mail: the confirmation link is valid for one day.'),
    ).toBe('Check your e-mail: the confirmation link is valid for one day.')
    const confirm = await open(await lastLink('cleo@example.com'))
    await confirm.getByLabel('Password', { exact: true }).fill('cleo-Pass1')
    await confirm.getByLabel('Repeat the new password').fill('cleo-Pass1')
    await confirm.getByRole('button', { name: 'Create the account' }).click()
    expect(await textOf(confirm.getByRole('status'), 'Your account is ready. You can sign in now.')).toBe(
      'Your account is ready. You can sign in now.',
    )
    const signedIn = await signInOnPage('web.master', 'cleo', 'cleo-Pass1')
    expect(await textOf(signedIn.locator('#whoami'), 'Signed in as Cleo (cleo) in web.master.')).toBe(
      'Signed in as Cleo (cleo) in web.master.',
    )
  })

  test('a link without its id says so instead of showing the form', async () => {
    const page = await open('/pages/reset-password')
    expect(
      await textOf(page.getByRole('status'), 'This link is incomplete. Open the whole link from your e-mail.'),
    ).toBe('This link is incomplete. Open the whole link from your e-mail.')
    expect(await page.locator('form').isHidden()).toBe(true)
  })
})

test('pages carry a strict content security policy and no referrer', async () => {
  const res = await fetch(`${t.service.url}/pages/reset-password?id=x`)
  expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8')
  expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
  expect(res.headers.get('referrer-policy')).toBe('no-referrer')
  const html = await res.text()
  expect(html).not.toMatch(/https?:\/\//) // no external assets
  for (const id of (html.match(/<input id="([^"]+)"/g) ?? []).map((m) => m.slice(11, -1)))
    expect(html).toContain(`<label for="${id}">`)
})

test("an uploaded HTML or SVG file opened in the browser runs none of its script on the service's origin", async () => {
  const script = "document.title = 'ran'; fetch('/rest/v1/iam/sessions/current', { method: 'PATCH' })"
  const files = {
    'evil.html': `<html><head><title>file</title></head><body><script>${script}</script>page</body></html>`,
    'evil.svg': `<svg xmlns="http://www.w3.org/2000/svg"><title>file</title><script>${script}</script></svg>`,
  }
  const base = `${t.service.url}/rest/v1/fs/targets/token`
  const headers = { authorization: `Bearer ${admin}` }
  for (const [name, body] of Object.entries(files)) {
    expect((await fetch(`${base}/${name}`, { method: 'PUT', headers, body })).status).toBe(204)
    const context = await (await browser.get()).newContext({ extraHTTPHeaders: headers })
    const page = await context.newPage()
    const calls: string[] = []
    page.on('request', (r) => void (r.url().includes('/iam/') && calls.push(r.url())))
    const res = await page.goto(`${base}/${name}`)
    expect(res?.status()).toBe(200)
    await Bun.sleep(100)
    expect([name, await page.title(), calls]).toEqual([name, 'file', []])
    await context.close()
  }
})
