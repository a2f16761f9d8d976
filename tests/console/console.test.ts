// The admin console in headless Chromium, walked through as a person would: sign in on the sign-in
// page, open the console, create a user, find the user's journal record; screenshots of each step
// go to a temp directory (kept when a step fails, for a person to look at).
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Locator, Page } from 'playwright-core'
import { sharedBrowser } from '../helpers/browser'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const browser = sharedBrowser()
const shots = mkdtempSync(join(tmpdir(), 'platform-console-'))
let passed = false
beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('con.master')
  const admin = await t.adminIn('con.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'boss', name: 'Boss', pwd: 'boss-Pass1', roles: ['admin'] },
  })
})
afterAll(async () => {
  await browser.close()
  await t.close()
  if (passed) rmSync(shots, { recursive: true, force: true })
  else console.log(`console screenshots kept in ${shots}`)
})

async function textOf(locator: Locator, expected: string): Promise<string> {
  let text = ''
  for (const until = Date.now() + 5000; Date.now() < until; await Bun.sleep(20)) {
    text = ((await locator.textContent()) ?? '').trim()
    if (text.includes(expected)) break
  }
  return text
}
async function shot(page: Page, name: string) {
  const file = join(shots, `${name}.png`)
  await page.screenshot({ path: file, fullPage: true })
  expect(statSync(file).size).toBeGreaterThan(1000)
}

test('sign in, open the console, create a user, find its journal record', async () => {
  const context = await (await browser.get()).newContext()
  const page = await context.newPage()
  const blocked: string[] = []
  page.on('request', (r) => {
    if (!r.url().startsWith(t.service.url!)) blocked.push(r.url())
  })
  const violations: string[] = []
  page.on('console', (m) => {
    // answers the console expects (401 before signing in, no favicon) are not faults of the page
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) violations.push(m.text())
  })
  page.on('pageerror', (err) => violations.push(err.message))

  // before signing in the console says so
  await page.goto(`${t.service.url}/console`)
  expect(await textOf(page.locator('#signin'), 'Sign in first')).toContain('Sign in first')
  await shot(page, '1-not-signed-in')

  await page.goto(`${t.service.url}/pages/sign-in`)
  await page.getByLabel('Domain').fill('con.master')
  await page.getByLabel('Login').fill('boss')
  await page.getByLabel('Password').fill('boss-Pass1')
  await page.getByRole('button', { name: 'Sign in' }).click()
  expect(await textOf(page.locator('#status'), 'signed in')).toContain('signed in')

  await page.goto(`${t.service.url}/console`)
  expect(await textOf(page.locator('#who'), 'con.master')).toContain('boss')
  await shot(page, '2-console')

  await page.getByRole('button', { name: 'Users' }).click()
  expect(await textOf(page.locator('#status'), 'item(s)')).toContain('item(s)')
  await page.getByLabel('Login', { exact: true }).fill('dora')
  await page.getByLabel('Name', { exact: true }).fill('Dora')
  await page.getByLabel('Password', { exact: true }).fill('dora-Pass1')
  await page.getByRole('button', { name: 'Create' }).click()
  expect(await textOf(page.locator('#status'), 'item(s)')).toContain('item(s)')
  const row = page.locator('#items tbody tr', { hasText: 'dora' })
  await row.waitFor()
  await shot(page, '3-user-created')
  const dora = (
    await t.call('GET', `/rest/v1/domain/users?filter=${encodeURIComponent('{"login":"dora"}')}&mask=id`, {
      token: await t.login('con.master', 'boss', 'boss-Pass1'),
    })
  ).body[0].id as string
  expect(await row.textContent()).toContain(dora)

  await page.getByRole('button', { name: 'Journal' }).click()
  await page.getByLabel('objtype').fill('user')
  await page.getByLabel('objid').fill(dora)
  await page.getByRole('button', { name: 'Load' }).click()
  const record = page.locator('#items tbody tr', { hasText: 'create' })
  await record.waitFor()
  expect(await record.textContent()).toContain(dora)
  expect(await record.textContent()).toContain('Boss')
  await shot(page, '4-journal')

  expect(blocked).toEqual([]) // no external assets
  expect(violations).toEqual([]) // nothing refused by the content security policy, no script errors
  await context.close()
  passed = !process.env.KEEP_CONSOLE_SHOTS
})

test('the console page carries the strict content security policy', async () => {
  const res = await t.request('GET', '/console')
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
  expect(await res.text()).not.toMatch(/<script>|(src|href)="https?:/)
})
