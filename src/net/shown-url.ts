/**
 * A service's URL as a message may show it: without the user and password it may carry
 * (`redis://user:secret@host`) and without its query (`?authToken=`), which log collectors keep.
 */
export function shownUrl(url: string): string {
  let u: URL
  try {
    u = new URL(url)
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//…@').replace(/\?.*$/, '?…')
  }
  if (u.protocol === 'file:') return url
  const user = u.username || u.password ? '…@' : ''
  return `${u.protocol}//${user}${u.host}${u.pathname === '/' ? '' : u.pathname}${u.search ? '?…' : ''}`
}
