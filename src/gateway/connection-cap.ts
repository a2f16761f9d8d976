/**
 * The gateway's cap on the connections one client may hold open (GATEWAY_MAX_CONNECTIONS_PER_ADDRESS),
 * so one address cannot take every file descriptor. Counted by TCP peer: an IPv4 address, an IPv6
 * /64 (hostKey). Trusted proxies (TRUST_PROXY) carry many clients' connections and are not capped.
 */
import { type Cidr, hostKey, inCidrs, parseCidr } from '../net/cidr'

export class ConnectionCap {
  private readonly open = new Map<string, number>()
  private readonly trusted: Cidr[]

  /** `max` 0: no cap. */
  constructor(
    private readonly max: number,
    trustedProxies: readonly string[] = [],
  ) {
    this.trusted = trustedProxies.map((t) => parseCidr(t)).filter((c): c is Cidr => c !== null)
  }

  /**
   * Counts a new connection from `peer`: the key to release it with ('' when it is not counted), or
   * null when its host already holds `max`.
   */
  admit(peer: string): string | null {
    if (this.max === 0 || inCidrs(peer, this.trusted)) return ''
    const key = hostKey(peer)
    const n = this.open.get(key) ?? 0
    if (n >= this.max) return null
    this.open.set(key, n + 1)
    return key
  }

  release(key: string): void {
    const n = this.open.get(key)
    if (n === undefined) return
    if (n <= 1) this.open.delete(key)
    else this.open.set(key, n - 1)
  }
}
