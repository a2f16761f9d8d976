// The API page in headless Chromium: Scalar, served by the service itself under its strict content
// security policy, renders the description with no console error, shows every area (tag), and
// fits a desktop and a phone window without scrolling sideways.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import { sharedBrowser } from '../helpers/browser'
import { testService, type TestService } from '../helpers/service'

let t: TestService
const browser = sharedBrowser()

beforeAll(async () => {
  t = await testService({ listen: true })
})
afterAll(async () => {
  await browser.close()
  await t.close()
})

/** The page at a window width, with every console error and refused request it produced. */
async function openAt(width: number): Promise<{ page: Page; problems: string[]; foreign: string[] }> {
  const context = await (await browser.get()).newContext({ viewport: { width, height: 900 } })
  const page = await context.newPage()
  const problems: string[] = []
  const foreign: string[] = []
  const origin = new URL(t.service.url!).origin
  page.on('console', (m) => void (m.type() === 'error' && problems.push(`${m.text()} ${m.location().url}`)))
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('request', (r) => void (!r.url().startsWith(origin) && !r.url().startsWith('data:') && foreign.push(r.url())))
  await page.goto(`${t.service.url}/pages/api`, { waitUntil: 'networkidle' })
  return { page, problems, foreign }
}

test('the page is served under a strict policy, with its script from this origin', async () => {
  const res = await t.request('GET', '/pages/api')
  const csp = res.headers.get('content-security-policy')!
  expect(csp).toContain("default-src 'none'")
  expect(csp).toContain("script-src 'self';")
  expect(csp).toContain("connect-src 'self'")
  const html = await res.text()
  expect(html).not.toMatch(/(src|href)="https?:/)
  const script = await t.request('GET', '/pages/api/scalar.js', { headers: { 'accept-encoding': 'gzip' } })
  expect([script.status, script.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8'])
})

for (const width of [1280, 390]) {
  test(`at ${width} px: it renders with no console error, shows every area, and fits the window`, async () => {
    const { page, problems, foreign } = await openAt(width)
    const description = (await t.call('GET', '/rest/v1/openapi.json')).body as { tags: { name: string }[] }
    // the title of the description, then each tag in the menu (a phone's is behind its button)
    await page.getByText('Platform service', { exact: false }).first().waitFor({ timeout: 20_000 })
    const menu = page.getByRole('button', { name: 'Open Menu' })
    if (await menu.isVisible()) await menu.click()
    const text = await page.locator('body').innerText()
    for (const { name } of description.tags)
      expect([name, text.toLowerCase().includes(name.toLowerCase())]).toEqual([name, true])
    expect(problems).toEqual([])
    expect(foreign).toEqual([])
    // nothing wider than the window: no sideways scroll
    const overflow = (await page.evaluate('document.documentElement.scrollWidth - window.innerWidth')) as number
    expect(overflow).toBeLessThanOrEqual(0)
    await page.context().close()
  }, 60_000)
}
