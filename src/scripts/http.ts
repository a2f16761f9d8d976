/**
 * A script's `http(request)`: only to hosts SCRIPT_HTTP_ALLOW names (a name, `*.suffix`, or an
 * address block), never to a private, loopback, link-local or reserved address unless a listed
 * block holds it (checked on every address the name resolves to, and the call pinned to the checked
 * ones: ../net/outbound.ts), no redirects followed, a timeout, and the response read up to a size cap.
 */
import { badRequest } from '../errors'
import { type Cidr, inCidrs, parseAddress, parseCidr } from '../net/cidr'
import { bareHost, checkedAddresses, fetchPinned, NotPublic, type Resolve } from '../net/outbound'

export interface ScriptRequest {
  url: string
  method?: string
  headers?: Record<string, string>
  body?: unknown
}

export interface ScriptResponse {
  status: number
  headers: Record<string, string>
  body: string
}

export interface HttpPolicy {
  allow: string[]
  timeoutMs: number
  maxBytes: number
  /** How names are resolved (node's resolver unless a test answers). */
  resolve?: Resolve
}

function allowedName(host: string, allow: string[]): boolean {
  return allow.some((raw) => {
    const a = raw.toLowerCase()
    return a.startsWith('*.') ? host.endsWith(a.slice(1)) : a === host
  })
}

export async function scriptFetch(raw: unknown, policy: HttpPolicy): Promise<ScriptResponse> {
  const req = raw as ScriptRequest
  if (!req || typeof req !== 'object' || typeof req.url !== 'string')
    throw badRequest('http() takes {url, method?, headers?, body?}')
  let url: URL
  try {
    url = new URL(req.url)
  } catch {
    throw badRequest(`not a URL: ${req.url.slice(0, 200)}`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest('only http: and https: URLs')
  const host = bareHost(url)
  const blocks: Cidr[] = policy.allow.map((a) => parseCidr(a)).filter((c): c is Cidr => c !== null)
  const literal = parseAddress(host) !== null
  // the name is checked before it is resolved: an unlisted name is never looked up
  const listed = literal ? inCidrs(host, blocks) : allowedName(host, policy.allow)
  if (!listed) throw badRequest(`${host} is not among the hosts scripts may call (SCRIPT_HTTP_ALLOW)`)
  let addresses: string[]
  try {
    addresses = await checkedAddresses(url, blocks, policy.resolve)
  } catch (err) {
    if (err instanceof NotPublic) throw badRequest(`${err.message}, which SCRIPT_HTTP_ALLOW does not list`)
    throw err
  }
  const json = req.body !== undefined && typeof req.body !== 'string'
  const body = json ? JSON.stringify(req.body) : (req.body as string | undefined)
  const res = await fetchPinned(url, addresses, {
    method: (req.method ?? 'GET').toUpperCase(),
    headers: json ? jsonHeaders(req.headers) : req.headers,
    body,
    redirect: 'manual',
    signal: AbortSignal.timeout(policy.timeoutMs),
  })
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await readCapped(res, policy.maxBytes) }
}

/** The script's headers, with `Content-Type: application/json` for the object body unless it named a type itself. */
function jsonHeaders(given: Record<string, string> | undefined): Record<string, string> {
  const headers = { ...(given && typeof given === 'object' ? given : {}) }
  if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json'
  return headers
}

async function readCapped(res: Response, max: number): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength
    if (size > max) throw badRequest(`the response is larger than ${max} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}
