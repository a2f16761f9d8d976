/** The session cookie `RSession`: Path=/, SameSite=Strict, HttpOnly, with an expiry. */

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

export function sessionCookie(id: string, expiresMs: number, secure: boolean): string {
  return `${SESSION_COOKIE}=${id}; Path=/; Expires=${new Date(expiresMs).toUTCString()}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

/** What DELETE current sends: the value `deleted` with an expiry in the past. */
export function deletedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=deleted; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}
