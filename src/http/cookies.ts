/**
 * The session cookie `RSession`: Path=/, HttpOnly, with an expiry; SameSite=Strict unless
 * COOKIE_SAMESITE says otherwise (None, for a web app on a listed CORS origin, is always Secure).
 */
import type { Config } from '../config'
import { ApiError } from '../errors'
import type { Req } from './req'

export interface CookieRules {
  secure: boolean
  sameSite: 'Strict' | 'Lax' | 'None'
}

/** The rules the configuration gives: Secure behind an https PUBLIC_URL, or wherever SameSite=None. */
export const cookieRules = (config: Pick<Config, 'publicUrl' | 'cookieSameSite'>): CookieRules => ({
  secure: config.publicUrl.startsWith('https:') || config.cookieSameSite === 'None',
  sameSite: config.cookieSameSite,
})

export { readCookie, SESSION_COOKIE } from './req'

const sameSite = { Strict: 'strict', Lax: 'lax', None: 'none' } as const

/** Sets the session cookie of the answer (Elysia's cookie jar writes it). */
export function sessionCookie(req: Req, id: string, expiresMs: number, rules: CookieRules): void {
  req.cookie('RSession').set({
    value: id,
    path: '/',
    expires: new Date(expiresMs),
    httpOnly: true,
    sameSite: sameSite[rules.sameSite],
    secure: rules.secure,
  })
}

/** What DELETE current sends: the value `deleted` with an expiry in the past. */
export function deletedSessionCookie(req: Req, rules: CookieRules): void {
  sessionCookie(req, 'deleted', 0, rules)
}

/**
 * Cross-site request forgery: a browser sends the session cookie along with what another site makes
 * it send (a form, a no-cors fetch, a websocket). So a request that authenticates with the cookie
 * and may change something, and a websocket opened with it, must come from the service's own origin
 * (its Host, or PUBLIC_URL's) or one CORS_ORIGINS lists. Browsers say where a request comes from
 * (Origin, Sec-Fetch-Site); a request that says neither is no browser's, and a token
 * (Authorization: Bearer) is never sent by a browser on its own.
 */
export function crossSiteRefusal(
  config: Pick<Config, 'publicUrl' | 'corsOrigins'>,
  header: (name: string) => string | null,
): ApiError | null {
  const origin = header('origin')
  if (origin === null) return header('sec-fetch-site') === 'cross-site' ? crossSite('another site') : null
  if (config.corsOrigins.includes(origin) || origin === publicOrigin(config.publicUrl)) return null
  let host: string | undefined
  try {
    host = new URL(origin).host
  } catch {}
  return host !== undefined && host === header('host') ? null : crossSite(origin.slice(0, 200))
}

const publicOrigin = (publicUrl: string) => {
  try {
    return new URL(publicUrl).origin
  } catch {
    return undefined
  }
}

const crossSite = (from: string) =>
  new ApiError(
    403,
    `a request that signs in with the session cookie from ${from} is refused: another site's page sends it; ` +
      'call from this service or an origin CORS_ORIGINS lists, or sign in with a token',
    { field: 'Origin' },
  )
