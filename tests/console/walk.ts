/**
 * What the console's browser walks share: a fresh page whose requests must stay on the service and
 * whose console must stay free of errors, screenshots kept when a walk fails (or with
 * KEEP_CONSOLE_SHOTS) and each screen's controls named, waiting for a text, signing in and opening
 * an area from the navigation.
 */
import { expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext, Locator, Page } from 'playwright-core'
import { sharedBrowser } from '../helpers/browser'
import type { TestService } from '../helpers/service'

export const WIDE = { width: 1280, height: 860 }
export const NARROW = { width: 390, height: 844 }

/** The walks of one test file over the service `service()` returns once it is up. */
export function consoleWalks(name: string, service: () => TestService) {
  const browser = sharedBrowser()
  const shots = mkdtempSync(join(tmpdir(), `platform-console-${name}-`))
  let failed = false

  /** A test that marks the run failed (so the screenshots stay) when it throws. */
  function walk(title: string, body: () => Promise<void>, timeout = 60_000) {
    test(
      title,
      async () => {
        try {
          await body()
        } catch (err) {
          failed = true
          throw err
        }
      },
      timeout,
    )
  }

  async function close() {
    await browser.close()
    if (!failed && !process.env.KEEP_CONSOLE_SHOTS) rmSync(shots, { recursive: true, force: true })
    else console.log(`console screenshots kept in ${shots}`)
  }

  /**
   * A page of a fresh browser context, every request of which must stay on the service and whose
   * console must stay free of errors; answers the page expects (401 before signing in, 412 of the
   * conflict) are the only resource errors allowed.
   */
  async function open(viewport: { width: number; height: number }) {
    const url = service().service.url!
    const context: BrowserContext = await (await browser.get()).newContext({
      viewport,
      permissions: ['clipboard-read', 'clipboard-write'],
    })
    const page = await context.newPage()
    const outside: string[] = []
    const errors: string[] = []
    page.on('request', (r) => {
      if (!r.url().startsWith(url)) outside.push(r.url())
    })
    page.on('console', (m) => {
      if (m.type() !== 'error') return
      if (m.location().url.endsWith('/favicon.ico')) return // the system pages (sign-in) have no icon
      if (/^Failed to load resource: the server responded with a status of (401|412)\b/.test(m.text())) return
      errors.push(m.text())
    })
    page.on('pageerror', (err) => errors.push(err.message))
    const done = async () => {
      expect(outside).toEqual([]) // no external assets
      expect(errors).toEqual([]) // nothing refused by the content security policy, no script errors
      await context.close()
    }
    return { page, done }
  }

  /** A screenshot of the screen as it is, after checking that each of its controls has a name. */
  async function shot(page: Page, title: string) {
    expect(`${title}: ${(await unnamedControls(page)).join(', ')}`).toBe(`${title}: `)
    const file = join(shots, `${title}.png`)
    await page.screenshot({ path: file, fullPage: true })
    expect(statSync(file).size).toBeGreaterThan(1000)
  }

  async function signIn(page: Page, domain: string, login: string, pwd: string) {
    const url = service().service.url!
    await page.goto(`${url}/pages/sign-in`)
    await page.getByLabel('Domain').fill(domain)
    await page.getByLabel('Login').fill(login)
    await page.getByLabel('Password').fill(pwd)
    await page.getByRole('button', { name: 'Sign in' }).click()
    expect(await textOf(page.locator('#status'), 'signed in')).toContain('signed in')
    await page.goto(`${url}/console`)
    await page.locator('#who').waitFor()
  }

  return { walk, close, open, shot, signIn }
}

/**
 * The visible controls a screen reader would announce without a name (a label, aria-label or
 * aria-labelledby; a button's text): each is named by its tag, type and id or name.
 */
export function unnamedControls(page: Page): Promise<string[]> {
  // a string: the page's code has the DOM's types, which the tests' tsconfig leaves out
  return page.evaluate(`(() => {
    const unnamed = []
    for (const el of document.querySelectorAll('input, select, textarea, button')) {
      if (el.getClientRects().length === 0 || el.type === 'hidden') continue
      const labelled = el.labels?.length || el.getAttribute('aria-label')?.trim()
      const byId = (el.getAttribute('aria-labelledby') ?? '')
        .split(/\\s+/)
        .some((id) => id && document.getElementById(id)?.textContent?.trim())
      const text = el.tagName === 'BUTTON' && (el.textContent?.trim() || el.getAttribute('title')?.trim())
      if (!labelled && !byId && !text)
        unnamed.push(el.tagName.toLowerCase() + '[' + (el.type ?? '') + ']#' + (el.id || el.getAttribute('name') || '?'))
    }
    return unnamed
  })()`)
}

/** The text of the first match once it holds `expected` (or whatever it holds after 5 s). */
export async function textOf(locator: Locator, expected: string | RegExp): Promise<string> {
  let text = ''
  for (const until = Date.now() + 5000; Date.now() < until; await Bun.sleep(20)) {
    text = (
      (await locator
        .first()
        .textContent()
        .catch(() => '')) ?? ''
    ).trim()
    if (typeof expected === 'string' ? text.includes(expected) : expected.test(text)) break
  }
  return text
}

/** Open an area's page from the navigation (behind the Menu button on a narrow screen). */
export async function navigate(page: Page, title: string) {
  const toggle = page.getByRole('button', { name: 'Menu' })
  if (await toggle.isVisible()) await toggle.click()
  await page.getByRole('navigation', { name: 'Areas' }).getByRole('link', { name: title, exact: true }).click()
  await page.getByRole('heading', { level: 1, name: title }).waitFor()
}

export const listStatus = (page: Page) => page.locator('#list-status')
