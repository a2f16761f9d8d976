/**
 * Outgoing calls to addresses a tenant names (webhook targets, a script's `http()`): the name is
 * resolved once, every address it resolves to is checked, and the call goes to those addresses (the
 * next one when one cannot be reached), with the name kept in `Host` and, for https, in the TLS server name (SNI and the certificate
 * check). A name resolved again by fetch could answer otherwise the second time (DNS rebinding).
 */
import { lookup } from 'node:dns/promises'
import { type Cidr, inCidrs, NON_PUBLIC_BLOCKS, parseAddress, privateBlocksOf } from './cidr'

/** Every address a name resolves to (node's resolver by default; tests answer for names of their own). */
export type Resolve = (host: string) => Promise<string[]>

export const resolveAll: Resolve = async (host) => (await lookup(host, { all: true })).map((a) => a.address)

/** The target resolves to an address outside the public ones that the allowed blocks do not hold. */
export class NotPublic extends Error {}

/** The host of a URL without the brackets of an IPv6 literal, lower-cased. */
export const bareHost = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase()

/**
 * The addresses to call for `url`: its literal, or all the name resolves to once every one of them
 * is public or inside `allowed` (only blocks that are themselves private open private addresses).
 */
export async function checkedAddresses(
  url: URL,
  allowed: readonly Cidr[],
  resolve: Resolve = resolveAll,
): Promise<string[]> {
  const host = bareHost(url)
  const addresses = parseAddress(host) !== null ? [host] : await resolve(host)
  if (addresses.length === 0) throw new Error(`${host} resolves to no address`)
  const opened = privateBlocksOf(allowed)
  // an address that does not parse (a zone id, say) is refused like a private one
  for (const address of addresses)
    if (parseAddress(address) === null || (inCidrs(address, NON_PUBLIC_BLOCKS) && !inCidrs(address, opened)))
      throw new NotPublic(`${host} resolves to ${address}, which is not a public address`)
  return addresses
}

/** Failures to connect, before anything was sent: the next address is tried, as fetch itself would. */
const UNREACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL'])

/** fetch() of `url` pinned to the checked addresses, in order: the name stays in Host and the TLS server name. */
export async function fetchPinned(url: URL, addresses: readonly string[], init: RequestInit): Promise<Response> {
  for (let i = 0; ; i++) {
    try {
      return await fetchAt(url, addresses[i]!, init)
    } catch (err) {
      if (i + 1 >= addresses.length || !UNREACHED.has((err as { code?: string }).code ?? '')) throw err
    }
  }
}

function fetchAt(url: URL, address: string, init: RequestInit): Promise<Response> {
  const host = bareHost(url)
  if (host === address) return fetch(url, init)
  const pinned = new URL(url)
  pinned.hostname = address.includes(':') ? `[${address}]` : address
  const headers = new Headers(init.headers)
  headers.set('host', url.host)
  const tls = url.protocol === 'https:' ? { tls: { serverName: host } } : {}
  return fetch(pinned, { ...init, ...tls, headers })
}
