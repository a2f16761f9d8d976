// The console's model classes, live lists and the collections of its own pages, in headless Chromium:
// a class with three properties made in the property editor, a record through the form its
// properties make and the record's history; a list that shows a user created and deleted through the
// API without reloading (over /ws, signed in by the session cookie under connect-src 'self'), also
// after its socket dropped; the licence, invitations and channel files at 390 px. Screenshots as in
// console.test.ts; any browser console error fails a walk.
import { afterAll, beforeAll, expect } from 'bun:test'
import { installationId } from '~/master/licence'
import { issueLicence } from '../../scripts/licence-issue'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { consoleWalks, listStatus as status, NARROW, navigate, textOf, WIDE } from './walk'

let t: TestService
let admin: string
const { walk, close, open, shot, signIn } = consoleWalks('model-live', () => t)

beforeAll(async () => {
  t = await testService({ listen: true })
  await t.createDomain('live.master')
  admin = await t.adminIn('live.master')
  await t.call('POST', '/rest/v1/domain/users', {
    token: admin,
    body: { login: 'boss', name: 'Boss', pwd: 'boss-Pass1', roles: ['admin'] },
  })
})
afterAll(async () => {
  await close()
  await t.close()
})

/** Commits reach subscribers through the journal pump, which the tests drive. */
const pump = () => t.run('journal-pump')

walk('a class with three properties from the property editor, a record through its form, its history', async () => {
  const { page, done } = await open(WIDE)
  await signIn(page, 'live.master', 'boss', 'boss-Pass1')
  await navigate(page, 'Classes')
  await page.getByRole('link', { name: 'New class' }).click()
  await page.getByRole('heading', { level: 1, name: 'New class' }).waitFor()
  await page.getByLabel('Classname').fill('crm/deals')
  const property = (n: number) => page.getByRole('group', { name: `Property ${n}`, exact: true })
  for (let n = 1; n <= 3; n++) await page.getByRole('button', { name: 'Add a property' }).click()
  await property(1).getByLabel('Name', { exact: true }).fill('title')
  await property(1).getByLabel('Caption').fill('What is sold')
  await property(1).getByLabel('Required').check()
  await property(2).getByLabel('Name', { exact: true }).fill('stage')
  await property(2).getByLabel('Data type').selectOption('enum')
  await property(2).getByLabel('Items').fill('new\nwon\nlost')
  await property(2).getByLabel('Default').selectOption('new')
  await property(3).getByLabel('Name', { exact: true }).fill('amount')
  await property(3).getByLabel('Data type').selectOption('float')
  await property(3).getByLabel('Default').fill('abc')
  await shot(page, '01-class-properties')
  // a default that is not of its type is refused before sending, the control marked
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  expect(await textOf(page.getByRole('alert'), 'must be a number')).toBe('The default of amount must be a number')
  expect(await property(3).getByLabel('Default').getAttribute('aria-invalid')).toBe('true')
  await property(3).getByLabel('Default').fill('')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: 'Class crm/deals' }).waitFor()
  const made = await t.call(
    'GET',
    `/rest/v1/design/classes?filter=${encodeURIComponent('{"classname":"crm/deals"}')}`,
    {
      token: admin,
    },
  )
  expect(made.body[0].properties).toEqual([
    { name: 'title', caption: 'What is sold', data_type: 'string', required: true },
    { name: 'stage', data_type: 'enum', items: ['new', 'won', 'lost'], default: 'new' },
    { name: 'amount', data_type: 'float' },
  ])
  // the class's page edits the same rows: a default for the amount
  expect(await property(2).getByLabel('Items').inputValue()).toBe('new\nwon\nlost')
  await property(3).getByLabel('Default').fill('100')
  await page.getByRole('button', { name: 'Save' }).click()
  expect(await textOf(page.getByRole('status').last(), 'Saved.')).toBe('Saved.')
  const saved = await t.call('GET', `/rest/v1/design/classes/${made.body[0].id}`, { token: admin })
  expect(saved.body.properties[2]).toEqual({ name: 'amount', data_type: 'float', default: 100 })
  await shot(page, '02-class-page')

  await page.getByRole('link', { name: 'Records of crm/deals' }).click()
  await page.getByRole('heading', { level: 1, name: 'crm/deals' }).waitFor()
  expect(await textOf(status(page), /^No crm\/deals\.$/)).toBe('No crm/deals.')

  // the record's form is made of the class's properties: required, defaults, enum
  await page.getByRole('link', { name: 'New record' }).click()
  await page.getByRole('heading', { level: 1, name: 'New record' }).waitFor()
  expect(await page.getByLabel('Title', { exact: true }).getAttribute('required')).not.toBeNull()
  expect(await page.locator('#f-title-hint').textContent()).toContain('What is sold')
  expect(await page.getByLabel('Stage').inputValue()).toBe('new')
  expect(await page.getByLabel('Amount').inputValue()).toBe('100')
  await page.getByLabel('Title', { exact: true }).fill('Big deal')
  await page.getByLabel('Amount').fill('1250.5')
  await shot(page, '03-record-form')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: /^Record / }).waitFor()
  const records = await t.call('GET', '/rest/v1/model/crm/deals', { token: admin })
  expect(records.body).toMatchObject([{ title: 'Big deal', stage: 'new', amount: 1250.5 }])

  // its history: the create, then a change with its before and after
  const history = page.locator('section.history')
  expect(await textOf(history.locator('li').first(), 'create by Boss')).toContain('create by Boss')
  await page.getByLabel('Stage').selectOption('won')
  await page.getByRole('button', { name: 'Save' }).click()
  expect(await textOf(history.locator('li').first(), 'update by Boss')).toContain('update by Boss')
  expect(await history.locator('li').count()).toBe(2)
  await history.locator('li').first().locator('summary').click()
  const row = history.locator('li').first().locator('table.diff tbody tr', { hasText: 'stage' })
  expect((await row.textContent())?.replace(/\s+/g, ' ')).toBe('stagenewwon')
  await shot(page, '04-record-history')

  // the journal, by object type: the record's two changes, the update's before and after
  await navigate(page, 'Journal')
  await page.getByLabel('Object type').fill('model/crm/deals')
  await page.getByRole('button', { name: 'Search' }).click()
  expect(await textOf(status(page), /^1–2$/)).toBe('1–2')
  const latest = page.locator('ul.changes li').first()
  expect(await latest.textContent()).toContain('update by Boss')
  await latest.locator('summary').click()
  expect(await textOf(latest.locator('table.diff'), 'won')).toContain('stagenewwon')
  await done()
})

walk('a partitioned class: its records listed by a range of dates, live, one made through its form', async () => {
  const made = await t.call('POST', '/rest/v1/design/classes', {
    token: admin,
    body: {
      classname: 'logs/visits',
      storage_mode: 'history',
      opts: { partition_property: 'day', partition_interval: 'day' },
      properties: [
        { name: 'day', data_type: 'date', required: true },
        { name: 'who', data_type: 'string' },
      ],
    },
  })
  expect(made.status).toBe(200)
  const daysAgo = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10)
  for (const [day, who] of [
    [daysAgo(0), 'ann'],
    [daysAgo(60), 'bob'],
  ])
    expect((await t.call('POST', '/rest/v1/model/logs/visits', { token: admin, body: { day, who } })).status).toBe(200)

  const { page, done } = await open(WIDE)
  await signIn(page, 'live.master', 'boss', 'boss-Pass1')
  await navigate(page, 'logs/visits')
  // the last 31 days at first: bob's visit two months ago is outside
  expect(await page.getByLabel('Records from').inputValue()).toBe(daysAgo(30))
  expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
  expect(await page.locator('tbody').textContent()).toContain('ann')
  await page.getByLabel('Records from').fill(daysAgo(90))
  await page.getByRole('button', { name: 'Show' }).click()
  expect(await textOf(status(page), /^1–2 of 2$/)).toBe('1–2 of 2')
  expect(await textOf(page.locator('#live'), 'Live')).toBe('● Live')
  await t.call('POST', '/rest/v1/model/logs/visits', { token: admin, body: { day: daysAgo(1), who: 'cy' } })
  await pump()
  expect(await textOf(status(page), /^1–3 of 3$/)).toBe('1–3 of 3')
  await shot(page, '05-partitioned-list')

  await page.getByRole('link', { name: 'New record' }).click()
  await page.getByLabel('Day', { exact: true }).fill(daysAgo(0))
  await page.getByLabel('Who').fill('dan')
  await page.getByRole('button', { name: 'Create', exact: true }).click()
  await page.getByRole('heading', { level: 1, name: /^Record / }).waitFor()
  expect(await textOf(page.locator('section.history li').first(), 'create by Boss')).toContain('create by Boss')
  await page.locator('.crumbs').getByRole('link', { name: 'logs/visits' }).click()
  expect(await textOf(status(page), /^1–3 of 3$/)).toBe('1–3 of 3') // ann, cy, dan in the last 31 days
  await done()
})

walk('an open list shows changes made elsewhere without reloading, also after its socket dropped', async () => {
  const { page, done } = await open(WIDE)
  await signIn(page, 'live.master', 'boss', 'boss-Pass1')
  await navigate(page, 'Users')
  expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
  // the socket to the same origin (ws:) passes connect-src 'self' (a refusal would be a console
  // error, which done() fails on), signed in by the session cookie
  const csp = (await t.request('GET', '/console')).headers.get('content-security-policy')
  expect(csp).toContain("connect-src 'self'")
  expect(csp).not.toContain('ws:')
  const live = page.locator('#live')
  expect(await textOf(live, 'Live')).toBe('● Live')
  await page.evaluate('window.notReloaded = true')

  const made = await t.call('POST', '/rest/v1/domain/users', { token: admin, body: { login: 'lena', name: 'Lena' } })
  expect(made.status).toBe(200)
  await pump()
  expect(await textOf(status(page), /^1–2 of 2$/)).toBe('1–2 of 2')
  await page.getByRole('link', { name: 'Open lena' }).waitFor()
  await shot(page, '06-live-created')
  await t.call('DELETE', `/rest/v1/domain/users/${made.body.id}`, { token: admin })
  await pump()
  expect(await textOf(status(page), /^1–1 of 1$/)).toBe('1–1 of 1')
  await page.getByRole('link', { name: 'Open lena' }).waitFor({ state: 'detached' })

  // the service drops the socket (as a restart would): the list connects again and stays live
  const sockets = () => t.service.sockets.stats().sockets
  expect(sockets()).toBeGreaterThan(0)
  // the hub keeps its sockets to itself: reached past its type, as only a test would
  const hub = t.service.sockets as unknown as { sockets: Set<{ ws: { close(code: number, reason: string): void } }> }
  for (const s of hub.sockets) s.ws.close(1012, 'restarting')
  expect(await textOf(live, 'Connecting')).toBe('● Connecting…')
  expect(await textOf(live, 'Live')).toBe('● Live')
  await t.call('POST', '/rest/v1/domain/users', { token: admin, body: { login: 'mia', name: 'Mia' } })
  await pump()
  expect(await textOf(status(page), /^1–2 of 2$/)).toBe('1–2 of 2')
  expect(await page.evaluate('window.notReloaded')).toBe(true)
  await shot(page, '07-live-after-reconnect')

  // leaving the lists ends the subscription and, a few seconds later, the socket
  expect(t.service.sockets.stats().subscriptions).toBe(1)
  await navigate(page, 'Journal')
  const subscriptions = () => t.service.sockets.stats().subscriptions
  for (const until = Date.now() + 5000; subscriptions() && Date.now() < until; ) await Bun.sleep(50)
  expect(subscriptions()).toBe(0)
  for (const until = Date.now() + 15_000; sockets() && Date.now() < until; ) await Bun.sleep(100)
  expect(sockets()).toBe(0)
  await done()
})

walk('at 390 px: the licence shown and replaced, an invitation sent, channel files uploaded and deleted', async () => {
  const { page, done } = await open(NARROW)
  const master = await t.login('master', 'admin', ADMIN_PASSWORD)
  await t.call('POST', '/rest/v1/domain/users', {
    token: master,
    body: { login: 'ivan', name: 'Ivan', opts: { email: 'ivan@example.com' } },
  })
  const put = await t.call('PUT', '/rest/v1/fs/targets/token/report.csv', {
    token: master,
    raw: 'a,b\n1,2\n',
    headers: { 'content-type': 'text/csv' },
  })
  expect(put.text).toBe('')
  expect(put.status).toBe(204)
  await signIn(page, 'master', 'admin', ADMIN_PASSWORD)
  const fits = () => page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')

  await navigate(page, 'Licence')
  expect(await textOf(page.locator('#licence-kind'), 'evaluation')).toContain('the evaluation licence applies')
  const token = await issueLicence({ installation: await installationId(t.service.deps), dql: { domains: 7 } })
  await page.getByLabel('Licence token').fill(token)
  await page.getByRole('button', { name: 'Install' }).click()
  expect(await textOf(page.getByRole('status').last(), 'installed')).toBe('The licence is installed.')
  expect(await textOf(page.locator('#licence-kind'), 'Licensed')).toStartWith('Licensed')
  expect(await page.locator('dl.facts div', { hasText: 'dql.domains' }).locator('dd').textContent()).toBe('7')
  expect(await fits()).toBe(true)
  await shot(page, '08-narrow-licence')

  await navigate(page, 'Invitations')
  await page.getByLabel('Find a user').fill('iv')
  expect(await textOf(page.getByLabel('User', { exact: true }), 'ivan@example.com')).toContain('Ivan (ivan)')
  await page.getByRole('button', { name: 'Send the invitation' }).click()
  expect(await textOf(page.getByRole('status').last(), 'sent')).toBe(
    'An invitation was sent to ivan at ivan@example.com.',
  )
  expect(await fits()).toBe(true)
  await shot(page, '09-narrow-invitation')

  await navigate(page, 'Channel files')
  expect(await textOf(status(page), /^1–1$/)).toBe('1–1') // the files' list answers no total
  expect(await textOf(page.locator('#live'), 'Not live')).toBe('● Not live') // files are no journaled collection
  expect(await page.getByRole('link', { name: 'Download report.csv' }).getAttribute('href')).toBe(
    '/rest/v1/fs/targets/token/report.csv?attachment=true',
  )
  await page.getByRole('link', { name: 'Upload files' }).click()
  await page.getByRole('heading', { level: 1, name: 'Upload files' }).waitFor()
  await page.getByLabel('Files', { exact: true }).setInputFiles([
    { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('hello') },
    { name: 'report.csv', mimeType: 'text/csv', buffer: Buffer.from('x') },
  ])
  await page.getByRole('button', { name: 'Upload', exact: true }).click()
  const results = page.locator('ul.results')
  expect(await textOf(results, 'notes.txt')).toContain('notes.txt (5 bytes): stored')
  expect(await results.textContent()).toContain('report.csv (1 bytes): not stored: a file of that name exists')
  expect(await fits()).toBe(true)
  await shot(page, '10-narrow-upload')
  await page.getByRole('link', { name: 'Back to the files' }).click()
  expect(await textOf(status(page), /^1–2$/)).toBe('1–2')
  await page.getByRole('button', { name: 'Delete notes.txt' }).click()
  await page
    .getByRole('dialog', { name: 'Delete this file?' })
    .getByRole('button', { name: 'Delete notes.txt' })
    .click()
  expect(await textOf(status(page), /^1–1$/)).toBe('1–1')
  const left = await t.call('GET', '/rest/v1/fs/targets/token', { token: master })
  expect(left.body.map((f: { name: string }) => f.name)).toEqual(['report.csv'])
  expect(await fits()).toBe(true)
  await shot(page, '11-narrow-files')
  await done()
})
