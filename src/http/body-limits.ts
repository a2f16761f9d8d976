/**
 * The largest body each route takes, as its spec declares it (`maxBody`, ./route.ts): the gateway
 * refuses a larger declared length before the app sees the head, and the app before reading
 * (./body.ts), so a public route cannot be made to parse megabytes of JSON on the app's thread.
 */
import type { Config } from '../config'
import type { DeclaredModule, DeclaredRoute } from './route-declaration'
import type { Method } from '../values'
import type { RouteTable } from './router'

/** Sign-in, tokens, passwords and the like: a few fields of at most a KiB each. */
export const SMALL_BODY = 8 * 1024

type Limits = Pick<Config, 'maxBodyBytes' | 'filesMaxBytes'>

/** A route's limit under this configuration; MAX_BODY_BYTES bounds every declared number. */
export function limitOf(spec: Pick<DeclaredRoute, 'maxBody'> | undefined, config: Limits): number {
  const declared = spec?.maxBody
  if (declared === undefined) return config.maxBodyBytes
  return declared === 'files' ? config.filesMaxBytes : Math.min(declared, config.maxBodyBytes)
}

/** What a POST may run as (the override header): the gateway judges it by the largest of them. */
const POST_AS: Method[] = ['POST', 'LOOKUP', 'SYNC', 'CLEAR']

/**
 * The limit of a request by its method and raw path. A path or method no route serves is answered
 * 404 or 405 without its body being read: the largest limit then, so that answer is still given.
 * `overridable`: a POST whose override header was not read yet (the gateway's view).
 */
export function bodyLimitOf(
  router: RouteTable,
  config: Limits,
  method: string,
  rawPath: string,
  overridable = false,
): number {
  const module: DeclaredModule | undefined = router.match(rawPath)?.entry.module
  const largest = Math.max(config.maxBodyBytes, config.filesMaxBytes)
  if (!module) return largest
  const methods = overridable && method === 'POST' ? POST_AS : [(method === 'HEAD' ? 'GET' : method) as Method]
  let limit = -1
  for (const m of methods) if (module[m]) limit = Math.max(limit, limitOf(module[m], config))
  return limit < 0 ? largest : limit
}

/** The URL path of a request URL or target as sent, without the query (absolute form too). */
export function rawPathOf(url: string): string {
  const start = url.charCodeAt(0) === 47 /* / */ ? 0 : url.indexOf('/', url.indexOf('//') + 2)
  let end = url.indexOf('?', start)
  const hash = url.indexOf('#', start)
  if (end < 0 || (hash >= 0 && hash < end)) end = hash
  return url.slice(start, end < 0 ? undefined : end)
}
