/** Headless Chromium from Debian (`/usr/bin/chromium`), driven by playwright-core. */
import { existsSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(`Chromium not found at ${CHROMIUM}: install Debian's chromium (npm test does) or set CHROMIUM_PATH`)
  try {
    return await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      // this machine's network is closed: Chromium must not reach for Google's services
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    })
  } catch (err) {
    throw new Error(`Chromium at ${CHROMIUM} did not start: ${(err as Error).message}`)
  }
}

/**
 * The browser of a test file, launched by the first test that asks for it. A browser that cannot
 * start then fails each test that needs it, by name and with the reason; launched in a hook, it
 * would be one unnamed failure.
 */
export function sharedBrowser() {
  let launching: Promise<Browser> | undefined
  return {
    get: () => (launching ??= launchBrowser()),
    async close() {
      await (await launching?.catch(() => undefined))?.close()
    },
  }
}
