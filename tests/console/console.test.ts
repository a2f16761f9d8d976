// The admin console in headless Chromium, walked through as an administrator would: sign in on the
// sign-in page, create a user with a generated password and edit it (and meet the If-Match conflict
// when the user was changed meanwhile), page, sort and filter 250 groups, delete with confirmations,
// create a channel and copy its signing secret once, switch domain and back, sign out; at 1280 and
// 390 px. Screenshots of each screen go to a temp directory, kept when a test fails (or with
// KEEP_CONSOLE_SHOTS). Any browser console error fails the test.
import { afterAll, beforeAll, expect } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { consoleWalks, listStatus as status, NARROW, navigate, textOf, WIDE } from './walk'

let t: TestService
let admin: string
const { walk, close, open, shot, signIn } = consoleWalks('main', () => t)

beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('con.master')
  admin = await t.adminIn('con.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'boss', name: 'Boss', pwd: 'boss-Pass1', roles: ['admin'] },
  })
  await Promise.all(
    Array.from({ length: 250 }, (_, i) =>
      t.call('POST', '/rest/v1/domain/groups', {
        token: admin,
        body: { code: `g${String(i + 1).padStart(3, '0')}`, name: `g${String(i + 1).padStart(3, '0')}` },
      }),
    ),
  )
})
afterAll(async () => {
  await close()
  await t.close()
})

walk('before signing in the console says so; its page carries the strict content security policy', async () => {
  const { page, done } = await open(WIDE)
  await page.goto(`${t.service.url}/console`)
  expect(await textOf(page.locator('#signin'), 'Sign in first')).toContain('Sign in first')
  await shot(page, '01-not-signed-in')
  await done()
  const res = await t.request('GET', '/console')
  expect(res.headers.get('content-security-policy')).toContain("default-src 'none'")
  expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")
  expect(await res.text()).not.toMatch(/<script>|<style|style=|(src|href)="https?:/)
  const js = await t.request('GET', '/console/app.js')
  expect(js.headers.get('content-type')).toStartWith('text/javascript')
  expect((await js.text()).length).toBeGreaterThan(10_000)
  const css = await t.request('GET', '/console/app.css')
  expect(css.headers.get('content-type')).toStartWith('text/css')
})

walk(
  'a user: created with a generated password shown once, edited, and a conflicting change is said plainly',
  async () => {
    const { page, done } = await open(WIDE)
    await signIn(page, 'con.master', 'boss', 'boss-Pass1')
    expect(await textOf(page.locator('#who'), 'con.master')).toContain('Boss (boss)')
    await shot(page, '02-overview')

    await navigate(page, 'Users')
    expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
    await shot(page, '03-users')
    await page.getByRole('link', { name: 'New user' }).click()
    await page.getByRole('heading', { level: 1, name: 'New user' }).waitFor()
    await page.getByLabel('Login', { exact: true }).fill('dora')
    await page.getByLabel('Name', { exact: true }).fill('Dora')
    await page.getByLabel('Email').fill('dora@example.com')
    await page.getByRole('button', { name: 'Generate' }).click()
    await shot(page, '04-user-form')
    await page.getByRole('button', { name: 'Create', exact: true }).click()

    const dialog = page.getByRole('dialog', { name: 'The password of dora' })
    await dialog.waitFor()
    expect(await dialog.textContent()).toContain('You will not see this again')
    const pwd = await dialog.getByLabel('Password').inputValue()
    expect(pwd).toMatch(/^[A-Za-z0-9]{20}$/)
    await dialog.getByRole('button', { name: 'Copy' }).click()
    expect(await textOf(dialog.getByRole('status'), 'Copied')).toBe('Copied.')
    expect(await page.evaluate('navigator.clipboard.readText()')).toBe(pwd)
    await shot(page, '05-password-once')
    await dialog.getByRole('button', { name: 'Done' }).click()
    await page.getByRole('heading', { level: 1, name: 'User dora' }).waitFor()
    expect(await t.login('con.master', 'dora', pwd)).toBeString() // the generated password is the user's

    await page.getByLabel('Name', { exact: true }).fill('Dora Explorer')
    await page.getByRole('button', { name: 'Save' }).click()
    expect(await textOf(page.getByRole('status').last(), 'Saved.')).toBe('Saved.')
    const dora = await t.call('GET', `/rest/v1/domain/users?filter=${encodeURIComponent('{"login":"dora"}')}`, {
      token: admin,
    })
    expect(dora.body[0].name).toBe('Dora Explorer')

    // someone else changes the user meanwhile: the save is refused with a clear message, then reloaded
    await t.call('PATCH', `/rest/v1/domain/users/${dora.body[0].id}`, { token: admin, body: { name: 'Dora (API)' } })
    await page.getByLabel('Title').fill('Chief')
    await page.getByRole('button', { name: 'Save' }).click()
    const conflict = page.locator('.conflict')
    expect(await textOf(conflict, 'Someone else changed this user first')).toContain('Your changes were not saved')
    await shot(page, '06-conflict')
    await conflict.getByRole('button', { name: 'Reload' }).click()
    await conflict.waitFor({ state: 'detached' })
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Dora (API)')
    await page.getByLabel('Title').fill('Chief')
    await page.getByRole('button', { name: 'Save' }).click()
    expect(await textOf(page.getByRole('status').last(), 'Saved.')).toBe('Saved.')
    const after = await t.call('GET', `/rest/v1/domain/users/${dora.body[0].id}`, { token: admin })
    expect([after.body.name, after.body.opts.title]).toEqual(['Dora (API)', 'Chief'])

    // deleting oneself takes a second confirmation; cancelling it keeps the user
    await navigate(page, 'Users')
    await page.getByRole('button', { name: 'Delete boss' }).click()
    await page.getByRole('dialog', { name: 'Delete this user?' }).getByRole('button', { name: 'Delete boss' }).click()
    const self = page.getByRole('dialog', { name: 'Delete yourself?' })
    expect(await self.textContent()).toContain('the user you are signed in as')
    await shot(page, '07-delete-yourself')
    await self.getByRole('button', { name: 'Cancel' }).click()
    await self.waitFor({ state: 'detached' })
    expect(await textOf(status(page), /^1–2 of 2$/)).toBe('1–2 of 2')
    await done()
  },
)

walk('250 groups: paged with the total, sorted, filtered, one deleted after its confirmation', async () => {
  const { page, done } = await open(WIDE)
  await signIn(page, 'con.master', 'boss', 'boss-Pass1')
  await navigate(page, 'Groups')
  expect(await textOf(status(page), /^1–25 of 250$/)).toBe('1–25 of 250')
  await page.getByRole('button', { name: 'Next page' }).click()
  expect(await textOf(status(page), /^26–50 of 250$/)).toBe('26–50 of 250')
  expect(await page.locator('nav.pager').textContent()).toContain('Page 2 of 10')
  await page.getByLabel('Per page').selectOption('100')
  expect(await textOf(status(page), /^1–100 of 250$/)).toBe('1–100 of 250')
  await page.getByRole('button', { name: 'Name', exact: true }).click()
  expect(await textOf(page.locator('tbody tr').first(), 'g001')).toContain('g001')
  await page.getByRole('button', { name: /^Name/ }).click()
  expect(await textOf(page.locator('tbody tr').first(), 'g250')).toContain('g250')
  expect(await page.locator('th[aria-sort="descending"]').textContent()).toContain('Name')
  await shot(page, '08-groups-paged')

  await page.getByText('Filter', { exact: true }).click()
  await page.getByLabel('Name', { exact: true }).fill('g12')
  await page.getByRole('button', { name: 'Apply', exact: true }).click()
  expect(await textOf(status(page), /^1–10 of 10$/)).toBe('1–10 of 10') // g120–g129
  expect(await page.getByLabel('Filter as JSON (for experts)').inputValue()).toBe(
    '["ilike",["property","name"],"%g12%"]',
  )
  await page.getByLabel('Filter as JSON (for experts)').fill('{"name":"g007"}')
  await page.getByRole('button', { name: 'Apply JSON' }).click()
  expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
  await page.getByText('Columns', { exact: true }).click()
  await page.getByRole('checkbox', { name: 'opts.title' }).uncheck()
  await page.locator('thead').getByText('opts.title').waitFor({ state: 'detached' })
  await shot(page, '09-groups-filtered')

  await page.getByRole('button', { name: 'Delete g007' }).click()
  const confirmation = page.getByRole('dialog', { name: 'Delete this group?' })
  expect(await confirmation.textContent()).toContain('The group “g007” will be deleted')
  await shot(page, '10-delete-confirmation')
  await confirmation.getByRole('button', { name: 'Delete g007' }).click()
  expect(await textOf(status(page), /^No groups match the filter.$/)).toBe('No groups match the filter.')
  const left = await t.call('GET', '/rest/v1/domain/groups?count=true&limit=1', { token: admin })
  expect(left.headers.get('x-total-count')).toBe('249')
  await done()
})

walk('a channel: its signing secret shown once and copied, then rotated; sign out', async () => {
  const { page, done } = await open(WIDE)
  await signIn(page, 'con.master', 'boss', 'boss-Pass1')
  await navigate(page, 'Channels')
  await page.getByRole('link', { name: 'New channel' }).click()
  await page.getByRole('heading', { level: 1, name: 'New channel' }).waitFor()
  await page.getByLabel('Code', { exact: true }).fill('crm')
  await page.getByLabel('Type').selectOption('subscr')
  await page.getByLabel('URL').fill('https://crm.example.com/hook')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  const dialog = page.getByRole('dialog', { name: 'The signing secret of crm' })
  await dialog.waitFor()
  expect(await dialog.textContent()).toContain('You will not see this again')
  const secret = await dialog.getByLabel('Signing secret').inputValue()
  expect(secret).toMatch(/^whsec_/)
  await dialog.getByRole('button', { name: 'Copy' }).click()
  expect(await textOf(dialog.getByRole('status'), 'Copied')).toBe('Copied.')
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(secret)
  await shot(page, '11-channel-secret')
  await dialog.getByRole('button', { name: 'Done' }).click()
  await page.getByRole('heading', { level: 1, name: 'Channel crm' }).waitFor()
  expect(await page.content()).not.toContain(secret) // shown once: the channel's page does not hold it

  await page.getByRole('button', { name: 'Rotate signing secret' }).click()
  await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate' }).click()
  const rotated = page.getByRole('dialog', { name: 'The new signing secret of crm' })
  const next = await rotated.getByLabel('Signing secret').inputValue()
  expect(next).toMatch(/^whsec_/)
  expect(next).not.toBe(secret)
  await shot(page, '12-channel-rotated')
  await rotated.getByRole('button', { name: 'Done' }).click()

  await page.getByRole('button', { name: 'Sign out' }).click()
  expect(await textOf(page.locator('#signin'), 'Sign in first')).toContain('Sign in first')
  await page.reload()
  expect(await textOf(page.locator('#signin'), 'Sign in first')).toContain('Sign in first')
  await done()
})

walk('the master administrator switches into a working domain and back', async () => {
  const { page, done } = await open(WIDE)
  await signIn(page, 'master', 'admin', ADMIN_PASSWORD)
  expect(await textOf(page.locator('#where'), 'master')).toBe('master')
  await navigate(page, 'Domains')
  expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
  await page.getByLabel('Domain', { exact: true }).selectOption('con.master')
  await page.getByRole('button', { name: 'Switch' }).click()
  expect(await textOf(page.locator('#where'), 'con.master')).toBe('con.master')
  const nav = page.getByRole('navigation', { name: 'Areas' })
  await nav.getByRole('link', { name: 'SIP accounts' }).waitFor()
  expect(await nav.getByRole('link', { name: 'Domains' }).count()).toBe(0)
  await navigate(page, 'Users')
  expect(await textOf(status(page), /^1–2 of 2$/)).toBe('1–2 of 2') // con.master's users
  await shot(page, '16-switched')
  await page.getByLabel('Domain', { exact: true }).selectOption('master')
  await page.getByRole('button', { name: 'Switch' }).click()
  expect(await textOf(page.locator('#where'), /^master$/)).toBe('master')
  await nav.getByRole('link', { name: 'Domains' }).waitFor()
  await done()
})

walk('at 390 px: the menu, a list that scrolls inside itself, a form and a dialog fit the screen', async () => {
  const { page, done } = await open(NARROW)
  await signIn(page, 'con.master', 'boss', 'boss-Pass1')
  const fits = () => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')
  expect(await fits()).toBe(true)
  await shot(page, '17-narrow-overview')
  await navigate(page, 'Groups')
  expect(await textOf(status(page), /^1–25 of 249$/)).toBe('1–25 of 249')
  expect(await fits()).toBe(true)
  await shot(page, '18-narrow-groups')
  await navigate(page, 'Users')
  await page.getByRole('link', { name: 'New user' }).click()
  await page.getByRole('heading', { level: 1, name: 'New user' }).waitFor()
  await page.getByLabel('Login', { exact: true }).waitFor()
  expect(await fits()).toBe(true)
  await shot(page, '19-narrow-user-form')
  // keyboard only: tab to the login, type, generate a password, create
  await page.getByLabel('Login', { exact: true }).focus()
  await page.keyboard.type('eve')
  await page.getByRole('button', { name: 'Generate' }).focus()
  await page.keyboard.press('Enter')
  await page.getByRole('button', { name: 'Create', exact: true }).focus()
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog', { name: 'The password of eve' })
  await dialog.waitFor()
  expect(await fits()).toBe(true)
  await shot(page, '20-narrow-dialog')
  await page.keyboard.press('Escape')
  await page.getByRole('heading', { level: 1, name: 'User eve' }).waitFor()
  await done()
})
