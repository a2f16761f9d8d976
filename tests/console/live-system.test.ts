// The console's live system in headless Chromium (issue 37): a webhook subscription made on a
// channel's page to a local receiver, the failed delivery with its status and attempts, replayed
// and delivered; a script written in the editor, started with a parameter, its outcome and log on
// screen, and a running handler stopped; a service task's next run; a node's log level changed with
// its control at 390 px. Screenshots of each screen; any browser console error fails the walk.
import { afterAll, beforeAll, expect } from 'bun:test'
import { ADMIN_PASSWORD, testService, type TestService } from '../helpers/service'
import { consoleWalks, listStatus, NARROW, navigate, textOf, WIDE } from './walk'

let t: TestService
interface CSSProps {
  fontFamily: string
}
let admin: string
let receiver: ReturnType<typeof Bun.serve>
interface Received {
  id: string | null
  body: { class: string; event: string; data: { new?: { login?: string } } }
}
/** What the receiver got: each delivery's webhook-id and body. */
const received: Received[] = []
/** The receiver refuses the first delivery of a change of this login (a 400 fails for good). */
let refuseOnce: string | null = null
const { walk, close, open, shot, signIn } = consoleWalks('live', () => t)

beforeAll(async () => {
  receiver = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const got: Received = { id: req.headers.get('webhook-id'), body: (await req.json()) as Received['body'] }
      received.push(got)
      const refuse = refuseOnce !== null && got.body.data.new?.login === refuseOnce
      if (refuse) refuseOnce = null
      return new Response(null, { status: refuse ? 400 : 200 })
    },
  })
  t = await testService({
    listen: true,
    env: { WEBHOOK_ALLOW_PRIVATE: '127.0.0.1/32' },
    licence: { webservice_subscr: 5, svcscripts: 10 },
  })
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
  receiver.stop(true)
})

/** Runs the delivery worker once and waits for what it started. */
async function deliver() {
  await t.run('webhook-deliveries')
  await t.settled('webhook-deliveries')
}

walk(
  'a subscription made on the channel page; its failed delivery replayed from the console and delivered',
  async () => {
    const { page, done } = await open(WIDE)
    await signIn(page, 'live.master', 'boss', 'boss-Pass1')
    await navigate(page, 'Channels')
    await page.getByRole('link', { name: 'New channel' }).click()
    await page.getByLabel('Code', { exact: true }).fill('crm')
    await page.getByLabel('Type').selectOption('subscr')
    await page.getByLabel('URL').fill(`http://127.0.0.1:${receiver.port}/hook`)
    await page.getByLabel('Roles').fill('admin') // what the channel may read: the users it is told of
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('dialog', { name: 'The signing secret of crm' }).getByRole('button', { name: 'Done' }).click()
    await page.getByRole('heading', { level: 1, name: 'Channel crm' }).waitFor()

    // subscribe the channel to changes of users, through the channel's own token
    const subs = page.locator('section.subscriptions')
    await subs.getByRole('textbox', { name: 'Events' }).fill('modelevents.data_changed')
    await subs.getByRole('textbox', { name: 'Objects' }).fill('["users"]')
    await subs.getByRole('button', { name: 'Subscribe', exact: true }).click()
    expect(await textOf(subs.locator('#subscriptions-status'), 'Subscribed.')).toBe('Subscribed.')
    expect(await textOf(subs.locator('tbody tr'), 'modelevents.data_changed')).toContain('["users"]')
    await shot(page, 'live-01-subscribed')

    // a change of a user: the receiver refuses its delivery (a 400 fails for good)
    refuseOnce = 'ann'
    await t.call('POST', '/rest/v1/domain/users', {
      token: admin,
      body: { login: 'ann', name: 'Ann', pwd: 'ann-Pass1' },
    })
    await t.run('webhook-enqueue')
    await deliver()
    const ofAnn = () => received.filter((r) => r.body.data.new?.login === 'ann')
    expect(ofAnn()).toHaveLength(1)
    const deliveries = page.locator('section.deliveries')
    await deliveries.getByRole('button', { name: 'Refresh' }).click()
    const row = deliveries.locator(`tr[data-delivery="${ofAnn()[0]!.id}"]`)
    expect(await textOf(row, 'failed')).toContain('modelevents.data_changed')
    const cells = async () => (await row.locator('td').allTextContents()).map((s) => s.trim())
    expect((await cells()).slice(1, 3)).toEqual(['failed', '1'])
    expect(await row.textContent()).toContain('HTTP 400')
    expect(await row.textContent()).toContain('the receiver answered 400')
    await shot(page, 'live-02-delivery-failed')

    // replayed: due again, delivered by the next pass, and the page says so
    await row.getByRole('button', { name: /^Replay modelevents\.data_changed/ }).click()
    expect(await textOf(deliveries.locator('#deliveries-status'), 'Replaying')).toContain('waiting for its outcome')
    await deliver()
    const outcome = await textOf(deliveries.locator('#deliveries-status'), 'delivered')
    expect(outcome).toBe('Replayed: modelevents.data_changed was delivered (HTTP 200).')
    expect((await cells()).slice(1, 3)).toEqual(['done', '1'])
    expect(ofAnn()).toHaveLength(2)
    expect(ofAnn()[1]!.id).toBe(ofAnn()[0]!.id) // the same delivery, sent again
    expect(ofAnn()[1]!.body).toMatchObject({ class: 'modelevents', event: 'data_changed' })
    await shot(page, 'live-03-delivery-replayed')

    // renewed with other terms, then removed
    await subs.getByRole('button', { name: 'Renew modelevents.data_changed' }).click()
    await subs.getByRole('textbox', { name: 'Events' }).fill('modelevents.data_changed\ncustomevents.*')
    await subs.getByRole('button', { name: 'Renew', exact: true }).click()
    expect(await textOf(subs.locator('tbody tr'), 'customevents.*')).toContain(
      'modelevents.data_changed, customevents.*',
    )
    await subs.getByRole('button', { name: /^Remove / }).click()
    await page
      .getByRole('dialog', { name: 'Remove this subscription?' })
      .getByRole('button', { name: 'Remove' })
      .click()
    expect(await textOf(subs, 'No live subscriptions.')).toContain('No live subscriptions.')
    await done()
  },
)

walk(
  'a script written in the editor, started with a parameter: its outcome and log; a running one stopped',
  async () => {
    const { page, done } = await open(WIDE)
    await signIn(page, 'live.master', 'boss', 'boss-Pass1')
    await navigate(page, 'Service scripts')
    await page.getByRole('link', { name: 'New service script' }).click()
    await page.getByLabel('Code', { exact: true }).fill('greet')
    await page.getByLabel('Name', { exact: true }).fill('Greeting')
    await page.getByLabel('Scriptdata').fill('return 1')
    await page.getByRole('button', { name: 'Create', exact: true }).click()
    await page.getByRole('heading', { level: 1, name: /^Service script / }).waitFor()

    // the code written in the editor and saved, then started with a parameter
    const editor = page.getByLabel('Scriptdata')
    expect(
      await editor.evaluate(
        (e) => (globalThis as unknown as { getComputedStyle(e: unknown): CSSProps }).getComputedStyle(e).fontFamily,
      ),
    ).toMatch(/mono/i)
    await editor.fill(
      "log('info', 'hello', startparam(1))\nlog('warn', 'twice', startparam(2))\nreturn { greeted: startparam(1) }",
    )
    await page.getByRole('button', { name: 'Save' }).click()
    expect(await textOf(page.getByRole('status').first(), 'Saved.')).toBe('Saved.')
    const run = page.locator('section.script-run')
    await t.deps.nodes.heartbeat() // a handler starts on a live svc node: this process, renewed now
    await run.getByLabel('Parameter 1').fill('ann')
    await run.getByLabel('Parameter 2').fill('{"n": 2}')
    await run.getByRole('button', { name: 'Start' }).click()
    expect(await textOf(run.locator('#handler-state'), 'Done')).toBe('Done')
    expect(await textOf(run.locator('#handler-log'), 'hello ann')).toMatch(/info hello ann.*warn twice \{"n":2\}/s)
    expect(JSON.parse((await run.locator('#handler-result').textContent()) ?? '')).toEqual({ greeted: 'ann' })
    await shot(page, 'live-04-script-started')

    // the handler's own page tells the same
    await run
      .getByRole('heading', { name: /^Handler / })
      .getByRole('link')
      .click()
    await page.getByRole('heading', { level: 1, name: /^Script handler / }).waitFor()
    expect(await textOf(page.locator('#handler-log'), 'hello ann')).toContain('hello ann')

    // a handler that runs until stopped: Stop on its page, then its outcome
    await t.call('POST', '/rest/v1/service/svcscripts', {
      token: admin,
      body: { code: 'waiter', name: 'Waiter', scriptdata: "log('info', 'waiting')\nwhile (true) await sleep(50)" },
    })
    const started = await t.call('POST', '/rest/v1/service/svcscript_runtimes', {
      token: admin,
      body: { code: 'waiter' },
    })
    await navigate(page, 'Script handlers')
    expect(await textOf(listStatus(page), /^1–1/)).toContain('1–1')
    await page.getByRole('link', { name: 'Open Waiter' }).click()
    await page.getByRole('heading', { level: 1, name: `Script handler ${started.body.id}` }).waitFor()
    expect(await textOf(page.locator('#handler-state'), 'Running')).toBe('Running')
    expect(await textOf(page.locator('#handler-log'), 'waiting')).toContain('waiting')
    await shot(page, 'live-05-handler-running')
    await page.getByRole('button', { name: 'Stop', exact: true }).click()
    await page.getByRole('dialog', { name: 'Stop this handler?' }).getByRole('button', { name: 'Stop' }).click()
    expect(await textOf(page.locator('#handler-state'), 'Stopped')).toBe('Stopped')
    expect(await page.locator('#handler-error').textContent()).toBe('stopped')
    await shot(page, 'live-06-handler-stopped')
    await done()
  },
)

walk("a service task's page shows its next run", async () => {
  const made = await t.call('POST', '/rest/v1/service/svctasks', {
    token: admin,
    body: { name: 'Hourly', svcscriptcode: 'greet', dtstart: '2026-01-01T00:30:00Z' },
  })
  const next = made.body.next_run as string
  expect(next).toMatch(/:30:00Z$/) // hourly from half past: the next half past
  const { page, done } = await open(WIDE)
  await signIn(page, 'live.master', 'boss', 'boss-Pass1')
  await navigate(page, 'Service tasks')
  await page.getByRole('link', { name: 'Hourly' }).first().click()
  await page.getByRole('heading', { level: 1, name: 'Service task Hourly' }).waitFor()
  const fact = page.locator('.facts div', { has: page.getByText('Next run', { exact: true }) })
  expect(await textOf(fact.locator('dd'), next)).toBe(next)
  await shot(page, 'live-07-task-next-run')
  // disabled, it has none
  await page.getByLabel('Isenabled').selectOption('0')
  await page.getByRole('button', { name: 'Save' }).click()
  expect(await textOf(fact.locator('dd'), '—')).toBe('—')
  await done()
})

walk("at 390 px: a node's log level changed with its control", async () => {
  const { page, done } = await open(NARROW)
  await signIn(page, 'master', 'admin', ADMIN_PASSWORD)
  await t.deps.nodes.heartbeat() // this process's record, renewed by a worker the walks do not run
  await navigate(page, 'Nodes')
  const name = t.config.nodeName
  await page.getByRole('link', { name: `Open ${name}` }).click()
  await page.getByRole('heading', { level: 1, name: `Node ${name}` }).waitFor()
  const control = page.getByLabel('Log level')
  const before = await control.inputValue()
  const options = await control.locator('option').allTextContents()
  expect(options).toEqual(['error', 'warn', 'info', 'debug', 'off'])
  await control.selectOption('off') // (a change is logged as a warning: off keeps the run quiet)
  await page.getByRole('button', { name: 'Set log level' }).click()
  expect(await textOf(page.locator('#log-level-status'), 'off')).toBe('The log level is now off.')
  const read = await t.call('GET', `/rest/v1/master/nodes/${encodeURIComponent(name)}`, {
    token: await t.login('master', 'admin', ADMIN_PASSWORD),
  })
  expect(read.body.maxLogLevel).toBe('off')
  expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true)
  await shot(page, 'live-08-narrow-node-log-level')
  await control.selectOption(before)
  await page.getByRole('button', { name: 'Set log level' }).click()
  expect(await textOf(page.locator('#log-level-status'), before)).toBe(`The log level is now ${before}.`)
  await done()
})
