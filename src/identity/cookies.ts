/**
 * The session cookie `RSession`: Path=/, HttpOnly, with an expiry; SameSite=Strict unless
 * COOKIE_SAMESITE says otherwise (None, for a web app on a listed CORS origin, is always Secure).
 */
import type { Config } from '../config'

export interface CookieRules {
  secure: boolean
  sameSite: 'Strict' | 'Lax' | 'None'
}

/** The rules the configuration gives: Secure behind an https PUBLIC_URL, or wherever SameSite=None. */
export const cookieRules = (config: Pick<Config, 'publicUrl' | 'cookieSameSite'>): CookieRules => ({
  secure: config.publicUrl.startsWith('https:') || config.cookieSameSite === 'None',
  sameSite: config.cookieSameSite,
})

const attributes = (rules: CookieRules) => `HttpOnly; SameSite=${rules.sameSite}${rules.secure ? '; Secure' : ''}`

export const SESSION_COOKIE = 'RSession'

/** Value of a cookie in a Cookie header, without parsing the rest. */
export function readCookie(header: string | null, name: string): string | null {
  if (!header) return null
  let at = header.indexOf(name + '=')
  while (at > 0 && header[at - 1] !== ' ' && header[at - 1] !== ';') at = header.indexOf(name + '=', at + 1)
  if (at < 0) return null
  const start = at + name.length + 1
  const end = header.indexOf(';', start)
  return header.slice(start, end < 0 ? undefined : end).trim() || null
}

export function sessionCookie(id: string, expiresMs: number, rules: CookieRules): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Expires=${new Date(expiresMs).toUTCString()}; ${attributes(rules)}`
}

/** What DELETE current sends: the value `deleted` with an expiry in the past. */
export function deletedSessionCookie(rules: CookieRules): string {
  return `${SESSION_COOKIE}=deleted; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; ${attributes(rules)}`
}
